package markup

import (
	"fmt"
	"html"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A line that is exactly "--- " or "+++ ", or a removed "-- x" or added
// "++ x" inside a hunk, is read as git reads it and panics nothing.
func TestDiffHeaderLikeLines(t *testing.T) {
	m := New()
	cases := []struct {
		name, patch string
		files       []string
		classes     []string // each line's class
	}{
		{"bare markers", "--- \n+++ \n", nil, []string{"gh", "gh"}},
		{"bare markers without space", "---\n+++\n", nil, []string{"gh", "gh"}},
		{"removed and added lines like headers",
			"diff --git a/q.sql b/q.sql\n--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n--- old comment\n-- \n+++ new\n++ \n",
			[]string{"q.sql"}, []string{"gh", "gh", "gh", "gu", "gd", "gd", "gi", "gi"}},
		{"removed line \"- \"", "--- a/x\n+++ b/x\n@@ -1 +0,0 @@\n-- \n", []string{"x"}, []string{"gh", "gh", "gu", "gd"}},
		{"removed line \"-- \"", "--- a/x.sql\n+++ b/x.sql\n@@ -1,2 +1 @@\n--- \n-x\n+y\n", []string{"x.sql"}, []string{"gh", "gh", "gu", "gd", "gd", "gi"}},
		{"next file after a full hunk", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-c\n+d\n",
			[]string{"x", "y"}, []string{"gh", "gh", "gu", "gd", "gi", "gh", "gh", "gu", "gd", "gi"}},
		{"hunk without counts", "--- a/x\n+++ b/x\n@@ bad @@\n-a\n+b\n--- a/y\n+++ b/y\n",
			[]string{"x", "y"}, []string{"gh", "gh", "gu", "gd", "gi", "gh", "gh"}},
		{"truncated hunk", "--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n-a\ndiff --git a/y b/y\n", []string{"x", "y"}, []string{"gh", "gh", "gu", "gd", "gh"}},
		{"no newline at end", "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b", []string{"x"}, []string{"gh", "gh", "gu", "gd", "", "gi"}},
	}
	for _, c := range cases {
		if got := DiffFiles(c.patch); !slices.Equal(got, c.files) {
			t.Errorf("%s: DiffFiles = %q, want %q", c.name, got, c.files)
		}
		out := m.Diff(c.patch)
		checkDiffHTML(t, c.name, c.patch, out)
		if got := lineClasses(out); !slices.Equal(got, c.classes) {
			t.Errorf("%s: line classes %q, want %q\n%s", c.name, got, c.classes, out)
		}
	}
}

// DiffFiles names each file once, by its new name or, deleted, its old
// one; paths may be quoted, have spaces, or a timestamp after a tab.
func TestDiffFiles(t *testing.T) {
	cases := []struct {
		name, patch string
		want        []string
	}{
		{"git", "diff --git a/a.py b/a.py\nindex 1..2 100644\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n" +
			"diff --git a/b.py b/b.py\nnew file mode 100644\n--- /dev/null\n+++ b/b.py\n@@ -0,0 +1 @@\n+z\n" +
			"diff --git a/c.py b/c.py\ndeleted file mode 100644\n--- a/c.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-w\n", []string{"a.py", "b.py", "c.py"}},
		{"twice", "--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n--- a/a\n+++ b/a\n@@ -3 +3 @@\n-x\n+y\n", []string{"a"}},
		{"space in the name", "--- a/my file.py\t\n+++ b/my file.py\t\n", []string{"my file.py"}},
		{"timestamp", "--- a/x.py\t2024-01-01 00:00:00\n+++ b/x.py\t2024-01-02 00:00:00\n", []string{"x.py"}},
		{"quoted", "--- \"a/caf\\303\\251.py\"\n+++ \"b/caf\\303\\251.py\"\n", []string{"café.py"}},
		{"binary", "diff --git a/logo.png b/logo.png\nnew file mode 100644\nBinary files /dev/null and b/logo.png differ\n", []string{"logo.png"}},
		{"rename", "diff --git a/old.py b/new.py\nsimilarity index 100%\nrename from old.py\nrename to new.py\n", []string{"new.py"}},
		{"crlf", "--- a/x.py\r\n+++ b/x.py\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n", []string{"x.py"}},
		{"not a diff", "hello\nworld\n", nil},
		{"empty", "", nil},
	}
	for _, c := range cases {
		if got := DiffFiles(c.patch); !slices.Equal(got, c.want) {
			t.Errorf("%s: DiffFiles = %q, want %q", c.name, got, c.want)
		}
	}
}

// The code of a hunk is highlighted by its file's language, the old side
// and the new side each as one text (a docstring across lines stays a
// string), inside the line classes.
func TestDiffHighlighting(t *testing.T) {
	m := New()
	patch := "diff --git a/pkg/a.py b/pkg/a.py\n--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1,6 +1,7 @@\n" +
		" import os\n" +
		" def f(x):\n" +
		"-    \"\"\"Old.\n" +
		"-    <b> & more\n" +
		"+    \"\"\"New.\n" +
		"+    and more\n" +
		"+    \"\"\"\n" +
		"-    \"\"\"\n" +
		"     return len(x)  # count\n" +
		"diff --git a/notes.unknownext b/notes.unknownext\n--- a/notes.unknownext\n+++ b/notes.unknownext\n@@ -1 +1 @@\n-def x\n+def y\n"
	got := m.Diff(patch)
	checkDiffHTML(t, "python", patch, got)
	for _, want := range []string{
		` <span class="kn">import</span> <span class="nn">os</span>` + "\n",
		` <span class="k">def</span> <span class="nf">f</span>(x):` + "\n",
		`<span class="gd">-    <span class="s2">&#34;&#34;&#34;Old.</span></span>` + "\n",
		`<span class="gd">-<span class="s2">    &lt;b&gt; &amp; more</span></span>` + "\n",
		`<span class="gi">+<span class="s2">    and more</span></span>` + "\n",
		`<span class="gd">-<span class="s2">    &#34;&#34;&#34;</span></span>` + "\n",
		`     <span class="k">return</span> <span class="nb">len</span>(x)  <span class="c1"># count</span>` + "\n",
		// No lexer for the file: lines only marked.
		`<span class="gd">-def x</span>` + "\n" + `<span class="gi">+def y</span>` + "\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("highlighted diff lacks %q:\n%s", want, got)
		}
	}
}

