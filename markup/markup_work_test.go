package markup

import (
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// goldmark's work on a statement, counted where its time grows faster than
// the statement (markdownBounds' comment lists the ways), in the units the
// bounds use. Counts do not depend on the machine or its load, as a time
// limit did: TestMarkdownBoundsHold checks that on the worst shapes the
// bounds let through goldmark's counted work stays within the bounds'
// limits, whose cost in time BenchmarkMarkdownBounds measures.
type markdownWork struct {
	link      int // bytes link parsing scans: destinations to their line's end, titles to their closing quote or the paragraph's end
	bracket   int // lines reference lookups walk back, and lines kept after each reference definition taken out of its paragraph
	delimiter int // emphasis delimiters before each closing one, which it is matched back against
	cells     int // table cells, padded rows included
	continues int // container blocks continued, line by line
	lines     int // lines of the statement
}

// countWork parses src with the statement parser's parts (parserParts),
// each wrapped to count.
func countWork(src string) markdownWork {
	var w markdownWork
	blocks, inlines, paragraphs, asts := parserParts()
	for i, b := range blocks {
		blocks[i] = util.Prioritized(countedBlock{b.Value.(parser.BlockParser), &w}, b.Priority)
	}
	for i, in := range inlines {
		inlines[i] = util.Prioritized(countedInline{in.Value.(parser.InlineParser), &w}, in.Priority)
	}
	for i, p := range paragraphs {
		paragraphs[i] = util.Prioritized(countedParagraph{p.Value.(parser.ParagraphTransformer), &w}, p.Priority)
	}
	doc := newParser(blocks, inlines, paragraphs, asts).Parse(text.NewReader([]byte(src)))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if _, ok := n.(*east.TableCell); ok && entering {
			w.cells++
		}
		return ast.WalkContinue, nil
	})
	for i := range len(src) {
		if src[i] == '\n' {
			w.lines++
		}
	}
	w.lines++
	return w
}

// countedBlock counts a container block parser's continuations: a line
// nested n deep is continued n times.
type countedBlock struct {
	parser.BlockParser
	w *markdownWork
}

func (b countedBlock) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	switch node.(type) {
	case *ast.Blockquote, *ast.List, *ast.ListItem:
		b.w.continues++
	}
	return b.BlockParser.Continue(node, reader, pc)
}

// countedInline counts what an inline parser scans, through a counting
// reader (link parsing), and the delimiter list each new emphasis
// delimiter joins.
type countedInline struct {
	parser.InlineParser
	w *markdownWork
}

func (c countedInline) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	if line, _ := block.PeekLine(); len(line) > 1 && line[0] == ']' && line[1] == '(' {
		// A destination is scanned up to the end of its line at most.
		c.w.link += len(line)
	}
	n := c.InlineParser.Parse(parent, countingReader{block, c.w, parent.Lines()}, pc)
	if d, ok := n.(*parser.Delimiter); ok && d.CanClose {
		// A closer is matched back against the delimiters before it
		// (ProcessDelimiters), those that can neither open nor close
		// (an underscore inside a word) included.
		for o := d.PreviousDelimiter; o != nil; o = o.PreviousDelimiter {
			c.w.delimiter++
		}
	}
	return n
}

// CloseBlock is the link parser's: the parser asks every inline parser
// whether it has one when it is made.
func (c countedInline) CloseBlock(parent ast.Node, block text.Reader, pc parser.Context) {
	if cb, ok := c.InlineParser.(parser.CloseBlocker); ok {
		cb.CloseBlock(parent, block, pc)
	}
}

// countingReader charges the scans inline parsers make through the reader.
type countingReader struct {
	text.Reader
	w     *markdownWork
	lines *text.Segments // the paragraph's
}

func (r countingReader) FindClosure(opener, closer byte, opts text.FindClosureOptions) (*text.Segments, bool) {
	_, from := r.Position()
	r.w.link += closureScan(r.Source(), r.lines, from.Start, opener, closer, opts.Nesting)
	return r.Reader.FindClosure(opener, closer, opts)
}

// closureScan is how many bytes of the paragraph's lines FindClosure reads
// from start: up to its closer, an opener when openers do not nest, or
// the paragraph's end. (It restores the reader's position when it fails,
// so where it stopped cannot be read after it.)
func closureScan(source []byte, lines *text.Segments, start int, opener, closer byte, nesting bool) int {
	n, opened := 0, 1
	for i := range lines.Len() {
		seg := lines.At(i)
		if seg.Stop <= start {
			continue
		}
		for j := max(seg.Start, start); j < seg.Stop; j++ {
			n++
			switch c := source[j]; {
			case c == '\\' && j+1 < seg.Stop && util.IsPunct(source[j+1]):
				j++
				n++
			case c == closer:
				if opened--; opened == 0 {
					return n
				}
			case c == opener:
				if !nesting {
					return n
				}
				opened++
			}
		}
	}
	return n
}

func (r countingReader) Value(seg text.Segment) []byte {
	// The block reader looks the segment's line up from the last line.
	for i := r.lines.Len() - 1; i >= 0 && r.lines.At(i).Start > seg.Start; i-- {
		r.w.bracket++
	}
	return r.Reader.Value(seg)
}

// countedParagraph counts, for each reference definition taken out of a
// paragraph, the paragraph's lines copied after it.
type countedParagraph struct {
	parser.ParagraphTransformer
	w *markdownWork
}

func (p countedParagraph) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	if p.ParagraphTransformer != parser.LinkReferenceParagraphTransformer {
		p.ParagraphTransformer.Transform(node, reader, pc)
		return
	}
	lines, parent := node.Lines().Len(), node.Parent()
	before := parent.ChildCount()
	p.ParagraphTransformer.Transform(node, reader, pc)
	taken := parent.ChildCount() - before
	if node.Parent() == nil {
		taken++
	}
	p.w.bracket += taken * lines
}
