package site

import (
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/alecthomas/chroma/v2"
)

// pyFast tokenises the common run of Python code blocks into the tokens
// chroma's Python lexer gives them, without its regular expressions.
// chroma tries dozens of expressions for every token, about 250 µs for a
// four-line block and a third of a full build's CPU time; this scanner
// takes a few microseconds.
//
// chroma stays the authority. The scanner only splits text into words,
// numbers, plain strings, comments, operators and punctuation, whose
// classes in chroma's Python lexer do not depend on context; what kind of
// word a word is (keyword, builtin, exception, magic name, ...) it asks
// chroma once per word and context. On anything else, string prefixes,
// escapes or formatting, imports, backslashes, non-ASCII names and more, it
// declines and the block goes to chroma whole. Tests compare its tokens
// with chroma's on real code, and a fuzz test on arbitrary input.
type pyFast struct {
	lexer chroma.Lexer // chroma's Python lexer, for classifying words

	mu    sync.Mutex
	words map[pyWord]chroma.TokenType
}

// pyWord is a word in one of the contexts in which chroma's Python lexer
// can class it differently.
type pyWord struct {
	after string // "", "def", "class" or "." (no builtin after a dot)
	word  string
}

func newPyFast(lexer chroma.Lexer) *pyFast {
	return &pyFast{lexer: lexer, words: map[pyWord]chroma.TokenType{}}
}

// tokens returns src's tokens as chroma.Coalesce(python).Tokenise gives
// them, or ok false when src has something the scanner leaves to chroma.
func (p *pyFast) tokens(src string) (toks []chroma.Token, ok bool) {
	if src == "" || src[len(src)-1] != '\n' {
		return nil, false // chroma's handling of a missing final newline is its own
	}
	// chroma turns carriage returns into newlines and invalid UTF-8 into
	// U+FFFD. Its coalescing stops at 8 KB per token, at places that
	// depend on how it split the text; blocks that long are left to it.
	if len(src) >= 8192 || !utf8.ValidString(src) || strings.IndexByte(src, '\r') >= 0 {
		return nil, false
	}
	toks = make([]chroma.Token, 0, len(src)/4)
	// Tokens are consecutive pieces of src: one of the same type as the
	// last one extends it, as chroma.Coalesce merges them.
	last := 0 // where the last token starts
	emit := func(t chroma.TokenType, start, end int) {
		if n := len(toks); n > 0 && toks[n-1].Type == t {
			toks[n-1].Value = src[last:end]
			return
		}
		toks = append(toks, chroma.Token{Type: t, Value: src[start:end]})
		last = start
	}
	for i := 0; i < len(src); {
		c := src[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i = skipPySpace(src, i)
			emit(chroma.Text, start, i)
			continue
		case c == '#':
			if start == 0 && strings.HasPrefix(src, "#!") {
				return nil, false // a hashbang line
			}
			for i < len(src) && src[i] != '\n' {
				i++
			}
			emit(chroma.CommentSingle, start, i)
		case isPyWordStart(c):
			i = pyWordEnd(src, i)
			word := src[start:i]
			if i < len(src) && (src[i] == '"' || src[i] == '\'') {
				return nil, false // a string prefix: r"", f"", b"" ...
			}
			switch word {
			case "import", "from":
				return nil, false // chroma lexes module paths in their own states
			case "def", "class":
				j := skipPySpace(src, i)
				if j < len(src) && src[j] == '\\' {
					return nil, false
				}
				if j == i {
					break // "def(" and the like: a plain word
				}
				if j == len(src) || !isPyWordStart(src[j]) {
					return nil, false
				}
				k := pyWordEnd(src, j)
				if k < len(src) && (src[k] == '"' || src[k] == '\'') {
					return nil, false
				}
				name, ok := p.class(pyWord{after: word, word: src[j:k]})
				if !ok {
					return nil, false
				}
				emit(chroma.Keyword, start, i)
				emit(chroma.Text, i, j)
				emit(name, j, k)
				i = k
				continue
			}
			after := ""
			if start > 0 && src[start-1] == '.' {
				after = "."
			}
			t, ok := p.class(pyWord{after: after, word: word})
			if !ok {
				return nil, false
			}
			emit(t, start, i)
		case c >= '0' && c <= '9':
			i = skipDigits(src, i)
			t := chroma.LiteralNumberInteger
			if i < len(src) && src[i] == '.' {
				i = skipDigits(src, i+1)
				t = chroma.LiteralNumberFloat
			}
			if i < len(src) && (src[i] == '.' || isPyWordStart(src[i]) || (src[i] >= '0' && src[i] <= '9')) {
				return nil, false // exponents, 0x, 1_000, 2j, 1..2
			}
			emit(t, start, i)
		case c == '"' || c == '\'':
			end, ok := pyPlainString(src, i)
			if !ok {
				return nil, false
			}
			i = end
			if c == '"' {
				emit(chroma.LiteralStringDouble, start, i)
			} else {
				emit(chroma.LiteralStringSingle, start, i)
			}
		case c == '@':
			i++
			if i == len(src) || !isPyWordStart(src[i]) {
				emit(chroma.Operator, start, i)
				break
			}
			// A decorator: @name, then any ".name" with spaces around
			// the dot.
			i = pyWordEnd(src, i)
			for {
				j := skipPySpace(src, i)
				if j == len(src) || src[j] != '.' {
					break
				}
				j = skipPySpace(src, j+1)
				if j == len(src) || !isPyWordStart(src[j]) {
					break
				}
				i = pyWordEnd(src, j)
			}
			emit(chroma.NameDecorator, start, i)
		case c == '.':
			if i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9' {
				return nil, false // .5
			}
			i++
			emit(chroma.Operator, start, i)
		case c == '!':
			if i+1 == len(src) || src[i+1] != '=' {
				return nil, false
			}
			i += 2
			emit(chroma.Operator, start, i)
		case c == ':' && i+1 < len(src) && src[i+1] == '=':
			i += 2
			emit(chroma.Operator, start, i)
		case isPyOperator(c):
			i++
			emit(chroma.Operator, start, i)
		case isPyPunctuation(c):
			i++
			emit(chroma.Punctuation, start, i)
		default:
			return nil, false // backslashes, non-ASCII and the rest
		}
	}
	return toks, true
}

