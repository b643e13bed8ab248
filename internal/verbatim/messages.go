package verbatim

import "strings"

// Message is a text the tests compare verbatim: an error or warning
// message, or captured output, that must equal (or contain, or match) a
// string the test spells out.
type Message struct {
	// Pieces are its literal text and holes: a regular expression's
	// metasyntax (match=...), an f-string's fields.
	Pieces []piece
	// How names the comparison: "==", "in", "match=", "assertEqual", ...
	How  string
	Line int // in the source it was found in
}

// Text is the message with each hole shown as "…".
func (m Message) Text() string { return render(m.Pieces, "…") }

func render(ps []piece, hole string) string {
	var b strings.Builder
	for _, p := range ps {
		if p.hole {
			b.WriteString(hole)
		} else {
			b.WriteString(p.text)
		}
	}
	return b.String()
}

// messageAttrs are attributes that hold a message or captured output:
// str(e), e.args, excinfo.value, cm.exception, caplog.text, ...
var messageAttrs = map[string]bool{
	"args": true, "message": true, "msg": true, "exception": true, "value": true, "getMessage": true,
	"readouterr": true, "out": true, "err": true, "text": true, "strerror": true, "reason": true, "getvalue": true,
}

// equalCalls compare their first two arguments; regexCalls match their
// second argument, a regular expression, against a message.
var (
	equalCalls = map[string]bool{"assertEqual": true, "assertEquals": true, "assertMultiLineEqual": true, "assertNotEqual": true}
	inCalls    = map[string]bool{"assertIn": true}
	regexCalls = map[string]bool{"assertRaisesRegex": true, "assertRaisesRegexp": true, "assertWarnsRegex": true, "assertRegex": true, "assertRegexpMatches": true}
	stopNames  = map[string]bool{"assert": true, "and": true, "or": true, "not": true, "return": true, "if": true, "else": true, "lambda": true, "yield": true, "elif": true, "while": true}
)

// Compared finds the messages test code compares verbatim.
func Compared(src string) []Message {
	toks := lex(src)
	var out []Message
	for k := 0; k < len(toks); k++ {
		t := toks[k]
		switch {
		case t.kind == tokName && t.text == "match" && k+1 < len(toks) && isOp(toks[k+1], "="):
			// pytest.raises(E, match=...), pytest.warns(W, match=...)
			if ps, ok := regexArg(toks, k+2); ok {
				out = append(out, Message{Pieces: ps, How: "match=", Line: t.line})
			}
		case t.kind == tokName && regexCalls[t.text] && k+1 < len(toks) && isOp(toks[k+1], "("):
			args := callArgs(toks, k+1)
			if len(args) >= 2 && (t.text != "assertRegex" && t.text != "assertRegexpMatches" || isMessageExpr(args[0])) {
				if ps, ok := regexArg(args[1], 0); ok && len(args[1]) == strRunLen(args[1], 0) {
					out = append(out, Message{Pieces: ps, How: t.text, Line: t.line})
				}
			}
		case t.kind == tokName && (equalCalls[t.text] || inCalls[t.text]) && k+1 < len(toks) && isOp(toks[k+1], "("):
			args := callArgs(toks, k+1)
			if len(args) < 2 {
				continue
			}
			for _, pair := range [][2]int{{0, 1}, {1, 0}} {
				s, other := args[pair[0]], args[pair[1]]
				if inCalls[t.text] && pair[0] != 0 {
					continue // assertIn(needle, haystack): only the needle
				}
				if n := strRunLen(s, 0); n > 0 && n == len(s) && isMessageExpr(other) {
					out = append(out, Message{Pieces: strRun(s, 0), How: t.text, Line: t.line})
				}
			}
		case t.kind == tokOp && (t.text == "==" || t.text == "!="), t.kind == tokName && t.text == "in":
			left := operandLeft(toks, k)
			right := operandRight(toks, k)
			if t.text == "in" {
				if n := strRunLen(left, 0); n > 0 && n == len(left) && isMessageExpr(right) {
					out = append(out, Message{Pieces: strRun(left, 0), How: "in", Line: t.line})
				}
				continue
			}
			for _, side := range [][2][]token{{left, right}, {right, left}} {
				s, other := side[0], side[1]
				if n := strRunLen(s, 0); n > 0 && n == len(s) && isMessageExpr(other) {
					out = append(out, Message{Pieces: strRun(s, 0), How: t.text, Line: t.line})
				}
			}
		}
	}
	return out
}

func isOp(t token, s string) bool { return t.kind == tokOp && t.text == s }

// strRunLen is how many string tokens start at i (implicit concatenation).
func strRunLen(toks []token, i int) int {
	n := 0
	for i+n < len(toks) && toks[i+n].kind == tokStr && !strings.Contains(toks[i+n].prefix, "b") {
		n++
	}
	return n
}

