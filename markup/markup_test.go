package markup

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
)

// Fenced code is highlighted when chroma knows the language and shown as
// escaped text when it does not; either way nothing in it becomes markup.
func TestCodeBlocks(t *testing.T) {
	m := New()
	cases := []struct {
		name, src string
		want      []string
		not       []string
	}{
		{"python", "```python\ndef f(x):\n    return \"<b>\"\n```\n",
			[]string{codeOpen, `<span class="k">def</span>`, `&lt;b&gt;`},
			[]string{"<b>"}},
		{"unknown language", "```nosuchlang\n<script>alert(1)</script>\n```\n",
			[]string{`<pre tabindex="0"><code class="language-nosuchlang">&lt;script&gt;alert(1)&lt;/script&gt;`},
			[]string{"<script>"}},
		{"no language", "```\nx < y\n```\n",
			[]string{"<pre tabindex=\"0\"><code>x &lt; y\n</code></pre>"}, nil},
		{"language with a quote", "```a\"onmouseover=x\ncode\n```\n",
			[]string{`class="language-a&quot;onmouseover=x"`}, []string{`"onmouseover`}},
	}
	for _, c := range cases {
		got, err := m.Markdown(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: output lacks %q:\n%s", c.name, w, got)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: output has %q:\n%s", c.name, n, got)
			}
		}
	}
}

// Diff marks each line by its kind and escapes its text.
func TestDiff(t *testing.T) {
	got := (&Renderer{}).Diff("diff --git a/x b/x\n@@ -1 +1 @@\n-old <a>\n+new\n same\n")
	want := `<pre class="chroma"><code><span class="gh">diff --git a/x b/x</span>` + "\n" +
		`<span class="gu">@@ -1 +1 @@</span>` + "\n" +
		`<span class="gd">-old &lt;a&gt;</span>` + "\n" +
		`<span class="gi">+new</span>` + "\n" +
		" same\n</code></pre>"
	if got != want {
		t.Errorf("Diff:\n got %q\nwant %q", got, want)
	}
}

// A statement's headings sit below the instance page's "Problem
// statement" (an h2): h1 becomes h3, and so on down to h6. None gets an
// id, which could clash with the page's own.
func TestStatementHeadings(t *testing.T) {
	m := New()
	src := "# One\n\n## Two\n\n### Three\n\n#### Four\n\n##### Five\n\n###### Six\n\nSetext one\n==========\n\nSetext two\n----------\n\n# Main {#main}\n"
	got, err := m.Markdown(src)
	if err != nil {
		t.Fatal(err)
	}
	want := "<h3>One</h3>\n<h4>Two</h4>\n<h5>Three</h5>\n<h6>Four</h6>\n<h6>Five</h6>\n<h6>Six</h6>\n" +
		"<h3>Setext one</h3>\n<h4>Setext two</h4>\n<h3>Main {#main}</h3>\n"
	if got != want {
		t.Errorf("headings:\n got %q\nwant %q", got, want)
	}
}

