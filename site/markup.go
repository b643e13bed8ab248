package site

import (
	"bytes"
	"fmt"
	"html"
	"strings"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	goldhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/util"
)

// markup renders problem statements and patches to HTML. Markdown raw HTML
// is never rendered (goldmark's default omits it), and code is highlighted
// with CSS classes so that the light and dark themes both apply.
type markup struct {
	md goldmark.Markdown
}

func newMarkup() *markup {
	return &markup{
		md: goldmark.New(
			goldmark.WithExtensions(extension.Table, extension.Strikethrough),
			// No html.WithUnsafe(): javascript: links are dropped, and raw
			// HTML is shown as the text it is (rawHTMLAsText).
			goldmark.WithRendererOptions(renderer.WithNodeRenderers(
				// Both before goldmark's own renderers (1000).
				util.Prioritized(rawHTMLAsText{}, 100),
				util.Prioritized(newCodeBlocks(), 100),
			)),
		),
	}
}

// Markdown renders markdown to safe HTML.
func (m *markup) Markdown(src string) (string, error) {
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(src), &buf); err != nil {
		return "", fmt.Errorf("rendering markdown: %w", err)
	}
	return buf.String(), nil
}

// codeBlocks highlights fenced code blocks with chroma, through one
// formatter for every statement: a chroma formatter caches the CSS of its
// style, which a formatter made per block (as goldmark-highlighting does)
// recomputes every time. Python, the language of nearly every statement,
// is tokenised by pyFast where it can, with the tokens chroma would give.
type codeBlocks struct {
	f      *chromahtml.Formatter
	style  *chroma.Style
	python chroma.Lexer
	fast   *pyFast // Python without chroma's regular expressions, when it can
}

func newCodeBlocks() codeBlocks {
	python := lexers.Get("python")
	// Classes, not inline styles: the stylesheet (highlightCSS) carries
	// both the light and the dark theme.
	return codeBlocks{
		f:      chromahtml.New(chromahtml.WithClasses(true)),
		style:  styles.Get("github"),
		python: python,
		fast:   newPyFast(python),
	}
}

func (c codeBlocks) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, c.render)
}

func (c codeBlocks) render(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.FencedCodeBlock)
	var code bytes.Buffer
	for i := range n.Lines().Len() {
		seg := n.Lines().At(i)
		code.Write(seg.Value(source))
	}
	language := n.Language(source)
	var lexer chroma.Lexer
	if language != nil {
		lexer = lexers.Get(string(language))
	}
	if lexer == c.python && c.fast != nil {
		if toks, ok := c.fast.tokens(code.String()); ok {
			return ast.WalkContinue, c.f.Format(w, c.style, chroma.Literator(toks...))
		}
	}
	if lexer != nil {
		it, err := chroma.Coalesce(lexer).Tokenise(nil, code.String())
		if err == nil {
			return ast.WalkContinue, c.f.Format(w, c.style, it)
		}
	}
	// No lexer for the language, or none named: plain, escaped code.
	_, _ = w.WriteString("<pre><code")
	if language != nil {
		_, _ = w.WriteString(` class="language-`)
		goldhtml.DefaultWriter.Write(w, language)
		_ = w.WriteByte('"')
	}
	_ = w.WriteByte('>')
	goldhtml.DefaultWriter.RawWrite(w, code.Bytes())
	_, _ = w.WriteString("</code></pre>\n")
	return ast.WalkContinue, nil
}

// rawHTMLAsText renders markdown's raw HTML, inline or as a block, as
// escaped text: a statement that writes "<div>" shows "<div>", and no
// markup from data reaches the page.
type rawHTMLAsText struct{}

func (rawHTMLAsText) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindHTMLBlock, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		b := n.(*ast.HTMLBlock)
		_, _ = w.WriteString(`<pre class="raw-html"><code>`)
		lines := b.Lines()
		for i := range lines.Len() {
			seg := lines.At(i)
			_, _ = w.WriteString(html.EscapeString(string(seg.Value(source))))
		}
		if b.HasClosure() {
			_, _ = w.WriteString(html.EscapeString(string(b.ClosureLine.Value(source))))
		}
		_, _ = w.WriteString("</code></pre>\n")
		return ast.WalkSkipChildren, nil
	})
	reg.Register(ast.KindRawHTML, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkSkipChildren, nil
		}
		r := n.(*ast.RawHTML)
		_, _ = w.WriteString(`<code class="raw-html">`)
		for i := range r.Segments.Len() {
			seg := r.Segments.At(i)
			_, _ = w.WriteString(html.EscapeString(string(seg.Value(source))))
		}
		_, _ = w.WriteString("</code>")
		return ast.WalkSkipChildren, nil
	})
}

