package markup

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/synth"
)

// statementLimit is the largest statement bench accepts.
const statementLimit = 1 << 20

// renderBudget is what rendering a statement of any one shape may take,
// with room for a slow or busy machine: the worst take a quarter of that
// on the project machine.
const renderBudget = 2 * time.Second

// repeatTo repeats s to exactly n bytes.
func repeatTo(s string, n int) string {
	return strings.Repeat(s, n/len(s)+1)[:n]
}

// halves is n/2 bytes of a then n/2 of b.
func halves(a, b string, n int) string {
	return repeatTo(a, n/2) + repeatTo(b, n/2)
}

// How a shape of markdown must fare at 1 MiB.
const (
	mustBePlain = iota // goldmark takes seconds or more: beyond the bounds
	mayBePlain         // linear in goldmark, but beyond the bounds' estimate at 1 MiB
	mustRender         // linear, and within the bounds
)

// pathologicalMarkdown are shapes of markdown on which goldmark v1.8.7
// takes time growing faster than their length (seconds to minutes at 1
// MiB), and shapes near them that it takes in linear time.
var pathologicalMarkdown = []struct {
	name string
	gen  func(n int) string
	want int
}{
	// Containers nested on one line.
	{"nested block quotes", func(n int) string { return repeatTo(">", n) }, mustBePlain},
	{"nested block quotes with spaces", func(n int) string { return repeatTo("> ", n) }, mustBePlain},
	{"nested lists", func(n int) string { return repeatTo("- ", n-1) + "a" }, mustBePlain},
	{"nested ordered lists", func(n int) string { return repeatTo("1. ", n) }, mustBePlain},
	{"quotes and lists", func(n int) string { return repeatTo("> - ", n) }, mustBePlain},
	{"lists with tabs", func(n int) string { return repeatTo("-\t", n-1) + "a" }, mustBePlain},
	{"lists by indentation", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			b.WriteString(strings.Repeat("  ", i) + "- a\n")
		}
		return b.String()[:n]
	}, mustBePlain},
	// Link openers, destinations and titles scanned to the line's or
	// paragraph's end.
	{"unclosed links", func(n int) string { return repeatTo("[a](", n) }, mustBePlain},
	{"unclosed links with destinations", func(n int) string { return repeatTo("[a](b", n) }, mustBePlain},
	{"unclosed links with parentheses", func(n int) string { return repeatTo("[a]((", n) }, mustBePlain},
	{"unclosed angle destinations", func(n int) string { return repeatTo("[a](<b", n) }, mustBePlain},
	{"unclosed titles across lines", func(n int) string { return repeatTo("[a](b \"\n", n) }, mustBePlain},
	{"unclosed parenthesised titles across lines", func(n int) string { return repeatTo("[a](b (\n", n) }, mustBePlain},
	{"link openers, a paragraph of each line", func(n int) string { return repeatTo("[a](\n", n) }, mustBePlain},
	{"link openers in paragraphs of 4 KB", func(n int) string { return repeatTo(strings.Repeat("[a](", 1000)+"\n\n", n) }, mustBePlain},
	{"link openers and parentheses", func(n int) string { return repeatTo("[ (](", n) }, mustBePlain},
	// Closing brackets: labels, shortcut references looked up line by
	// line, links inside links.
	{"nested brackets", func(n int) string { return halves("[", "]", n) }, mustBePlain},
	{"nested brackets around a word", func(n int) string { return strings.Repeat("[", n/2-1) + "a" + strings.Repeat("]", n/2) }, mustBePlain},
	{"shortcut references, a line each", func(n int) string { return repeatTo("[a]\n", n) }, mustBePlain},
	{"image references, a line each", func(n int) string { return repeatTo("![a]\n", n) }, mustBePlain},
	{"bracket groups", func(n int) string { return repeatTo(strings.Repeat("[", 100)+strings.Repeat("]", 100)+" ", n) }, mustBePlain},
	{"link reference definitions", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "[a%d]: /u\n", i)
		}
		return b.String()[:n]
	}, mustBePlain},
	{"reference definitions without destinations", func(n int) string { return repeatTo("[a]:\n", n) }, mustBePlain},
	{"reference definitions with open titles", func(n int) string { return repeatTo("[a]: /u \"\n", n) }, mustBePlain},
	{"many references", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n/2; i++ {
			fmt.Fprintf(&b, "[%d]: u\n", i)
		}
		return b.String() + repeatTo("[0] ", n-b.Len())
	}, mustBePlain},
	// Emphasis delimiters matched against each other.
	{"mismatched emphasis", func(n int) string { return repeatTo("*a_ ", n) }, mustBePlain},
	{"emphasis by the rule of three", func(n int) string { return "a**b" + repeatTo("c* ", n-4) }, mustBePlain},
	{"nested strikethrough", func(n int) string { return "a " + halves("~~", "a~~", n-2) }, mustBePlain},
	{"a fence of strikethrough", func(n int) string { return halves("~~", "a~~", n) }, mustRender},
	{"emphasis closers on lines", func(n int) string { return repeatTo("*a_\n", n) }, mustBePlain},
	// Tables padded to their header's width.
	{"wide header, one-cell rows", func(n int) string {
		head := strings.Repeat("|a", 500) + "|\n" + strings.Repeat("|-", 500) + "|\n"
		return head + repeatTo("|a|\n", n-len(head))
	}, mustBePlain},
	{"two columns, one-cell rows", func(n int) string { return "aaa|bbb\n-|-\n" + repeatTo("x\n", n-12) }, mustBePlain},
	{"two columns", func(n int) string { return "aaa|bbb\n-|-\n" + repeatTo("x|y\n", n-12) }, mustBePlain},
	// Linear in goldmark: within the bounds.
	{"link openers with spaces", func(n int) string { return repeatTo("[a]( ", n) }, mayBePlain},
	{"links", func(n int) string { return repeatTo("[a](b) ", n) }, mayBePlain},
	{"openers then links", func(n int) string { return halves("[", "[a](b) ", n) }, mayBePlain},
	{"emphasis", func(n int) string { return repeatTo("*a* _b_ **c** ", n) }, mayBePlain},
	{"snake case", func(n int) string { return repeatTo("snake_case_name ", n) }, mustRender},
	{"backtick runs", func(n int) string {
		var b strings.Builder
		for i := 1; b.Len() < n; i++ {
			b.WriteString(strings.Repeat("`", i%200+1) + "e")
		}
		return b.String()[:n]
	}, mustRender},
	{"unclosed raw HTML", func(n int) string { return repeatTo("<a href='", n) }, mustRender},
	{"unclosed comments", func(n int) string { return "</" + repeatTo("<!--", n-2) }, mustRender},
	{"autolinks", func(n int) string { return repeatTo("<http://a.b/c> ", n) }, mustRender},
	{"entities", func(n int) string { return repeatTo("&amp;&#1;&bogus; ", n) }, mustRender},
	{"setext headings", func(n int) string { return repeatTo("a\n=\n", n) }, mustRender},
	{"one setext paragraph", func(n int) string { return repeatTo("a\n", n-2) + "=\n" }, mustRender},
	{"HTML blocks", func(n int) string { return repeatTo("<div>\n", n) }, mustRender},
	{"many list items", func(n int) string { return repeatTo("- a\n", n) }, mustRender},
	{"block quote lines", func(n int) string { return repeatTo("> a\n", n) }, mustRender},
	{"lazy lines under a deep quote", func(n int) string { return strings.Repeat("> ", 30) + "a\n" + repeatTo("b\n", n-63) }, mustRender},
	{"hard line breaks", func(n int) string { return repeatTo("a\\\n", n) }, mustRender},
	{"long line", func(n int) string { return repeatTo("abcdefgh ", n) }, mustRender},
	{"NUL bytes", func(n int) string { return repeatTo("\x00", n) }, mustRender},
	{"carriage returns", func(n int) string { return repeatTo(">\r", n) }, mustRender},
	{"fenced code with pathological content", func(n int) string { return "```\n" + repeatTo("[a](", n-8) + "\n```\n" }, mustRender},
	{"fence openers", func(n int) string { return repeatTo("```\n", n) }, mustRender},
	{"a long fence language", func(n int) string { return "~~~" + repeatTo("a~~", n-8) + "\nx\n~~~\n" }, mustRender},
	{"code blocks of unknown languages", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "```lang%d\nx\n```\n", i)
		}
		return b.String()
	}, mustRender},
	{"Python code chroma takes one byte at a time", func(n int) string { return "```python\n" + repeatTo("(", n-16) + "\n```\n" }, mustRender},
	{"Python code blocks of new words", func(n int) string {
		var b strings.Builder
		for i := 0; b.Len() < n; {
			b.WriteString("```python\n")
			for start := b.Len(); b.Len()-start < 8000; i++ {
				fmt.Fprintf(&b, "x%d = y%d\n", i, i)
			}
			b.WriteString("```\n\n")
		}
		return b.String()
	}, mustRender},
	{"JavaScript", func(n int) string { return "```js\n" + repeatTo("var a = [1, 'b', {c: /d/g}];\n", n-12) + "\n```\n" }, mustRender},
}

