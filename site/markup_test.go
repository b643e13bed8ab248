package site

import (
	"strings"
	"testing"
)

// Fenced code is highlighted when chroma knows the language and shown as
// escaped text when it does not; either way nothing in it becomes markup.
func TestCodeBlocks(t *testing.T) {
	m := newMarkup()
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
