package site

import (
	"bufio"
	"bytes"
	"fmt"
	"html"
	"path/filepath"
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
// is never rendered (goldmark's default omits it), images are never
// loaded, and code is highlighted with CSS classes so that the light and
// dark themes both apply.
type markup struct {
	md goldmark.Markdown
	hl *highlighter // nil: diffs are not highlighted
}

func newMarkup() *markup {
	hl := newHighlighter()
	return &markup{
		hl: hl,
		md: goldmark.New(
			goldmark.WithExtensions(extension.Table, extension.Strikethrough),
			// No html.WithUnsafe(): javascript: links are dropped, and raw
			// HTML is shown as the text it is (rawHTMLAsText).
			goldmark.WithRendererOptions(renderer.WithNodeRenderers(
				// All before goldmark's own renderers (1000).
				util.Prioritized(rawHTMLAsText{}, 100),
				util.Prioritized(hl.codeBlocks(), 100),
				util.Prioritized(statementNodes{}, 100),
			)),
		),
	}
}

// Markdown renders markdown to safe HTML; markdown beyond what goldmark
// renders in reasonable time (markdownBounds) is shown as plain text.
func (m *markup) Markdown(src string) (string, error) {
	if why := markdownBounds(src); why != "" {
		return plainStatement(src, why), nil
	}
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(src), &buf); err != nil {
		return "", fmt.Errorf("rendering markdown: %w", err)
	}
	return buf.String(), nil
}

// Highlighting takes chroma's regular-expression lexers about 6 µs a
// token whatever the language, and pyFast about as much for each word it
// has not seen, so a statement may spend at most highlightTokens tokens
// (a third of a second) and highlightBytes bytes of code on them, a patch
// as many words; code beyond is shown plain. A real statement (at most
// 123 KB in FeatureBench, not all of it code) stays within.
const (
	highlightTokens = 50_000
	highlightBytes  = 256 << 10
)

// highlightBudget is what one statement or patch may still spend.
type highlightBudget struct {
	tokens, bytes int
}

func newHighlightBudget() *highlightBudget {
	return &highlightBudget{tokens: highlightTokens, bytes: highlightBytes}
}

// words charges the words of Python code, which pyFast asks chroma about
// when it has not seen them (and chroma gives a token each at least),
// and reports whether the budget allowed them.
func (b *highlightBudget) words(code string) bool {
	n := countWords(code)
	if n > b.tokens {
		b.tokens = 0
		return false
	}
	b.tokens -= n
	return true
}

// highlighter splits code into chroma tokens: Python, the language of
// nearly every statement and patch, by pyFast where it can (with the
// tokens chroma would give), anything else by chroma within a budget.
type highlighter struct {
	python chroma.Lexer
	fast   *pyFast
	lexers lexerIndex
	// spans is the class of a span for each token type below
	// len(spans), "" where both themes draw it as plain text.
	spans []string
}

func newHighlighter() *highlighter {
	python := lexers.Get("python")
	h := &highlighter{python: python, fast: newPyFast(python), lexers: newLexerIndex()}
	plain := plainTypes()
	top := 0
	for t := range chroma.StandardTypes {
		top = max(top, int(t))
	}
	h.spans = make([]string, top+1)
	for t := range h.spans {
		if tt := chroma.TokenType(t); !plain[tt] {
			h.spans[t] = tokenClass(tt)
		}
	}
	return h
}

// spanClass is the class of the span to write a token of type t in, or
// "" for none.
func (h *highlighter) spanClass(t chroma.TokenType) string {
	if t >= 0 && int(t) < len(h.spans) {
		return h.spans[t]
	}
	return tokenClass(t)
}