// Images are never loaded: each is a link to its URL with its alt text,
// or, with a URL that is neither http(s) nor relative, its alt text alone.
func TestStatementImages(t *testing.T) {
	m := New()
	note := ` <span class="img-note">(image not loaded)</span>`
	cases := []struct{ name, src, want string }{
		{"http", `![A chart](https://example.com/a.png "Title")`,
			`<p><a href="https://example.com/a.png" rel="nofollow noopener">A chart</a>` + note + "</p>\n"},
		{"relative", `![diagram](img/x.png)`, `<p><a href="img/x.png" rel="nofollow noopener">diagram</a>` + note + "</p>\n"},
		{"no alt text", `![](http://e.com/x.png)`, `<p><a href="http://e.com/x.png" rel="nofollow noopener">image</a>` + note + "</p>\n"},
		{"reference", "![logo][l]\n\n[l]: http://e.com/l.svg\n", `<p><a href="http://e.com/l.svg" rel="nofollow noopener">logo</a>` + note + "</p>\n"},
		{"markup in the alt text", `![*big* <b>x</b> [l](http://a) ` + "`c<d`" + `](http://e.com/x.png)`,
			`<p><a href="http://e.com/x.png" rel="nofollow noopener">big &lt;b&gt;x&lt;/b&gt; l c&lt;d</a>` + note + "</p>\n"},
		{"quotes in the URL", `![a](http://e.com/"onerror="x)`, `<p><a href="http://e.com/%22onerror=%22x" rel="nofollow noopener">a</a>` + note + "</p>\n"},
		{"data", `![pixel](data:image/png;base64,AAAA)`, "<p>pixel</p>\n"},
		{"javascript", `![x](javascript:alert(1))`, "<p>x</p>\n"},
		{"javascript, mixed case", `![x](JaVaScRiPt:alert(1))`, "<p>x</p>\n"},
		{"javascript, as an entity", `![x](&#106;avascript:alert(1))`, "<p>x</p>\n"},
		{"javascript, with a tab", "![x](<java\tscript:alert(1)>)", "<p>x</p>\n"},
		{"vbscript", `![x](vbscript:msgbox)`, "<p>x</p>\n"},
		{"file", `![x](file:///etc/passwd)`, "<p>x</p>\n"},
		{"an unknown scheme", `![x](foo:bar)`, "<p>x</p>\n"},
	}
	for _, c := range cases {
		got, err := m.Markdown(c.src)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		if strings.Contains(got, "<img") {
			t.Errorf("%s: an image is loaded: %s", c.name, got)
		}
	}
}

// Languages are found as chroma's lexers.Get finds them, without its
// matching of every file-name pattern against a name that is no lexer's.
func TestLexerForLanguage(t *testing.T) {
	x := newLexerIndex()
	for _, name := range []string{
		"python", "py", "Python", "PYTHON", "python3", "go", "golang", "js", "javascript", "ts", "typescript", "yaml", "yml",
		"json", "toml", "bash", "sh", "shell", "console", "shell-session", "diff", "patch", "text", "txt", "plaintext", "c", "cpp", "c++",
		"rust", "rs", "java", "html", "xml", "css", "sql", "markdown", "md", "ini", "cfg", "dockerfile", "Dockerfile", "makefile",
		"Makefile", "rst", "pycon", "ipython", "r", "ruby", "rb", "php", "nosuchlang", "", "main.go", "setup.py", "x.tar.gz",
	} {
		want := lexers.Get(name)
		if got := x.forLanguage(name); got != want {
			t.Errorf("language %q: got %v, want chroma's %v", name, lexerName(got), lexerName(want))
		}
	}
	for _, path := range []string{"a/b.py", "pkg/x.go", "Makefile", "docs/index.rst", "setup.cfg", "pyproject.toml", "x.yaml", "README.md", "a/b.unknownext", "noext"} {
		want := lexers.Match(path)
		if got := x.forFile(path); got != want {
			t.Errorf("file %q: got %v, want chroma's %v", path, lexerName(got), lexerName(want))
		}
	}
	// A long language name is no lexer's, found at once: counted, not
	// timed (a 10 ms limit failed on a busy machine). Its lookup matches
	// no pattern and copies nothing (no lower-cased copy of 1 MB); a name
	// at the length limit matches each pattern beyond the exact names and
	// extensions at most once.
	globs := 0
	defer func(m func(string, string) (bool, error)) { matchGlob = m }(matchGlob)
	matchGlob = func(p, n string) (bool, error) { globs++; return filepath.Match(p, n) }
	long := strings.Repeat("a~", 500000)
	if l := x.forLanguage(long); l != nil {
		t.Errorf("a 1 MB language name found %s", lexerName(l))
	}
	if allocs := testing.AllocsPerRun(3, func() { x.forLanguage(long) }); allocs != 0 || globs != 0 {
		t.Errorf("looking up a 1 MB language name matched %d patterns and allocated %v times, want neither", globs, allocs)
	}
	globs = 0
	x.forLanguage(strings.Repeat("a", maxLanguage-len("filename.")))
	if most := 2 * (len(x.files.other) + len(x.aliasFiles.other)); globs > most {
		t.Errorf("looking up a name at the length limit matched %d patterns, want at most %d", globs, most)
	}
	// A file name looked up again is remembered, lexer or none: the same
	// answer, without matching a pattern; past maxByFile names, still the
	// same answer.
	paths := []string{"a/b.py", "Makefile", "setup.cfg", "a/b.unknownext", "noext", "SConstruct", "x/CMakeLists.txt"}
	for _, path := range paths {
		x.forFile(path)
	}
	globs = 0
	for _, path := range paths {
		if got, want := x.forFile(path), lexers.Match(path); got != want {
			t.Errorf("file %q again: got %v, want chroma's %v", path, lexerName(got), lexerName(want))
		}
	}
	if globs != 0 {
		t.Errorf("file names looked up again matched %d patterns, want none", globs)
	}
	x.byFileSize.Store(maxByFile)
	for _, path := range []string{"y/SConstruct", "new.unknownext"} {
		if got, want := x.forFile(path), lexers.Match(path); got != want {
			t.Errorf("file %q beyond the remembered: got %v, want chroma's %v", path, lexerName(got), lexerName(want))
		}
	}
	if _, ok := x.byFile.Load("new.unknownext"); ok {
		t.Errorf("a name beyond maxByFile was remembered")
	}
}