// class returns chroma's class for a word in its context, from the cache
// or by lexing the word alone in that context.
func (p *pyFast) class(w pyWord) (chroma.TokenType, bool) {
	p.mu.Lock()
	t, ok := p.words[w]
	p.mu.Unlock()
	if ok {
		return t, t != chroma.Error
	}
	var prefix []chroma.Token
	switch w.after {
	case "def", "class":
		prefix = []chroma.Token{{Type: chroma.Keyword, Value: w.after}, {Type: chroma.Text, Value: " "}}
	case ".":
		prefix = []chroma.Token{{Type: chroma.Name, Value: "x"}, {Type: chroma.Operator, Value: "."}}
	}
	text := ""
	for _, tok := range prefix {
		text += tok.Value
	}
	t = chroma.Error // declines the word unless chroma gives it one token
	if it, err := p.lexer.Tokenise(nil, text+w.word); err == nil {
		got := it.Tokens()
		if len(got) == len(prefix)+1 && got[len(prefix)].Value == w.word && samePrefix(got, prefix) {
			t = got[len(prefix)].Type
		}
	}
	p.mu.Lock()
	p.words[w] = t
	p.mu.Unlock()
	return t, t != chroma.Error
}

func samePrefix(got, prefix []chroma.Token) bool {
	for i, tok := range prefix {
		if got[i] != tok {
			return false
		}
	}
	return true
}

func isPyWordStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func pyWordEnd(src string, i int) int {
	for i < len(src) && (isPyWordStart(src[i]) || (src[i] >= '0' && src[i] <= '9')) {
		i++
	}
	return i
}

func skipDigits(src string, i int) int {
	for i < len(src) && src[i] >= '0' && src[i] <= '9' {
		i++
	}
	return i
}

func skipPySpace(src string, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n') {
		i++
	}
	return i
}

func isPyOperator(c byte) bool {
	switch c {
	case '-', '~', '+', '/', '*', '%', '=', '<', '>', '&', '^', '|':
		return true
	}
	return false
}

func isPyPunctuation(c byte) bool {
	switch c {
	case '[', ']', '{', '}', ':', '(', ')', ',', ';':
		return true
	}
	return false
}

// pyPlainString returns the end of the string literal at src[i]: single
// or triple quoted, with none of the characters that make chroma split a
// string into escapes and interpolations.
func pyPlainString(src string, i int) (int, bool) {
	q := src[i]
	triple := i+2 < len(src) && src[i+1] == q && src[i+2] == q
	j := i + 1
	if triple {
		j = i + 3
	}
	for ; j < len(src); j++ {
		switch c := src[j]; {
		case c == q:
			if !triple {
				return j + 1, true
			}
			if j+2 < len(src) && src[j+1] == q && src[j+2] == q {
				return j + 3, true
			}
			// A lone quote inside a triple-quoted string is string too.
		case c == '\\', c == '%', c == '{', c == '}':
			return 0, false
		case c == '\n' && !triple:
			return 0, false
		case c < ' ' && c != '\n' && c != '\t':
			return 0, false
		}
	}
	return 0, false // unterminated
}
