package site

import (
	"strings"

	"github.com/alecthomas/chroma/v2"
)

// pySegments extends pyFast to the two things in Python it leaves to
// chroma that patches are full of: import statements, and text of 8 KB or
// more (a new file in a patch is one hunk). It cuts text into pieces where
// chroma's Python lexer is in its root state, whatever came before: at
// the start of a line that begins an import, after the "import" or "from
// ... import" that chroma lexes in states of their own (done here, as
// chroma does), and between lines, every 8 KB or less. pyFast tokenises
// the other pieces; a piece it declines sends the whole text to chroma.
// A piece that ends inside a string is one pyFast declines (its strings
// must close), so a cut can never fall in one unnoticed.
//
// Coalescing: adjacent tokens of one type are merged across pieces, as
// chroma.Coalesce merges them, which is exact while no token reaches
// chroma's 8 KB limit: pySegments takes text below 8 KB
// (pySegmentsExactBelow) only.
func pySegments(fast *pyFast, text string) ([]chroma.Token, bool) {
	if len(text) >= pySegmentsExactBelow {
		return nil, false
	}
	return pyPieces(fast, text, false)
}

// pyPatch tokenises a side of a patch's hunk, where chroma would cost too
// much (it takes milliseconds a hunk, and a build has thousands): as
// pySegments, but cut also before each definition (def, class, a
// decorator) and each line at column 0, and a piece pyFast declines cut
// into its lines (a string spanning lines kept whole), each line pyFast
// declines left as plain text rather than sent to chroma. Cuts fall only
// where no string is open, and in valid Python chroma is then in its root
// state, so what pyPatch colours it colours as chroma would; only code
// that is not Python (a line ending in "from", say) can carry chroma's
// state past a cut.
func pyPatch(fast *pyFast, text string) []chroma.Token {
	toks, _ := pyPieces(fast, text, true)
	return toks
}

const (
	pySegmentMax         = 8000
	pySegmentsExactBelow = 8192
)

// pyPieces tokenises text piece by piece; see pySegments and pyPatch.
func pyPieces(fast *pyFast, text string, patch bool) ([]chroma.Token, bool) {
	plain := func(s string) []chroma.Token { return []chroma.Token{{Type: chroma.Text, Value: s}} }
	if text == "" || text[len(text)-1] != '\n' {
		if !patch || text == "" {
			return nil, false
		}
		return plain(text), true
	}
	var parts [][]chroma.Token // the tokens of each piece, in order
	for i := 0; i < len(text); {
		var head []chroma.Token
		n, ok := pyImportAt(text, i, func(t chroma.Token) { head = append(head, t) })
		if ok {
			parts = append(parts, head)
			i += n
			continue
		}
		if n < 0 {
			if !patch {
				return nil, false
			}
			// chroma may carry the import's state over the next lines:
			// the rest, as plain text.
			parts = append(parts, plain(text[i:]))
			break
		}
		end := pyPieceEnd(text, i, false)
		toks, ok := fast.tokens(text[i:end])
		switch {
		case ok:
			parts = append(parts, toks)
		case !patch:
			return nil, false
		default:
			parts = pyDeclined(fast, text[i:end], parts)
		}
		i = end
	}
	if len(parts) == 1 {
		return parts[0], true
	}
	return joinTokens(text, parts), true
}

// pyDeclined tokenises a piece of a patch that pyFast declines: cut
// before its definitions, and a part it declines still line by line (a
// string spanning lines as one), each line it declines as plain text.
func pyDeclined(fast *pyFast, piece string, parts [][]chroma.Token) [][]chroma.Token {
	for i := 0; i < len(piece); {
		end := pyPieceEnd(piece, i, true)
		if toks, ok := fast.tokens(piece[i:end]); ok {
			parts = append(parts, toks)
			i = end
			continue
		}
		c := newPyCutter()
		for j := i; j < end; {
			k, cut := c.next(piece, j)
			for k < end && !cut {
				k, cut = c.next(piece, k)
			}
			if toks, ok := fast.tokens(piece[j:k]); ok {
				parts = append(parts, toks)
			} else {
				parts = append(parts, []chroma.Token{{Type: chroma.Text, Value: piece[j:k]}})
			}
			j = k
		}
		i = end
	}
	return parts
}

// joinTokens joins the tokens of consecutive pieces of text, merging
// adjacent tokens of one type as chroma.Coalesce does.
func joinTokens(text string, parts [][]chroma.Token) []chroma.Token {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	toks := make([]chroma.Token, 0, n)
	at, last := 0, 0 // where the next token and the last one start in text
	for _, p := range parts {
		for _, t := range p {
			if t.Value == "" {
				continue
			}
			if k := len(toks); k > 0 && toks[k-1].Type == t.Type {
				toks[k-1].Value = text[last : at+len(t.Value)]
			} else {
				toks = append(toks, chroma.Token{Type: t.Type, Value: text[at : at+len(t.Value)]})
				last = at
			}
			at += len(t.Value)
		}
	}
	return toks
}

