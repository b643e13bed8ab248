package markup

import (
	"fmt"
	"html"
	"strings"
)

// goldmark (v1.8.7) takes time that grows with the product of two sizes on
// some markdown: containers nested on one line, link openers "](" and
// closing brackets times the length of their paragraph (link destinations
// and titles are scanned to the end of the line or paragraph, shortcut
// references look their line up from the paragraph's end), emphasis
// delimiters with each other, and a table's header columns with its rows
// (every row is padded to the header's width). A 1 MiB statement of such a
// shape takes from seconds to over ten minutes. markdownBounds scans a
// statement for them first, in one pass, and Markdown shows one beyond a
// bound as plain text. The products are summed over the statement: the
// bounds are on its total time. They are far above any real statement
// (FeatureBench's reach 123 KB, with a few code blocks, headings, lists
// and tables). TestMarkdownBoundsHold counts goldmark's work on the worst
// shape under each and on a statement of all of them at once, and checks
// it against the limits below; BenchmarkMarkdownBounds times it: the
// worst shape under each bound takes goldmark a third of a second or
// less on the project machine, all of them at once about a second.
const (
	// maxNesting is the containers (block quotes, list items) one line
	// opens or continues.
	maxNesting = 32
	// maxLinkWork is link openers "](" × bytes of their paragraph.
	maxLinkWork = 300_000_000
	// maxBracketWork is closing brackets × bytes of their paragraph.
	maxBracketWork = 2_000_000_000
	// maxDelimiterWork is emphasis delimiter runs (*, _, ~) squared, per
	// paragraph: goldmark may match each against every other.
	maxDelimiterWork = 50_000_000
	// maxTableCells is tables' header columns × rows.
	maxTableCells = 50_000
)

// markdownBounds returns why src is beyond what the site renders as
// markdown, or "" when it is not. It overestimates: a paragraph here is
// any run of non-blank lines, container markers and indentation count
// wherever they are, and only fenced code it is sure goldmark sees as code
// is skipped (a fence opened at the start of a line, before any line that
// could begin an HTML block, up to its exact closing line).
func markdownBounds(src string) string {
	var s boundScan
	line := 0
	for len(src) > 0 {
		line++
		text := src
		hasNL := false
		if i := strings.IndexByte(src, '\n'); i >= 0 {
			text, src, hasNL = src[:i], src[i+1:], true
		} else {
			src = ""
		}
		if why := s.line(line, text, hasNL); why != "" {
			return why
		}
	}
	return s.endParagraph()
}

// boundScan is markdownBounds' state between lines.
type boundScan struct {
	fenceChar byte // in fenced code opened by fenceLen of fenceChar
	fenceLen  int
	// unsure is set once the scan can no longer tell fenced code from
	// markdown (a fence inside a container, or after possible HTML);
	// from then on every line counts as markdown.
	unsure   bool
	htmlSeen bool // a line that could begin an HTML block
	lineNo   int  // the line scanned

	// The paragraphs before the current one: their products.
	linkWork, bracketWork, delimiterWork, tableCells int

	// The current paragraph.
	paraBytes   int
	brackets    int // ']'
	linkOpeners int // "]("
	delimiters  int
	tableCols   int // header columns of each table the paragraph may hold
	cells       int
	lastLine    string
}

func (s *boundScan) line(n int, text string, hasNL bool) string {
	s.lineNo = n
	if s.fenceLen > 0 {
		if closesFence(text, s.fenceChar, s.fenceLen) {
			s.fenceLen = 0
		}
		return ""
	}
	if isBlankLine(text) {
		return s.endParagraph()
	}
	if c, length, indent, ok := opensFence(text, hasNL); ok {
		if indent == 0 && !s.unsure && !s.htmlSeen {
			if why := s.endParagraph(); why != "" {
				return why
			}
			s.fenceChar, s.fenceLen = c, length
			return ""
		}
		s.unsure = true
	}
	depth, rest := containerDepth(text)
	if depth > maxNesting {
		return fmt.Sprintf("blockquotes and lists nest %d deep on line %d; the site renders markdown up to %d levels", depth, n, maxNesting)
	}
	if strings.HasPrefix(rest, "<") {
		s.htmlSeen = true
	}
	if s.paraBytes > 0 && isDelimiterRow(text) {
		// The line before may be a table's header; every later line of
		// the paragraph a row as wide.
		s.tableCols += strings.Count(s.lastLine, "|") + 1
	}
	s.lastLine = text
	s.paraBytes += len(text) + 1
	s.brackets += strings.Count(text, "]")
	s.linkOpeners += strings.Count(text, "](")
	s.delimiters += delimiterRuns(rest)
	s.cells += s.tableCols
	return s.check()
}

// check compares the statement so far with the bounds.
func (s *boundScan) check() string {
	link := s.linkWork + s.linkOpeners*s.paraBytes
	bracket := s.bracketWork + s.brackets*s.paraBytes
	delimiter := s.delimiterWork + s.delimiters*s.delimiters
	cells := s.tableCells + s.cells
	switch {
	case link > maxLinkWork:
		return fmt.Sprintf("link openers \"](\" × the bytes of their paragraphs come to %d by line %d; the site renders markdown up to %d", link, s.lineNo, maxLinkWork)
	case bracket > maxBracketWork:
		return fmt.Sprintf("closing brackets × the bytes of their paragraphs come to %d by line %d; the site renders markdown up to %d", bracket, s.lineNo, maxBracketWork)
	case delimiter > maxDelimiterWork:
		return fmt.Sprintf("emphasis delimiters (*, _, ~) squared per paragraph come to %d by line %d; the site renders markdown up to %d", delimiter, s.lineNo, maxDelimiterWork)
	case cells > maxTableCells:
		return fmt.Sprintf("tables hold %d cells by line %d; the site renders markdown up to %d", cells, s.lineNo, maxTableCells)
	}
	return ""
}