// tokens returns code's tokens by lexer, coalesced as chroma.Coalesce
// does, or ok false when the budget does not allow them or the lexer
// fails. Python goes through fast (and pySegments), unless it is nil.
func (h *highlighter) tokens(lexer chroma.Lexer, code string, budget *highlightBudget, fast *pyFast) ([]chroma.Token, bool) {
	if lexer == h.python && fast != nil {
		if !budget.words(code) {
			return nil, false
		}
		if toks, ok := pySegments(fast, code); ok {
			return toks, true
		}
	}
	if len(code) > budget.bytes {
		budget.bytes = 0
		return nil, false
	}
	budget.bytes -= len(code)
	counted := &countingLexer{Lexer: lexer, left: budget.tokens}
	it, err := chroma.Coalesce(counted).Tokenise(nil, code)
	if err != nil {
		return nil, false
	}
	toks := it.Tokens()
	budget.tokens = max(counted.left, 0)
	if counted.left < 0 {
		return nil, false
	}
	return toks, true
}

// patchTokens tokenises one side of a hunk of a patch: Python only, by
// pyPatch, never by chroma, which would take milliseconds a hunk over
// thousands of patches in a build. Other languages are not highlighted.
func (h *highlighter) patchTokens(lexer chroma.Lexer, text string, budget *highlightBudget) ([]chroma.Token, bool) {
	if lexer != h.python || h.fast == nil || !budget.words(text) {
		return nil, false
	}
	return pyPatch(h.fast, text), true
}

// countWords counts the identifiers in code, roughly.
func countWords(code string) int {
	n := 0
	in := false
	for i := range len(code) {
		w := isPyWordStart(code[i]) || (in && code[i] >= '0' && code[i] <= '9')
		if w && !in {
			n++
		}
		in = w
	}
	return n
}

// countingLexer stops a lexer's token stream once it has given left
// tokens, leaving left negative.
type countingLexer struct {
	chroma.Lexer
	left int
}

func (c *countingLexer) Tokenise(options *chroma.TokeniseOptions, text string) (chroma.Iterator, error) {
	it, err := c.Lexer.Tokenise(options, text)
	if err != nil {
		return nil, err
	}
	return func() chroma.Token {
		if c.left < 0 {
			return chroma.EOF
		}
		t := it()
		if t != chroma.EOF {
			c.left--
			if c.left < 0 {
				return chroma.EOF
			}
		}
		return t
	}, nil
}

// lexerIndex finds chroma's lexer for a language name or a file name
// without chroma's own lookup, which matches every file-name pattern of
// every lexer against a name that is not a lexer's (a fenced block's
// language, chosen by whoever wrote the statement): hundreds of
// microseconds for a short name and seconds for a long one.
type lexerIndex struct {
	names map[string]chroma.Lexer // names and aliases, and lower-cased
	// Primary and alias file-name patterns: exact names, "*.ext" by
	// extension, and the few others matched one by one.
	files, aliasFiles lexerPatterns
}

type lexerPatterns struct {
	exact, ext map[string][]chroma.Lexer
	other      []lexerGlob
}

type lexerGlob struct {
	glob   string
	prefix string // its text before the first wildcard, which a match starts with
	lexer  chroma.Lexer
}

func newLexerIndex() lexerIndex {
	x := lexerIndex{names: map[string]chroma.Lexer{}}
	x.files.init()
	x.aliasFiles.init()
	all := lexers.GlobalLexerRegistry.Lexers
	// Names win over aliases, as in chroma's registry.
	for _, l := range all {
		for _, a := range l.Config().Aliases {
			x.names[a] = l
			x.names[strings.ToLower(a)] = l
		}
	}
	for _, l := range all {
		x.names[l.Config().Name] = l
		x.names[strings.ToLower(l.Config().Name)] = l
	}
	for _, l := range all {
		for _, g := range l.Config().Filenames {
			x.files.add(g, l)
		}
		for _, g := range l.Config().AliasFilenames {
			x.aliasFiles.add(g, l)
		}
	}
	return x
}

func (p *lexerPatterns) init() {
	p.exact, p.ext = map[string][]chroma.Lexer{}, map[string][]chroma.Lexer{}
}

