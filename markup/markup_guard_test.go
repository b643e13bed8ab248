package markup

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/synth"
)

// statementLimit is the largest statement bench accepts.
const statementLimit = 1 << 20

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
// have, renders in bounded work: as markdown within the bounds' limits
// (counted, withinLimits) or, beyond the bounds, as plain text.
func TestMarkdownPathologicalShapes(t *testing.T) {
	m := New()
	for _, c := range pathologicalMarkdown {
		src := c.gen(statementLimit)
		if len(src) > statementLimit {
			src = src[:statementLimit]
		}
		out, err := m.Markdown(src)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		plain := strings.HasPrefix(out, `<p class="footnote statement-note">Shown as plain text: `)
		switch {
		case c.want == mustBePlain && !plain:
			t.Errorf("%s: rendered as markdown, want plain text", c.name)
		case c.want == mustRender && plain:
			t.Errorf("%s: shown as plain text, want markdown", c.name)
		case !plain:
			withinLimits(t, c.name, src)
		}
		t.Logf("%-45s plain %v", c.name, plain)
	}
}

// withinLimits checks goldmark's counted work on src (countWork) against
// the limits markdownBounds estimates it against.
func withinLimits(t *testing.T, name, src string) markdownWork {
	t.Helper()
	w := countWork(src)
	for _, c := range []struct {
		what       string
		got, limit int
	}{
		{"link scanning", w.link, maxLinkWork},
		{"reference lookups", w.bracket, maxBracketWork},
		{"emphasis matching", w.delimiter, maxDelimiterWork},
		{"table cells", w.cells, maxTableCells},
		{"container continuations", w.continues, (maxNesting + 1) * w.lines},
	} {
		if c.got > c.limit {
			t.Errorf("%s (%d bytes): goldmark's %s comes to %d, beyond the bounds' %d", name, len(src), c.what, c.got, c.limit)
		}
	}
	return w
}

// boundShapes are the worst shapes under each bound: a prefix, then a unit
// repeated as often as the bounds allow (atBound). The first of each bound
// also goes into a statement of all of them at once.
var boundShapes = []struct {
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

// atBound is prefix, then unit repeated as often as the bounds allow.
func atBound(prefix, unit string) string {
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

// wholeStatements are statements as large as bench accepts, filled to the
// bounds: Python for chroma's lexer, containers nested as deep as the
// bounds allow, and every bound's worst shape at once.
func wholeStatements() []struct{ name, src string } {
	python := "```python\n" + strings.Repeat("(", highlightBytes-1024) + "\n```"
	all := python
	seen := map[string]bool{}
	for _, c := range boundShapes {
		if !seen[c.bound] {
			seen[c.bound] = true
			all = atBound(all+"\n\n"+c.prefix, c.unit)
		}
	}
	nested := func(src, markers string) string {
		line := strings.Repeat(markers, maxNesting/strings.Count(markers, " ")) + "a\n"
		return src + "\n\n" + repeatTo(line, statementLimit-len(src)-2)
	}
	return []struct{ name, src string }{
		{"Python for chroma", python},
		{"block quotes 32 deep", nested("", "> ")},
		{"lists 32 deep", nested("", "- ")},
		{"ordered lists 32 deep", nested("", "1. ")},
		{"quotes and lists 32 deep", nested("", "* > ")},
		{"all at once", nested(all, "> - ")},
	}
}

// The bounds hold, counted, not timed (a time limit failed on a busy
// machine): on the worst shape under each bound, and on whole statements
// filled to every bound at once, goldmark's work as countWork counts it
// (bytes link parsing scans, lines reference lookups walk, delimiters
// matched against each other, table cells, containers continued) stays
// within the limits markdownBounds estimates it against, and the
// statement renders as markdown. What a unit of each costs in time is
// BenchmarkMarkdownBounds' to measure: at the limits, about a second on
// the project machine (docs/performance.md).
func TestMarkdownBoundsHold(t *testing.T) {
	m := New()
	check := func(name, src string) {
		t.Helper()
		if len(src) > statementLimit {
			t.Fatalf("%s: %d bytes, more than a statement", name, len(src))
		}
		if why := markdownBounds(src); why != "" {
			t.Errorf("%s: beyond the bounds: %s", name, why)
			return
		}
		w := withinLimits(t, name, src)
		out, err := m.Markdown(src)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(out, `<p class="footnote statement-note">`) {
			t.Errorf("%s: shown as plain text within the bounds", name)
		}
		t.Logf("%-35s %8d bytes: %+v", name, len(src), w)
	}
	for _, c := range boundShapes {
		check(c.name, atBound(c.prefix, c.unit))
	}
	for _, c := range wholeStatements() {
		check(c.name, c.src)
	}
}

// BenchmarkMarkdownBounds renders the worst shape under each bound, and
// reports its time per unit of counted work (countWork): what the bounds'
// limits cost on this machine.
//
//	go test ./markup -run '^$' -bench MarkdownBounds -benchtime 3x
func BenchmarkMarkdownBounds(b *testing.B) {
	m := New()
	for _, c := range boundShapes {
		src := atBound(c.prefix, c.unit)
		// The units of the kind of work the shape makes most of, against
		// its limit.
		w, units, most := countWork(src), 0, 0.0
		for _, k := range [][2]int{{w.link, maxLinkWork}, {w.bracket, maxBracketWork}, {w.delimiter, maxDelimiterWork}, {w.cells, maxTableCells}} {
			if f := float64(k[0]) / float64(k[1]); f > most {
				units, most = k[0], f
			}
		}
		b.Run(strings.ReplaceAll(c.name, " ", "_"), func(b *testing.B) {
			for b.Loop() {
				if _, err := m.Markdown(src); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(max(units, 1)), "ns/unit")
			b.ReportMetric(float64(units), "units")
			b.ReportMetric(most, "of-limit")
		})
	}
	for _, c := range wholeStatements() {
		b.Run(strings.ReplaceAll(c.name, " ", "_"), func(b *testing.B) {
			for b.Loop() {
				if _, err := m.Markdown(c.src); err != nil {
					b.Fatal(err)
				}
			}
		})
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