// A patch spends at most the highlighting budget: a huge one is marked
// line by line, unhighlighted beyond it (the budget counts words, so the
// check needs no clock).
func TestDiffHighlightBudget(t *testing.T) {
	m := New()
	var b strings.Builder
	b.WriteString("--- a/x.py\n+++ b/x.py\n@@ -0,0 +1,100000 @@\n")
	for i := range 100000 {
		fmt.Fprintf(&b, "+x%d = y%d\n", i, i)
	}
	got := m.Diff(b.String())
	checkDiffHTML(t, "huge", b.String(), got)
	if strings.Contains(got, `<span class="o">`) {
		t.Errorf("a patch over the budget was highlighted")
	}
}

// checkDiffHTML checks that out is well-formed HTML for a diff of src:
// the pre and code around, spans balanced and of known classes, nothing
// else marked up, and the text, unescaped, src itself.
func checkDiffHTML(t testing.TB, name, src, out string) {
	t.Helper()
	const open, close = `<pre class="chroma"><code>`, `</code></pre>`
	if !strings.HasPrefix(out, open) || !strings.HasSuffix(out, close) {
		t.Errorf("%s: output is not one pre: %q", name, out)
		return
	}
	body := out[len(open) : len(out)-len(close)]
	depth := 0
	var text strings.Builder
	last := 0
	for _, m := range diffTag.FindAllStringIndex(body, -1) {
		text.WriteString(body[last:m[0]])
		last = m[1]
		if body[m[0]+1] == '/' {
			depth--
			if depth < 0 {
				t.Errorf("%s: a span closes that is not open: %q", name, out)
				return
			}
		} else {
			depth++
		}
	}
	text.WriteString(body[last:])
	if depth != 0 {
		t.Errorf("%s: %d spans left open: %q", name, depth, out)
	}
	raw := text.String()
	if strings.ContainsAny(raw, "<>\"'") {
		t.Errorf("%s: unescaped markup in the text: %q", name, raw)
	}
	if strings.Contains(entities.Replace(raw), "&") {
		t.Errorf("%s: a bare & in the text: %q", name, raw)
	}
	want := src
	if want != "" && !strings.HasSuffix(want, "\n") {
		want += "\n"
	}
	if got := html.UnescapeString(raw); got != want {
		t.Errorf("%s: the text is not the diff:\n got %q\nwant %q", name, got, want)
	}
}