func (p *lexerPatterns) add(glob string, l chroma.Lexer) {
	switch {
	case !strings.ContainsAny(glob, `*?[\`):
		p.exact[glob] = append(p.exact[glob], l)
	case strings.HasPrefix(glob, "*.") && !strings.ContainsAny(glob[1:], `*?[\`):
		p.ext[glob[1:]] = append(p.ext[glob[1:]], l)
	default:
		p.other = append(p.other, lexerGlob{glob, glob[:strings.IndexAny(glob, `*?[\`)], l})
	}
}

// match returns the lexer of highest priority whose pattern matches base,
// the first registered among equals.
func (p *lexerPatterns) match(base string) chroma.Lexer {
	var best chroma.Lexer
	consider := func(ls []chroma.Lexer) {
		for _, l := range ls {
			if best == nil || lexerPriority(l) > lexerPriority(best) {
				best = l
			}
		}
	}
	consider(p.exact[base])
	for i := range len(base) {
		if base[i] == '.' {
			consider(p.ext[base[i:]])
		}
	}
	for _, g := range p.other {
		if !strings.HasPrefix(base, g.prefix) {
			continue
		}
		if ok, _ := filepath.Match(g.glob, base); ok {
			consider([]chroma.Lexer{g.lexer})
		}
	}
	return best
}

func lexerPriority(l chroma.Lexer) float32 {
	if p := l.Config().Priority; p != 0 {
		return p
	}
	return 1
}

// maxLanguage is the longest language name or file name looked up.
const maxLanguage = 128

// forLanguage is chroma's lexers.Get for a fenced block's language: a
// lexer's name or alias, else a file extension or name.
func (x *lexerIndex) forLanguage(name string) chroma.Lexer {
	if name == "" || len(name) > maxLanguage {
		return nil
	}
	if l := x.names[name]; l != nil {
		return l
	}
	if l := x.names[strings.ToLower(name)]; l != nil {
		return l
	}
	if l := x.forFile("filename." + name); l != nil {
		return l
	}
	return x.forFile(name)
}

// forFile is chroma's lexers.Match: the lexer for a file's name.
func (x *lexerIndex) forFile(path string) chroma.Lexer {
	base := path[strings.LastIndexByte(path, '/')+1:]
	if base == "" || len(base) > maxLanguage {
		return nil
	}
	if l := x.files.match(base); l != nil {
		return l
	}
	return x.aliasFiles.match(base)
}

// codeBlocks highlights fenced code blocks with chroma, through one
// formatter for every statement: a chroma formatter caches the CSS of its
// style, which a formatter made per block (as goldmark-highlighting does)
// recomputes every time.
type codeBlocks struct {
	hl    *highlighter
	fast  *pyFast // the highlighter's, or nil for chroma alone
	f     *chromahtml.Formatter
	style *chroma.Style
}

func (h *highlighter) codeBlocks() codeBlocks {
	// Classes, not inline styles: the stylesheet (highlightCSS) carries
	// both the light and the dark theme.
	return codeBlocks{hl: h, fast: h.fast, f: chromahtml.New(chromahtml.WithClasses(true)), style: styles.Get("github")}
}

// newCodeBlocks is code blocks with a highlighter of their own (tests set
// fast to nil to compare with chroma alone).
func newCodeBlocks() codeBlocks { return newHighlighter().codeBlocks() }

func (c codeBlocks) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, c.render)
}

// budgetKey names the statement's highlightBudget among its document's
// attributes, which goldmark does not render.
const budgetKey = "featbench-highlight-budget"

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
	if lexer := c.hl.lexers.forLanguage(string(language)); lexer != nil {
		if toks, ok := c.hl.tokens(lexer, code.String(), statementBudget(n), c.fast); ok {
			return ast.WalkContinue, c.f.Format(w, c.style, chroma.Literator(toks...))
		}
	}
	// No lexer for the language, none named, or over the budget: plain,
	// escaped code.
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

// statementBudget is the highlighting budget of n's statement, kept on
// its document: one per Markdown call, whichever goroutine makes it.
func statementBudget(n ast.Node) *highlightBudget {
	doc := n.OwnerDocument()
	if doc == nil {
		return newHighlightBudget()
	}
	if v, ok := doc.AttributeString(budgetKey); ok {
		if b, ok := v.(*highlightBudget); ok {
			return b
		}
	}
	b := newHighlightBudget()
	doc.SetAttributeString(budgetKey, b)
	return b
}

// statementNodes renders what a statement holds differently from a page
// of its own: headings below the instance page's "Problem statement" (an
// h2), and images as links, never loaded (the site loads nothing from
// elsewhere).
type statementNodes struct{}

func (statementNodes) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindHeading, renderHeading)
	reg.Register(ast.KindImage, renderImage)
}

// headingLevel is where a statement's heading of level l sits on the
// page: h1 becomes h3, h2 h4, and so on down to h6.
func headingLevel(l int) int {
	return min(max(l, 1)+2, 6)
}

func renderHeading(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Heading)
	level := byte('0' + headingLevel(n.Level))
	if !entering {
		_, _ = w.WriteString("</h")
		_ = w.WriteByte(level)
		_, _ = w.WriteString(">\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString("<h")
	_ = w.WriteByte(level)
	// goldmark gives headings no id with the parser options used here;
	// should one come, it is kept apart from the page's own ids.
	if id, ok := n.AttributeString("id"); ok {
		if b, ok := id.([]byte); ok && len(b) > 0 {
			_, _ = w.WriteString(` id="statement-`)
			_, _ = w.Write(util.EscapeHTML(b))
			_ = w.WriteByte('"')
		}
	}
	_ = w.WriteByte('>')
	return ast.WalkContinue, nil
}

// renderImage shows an image as a link to it with its alt text, or the
// alt text alone when its URL is neither http(s) nor relative.
func renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	var alt bytes.Buffer
	aw := bufio.NewWriter(&alt)
	altText(aw, source, n)
	_ = aw.Flush()
	dest := util.URLEscape(n.Destination, true)
	if !linkableURL(dest) {
		_, _ = w.Write(alt.Bytes())
		return ast.WalkSkipChildren, nil
	}
	if alt.Len() == 0 {
		alt.WriteString("image")
	}
	_, _ = w.WriteString(`<a href="`)
	_, _ = w.Write(util.EscapeHTML(dest))
	_, _ = w.WriteString(`" rel="nofollow noopener">`)
	_, _ = w.Write(alt.Bytes())
	_, _ = w.WriteString(`</a> <span class="img-note">(image not loaded)</span>`)
	return ast.WalkSkipChildren, nil
}

// altText writes the text of an image's description, escaped, without
// its markup (a link inside an image's description would nest links).
func altText(w util.BufWriter, source []byte, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch t := c.(type) {
		case *ast.Text:
			if _, code := t.Parent().(*ast.CodeSpan); code {
				goldhtml.DefaultWriter.RawWrite(w, t.Segment.Value(source))
			} else {
				goldhtml.DefaultWriter.Write(w, t.Segment.Value(source))
			}
			if t.SoftLineBreak() || t.HardLineBreak() {
				_ = w.WriteByte(' ')
			}
		case *ast.String:
			goldhtml.DefaultWriter.Write(w, t.Value)
		case *ast.RawHTML:
			for i := range t.Segments.Len() {
				seg := t.Segments.At(i)
				goldhtml.DefaultWriter.RawWrite(w, seg.Value(source))
			}
		default:
			altText(w, source, c)
		}
	}
}

// linkableURL reports whether an image's URL, as goldmark escapes it, may
// be a link: http, https or relative. Browsers ignore tabs and newlines
// in a URL and leading control characters and spaces, so its scheme is
// read without them.
func linkableURL(u []byte) bool {
	end := bytes.IndexAny(u, ":/?#")
	if end < 0 || u[end] != ':' {
		return true // no scheme: relative
	}
	var scheme []byte
	for _, c := range u[:end] {
		if c == '\t' || c == '\n' || c == '\r' || (len(scheme) == 0 && c <= ' ') {
			continue
		}
		scheme = append(scheme, c)
	}
	s := strings.ToLower(string(scheme))
	return s == "http" || s == "https"
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