// pyPieceEnd is where the piece of text starting at i (at no string)
// ends: at the start of a line that no string spans (pyStrings), before
// the next import (for a patch, also before a definition or a line at
// column 0), or at the last such line start within pySegmentMax bytes
// (preferring one before a line at column 0). A piece that cannot end
// within pySegmentMax bytes ends at the first line start it can, and is
// longer than pyFast takes.
func pyPieceEnd(text string, i int, patch bool) int {
	best, last := -1, -1 // the last cuts before a column-0 line and before any line
	c := newPyCutter()
	for j := i; j < len(text); {
		end, cut := c.next(text, j)
		if end == len(text) {
			break
		}
		if !cut {
			j = end
			continue
		}
		if pyImportLine(text, end) || (patch && pyDefinitionLine(text, end)) {
			return end
		}
		if end-i > pySegmentMax && last > 0 {
			break
		}
		last = end
		if c := text[end]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			best = end
		}
		if end-i > pySegmentMax {
			return end // no cut within the bound
		}
		j = end
	}
	switch {
	case len(text)-i <= pySegmentMax:
		return len(text)
	case best > 0:
		return best
	case last > 0:
		return last
	}
	return len(text)
}

// pyCutter follows Python line by line to tell where it may be cut: at
// the start of a line where no string is open and the last line that is
// not blank lets chroma's state end with it (pyCutSafe).
type pyCutter struct {
	st   pyStrings
	safe bool
}

func newPyCutter() pyCutter { return pyCutter{safe: true} }

// next follows the line at j and returns where the next one starts, and
// whether text may be cut there.
func (c *pyCutter) next(text string, j int) (end int, cut bool) {
	end = c.st.line(text, j)
	if line := text[j:end]; strings.TrimSpace(line) != "" {
		c.safe = pyCutSafe(line)
	}
	return end, !c.st.open() && c.safe
}

// pyCutSafe reports whether chroma's Python lexer takes no token over the
// end of a line: a decorator's dotted name ending in a dot, or "def",
// "class", "from" or "import" with the whitespace after it, goes on past
// a line's end (in code that is not valid Python, or continued by a
// backslash).
func pyCutSafe(line string) bool {
	line = strings.TrimRight(line, " \t\r\n\f\v")
	if line == "" {
		return true
	}
	switch {
	case line[len(line)-1] == '\\':
		return false
	case line[len(line)-1] == '.' && !strings.HasSuffix(line, ".."):
		return false // perhaps a decorator's name, going on
	}
	word := line[strings.LastIndexFunc(line, func(r rune) bool { return !(r < 0x80 && isPyWordStart(byte(r)) || r >= '0' && r <= '9') })+1:]
	switch word {
	case "def", "class", "from", "import":
		return false
	}
	return true
}

// pyStrings follows Python's strings and comments through text, line by
// line, to tell where a line starts inside a string that spans lines (a
// triple-quoted one, or one continued by a backslash).
type pyStrings struct {
	quote  byte // the open string's quote, 0 for none
	triple bool
}

func (s *pyStrings) open() bool { return s.quote != 0 }

// line follows the line at j and returns where the next one starts.
func (s *pyStrings) line(text string, j int) int {
	for j < len(text) {
		c := text[j]
		switch {
		case c == '\n':
			if s.quote != 0 && !s.triple {
				s.quote = 0 // an unterminated string ends with its line
			}
			return j + 1
		case c == '\\':
			j += 2 // an escape, or a line continued
			if j > len(text) {
				return len(text)
			}
			if text[j-1] == '\n' {
				return j
			}
			continue
		case s.quote != 0:
			if c == s.quote && (!s.triple || isTripleQuote(text, j)) {
				if s.triple {
					j += 2
				}
				s.quote = 0
			}
		case c == '#':
			k := strings.IndexByte(text[j:], '\n')
			if k < 0 {
				return len(text)
			}
			j += k
			continue
		case c == '"' || c == '\'':
			s.quote = c
			s.triple = isTripleQuote(text, j)
			if s.triple {
				j += 2
			}
		}
		j++
	}
	return len(text)
}

func isTripleQuote(text string, j int) bool {
	return j+2 < len(text) && text[j+1] == text[j] && text[j+2] == text[j]
}

// pyDefinitionLine reports whether the line at i starts at column 0 or,
// after its indentation, with a definition or a decorator.
func pyDefinitionLine(text string, i int) bool {
	if c := text[i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
		return true
	}
	rest := text[skipBlanks(text, i):]
	return strings.HasPrefix(rest, "def ") || strings.HasPrefix(rest, "async def ") ||
		strings.HasPrefix(rest, "class ") || strings.HasPrefix(rest, "@")
}