func (s *boundScan) endParagraph() string {
	why := s.check()
	s.linkWork += s.linkOpeners * s.paraBytes
	s.bracketWork += s.brackets * s.paraBytes
	s.delimiterWork += s.delimiters * s.delimiters
	s.tableCells += s.cells
	s.paraBytes, s.brackets, s.linkOpeners, s.delimiters, s.tableCols, s.cells, s.lastLine = 0, 0, 0, 0, 0, 0, ""
	return why
}

// isBlankLine is goldmark's util.IsBlank: only spaces, tabs and CRs.
func isBlankLine(text string) bool {
	for i := range len(text) {
		if c := text[i]; c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// indentWidth is the columns of text's leading spaces and tabs (a tab to
// the next multiple of four), as goldmark counts them, and their bytes.
func indentWidth(text string) (width, n int) {
	for n < len(text) {
		switch text[n] {
		case ' ':
			width++
		case '\t':
			width += 4 - width%4
		default:
			return width, n
		}
		n++
	}
	return width, n
}

// opensFence reports whether text, as a line of its own, is a code fence
// opener as goldmark's fencedCodeBlockParser.Open takes one, and its
// character, length and indentation.
func opensFence(text string, hasNL bool) (c byte, length, indent int, ok bool) {
	indent, i := indentWidth(text)
	if indent > 3 || i == len(text) || (text[i] != '`' && text[i] != '~') {
		return 0, 0, 0, false
	}
	c = text[i]
	j := i
	for j < len(text) && text[j] == c {
		j++
	}
	if j-i < 3 {
		return 0, 0, 0, false
	}
	// goldmark reads an info string only when the run is not the line's
	// last byte but one (counting its newline), and a backtick fence's
	// info string must not hold a backtick.
	lineLen := len(text)
	if hasNL {
		lineLen++
	}
	if c == '`' && j < lineLen-1 && strings.IndexByte(strings.Trim(text[j:], " \t\r"), '`') >= 0 {
		return 0, 0, 0, false
	}
	return c, j - i, indent, true
}

// closesFence is goldmark's fencedCodeBlockParser.Continue closing test
// at the top level.
func closesFence(text string, c byte, length int) bool {
	w, i := indentWidth(text)
	if w >= 4 {
		return false
	}
	j := i
	for j < len(text) && text[j] == c {
		j++
	}
	return j-i >= length && isBlankLine(text[j:])
}

// containerDepth counts the containers a line opens or continues: each
// block quote marker and list item marker, and two columns of indentation
// before one (the least a nested list item takes). It returns the text
// after them.
func containerDepth(text string) (int, string) {
	depth := 0
	for {
		w, i := indentWidth(text)
		if i == len(text) {
			return depth, ""
		}
		n := listMarker(text[i:])
		if text[i] == '>' {
			n = 1
		}
		if n == 0 {
			return depth, text[i:]
		}
		depth += 1 + w/2
		text = text[i+n:]
	}
}

// listMarker returns the length of the list item marker at the start of
// s (-, + or * or up to nine digits and . or ), then a space, a tab or the
// end), or 0.
func listMarker(s string) int {
	n := 0
	switch {
	case s[0] == '-' || s[0] == '+' || s[0] == '*':
		n = 1
	case s[0] >= '0' && s[0] <= '9':
		for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		if n == len(s) || (s[n] != '.' && s[n] != ')') {
			return 0
		}
		n++
	default:
		return 0
	}
	if n < len(s) && s[n] != ' ' && s[n] != '\t' {
		return 0
	}
	return n
}

// isDelimiterRow reports whether text could be a table's delimiter row:
// only pipes, dashes, colons and spaces (after block quote markers), with
// a dash.
func isDelimiterRow(text string) bool {
	text = strings.TrimLeft(text, "> \t")
	if strings.IndexByte(text, '-') < 0 {
		return false
	}
	for i := range len(text) {
		switch text[i] {
		case '|', '-', ':', ' ', '\t', '\r':
		default:
			return false
		}
	}
	return true
}

// delimiterRuns counts the runs of *, _ and ~ in text that may open or
// close emphasis; an underscore run inside a word (snake_case) cannot.
func delimiterRuns(text string) int {
	n := 0
	for i := 0; i < len(text); {
		c := text[i]
		if c != '*' && c != '_' && c != '~' {
			i++
			continue
		}
		j := i
		for j < len(text) && text[j] == c {
			j++
		}
		if c != '_' || i == 0 || j == len(text) || !isWordByte(text[i-1]) || !isWordByte(text[j]) {
			n++
		}
		i = j
	}
	return n
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// plainStatement shows a statement as the text it is, with why.
func plainStatement(src, why string) string {
	return `<p class="footnote statement-note">Shown as plain text: ` + html.EscapeString(why) + ".</p>\n" +
		`<pre class="statement-plain" tabindex="0">` + html.EscapeString(src) + "</pre>\n"
}
