package markup

import (
	"strings"

	"github.com/alecthomas/chroma/v2"
)

// pyPatch tokenises a side of a patch's hunk, where chroma would cost too
// much (it takes milliseconds a hunk, and a build has thousands). A hunk
// starts wherever the change is, perhaps inside a string, so the text is
// cut before each definition (def, class, a decorator) and each line at
// column 0 where no string is open, and pyFast tokenises each piece as
// chroma would from its root state; a piece pyFast declines is cut into
// its lines (a string spanning lines kept whole), and a line it declines
// is left as plain text. Cuts fall only where no string is open, and in
// valid Python chroma is then in its root state, so what pyPatch colours
// it colours as chroma would; only code that is not Python (a line ending
// in "from", say) can carry chroma's state past a cut.
func pyPatch(fast *pyFast, text string) []chroma.Token {
	return pyPatchInto(fast, text, nil)
}

// pyPatchInto is pyPatch appending to dst[:0], every piece's tokens
// lexed straight into it: a build tokenises thousands of patches, and a
// slice a piece then another to join them was a tenth of its bytes.
func pyPatchInto(fast *pyFast, text string, dst []chroma.Token) []chroma.Token {
	toks, pieces := dst[:0], 0
	sink := func(t chroma.TokenType, v string) { toks = append(toks, chroma.Token{Type: t, Value: v}) }
	for i := 0; i < len(text); {
		end := pyPieceEnd(text, i)
		n := len(toks)
		if fast.lex(text[i:end], sink) {
			pieces++
		} else {
			toks = toks[:n]
			pieces = pyDeclined(fast, text[i:end], &toks, sink, pieces)
		}
		i = end
	}
	if pieces > 1 {
		toks = joinTokens(text, toks)
	}
	return toks
}

// pyDeclined tokenises a piece of a patch that pyFast declines line by
// line (a string spanning lines as one), each line it declines as plain
// text, appending to *toks through sink; it returns pieces counting the
// parts it added.
func pyDeclined(fast *pyFast, piece string, toks *[]chroma.Token, sink func(chroma.TokenType, string), pieces int) int {
	c := newPyCutter()
	for j := 0; j < len(piece); {
		k, cut := c.next(piece, j)
		for k < len(piece) && !cut {
			k, cut = c.next(piece, k)
		}
		n := len(*toks)
		if !fast.lex(piece[j:k], sink) {
			*toks = append((*toks)[:n], chroma.Token{Type: chroma.Text, Value: piece[j:k]})
		}
		pieces++
		j = k
	}
	return pieces
}

// joinTokens merges, in place, adjacent tokens of one type of pieces of
// text lexed one after the other, as chroma.Coalesce does, and drops
// empty ones.
func joinTokens(text string, toks []chroma.Token) []chroma.Token {
	out := toks[:0]
	at, last := 0, 0 // where the next token and the last one start in text
	for _, t := range toks {
		if t.Value == "" {
			continue
		}
		if k := len(out); k > 0 && out[k-1].Type == t.Type {
			out[k-1].Value = text[last : at+len(t.Value)]
		} else {
			out = append(out, chroma.Token{Type: t.Type, Value: text[at : at+len(t.Value)]})
			last = at
		}
		at += len(t.Value)
	}
	return out
}

// pyPieceEnd is where the piece of text starting at i (at no string)
// ends: at the next line start that no string spans and that begins a
// definition or a line at column 0, or at the end.
func pyPieceEnd(text string, i int) int {
	c := newPyCutter()
	for j := i; j < len(text); {
		end, cut := c.next(text, j)
		if end < len(text) && cut && pyDefinitionLine(text, end) {
			return end
		}
		j = end
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
	word := line[strings.LastIndexFunc(line, func(r rune) bool { return !(r < 0x80 && isPyWordByte(byte(r))) })+1:]
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

// skipBlanks skips spaces and tabs.
func skipBlanks(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
		i++
	}
	return i
}

// pyOpenQuote returns the triple quotes a hunk's text starts inside, or
// "". A hunk starts wherever the change is, and one that starts inside a
// docstring would be read as code up to the docstring's closing quotes,
// and all after them as a string. Its first triple quotes are taken as
// closing a string when their count is odd and their line reads as the
// end of one: prose before them (`value."""`), or them alone on a line
// that follows no definition's header, or them before ")", "," or ".".
// Quotes after "=", "(", "return" and the like, or before text, open one.
func pyOpenQuote(text string) string {
	at, q := -1, ""
	for _, d := range [...]string{`"""`, `'''`} {
		if i := strings.Index(text, d); i >= 0 && (at < 0 || i < at) {
			at, q = i, d
		}
	}
	if at < 0 || strings.Count(text, q)%2 == 0 {
		return ""
	}
	start := strings.LastIndexByte(text[:at], '\n') + 1
	end := len(text)
	if i := strings.IndexByte(text[at:], '\n'); i >= 0 {
		end = at + i
	}
	before := strings.TrimSpace(text[start:at])
	after := strings.TrimSpace(text[at+3 : end])
	if before == "" {
		switch {
		case after == "":
			// Alone on their line: closing, unless they follow a
			// header ("def f():") or nothing, which cannot tell.
			prev := strings.TrimSpace(lastLine(text[:start]))
			if prev == "" || strings.HasSuffix(prev, ":") {
				return ""
			}
			return q
		case strings.IndexByte(")],}.;", after[0]) >= 0:
			return q
		}
		return ""
	}
	// A string prefix (r, b, u, f, or two of them) belongs to opening
	// quotes.
	j := len(before) - 1
	for j >= 0 && j >= len(before)-2 && strings.IndexByte("rRbBuUfF", before[j]) >= 0 {
		j--
	}
	if j < len(before)-1 && (j < 0 || !isPyWordByte(before[j])) {
		before = strings.TrimSpace(before[:j+1])
	}
	if before == "" || strings.IndexByte("=([{,:+%", before[len(before)-1]) >= 0 {
		return ""
	}
	for _, w := range [...]string{"return", "yield", "in", "and", "or", "not", "else", "lambda", "print"} {
		if before == w || strings.HasSuffix(before, " "+w) {
			return ""
		}
	}
	return q
}

// lastLine is the last line of text that is not blank, or "".
func lastLine(text string) string {
	for text != "" {
		text = strings.TrimRight(text, "\n")
		line := text[strings.LastIndexByte(text, '\n')+1:]
		if strings.TrimSpace(line) != "" {
			return line
		}
		text = text[:len(text)-len(line)]
	}
	return ""
}

// dropPrefix drops the first n bytes of a token stream.
func dropPrefix(toks []chroma.Token, n int) []chroma.Token {
	for n > 0 && len(toks) > 0 {
		if len(toks[0].Value) <= n {
			n -= len(toks[0].Value)
			toks = toks[1:]
			continue
		}
		toks[0].Value = toks[0].Value[n:]
		n = 0
	}
	return toks
}