// Diff highlights a unified diff. A diff's syntax is one prefix per line,
// so classifying lines directly is enough; it emits chroma's classes (gh,
// gu, gi, gd) so one stylesheet colours both, at a fraction of the cost of
// chroma's regular-expression lexer over thousands of patches.
func (m *markup) Diff(src string) string {
	var b strings.Builder
	b.Grow(len(src) + len(src)/4)
	b.WriteString(`<pre class="chroma"><code>`)
	for line := range strings.Lines(src) {
		text := strings.TrimSuffix(line, "\n")
		class := ""
		switch {
		case strings.HasPrefix(text, "+++ "), strings.HasPrefix(text, "--- "),
			strings.HasPrefix(text, "diff "), strings.HasPrefix(text, "index "),
			strings.HasPrefix(text, "new file"), strings.HasPrefix(text, "deleted file"):
			class = "gh"
		case strings.HasPrefix(text, "@@"):
			class = "gu"
		case strings.HasPrefix(text, "+"):
			class = "gi"
		case strings.HasPrefix(text, "-"):
			class = "gd"
		}
		// No per-line wrapper as chroma writes: a pre keeps the lines,
		// and patches are a quarter of an instance page.
		if class != "" {
			b.WriteString(`<span class="` + class + `">`)
		}
		b.WriteString(html.EscapeString(text))
		if class != "" {
			b.WriteString("</span>")
		}
		b.WriteString("\n")
	}
	b.WriteString("</code></pre>")
	return b.String()
}

// DiffFiles lists the files a unified diff touches, from its "+++ b/" and
// "--- a/" headers (a deleted file has only the latter).
func DiffFiles(patch string) []string {
	var files []string
	seen := map[string]bool{}
	add := func(f string) {
		if f != "" && f != "/dev/null" && !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	var minus string
	for _, line := range strings.Split(patch, "\n") {
		switch {
		case strings.HasPrefix(line, "--- "):
			minus = strings.TrimPrefix(strings.Fields(line + " ")[1], "a/")
		case strings.HasPrefix(line, "+++ "):
			plus := strings.Fields(line + " ")[1]
			if plus == "/dev/null" {
				add(minus)
			} else {
				add(strings.TrimPrefix(plus, "b/"))
			}
		}
	}
	return files
}

// highlightCSS is the stylesheet for highlighted code: a light style, and a
// dark one applied by the reader's preference or the theme toggle.
func highlightCSS() (string, error) {
	f := chromahtml.New(chromahtml.WithClasses(true))
	var light, dark bytes.Buffer
	if err := f.WriteCSS(&light, styles.Get("github")); err != nil {
		return "", fmt.Errorf("writing highlight CSS: %w", err)
	}
	if err := f.WriteCSS(&dark, styles.Get("github-dark")); err != nil {
		return "", fmt.Errorf("writing highlight CSS: %w", err)
	}
	var b strings.Builder
	b.WriteString("/* code highlighting (generated by chroma) */\n")
	b.WriteString(light.String())
	scoped := func(prefix string) string {
		var s strings.Builder
		for _, line := range strings.Split(dark.String(), "\n") {
			brace := strings.Index(line, "{")
			if brace < 0 {
				s.WriteString(line + "\n")
				continue
			}
			start := 0
			if i := strings.Index(line[:brace], "*/"); i >= 0 {
				start = i + 2
			}
			sels := strings.Split(line[start:brace], ",")
			for i, sel := range sels {
				sels[i] = prefix + strings.TrimSpace(sel)
			}
			s.WriteString(strings.Join(sels, ", ") + " " + line[brace:] + "\n")
		}
		return s.String()
	}
	b.WriteString("@media (prefers-color-scheme: dark) {\n")
	b.WriteString(scoped(`:root:not([data-theme="light"]) `))
	b.WriteString("}\n")
	b.WriteString(scoped(`:root[data-theme="dark"] `))
	return b.String(), nil
}