// Every known pathological shape, at the largest size a statement can
// have, renders in bounded time: as markdown or, beyond the bounds, as
// plain text.
func TestMarkdownPathologicalShapes(t *testing.T) {
	m := New()
	for _, c := range pathologicalMarkdown {
		src := c.gen(statementLimit)
		if len(src) > statementLimit {
			src = src[:statementLimit]
		}
		start := time.Now()
		out, err := m.Markdown(src)
		took := time.Since(start)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		plain := strings.HasPrefix(out, `<p class="footnote statement-note">Shown as plain text: `)
		switch {
		case took > renderBudget:
			t.Errorf("%s: rendering %d bytes took %v", c.name, len(src), took)
		case c.want == mustBePlain && !plain:
			t.Errorf("%s: rendered as markdown, want plain text", c.name)
		case c.want == mustRender && plain:
			t.Errorf("%s: shown as plain text, want markdown", c.name)
		}
		t.Logf("%-45s %8v plain %v", c.name, took.Round(time.Millisecond), plain)
	}
}

// At each bound, the worst shape under it renders as markdown, in half
// the budget; a statement of all of them at once, filled up with the
// deepest nesting allowed, within twice the budget (it takes a second).
func TestMarkdownBoundsHold(t *testing.T) {
	// atBound is unit repeated as often as the bounds allow.
	atBound := func(prefix, unit string) string {
		lo, hi := 1, statementLimit/len(unit)
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if markdownBounds(prefix+strings.Repeat(unit, mid)) == "" {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		return prefix + strings.Repeat(unit, lo)
	}
	// One shape at each bound; the first of each bound also goes in the
	// statement of all at once, as much of it as the bounds then allow.
	shapes := []struct {
		name, prefix, unit string
		bound              string
	}{
		{"unclosed links with destinations", "", "[a](x", "link"},
		{"unclosed links", "", "[a](", "link"},
		{"unclosed titles", "", "[a](b \"\n", "link"},
		{"unclosed angle destinations", "", "[a](<b", "link"},
		{"shortcut references", "", "![a]\n", "bracket"},
		{"nested brackets", "", "[[]]", "bracket"},
		{"reference definitions", "", "[a]:\n", "bracket"},
		{"emphasis by the rule of three", "a**b", "c* ", "emphasis"},
		{"mismatched emphasis", "", "*a_ ", "emphasis"},
		{"narrow table", "aaa|bbb\n-|-\n", "x\n", "table"},
		{"wide table", strings.Repeat("|a", 500) + "|\n" + strings.Repeat("|-", 500) + "|\n", "|a|\n", "table"},
	}
	python := "```python\n" + strings.Repeat("(", highlightBytes-1024) + "\n```"
	all := python
	seen := map[string]bool{}
	for _, c := range shapes {
		if !seen[c.bound] {
			seen[c.bound] = true
			all = atBound(all+"\n\n"+c.prefix, c.unit)
		}
	}
	// Lines nested as deep as the bounds allow, to fill a statement.
	nested := func(src, markers string) string {
		line := strings.Repeat(markers, maxNesting/strings.Count(markers, " ")) + "a\n"
		return src + "\n\n" + repeatTo(line, statementLimit-len(src)-2)
	}
	whole := []struct{ name, src string }{
		{"Python for chroma", python},
		{"block quotes 32 deep", nested("", "> ")},
		{"lists 32 deep", nested("", "- ")},
		{"ordered lists 32 deep", nested("", "1. ")},
		{"quotes and lists 32 deep", nested("", "* > ")},
		{"all at once", nested(all, "> - ")},
	}
	m := New()
	check := func(name, src string, budget time.Duration) {
		t.Helper()
		if len(src) > statementLimit {
			t.Fatalf("%s: %d bytes, more than a statement", name, len(src))
		}
		if why := markdownBounds(src); why != "" {
			t.Errorf("%s: beyond the bounds: %s", name, why)
			return
		}
		start := time.Now()
		if _, err := m.Markdown(src); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		if took > budget {
			t.Errorf("%s: rendering %d bytes took %v", name, len(src), took)
		}
		t.Logf("%-35s %8d bytes %8v", name, len(src), took.Round(time.Millisecond))
	}
	// Twice or more what each takes on the project machine, for a busy
	// one (go test runs packages side by side).
	for _, c := range shapes {
		check(c.name, atBound(c.prefix, c.unit), renderBudget/2)
	}
	for _, c := range whole {
		budget := renderBudget
		if c.name == "all at once" {
			budget = 2 * renderBudget
		}
		check(c.name, c.src, budget)
	}
}

// Real statements are far from every bound: the shipped ones, the
// synthetic ones, and the largest FeatureBench has (123 KB).
func TestMarkdownBoundsTakeRealStatements(t *testing.T) {
	var statements []string
	paths, _ := filepath.Glob(filepath.Join("..", "data", "datasets", "*", "*", "instances.jsonl"))
	dir := t.TempDir()
	repo, _ := filepath.Abs("..")
	if err := synth.Generate(dir, synth.Config{RepoRoot: repo, Instances: 200, Submissions: 1}); err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(dir, "data", "datasets", "*", "*", "instances.jsonl"))
	for _, path := range append(paths, more...) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			var in struct {
				Statement string `json:"problem_statement"`
			}
			if json.Unmarshal(sc.Bytes(), &in) == nil && in.Statement != "" {
				statements = append(statements, in.Statement)
			}
		}
		f.Close()
	}
	if len(statements) < 200 {
		t.Fatalf("found %d statements, want the shipped and the synthetic ones", len(statements))
	}
	// A statement the size of FeatureBench's largest, of the shipped ones
	// one after another.
	var big strings.Builder
	for big.Len() < 123<<10 {
		for _, s := range statements {
			big.WriteString(s + "\n\n")
		}
	}
	statements = append(statements, big.String())
	m := New()
	for i, s := range statements {
		if why := markdownBounds(s); why != "" {
			t.Errorf("statement %d (%d bytes) is beyond the bounds: %s", i, len(s), why)
			continue
		}
		out, err := m.Markdown(s)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(s, "```python") && !strings.Contains(out, `class="chroma"`) {
			t.Errorf("statement %d: its code is not highlighted", i)
		}
	}
}