func lexerName(l chroma.Lexer) string {
	if l == nil {
		return "none"
	}
	return l.Config().Name
}

// A statement spends at most the highlighting budget on chroma: code
// beyond it is shown plain, escaped.
func TestCodeBlocksBudget(t *testing.T) {
	m := New()
	block := "```js\n" + strings.Repeat("f(a, b); // <c>\n", highlightTokens/16) + "```\n\n"
	got, err := m.Markdown(strings.Repeat(block, 3))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(got, codeOpen); n == 0 || n == 3 {
		t.Errorf("%d of 3 blocks over the budget highlighted, want some but not all", n)
	}
	if !strings.Contains(got, `<pre tabindex="0"><code class="language-js">f(a, b); // &lt;c&gt;`) {
		t.Errorf("a block over the budget is not shown plain")
	}
}

// A statement's outline fits the page's: its shallowest heading is an h3
// (below the page's h2) and no heading is more than one level below the
// one before, wherever the statement starts and however it skips (axe's
// heading-order: a statement's "##" was an h4 right after the page's h2).
func TestStatementHeadingOrder(t *testing.T) {
	m := New()
	for _, c := range []struct{ name, src, want string }{
		{"starts at h2", "## Task\n\n### Detail\n", "<h3>Task</h3>\n<h4>Detail</h4>\n"},
		{"starts at h4", "#### Interface\n\ntext\n\n##### More\n", "<h3>Interface</h3>\n<p>text</p>\n<h4>More</h4>\n"},
		{"skips a level", "# Title\n\n### Skipped\n\n## Back\n", "<h3>Title</h3>\n<h4>Skipped</h4>\n<h4>Back</h4>\n"},
		{"in a quote", "## A\n\n> #### Quoted\n", "<h3>A</h3>\n<blockquote>\n<h4>Quoted</h4>\n</blockquote>\n"},
	} {
		got, err := m.Markdown(c.src)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// Every block of a statement that can scroll sideways takes the keyboard's
// focus (axe's scrollable-region-focusable): fenced code, highlighted or
// not, indented code, raw HTML shown as text, a statement shown plain.
func TestStatementCodeFocusable(t *testing.T) {
	m := New()
	src := "```python\nx = 1\n```\n\n```nosuchlang\ny\n```\n\n    indented\n\n<div>\nraw\n</div>\n"
	got, err := m.Markdown(src)
	if err != nil {
		t.Fatal(err)
	}
	if pres, focusable := strings.Count(got, "<pre"), strings.Count(got, `tabindex="0"`); pres != 4 || focusable != pres {
		t.Errorf("%d of %d pre elements take the focus, want all of 4:\n%s", focusable, pres, got)
	}
	plain, _ := m.Markdown(strings.Repeat(">", 100) + " x")
	if !strings.Contains(plain, `<pre class="statement-plain" tabindex="0">`) {
		t.Errorf("a statement shown plain is not focusable: %s", plain)
	}
}
