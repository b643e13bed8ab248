package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fenced code is highlighted when chroma knows the language and shown as
// escaped text when it does not; either way nothing in it becomes markup.
func TestCodeBlocks(t *testing.T) {
	m := newMarkup(nil)
	cases := []struct {
		name, src string
		want      []string
		not       []string
	}{
		{"python", "```python\ndef f(x):\n    return \"<b>\"\n```\n",
			[]string{`<pre class="chroma"><code>`, `<span class="k">def</span>`, `&lt;b&gt;`},
			[]string{"<b>"}},
		{"unknown language", "```nosuchlang\n<script>alert(1)</script>\n```\n",
			[]string{`<pre><code class="language-nosuchlang">&lt;script&gt;alert(1)&lt;/script&gt;`},
			[]string{"<script>"}},
		{"no language", "```\nx < y\n```\n",
			[]string{"<pre><code>x &lt; y\n</code></pre>"}, nil},
		{"language with a quote", "```a\"onmouseover=x\ncode\n```\n",
			[]string{`class="language-a&quot;onmouseover=x"`}, []string{`"onmouseover`}},
	}
	for _, c := range cases {
		got, err := m.render(c.src)
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
	got := (&markup{}).Diff("diff --git a/x b/x\n@@ -1 +1 @@\n-old <a>\n+new\n same\n")
	want := `<pre class="chroma"><code><span class="gh">diff --git a/x b/x</span>` + "\n" +
		`<span class="gu">@@ -1 +1 @@</span>` + "\n" +
		`<span class="gd">-old &lt;a&gt;</span>` + "\n" +
		`<span class="gi">+new</span>` + "\n" +
		" same\n</code></pre>"
	if got != want {
		t.Errorf("Diff:\n got %q\nwant %q", got, want)
	}
}

// A statement rendered once in a build, by warm or by a page, is not
// rendered again, with or without a memo file.
func TestMemoRendersEachStatementOnce(t *testing.T) {
	m := openMemo("")
	calls := 0
	render := func(src string) (string, error) {
		calls++
		return "<p>" + src + "</p>", nil
	}
	for range 3 {
		out, err := m.get("x", render)
		if err != nil || out != "<p>x</p>" {
			t.Fatalf("get = %q, %v", out, err)
		}
	}
	if calls != 1 {
		t.Errorf("rendered %d times, want once", calls)
	}
}

// A saved memo serves the next build without rendering, keeps only the
// entries that build used, and a broken memo file only means rendering.
func TestMemoSurvivesBuilds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "render", "statements.gob")
	calls := 0
	render := func(src string) (string, error) {
		calls++
		return "<p>" + src + "</p>", nil
	}
	first := openMemo(path) // no file yet
	for _, src := range []string{"a", "b"} {
		if _, err := first.get(src, render); err != nil {
			t.Fatal(err)
		}
	}
	if err := first.save(); err != nil {
		t.Fatal(err)
	}

	second := openMemo(path)
	if out, err := second.get("a", render); err != nil || out != "<p>a</p>" {
		t.Fatalf("get from the saved memo = %q, %v", out, err)
	}
	if calls != 2 {
		t.Errorf("rendered %d times after reopening, want 2 (only the first build's)", calls)
	}
	if err := second.save(); err != nil {
		t.Fatal(err)
	}
	if third := openMemo(path); len(third.old) != 1 {
		t.Errorf("memo has %d entries after a build that used one, want 1", len(third.old))
	}

	// A memo cut short (a disk that filled up, say) gives no entries, not
	// the ones before the cut.
	two := openMemo(path)
	for _, src := range []string{"a", "b"} {
		if _, err := two.get(src, render); err != nil {
			t.Fatal(err)
		}
	}
	if err := two.save(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw[:len(raw)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	if cut := openMemo(path); len(cut.old) != 0 {
		t.Errorf("truncated memo gave %d entries, want none", len(cut.old))
	}

	if err := os.WriteFile(path, []byte("not a memo"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := calls
	broken := openMemo(path)
	if out, err := broken.get("a", render); err != nil || out != "<p>a</p>" || calls != before+1 {
		t.Errorf("broken memo: get = %q, %v after %d renders, want a fresh render", out, err, calls-before)
	}
}