// A statement beyond the bounds is its text in a pre, escaped, after a
// note saying why.
func TestMarkdownBeyondBoundsIsPlainText(t *testing.T) {
	src := strings.Repeat(">", 5000) + " <script>alert(1)</script> & more"
	out, err := New().Markdown(src)
	if err != nil {
		t.Fatal(err)
	}
	want := `<p class="footnote statement-note">Shown as plain text: blockquotes and lists nest 5000 deep on line 1; the site renders markdown up to 32 levels.</p>` + "\n" +
		`<pre class="statement-plain" tabindex="0">` + strings.Repeat("&gt;", 5000) + " &lt;script&gt;alert(1)&lt;/script&gt; &amp; more</pre>\n"
	if out != want {
		t.Errorf("got\n%q\nwant\n%q", out, want)
	}
}

// Fenced code is skipped only where goldmark surely sees code: a fence at
// the start of a line, before anything that may be HTML, up to its exact
// closing line. Elsewhere a fence's lines count as markdown, so that no
// shape hides behind a line goldmark does not take as a fence.
func TestMarkdownBoundsFences(t *testing.T) {
	bad := strings.Repeat("[a](", 20000) + "\n"
	cases := []struct {
		name, src string
		plain     bool
	}{
		{"fenced", "```\n" + bad + "```\n", false},
		{"tilde fenced", "~~~python\n" + bad + "~~~\n", false},
		{"unclosed fence", "````\n" + bad, false},
		{"closed by a longer fence", "```\n" + bad + "`````\n", false},
		{"closed, then markdown", "```\nx\n```\n" + bad, true},
		{"a shorter fence does not close", "````\n```\n" + bad + "````\n", false},
		{"a closing fence with text is none", "```\n``` x\n" + bad + "```\n", false},
		{"a backtick in the info string is no fence", "``` a`b\n" + bad + "```\n", true},
		{"indented fence in a list item", "- a\n\n  ```\n  ```\n" + bad, true},
		{"fence indented by two", "  ```\nx\n```\n" + bad, true},
		{"fence after an HTML block", "<div>\n\n```\nx\n\n```\n" + bad + "```\n", true},
		{"fence after an HTML comment", "<!--\n\n```\n-->\n" + bad, true},
		{"fence in a block quote", "> ```\n" + bad, true},
		{"fence inside a tab-indented code block", "\t```\n" + bad, true},
	}
	for _, c := range cases {
		why := markdownBounds(c.src)
		if (why != "") != c.plain {
			t.Errorf("%s: beyond the bounds: %v (%s), want %v", c.name, why != "", why, c.plain)
		}
	}
}