// pyImportLine reports whether the line at i begins with an import
// statement ("import x" or "from x"), after its indentation.
func pyImportLine(text string, i int) bool {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	rest := text[i:]
	for _, kw := range [...]string{"import", "from"} {
		if strings.HasPrefix(rest, kw) && len(rest) > len(kw) && (rest[len(kw)] == ' ' || rest[len(kw)] == '\t') {
			return true
		}
	}
	return false
}

// pyImportAt lexes, as chroma's Python lexer does, an import statement's
// head at i (a line's start): the indentation, then "import" and its
// dotted names, "as" and commas (chroma's "import" state), or "from", the
// module and "import" (its "fromimport" state), up to where chroma is
// back in its root state. It returns the bytes it took; 0 when there is
// no import at i, and -1 with ok false when the import is one it leaves
// to chroma (a continuation across lines, non-ASCII, from None).
func pyImportAt(text string, i int, emit func(chroma.Token)) (n int, ok bool) {
	if (i > 0 && text[i-1] != '\n') || !pyImportLine(text, i) {
		return 0, false
	}
	start := i
	var toks []chroma.Token
	tok := func(t chroma.TokenType, from, to int) {
		if to > from {
			toks = append(toks, chroma.Token{Type: t, Value: text[from:to]})
		}
	}
	j := skipBlanks(text, i)
	tok(chroma.Text, i, j)
	i = j
	isFrom := strings.HasPrefix(text[i:], "from")
	kw := 6
	if isFrom {
		kw = 4
	}
	tok(chroma.KeywordNamespace, i, i+kw)
	i += kw
	// The keyword's whitespace, which chroma's \s would carry over a line
	// end: one on this line only, followed by more of the statement.
	j = skipBlanks(text, i)
	if j == len(text) || isPySpace(text[j]) || text[j] == '\\' {
		return -1, false
	}
	tok(chroma.Text, i, j)
	i = j
	if isFrom {
		// fromimport: dots and names, then whitespace and "import".
		j = i
	module:
		for j < len(text) {
			switch {
			case text[j] == '.':
				j++
			case isPyWordStart(text[j]):
				k := pyWordEnd(text, j)
				if text[j:k] == "None" || (k < len(text) && text[k] >= 0x80) {
					return -1, false
				}
				j = k
			case text[j] >= 0x80:
				return -1, false
			default:
				break module
			}
		}
		tok(chroma.NameNamespace, i, j)
		i = j
		k := skipPySpaces(text, i)
		if k > i && strings.HasPrefix(text[k:], "import") && pyWordBoundary(text, k+6) {
			if strings.ContainsAny(text[i:k], "\n\r\f\v") {
				return -1, false
			}
			tok(chroma.Text, i, k)
			tok(chroma.KeywordNamespace, k, k+6)
			i = k + 6
		}
	} else {
		// import: names, dots, " as ", commas.
		for {
			k := skipPySpaces(text, i)
			switch {
			case k > i && strings.HasPrefix(text[k:], "as") && k+2 < len(text) && isPySpace(text[k+2]):
				m := skipPySpaces(text, k+2)
				if strings.ContainsAny(text[i:m], "\n\r\f\v") {
					return -1, false
				}
				tok(chroma.Text, i, k)
				tok(chroma.Keyword, k, k+2)
				tok(chroma.Text, k+2, m)
				i = m
				continue
			case k == i && i < len(text) && text[i] == '.':
				tok(chroma.NameNamespace, i, i+1)
				i++
				continue
			case k == i && i < len(text) && isPyWordStart(text[i]):
				m := pyWordEnd(text, i)
				if m < len(text) && text[m] >= 0x80 {
					return -1, false
				}
				tok(chroma.NameNamespace, i, m)
				i = m
				continue
			case k < len(text) && text[k] == ',':
				m := skipPySpaces(text, k+1)
				if strings.ContainsAny(text[i:m], "\n\r\f\v") {
					return -1, false
				}
				tok(chroma.Text, i, k)
				tok(chroma.Operator, k, k+1)
				tok(chroma.Text, k+1, m)
				i = m
				continue
			case i < len(text) && text[i] >= 0x80:
				return -1, false
			}
			break
		}
	}
	for _, t := range toks {
		emit(t)
	}
	return i - start, true
}

// skipBlanks skips spaces and tabs.
func skipBlanks(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	return i
}

// isPySpace is what chroma's \s matches among ASCII bytes.
func isPySpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func skipPySpaces(text string, i int) int {
	for i < len(text) && isPySpace(text[i]) {
		i++
	}
	return i
}

// pyWordBoundary is \b after a word ending at i.
func pyWordBoundary(text string, i int) bool {
	return i == len(text) || !(isPyWordStart(text[i]) || (text[i] >= '0' && text[i] <= '9') || text[i] >= 0x80)
}
