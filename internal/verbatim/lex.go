package verbatim

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is what a token is.
type tokKind int

const (
	tokName tokKind = iota
	tokStr
	tokOp
	tokNum
	tokNewline // the end of a logical line (a newline outside brackets)
)

// token is one Python token, as far as this package needs: strings are
// decoded, the rest kept as written.
type token struct {
	kind tokKind
	text string // as written (for a string: its decoded value's literal pieces joined)
	line int
	// For a string: its pieces, literal text and holes (an f-string's
	// replacement fields), and its prefix's letters, lower-cased.
	pieces []piece
	prefix string
}

// piece is a run of literal text, or a hole: text that is not known until
// run time (an f-string's {expression}, a format's %s).
type piece struct {
	text string
	hole bool
}

// lex splits Python source into tokens. It never fails: what it cannot
// read (an unterminated string, a stray byte) ends a token and is
// skipped, so that a hunk of a patch, which may start or end inside a
// string, is read as far as it can be.
func lex(src string) []token {
	var out []token
	line, depth := 1, 0
	i := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			if depth == 0 {
				out = append(out, token{kind: tokNewline, line: line})
			}
			line++
			i++
		case c == '\\' && i+1 < len(src) && src[i+1] == '\n':
			line++
			i += 2
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case isStrStart(src, i):
			t, n, lines := lexString(src, i)
			t.line = line
			line += lines
			if n == 0 {
				n = 1
			}
			i += n
			if t.kind == tokStr {
				out = append(out, t)
			}
		case c == '_' || c >= 0x80 || unicode.IsLetter(rune(c)):
			j := i
			for j < len(src) {
				r, w := utf8.DecodeRuneInString(src[j:])
				if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				j += w
			}
			if j == i {
				j = i + 1 // a byte that is no letter: skipped
			} else {
				out = append(out, token{kind: tokName, text: src[i:j], line: line})
			}
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < len(src) && (isAlnum(src[j]) || src[j] == '.' || src[j] == '_') {
				j++
			}
			out = append(out, token{kind: tokNum, text: src[i:j], line: line})
			i = j
		default:
			op := string(c)
			for _, long := range []string{"**=", "//=", ">>=", "<<=", "...", "==", "!=", "<=", ">=", "->", ":=", "**", "//", "<<", ">>", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@="} {
				if strings.HasPrefix(src[i:], long) {
					op = long
					break
				}
			}
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth > 0 {
					depth--
				}
			}
			out = append(out, token{kind: tokOp, text: op, line: line})
			i += len(op)
		}
	}
	return out
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isStrStart reports whether a string literal (with its prefix) starts at i.
func isStrStart(src string, i int) bool {
	j := i
	for j < len(src) && j-i < 2 && strings.IndexByte("rRbBuUfF", src[j]) >= 0 {
		j++
	}
	if j < len(src) && (src[j] == '\'' || src[j] == '"') {
		if j > i && i > 0 && (isAlnum(src[i-1]) || src[i-1] == '_') {
			return false // the end of a name, not a prefix
		}
		return validPrefix(strings.ToLower(src[i:j]))
	}
	return false
}

func validPrefix(p string) bool {
	switch p {
	case "", "r", "u", "b", "f", "br", "rb", "fr", "rf":
		return true
	}
	return false
}

// lexString reads the string literal at i: the token, the bytes it
// takes, and the newlines inside it. An unterminated string gives a
// token of another kind (dropped).
func lexString(src string, i int) (token, int, int) {
	j := i
	for src[j] != '\'' && src[j] != '"' {
		j++
	}
	prefix := strings.ToLower(src[i:j])
	q := src[j : j+1]
	if strings.HasPrefix(src[j:], q+q+q) {
		q = q + q + q
	}
	start := j + len(q)
	k := start
	lines := 0
	for {
		if k >= len(src) {
			return token{kind: tokOp}, k - i, lines
		}
		if src[k] == '\\' && k+1 < len(src) {
			if src[k+1] == '\n' {
				lines++
			}
			k += 2
			continue
		}
		if src[k] == '\n' {
			if len(q) == 1 {
				return token{kind: tokOp}, k - i, lines // unterminated on its line
			}
			lines++
		}
		if strings.HasPrefix(src[k:], q) {
			break
		}
		k++
	}
	body := src[start:k]
	t := token{kind: tokStr, prefix: prefix}
	raw := strings.Contains(prefix, "r")
	if strings.Contains(prefix, "f") {
		t.pieces = fstringPieces(body, raw)
	} else {
		t.pieces = []piece{{text: unescape(body, raw)}}
	}
	for _, p := range t.pieces {
		if !p.hole {
			t.text += p.text
		}
	}
	return t, k + len(q) - i, lines
}

// fstringPieces splits an f-string's body into literal text and holes.
func fstringPieces(body string, raw bool) []piece {
	var out []piece
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, piece{text: unescape(lit.String(), raw)})
			lit.Reset()
		}
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '{' && i+1 < len(body) && body[i+1] == '{':
			lit.WriteByte('{')
			i++
		case c == '}' && i+1 < len(body) && body[i+1] == '}':
			lit.WriteByte('}')
			i++
		case c == '{':
			flush()
			depth := 1
			for i++; i < len(body) && depth > 0; i++ {
				switch body[i] {
				case '{':
					depth++
				case '}':
					depth--
				}
			}
			i--
			out = append(out, piece{hole: true})
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return out
}

// unescape decodes a (non-raw) string literal's escapes.
func unescape(s string, raw bool) string {
	if raw || !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case '\n':
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+n < len(s)+0 && i+1+n <= len(s) {
				if v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32); err == nil {
					b.WriteRune(rune(v))
					i += n
					continue
				}
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 32)
			b.WriteRune(rune(v))
			i = j - 1
		default:
			// An unknown escape stays as written, as Python keeps it.
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}