var (
	diffTag  = regexp.MustCompile(`<span class="[a-z0-9]+">|</span>`)
	entities = strings.NewReplacer("&lt;", "", "&gt;", "", "&amp;", "", "&#39;", "", "&#34;", "")
)

// lineClasses returns the class of the span each line of a rendered diff
// starts with, "" for none.
func lineClasses(out string) []string {
	body := strings.TrimSuffix(strings.TrimPrefix(out, `<pre class="chroma"><code>`), "</code></pre>")
	var classes []string
	for _, l := range strings.SplitAfter(body, "\n") {
		if l == "" {
			continue
		}
		class := ""
		if rest, ok := strings.CutPrefix(l, `<span class="`); ok {
			class, _, _ = strings.Cut(rest, `"`)
		}
		classes = append(classes, class)
	}
	return classes
}

// Whatever the patch, Diff and DiffFiles do not panic, Diff's output is
// well-formed and says the patch, and DiffAndFiles gives both of them.
func FuzzDiff(f *testing.F) {
	for _, s := range []string{
		"", "--- ", "+++ ", "--- \n+++ \n", "-- \n", "@@ -1 +1 @@\n-- \n", "@@\n",
		"diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-\"\"\"a\n+'''b\n c\n",
		"--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-func f() {\n+func g() { return \"<&>\" }\n",
		"--- \"a/\\x\"\n+++ \"b\n@@ -99999999999 +1,2 @@\n\\\n \r\n",
	} {
		f.Add(s)
	}
	m := New()
	f.Fuzz(func(t *testing.T, patch string) {
		files := DiffFiles(patch)
		html := m.Diff(patch)
		checkDiffHTML(t, "input", patch, html)
		if h, f := m.DiffAndFiles(patch); h != html || !slices.Equal(f, files) {
			t.Errorf("DiffAndFiles(%q) = %q, %q; Diff and DiffFiles give %q, %q", patch, h, f, html, files)
		}
	})
}

// A hunk that starts inside a docstring reads its first lines as the
// docstring they are, and the code after the closing quotes as code (they
// were read as code, and all after the quotes as a string); one that
// opens a docstring it does not close reads as before.
func TestDiffHunkInsideDocstring(t *testing.T) {
	m := New()
	inside := "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -10,6 +10,8 @@ def area(r):\n" +
		"     Parameters\n" +
		"     ----------\n" +
		"     r : float, don't pass a <str>\n" +
		"     \"\"\"\n" +
		"+    if r < 0:\n" +
		"+        raise ValueError(\"negative\")\n" +
		"     return 3.14 * r * r\n"
	got := m.Diff(inside)
	checkDiffHTML(t, "inside a docstring", inside, got)
	for _, want := range []string{
		`<span class="s2">    Parameters</span>`,
		`<span class="s2">    r : float, don&#39;t pass a &lt;str&gt;</span>`,
		`<span class="s2">    &#34;&#34;&#34;</span>`,
		`<span class="gi">+    <span class="k">if</span> r <span class="o">&lt;</span> <span class="mi">0</span>:</span>`,
		`     <span class="k">return</span> <span class="mf">3.14</span>`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("a hunk starting inside a docstring lacks %q:\n%s", want, got)
		}
	}
	for _, c := range []struct{ name, text, want string }{
		{"closing after prose", "    the value.\"\"\"\n    return x\n", `"""`},
		{"closing alone after prose", "    Returns\n    -------\n    \"\"\"\n", `"""`},
		{"closing single quotes", "    a note\n    '''\n    x = 1\n", `'''`},
		{"closing before a call", "    {name}\n\"\"\".format(name=n)\n", `"""`},
		{"opening after a header", "def f():\n    \"\"\"\n    Doc.\n", ""},
		{"opening with text", "    \"\"\"Doc starts.\n    more\n", ""},
		{"opening after =", "    x = r\"\"\"\n    text\n", ""},
		{"opening after (", "    print(\"\"\"\n    text\n", ""},
		{"opening after return", "    return \"\"\"\n", ""},
		{"balanced", "    \"\"\"Doc.\"\"\"\n    x = 1\n", ""},
		{"alone at the start", "    \"\"\"\n    x = 1\n", ""},
	} {
		if got := pyOpenQuote(c.text); got != c.want {
			t.Errorf("%s: pyOpenQuote = %q, want %q", c.name, got, c.want)
		}
	}
}
