// Package markup renders what an instance page shows as text: problem
// statements (markdown, with fenced code highlighted) and patches (unified
// diffs, highlighted file by file), and the stylesheet of the highlighting.
// It knows nothing of pages; the site package assembles them.
package markup

import (
	"bufio"
	"bytes"
	"fmt"
	"html"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/lexers"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	goldhtml "github.com/yuin/goldmark/renderer/html"
	gmtext "github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Renderer renders problem statements and patches to HTML. Markdown raw
// HTML is never rendered (goldmark's default omits it), images are never
// loaded, and code is highlighted with CSS classes so that the light and
// dark themes both apply. One Renderer is safe for concurrent use.
type Renderer struct {
	md goldmark.Markdown
	hl *highlighter // nil: diffs are not highlighted
}

// New returns a Renderer with every lexer and word table ready.
func New() *Renderer {
	hl := newHighlighter()
	return &Renderer{
		hl: hl,
		md: goldmark.New(
			goldmark.WithParser(newParser(parserParts())),
			// No html.WithUnsafe(): javascript: links are dropped, and raw
			// HTML is shown as the text it is (rawHTMLAsText).
			goldmark.WithRendererOptions(renderer.WithNodeRenderers(
				// All before goldmark's own renderers (1000).
				util.Prioritized(rawHTMLAsText{}, 100),
				util.Prioritized(hl.codeBlocks(), 100),
				util.Prioritized(statementNodes{}, 100),
				// The extensions' renderers, as their Extend adds them.
				util.Prioritized(extension.NewTableHTMLRenderer(), 500),
				util.Prioritized(extension.NewStrikethroughHTMLRenderer(), 500),
			)),
		),
	}
}

// parserParts are a statement parser's parts: goldmark's defaults and
// what the table and strikethrough extensions add, at their priorities
// (goldmark.WithExtensions would add the same). They are listed here so
// that TestMarkdownBoundsHold can wrap each to count goldmark's work.
func parserParts() (blocks, inlines, paragraphs, asts []util.PrioritizedValue) {
	blocks = parser.DefaultBlockParsers()
	inlines = append(parser.DefaultInlineParsers(), util.Prioritized(extension.NewStrikethroughParser(), 500))
	paragraphs = append(parser.DefaultParagraphTransformers(), util.Prioritized(extension.NewTableParagraphTransformer(), 200))
	asts = []util.PrioritizedValue{util.Prioritized(extension.NewTableASTTransformer(), 0)}
	return blocks, inlines, paragraphs, asts
}

func newParser(blocks, inlines, paragraphs, asts []util.PrioritizedValue) parser.Parser {
	return parser.NewParser(parser.WithBlockParsers(blocks...), parser.WithInlineParsers(inlines...),
		parser.WithParagraphTransformers(paragraphs...), parser.WithASTTransformers(asts...))
}

// Markdown renders markdown to safe HTML; markdown beyond what goldmark
// renders in reasonable time (markdownBounds) is shown as plain text.
func (m *Renderer) Markdown(src string) (string, error) {
	if why := markdownBounds(src); why != "" {
		return plainStatement(src, why), nil
	}
	// Highlighted code is about four times its text: room for it up
	// front, rather than growing (and copying) the output again and again.
	var out strings.Builder
	out.Grow(4*len(src) + 1024)
	if err := m.md.Convert([]byte(src), &out); err != nil {
		return "", fmt.Errorf("rendering markdown: %w", err)
	}
	return out.String(), nil
}

// Highlighting takes chroma's regular-expression lexers about 6 µs a
// token whatever the language, so a statement may spend at most
// highlightTokens tokens (a third of a second) and highlightBytes bytes of
// code on them, and a patch as many words; code beyond is shown plain.
// Python that pyFast takes costs nanoseconds a byte and is not counted in
// statements. A real statement (at most 123 KB in FeatureBench, not all
// of it code) stays within.
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

// words charges the words of a patch's Python code (chroma would give a
// token each at least), and reports whether the budget allowed them.
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
// nearly every statement and patch, by pyFast (with the tokens chroma
// would give), anything else, and the rare Python pyFast leaves to chroma,
// by chroma within a budget.
type highlighter struct {
	python chroma.Lexer
	fast   *pyFast
	lexers lexerIndex
	// spans is the class of a span in a diff for each token type below
	// len(spans), "" where both themes draw it as plain text; classes
	// is chroma's class for each, as its formatter writes them.
	spans, classes []string
	// scratch holds buffers code is written into before it is known
	// to highlight (*[]byte).
	scratch sync.Pool
	// toks holds token slices patches are lexed into (*[]chroma.Token).
	toks sync.Pool
}

func newHighlighter() *highlighter {
	python := lexers.Get("python")
	h := &highlighter{python: python, fast: newPyFast(python), lexers: newLexerIndex()}
	h.scratch.New = func() any { return new([]byte) }
	h.toks.New = func() any { return new([]chroma.Token) }
	plain := plainTypes()
	top := 0
	for t := range chroma.StandardTypes {
		top = max(top, int(t))
	}
	h.spans = make([]string, top+1)
	h.classes = make([]string, top+1)
	for t := range h.spans {
		tt := chroma.TokenType(t)
		h.classes[t] = tokenClass(tt)
		if !plain[tt] {
			h.spans[t] = h.classes[t]
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

// chromaTokens returns code's tokens by chroma's lexer, coalesced as
// chroma.Coalesce does, or ok false when the budget does not allow them
// or the lexer fails.
func (h *highlighter) chromaTokens(lexer chroma.Lexer, code string, budget *highlightBudget) ([]chroma.Token, bool) {
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
//
// The tokens are lexed into *buf, which holds them afterwards (grown if
// need be) for the caller to give back to h.toks.
func (h *highlighter) patchTokens(lexer chroma.Lexer, text string, budget *highlightBudget, buf *[]chroma.Token) ([]chroma.Token, bool) {
	if lexer != h.python || h.fast == nil || !budget.words(text) {
		return nil, false
	}
	if q := pyOpenQuote(text); q != "" {
		// The hunk starts inside a docstring: tokenised with its opening
		// quotes put back, which are then dropped.
		*buf = pyPatchInto(h.fast, q+text, *buf)
		return dropPrefix(*buf, len(q)), true
	}
	*buf = pyPatchInto(h.fast, text, *buf)
	return *buf, true
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
	// byFile remembers forFile's answers (chroma.Lexer, or nil) by
	// base name, up to maxByFile of them: a build looks up the files of
	// thousands of patches, mostly the same few names, and matching the
	// other patterns one by one was 7% of rendering a patch.
	byFile     *sync.Map
	byFileSize *atomic.Int64
}

const maxByFile = 1 << 14

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
	x := lexerIndex{names: map[string]chroma.Lexer{}, byFile: &sync.Map{}, byFileSize: &atomic.Int64{}}
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
		if ok, _ := matchGlob(g.glob, base); ok {
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

// matchGlob is filepath.Match, which TestLexerForLanguage counts.
var matchGlob = filepath.Match

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
	if l, ok := x.byFile.Load(base); ok {
		l, _ := l.(chroma.Lexer)
		return l
	}
	l := x.files.match(base)
	if l == nil {
		l = x.aliasFiles.match(base)
	}
	if x.byFileSize.Load() < maxByFile {
		if _, loaded := x.byFile.LoadOrStore(base, l); !loaded {
			x.byFileSize.Add(1)
		}
	}
	return l
}

// codeBlocks highlights fenced code blocks with chroma's tokens, written
// as chroma's HTML formatter writes them (writeChromaHTML).
type codeBlocks struct {
	hl   *highlighter
	fast *pyFast // the highlighter's, or nil for chroma alone
}

func (h *highlighter) codeBlocks() codeBlocks {
	return codeBlocks{hl: h, fast: h.fast}
}

// newCodeBlocks is code blocks with a highlighter of their own (tests set
// fast to nil to compare with chroma alone).
func newCodeBlocks() codeBlocks { return newHighlighter().codeBlocks() }

// writeCode writes code highlighted by lexer as chroma's HTML formatter
// writes it, and reports whether it did: not when the budget does not
// allow it or the lexer fails. Python goes through fast, unless it is nil.
func (h *highlighter) writeCode(w io.Writer, lexer chroma.Lexer, code string, budget *highlightBudget, fast *pyFast) bool {
	buf := h.scratch.Get().(*[]byte)
	defer h.scratch.Put(buf)
	out := chromaHTML{b: (*buf)[:0], h: h}
	out.start()
	ok := lexer == h.python && fast != nil && fast.lex(code, out.token)
	if !ok {
		// pyFast may have written part of it.
		out = chromaHTML{b: (*buf)[:0], h: h}
		out.start()
		toks, chromaOK := h.chromaTokens(lexer, code, budget)
		if !chromaOK {
			return false
		}
		for _, t := range toks {
			out.token(t.Type, t.Value)
		}
	}
	out.end()
	_, _ = w.Write(out.b)
	*buf = out.b
	return true
}

// chromaHTML appends tokens as chroma's HTML formatter writes them with
// classes (chromahtml.New(chromahtml.WithClasses(true)) and the github
// style): each line in its two spans, each token of a class in a span of
// it, escaped as html.EscapeString escapes. chroma's formatter takes a
// Sprintf and an allocation a token, and its lexer's tokens first; this
// takes neither (TestCodeBlocksSameHTMLAsChroma compares the two).
type chromaHTML struct {
	b    []byte
	h    *highlighter
	open bool // a line's spans
}

const chromaLineStart, chromaLineEnd = `<span class="line"><span class="cl">`, "</span></span>"

// codeOpen opens a statement's code block: a pre that scrolls sideways
// takes the keyboard's focus, so that it can be scrolled without a mouse
// (WCAG 2.1.1; axe's scrollable-region-focusable).
const codeOpen = `<pre class="chroma" tabindex="0"><code>`

func (c *chromaHTML) start() { c.b = append(c.b, codeOpen...) }

func (c *chromaHTML) token(t chroma.TokenType, v string) {
	class := c.h.class(t)
	for v != "" {
		if !c.open {
			c.b = append(c.b, chromaLineStart...)
			c.open = true
		}
		piece := v
		nl := strings.IndexByte(v, '\n')
		if nl >= 0 {
			piece = v[:nl+1]
		}
		if class != "" {
			c.b = append(c.b, `<span class="`...)
			c.b = append(c.b, class...)
			c.b = append(c.b, `">`...)
			c.b = appendEscaped(c.b, piece)
			c.b = append(c.b, "</span>"...)
		} else {
			c.b = appendEscaped(c.b, piece)
		}
		v = v[len(piece):]
		if nl >= 0 {
			c.b = append(c.b, chromaLineEnd...)
			c.open = false
		}
	}
}

func (c *chromaHTML) end() {
	if c.open {
		c.b = append(c.b, chromaLineEnd...)
	}
	c.b = append(c.b, "</code></pre>"...)
}

// class is chroma's HTML formatter's class for a token type.
func (h *highlighter) class(t chroma.TokenType) string {
	if t >= 0 && int(t) < len(h.classes) {
		return h.classes[t]
	}
	return tokenClass(t)
}

// htmlEscapes are html.EscapeString's escapes, by byte.
var htmlEscapes = [256]string{'<': "&lt;", '>': "&gt;", '&': "&amp;", '\'': "&#39;", '"': "&#34;"}

// appendEscaped appends s escaped as html.EscapeString escapes it.
func appendEscaped(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		if esc := htmlEscapes[s[i]]; esc != "" {
			b = append(b, s[last:i]...)
			b = append(b, esc...)
			last = i + 1
		}
	}
	return append(b, s[last:]...)
}

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
	code := blockText(source, n.Lines())
	language := n.Language(source)
	if lexer := c.hl.lexers.forLanguage(string(language)); lexer != nil {
		if c.hl.writeCode(w, lexer, code, statementBudget(n), c.fast) {
			return ast.WalkContinue, nil
		}
	}
	// No lexer for the language, none named, or over the budget: plain,
	// escaped code.
	writePlainCode(w, language, []byte(code))
	return ast.WalkContinue, nil
}

// blockText is a block's lines as one text: one copy of the source when
// they follow each other there, as a fenced block's do outside lists and
// quotes.
func blockText(source []byte, lines *gmtext.Segments) string {
	n := lines.Len()
	if n == 0 {
		return ""
	}
	for i := range n {
		seg := lines.At(i)
		if seg.Padding != 0 || seg.ForceNewline || (i > 0 && seg.Start != lines.At(i-1).Stop) {
			var b strings.Builder
			for i := range n {
				seg := lines.At(i)
				b.Write(seg.Value(source))
			}
			return b.String()
		}
	}
	return string(source[lines.At(0).Start:lines.At(n-1).Stop])
}

// writePlainCode writes code unhighlighted, marked with its language.
func writePlainCode(w util.BufWriter, language, code []byte) {
	_, _ = w.WriteString(`<pre tabindex="0"><code`)
	if language != nil {
		_, _ = w.WriteString(` class="language-`)
		goldhtml.DefaultWriter.Write(w, language)
		_ = w.WriteByte('"')
	}
	_ = w.WriteByte('>')
	goldhtml.DefaultWriter.RawWrite(w, code)
	_, _ = w.WriteString("</code></pre>\n")
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
	reg.Register(ast.KindCodeBlock, renderIndentedCode)
}

// renderIndentedCode writes an indented code block as goldmark does, in a
// pre that takes the focus as fenced ones do.
func renderIndentedCode(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<pre tabindex="0"><code>`)
	lines := node.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		goldhtml.DefaultWriter.RawWrite(w, seg.Value(source))
	}
	_, _ = w.WriteString("</code></pre>\n")
	return ast.WalkContinue, nil
}

// levelsKey names a statement's heading levels (headingLevels) among its
// document's attributes.
const levelsKey = "featbench-heading-levels"

// headingLevels is where each of a statement's headings sits on the page:
// its shallowest level becomes h3, below the page's "Problem statement"
// (an h2), the others as far below it as they are, but never more than
// one level below the heading before (a statement that starts at "####"
// or skips from "##" to "####" would break the page's outline), down to
// h6.
func headingLevels(doc ast.Node) map[*ast.Heading]int {
	var hs []*ast.Heading
	var walk func(ast.Node)
	walk = func(n ast.Node) {
		// Headings are blocks: only containers of blocks are walked.
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			switch c := c.(type) {
			case *ast.Heading:
				hs = append(hs, c)
			case *ast.Blockquote, *ast.List, *ast.ListItem:
				walk(c)
			}
		}
	}
	walk(doc)
	top := 6
	for _, h := range hs {
		top = min(top, max(h.Level, 1))
	}
	out := make(map[*ast.Heading]int, len(hs))
	prev := 2
	for _, h := range hs {
		l := min(max(h.Level, 1)-top+3, prev+1, 6)
		out[h], prev = l, l
	}
	return out
}

// headingLevel is where heading n sits on the page (headingLevels), kept
// on its document for the other headings.
func headingLevel(n *ast.Heading) int {
	doc := n.OwnerDocument()
	if doc == nil {
		return min(max(n.Level, 1)+2, 6)
	}
	v, ok := doc.AttributeString(levelsKey)
	levels, _ := v.(map[*ast.Heading]int)
	if !ok || levels == nil {
		levels = headingLevels(doc)
		doc.SetAttributeString(levelsKey, levels)
	}
	return levels[n]
}

func renderHeading(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Heading)
	level := byte('0' + headingLevel(n))
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
		_, _ = w.WriteString(`<pre class="raw-html" tabindex="0"><code>`)
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