// strRun is the pieces of the string tokens starting at i, adjacent
// literal text merged.
func strRun(toks []token, i int) []piece {
	var out []piece
	for _, t := range toks[i : i+strRunLen(toks, i)] {
		for _, p := range t.pieces {
			if !p.hole && len(out) > 0 && !out[len(out)-1].hole {
				out[len(out)-1].text += p.text
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

// regexArg reads a regular expression argument at i: a string run (its
// metasyntax as holes), or re.escape(string), a literal.
func regexArg(toks []token, i int) ([]piece, bool) {
	if n := strRunLen(toks, i); n > 0 {
		var ps []piece
		for _, p := range strRun(toks, i) {
			if p.hole {
				ps = append(ps, p)
			} else {
				ps = append(ps, regexPieces(p.text)...)
			}
		}
		return merge(ps), true
	}
	if i+4 < len(toks) && toks[i].kind == tokName && toks[i].text == "re" && isOp(toks[i+1], ".") &&
		toks[i+2].kind == tokName && toks[i+2].text == "escape" && isOp(toks[i+3], "(") {
		if n := strRunLen(toks, i+4); n > 0 && i+4+n < len(toks) && isOp(toks[i+4+n], ")") {
			return strRun(toks, i+4), true
		}
	}
	return nil, false
}

// regexPieces reads a regular expression as literal text and holes: an
// escaped character is itself, a class (\d, [a-z]), a dot, a group's
// parentheses, an anchor or an alternation is a hole, and a quantifier
// makes the character before it one.
func regexPieces(re string) []piece {
	var out []piece
	lit := []rune{}
	flush := func() {
		if len(lit) > 0 {
			out = append(out, piece{text: string(lit)})
			lit = lit[:0]
		}
	}
	hole := func() {
		flush()
		out = append(out, piece{hole: true})
	}
	rs := []rune(re)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch c {
		case '\\':
			if i+1 < len(rs) {
				i++
				if strings.ContainsRune("dDwWsSbBAZ0123456789", rs[i]) {
					hole()
				} else if rs[i] == 'n' {
					lit = append(lit, '\n')
				} else if rs[i] == 't' {
					lit = append(lit, '\t')
				} else {
					lit = append(lit, rs[i])
				}
			}
		case '[':
			for i < len(rs) && rs[i] != ']' {
				if rs[i] == '\\' {
					i++
				}
				i++
			}
			hole()
		case '*', '+', '?', '{':
			if c == '{' {
				for i < len(rs) && rs[i] != '}' {
					i++
				}
			}
			if len(lit) > 0 {
				lit = lit[:len(lit)-1]
			}
			hole()
		case '.', '^', '$', '|', '(', ')':
			if c == '(' && i+1 < len(rs) && rs[i+1] == '?' {
				// (?:, (?P<name>, (?i): the group's syntax, up to its ':' or ')'
				for i < len(rs) && rs[i] != ':' && rs[i] != ')' {
					i++
				}
			}
			hole()
		default:
			lit = append(lit, c)
		}
	}
	flush()
	return merge(out)
}

// merge joins adjacent literal pieces and adjacent holes.
func merge(ps []piece) []piece {
	var out []piece
	for _, p := range ps {
		if n := len(out); n > 0 && out[n-1].hole == p.hole {
			if !p.hole {
				out[n-1].text += p.text
			}
			continue
		}
		if !p.hole && p.text == "" {
			continue
		}
		out = append(out, p)
	}
	return out
}

// callArgs splits the arguments of the call whose "(" is at open.
func callArgs(toks []token, open int) [][]token {
	var args [][]token
	depth, start := 0, open+1
	for i := open; i < len(toks); i++ {
		t := toks[i]
		if t.kind != tokOp {
			continue
		}
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				if i > start {
					args = append(args, toks[start:i])
				}
				return args
			}
		case ",":
			if depth == 1 {
				args = append(args, toks[start:i])
				start = i + 1
			}
		}
	}
	return args
}

// operandLeft is the operand before the operator at k.
func operandLeft(toks []token, k int) []token {
	depth := 0
	i := k - 1
	for ; i >= 0; i-- {
		t := toks[i]
		if t.kind == tokNewline || t.kind == tokName && stopNames[t.text] {
			break
		}
		if t.kind == tokOp {
			switch t.text {
			case ")", "]", "}":
				depth++
				continue
			case "(", "[", "{":
				if depth == 0 {
					return toks[i+1 : k]
				}
				depth--
				continue
			}
			if depth == 0 && isBoundary(t.text) {
				break
			}
		}
	}
	return toks[i+1 : k]
}

// operandRight is the operand after the operator at k.
func operandRight(toks []token, k int) []token {
	depth := 0
	i := k + 1
	for ; i < len(toks); i++ {
		t := toks[i]
		if t.kind == tokNewline || t.kind == tokName && stopNames[t.text] && depth == 0 {
			break
		}
		if t.kind == tokOp {
			switch t.text {
			case "(", "[", "{":
				depth++
				continue
			case ")", "]", "}":
				if depth == 0 {
					return toks[k+1 : i]
				}
				depth--
				continue
			}
			if depth == 0 && isBoundary(t.text) {
				break
			}
		}
	}
	return toks[k+1 : i]
}

func isBoundary(op string) bool {
	switch op {
	case ",", "=", ":", ";", "==", "!=", "<", ">", "<=", ">=", ":=":
		return true
	}
	return false
}

// isMessageExpr reports whether an expression reads a message: str() or
// repr() of something, or an attribute that holds one (e.args,
// excinfo.value, cm.exception, caplog.text).
func isMessageExpr(toks []token) bool {
	for i, t := range toks {
		if t.kind != tokName {
			continue
		}
		if (t.text == "str" || t.text == "repr") && i+1 < len(toks) && isOp(toks[i+1], "(") && (i == 0 || !isOp(toks[i-1], ".")) {
			return true
		}
		if messageAttrs[t.text] && i > 0 && isOp(toks[i-1], ".") {
			return true
		}
	}
	return false
}
