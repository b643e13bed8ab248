package markup

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/chroma/v2"
)

// pyFast tokenises Python into exactly the tokens chroma's Python lexer
// gives, coalesced as chroma.Coalesce coalesces them, without its regular
// expressions. chroma tries dozens of expressions at every position
// (about 6 µs a token, three quarters of a full build's CPU time on
// FeatureBench-sized statements); this scanner follows the same rules,
// state by state and in the same order, in a few nanoseconds a byte.
//
// The words the lexer treats specially (keywords, builtins, magic names)
// are read from chroma's own rules when the scanner is made, so that an
// update of chroma's word lists needs no change here; the rules' shape is
// written out below and checked against chroma by the differential tests
// and the fuzz test. Raw tokens are emitted where chroma emits them and
// coalesced by chroma's rule (runs of one type up to 8 KB), so even the
// places where chroma cuts a long run come out the same.
//
// The scanner declines what it does not reproduce and the caller hands
// the text to chroma: non-ASCII outside strings and comments (chroma's
// classes there are Unicode's), carriage returns (chroma rewrites them),
// invalid UTF-8, the literal "{,2}" (chroma's docstring rule matches it
// by accident), and pathological input that would cost it more than a
// multiple of its length.
type pyFast struct {
	// Words with a class of their own, by the state they are matched in:
	// root's keywords, then the expression's operator words, keywords,
	// builtins and magic names; and magic function names after "def".
	// nil when chroma's rules did not have the expected shape: the
	// scanner then declines everything.
	keywords, expr, funcs pyWords
}

// pyWords is a word table with a filter in front: by first byte, the
// lengths of its words (63 for 63 or more). Most words of code are in no
// table, and the filter turns most of them away without hashing them:
// the tables' look-ups were a seventh of highlighting a patch.
type pyWords struct {
	m    map[string]*pyWordRes
	lens [256]uint64
}

func newPyWords(m map[string]*pyWordRes) pyWords {
	t := pyWords{m: m}
	for w := range m {
		if w != "" {
			t.lens[w[0]] |= 1 << min(len(w), 63)
		}
	}
	return t
}

// get returns the word's resolution, or nil when it is in no rule.
func (t *pyWords) get(w string) *pyWordRes {
	if w != "" && t.lens[w[0]]&(1<<min(len(w), 63)) == 0 {
		return nil
	}
	return t.m[w]
}

// pyWordRes is how a word resolves in one rule list, before (index 0) and
// after (index 1) a dot: builtins are not matched after one.
type pyWordRes [2]pyRes

type pyRes struct {
	// phrases are multi-word alternatives starting with the word ("yield
	// from"), in the order chroma tries them, before the word alone.
	phrases []pyPhrase
	typ     chroma.TokenType
	found   bool // the word alone matches, as typ
}

type pyPhrase struct {
	text string
	typ  chroma.TokenType
}

func newPyFast(lexer chroma.Lexer) *pyFast {
	p := &pyFast{}
	if err := p.readRules(lexer); err != nil {
		// Tests fail on this (TestPyFastMatchesChroma); a build only
		// loses the fast path.
		return &pyFast{}
	}
	return p
}

// wordRule is one of chroma's rules matching a list of words:
// "(?<!\.)(a|b c|d)\b".
var wordRule = regexp.MustCompile(`^(\(\?<!\\\.\))?\(([A-Za-z_]+(?: [A-Za-z_]+)?(?:\|[A-Za-z_]+(?: [A-Za-z_]+)?)*)\)\\b$`)

// readRules reads the word lists from chroma's Python lexer's rules.
func (p *pyFast) readRules(lexer chroma.Lexer) error {
	rl, ok := lexer.(*chroma.RegexLexer)
	if !ok {
		return errors.New("the Python lexer is not a RegexLexer")
	}
	rules, err := rl.Rules()
	if err != nil {
		return err
	}
	var operatorWords []chroma.Rule
	for _, r := range rules["expr"] {
		if r.Type == chroma.OperatorWord {
			operatorWords = append(operatorWords, r)
		}
	}
	lists := func(states ...any) (pyWords, error) {
		var all []chroma.Rule
		for _, s := range states {
			switch s := s.(type) {
			case string:
				if len(rules[s]) == 0 {
					return pyWords{}, fmt.Errorf("no state %q", s)
				}
				all = append(all, rules[s]...)
			case []chroma.Rule:
				all = append(all, s...)
			}
		}
		m, err := wordTable(all)
		return newPyWords(m), err
	}
	if len(operatorWords) != 1 {
		return errors.New("no operator word rule")
	}
	if p.keywords, err = lists("keywords"); err != nil {
		return err
	}
	if p.expr, err = lists(operatorWords, "expr-keywords", "builtins", "magicfuncs", "magicvars"); err != nil {
		return err
	}
	if p.funcs, err = lists("magicfuncs"); err != nil {
		return err
	}
	// Words the scanner's own rules take before these lists would.
	for _, w := range []string{"def", "class", "from", "import", "r", "u", "b", "f", "rb", "br", "rf", "fr"} {
		if p.keywords.get(w) != nil || p.expr.get(strings.ToLower(w)) != nil || p.expr.get(strings.ToUpper(w)) != nil {
			p.keywords, p.expr, p.funcs = pyWords{}, pyWords{}, pyWords{}
			return fmt.Errorf("%q is in a word list", w)
		}
	}
	return nil
}

// wordTable resolves every word of a list of word rules, tried in order.
func wordTable(rules []chroma.Rule) (map[string]*pyWordRes, error) {
	type rule struct {
		notAfterDot bool
		alts        []string
		typ         chroma.TokenType
	}
	var rs []rule
	words := map[string]bool{}
	for _, r := range rules {
		m := wordRule.FindStringSubmatch(r.Pattern)
		t, ok := r.Type.(chroma.TokenType)
		if m == nil || !ok || r.Mutator != nil {
			return nil, fmt.Errorf("rule %q is not a list of words", r.Pattern)
		}
		alts := strings.Split(m[2], "|")
		rs = append(rs, rule{notAfterDot: m[1] != "", alts: alts, typ: t})
		for _, a := range alts {
			first, _, _ := strings.Cut(a, " ")
			words[first] = true
		}
	}
	table := map[string]*pyWordRes{}
	for w := range words {
		res := &pyWordRes{}
		for dot := range 2 {
			r := &res[dot]
		rules:
			for _, rule := range rs {
				if rule.notAfterDot && dot == 1 {
					continue
				}
				for _, a := range rule.alts {
					switch {
					case a == w:
						r.typ, r.found = rule.typ, true
						break rules
					case strings.HasPrefix(a, w+" "):
						r.phrases = append(r.phrases, pyPhrase{a, rule.typ})
					}
				}
			}
		}
		table[w] = res
	}
	return table, nil
}

// pyState is a state of chroma's Python lexer.
type pyState uint8

const (
	pyRoot       pyState = iota
	pyFuncName           // after "def "
	pyClassName          // after "class "
	pyFromImport         // after "from "
	pyImport             // after "import "
	pyString             // in a string; the frame says which
	pyFExpr              // expr-inside-fstring: after "{" in an f-string
	pyFInner             // expr-inside-fstring-inner: in brackets there
)

// pyFrame is a state on the lexer's stack.
type pyFrame struct {
	state  pyState
	quote  byte // strings: ' or "
	triple bool
	escape bool // chroma's stringescape rules apply (not raw)
	fmt    bool // an f-string
}

// pyLexer is one run of the scanner over a text.
type pyLexer struct {
	p     *pyFast
	src   string
	pos   int
	stack []pyFrame
	sink  func(chroma.TokenType, string) // takes the coalesced tokens
	// stackBuf holds the stack while it is shallow, as it nearly always
	// is: no allocation for it.
	stackBuf [8]pyFrame
	// The token being coalesced: its type and start; cur is false
	// before the first.
	curType  chroma.TokenType
	curStart int
	cur      bool
	// The last answers of next for ']', '}' and newline.
	nextBracket, nextBrace, nextNL [2]int
	// work counts the bytes scanned ahead, by rules that may fail after
	// scanning far; past a multiple of the text, the scanner declines
	// (chroma's time on such text is bounded by the caller's budget).
	work int
}

// errDecline ends a scan the scanner leaves to chroma.
var errDecline = errors.New("left to chroma")

// tokens returns src's tokens as chroma.Coalesce(python).Tokenise gives
// them, or ok false when src is something the scanner leaves to chroma.
func (p *pyFast) tokens(src string) (toks []chroma.Token, ok bool) {
	toks = make([]chroma.Token, 0, len(src)/5+4)
	ok = p.lex(src, func(t chroma.TokenType, v string) {
		toks = append(toks, chroma.Token{Type: t, Value: v})
	})
	if !ok {
		return nil, false
	}
	return toks, true
}

// lex gives src's tokens to sink one by one, as tokens returns them, and
// reports whether it could: when it returns false, sink has had some of
// them.
func (p *pyFast) lex(src string, sink func(chroma.TokenType, string)) bool {
	if p.keywords.m == nil || src == "" || strings.IndexByte(src, '\r') >= 0 ||
		strings.Contains(src, "{,2}") || !utf8.ValidString(src) {
		return false
	}
	l := &pyLexer{p: p, src: src, sink: sink, nextBracket: noNext, nextBrace: noNext, nextNL: noNext}
	l.stack = append(l.stackBuf[:0], pyFrame{state: pyRoot})
	for l.pos < len(src) {
		if err := l.step(); err != nil {
			return false
		}
		if l.work > 8*len(src)+4096 {
			return false
		}
	}
	if l.cur {
		sink(l.curType, src[l.curStart:l.pos])
	}
	return true
}

// emit takes src[pos:end] as a raw token of type t and coalesces it as
// chroma.Coalesce does: onto the last token when that is of the same
// type and shorter than 8 KB.
func (l *pyLexer) emit(t chroma.TokenType, end int) {
	if end == l.pos {
		return // chroma.Coalesce drops empty tokens
	}
	if l.cur && t == l.curType && l.pos-l.curStart < 8192 {
		l.pos = end
		return
	}
	if l.cur {
		l.sink(l.curType, l.src[l.curStart:l.pos])
	}
	l.curType, l.curStart, l.cur = t, l.pos, true
	l.pos = end
}

func (l *pyLexer) top() *pyFrame { return &l.stack[len(l.stack)-1] }

func (l *pyLexer) push(f pyFrame) { l.stack = append(l.stack, f) }

func (l *pyLexer) pop() { l.stack = l.stack[:len(l.stack)-1] }

// at is the byte at i, or 0 past the end.
func (l *pyLexer) at(i int) byte {
	if i < len(l.src) {
		return l.src[i]
	}
	return 0
}

// noNext is a next cache that answers nothing.
var noNext = [2]int{1, 0}

// next returns the index of the next c at or after i (len(src) if none).
// cache holds the last answer: where the search started and what it found,
// which answers for every i between the two, so that rules that scan
// ahead again and again to the same character look at each byte once.
func (l *pyLexer) next(c byte, i int, cache *[2]int) int {
	if i < cache[0] || i > cache[1] {
		end := len(l.src)
		if k := strings.IndexByte(l.src[i:], c); k >= 0 {
			end = i + k
		}
		l.work += end - i
		*cache = [2]int{i, end}
	}
	return cache[1]
}

// step matches one rule of the state on top of the stack at pos.
func (l *pyLexer) step() error {
	switch f := l.top(); f.state {
	case pyRoot:
		return l.root()
	case pyString:
		return l.str(*f)
	case pyFExpr, pyFInner:
		return l.fexpr(f.state)
	case pyFuncName:
		return l.funcName()
	case pyClassName:
		return l.className()
	case pyFromImport:
		return l.fromImport()
	case pyImport:
		return l.importState()
	}
	return errDecline
}

func isPyWordStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isPyDigit(c byte) bool { return c >= '0' && c <= '9' }

func isPyWordByte(c byte) bool { return isPyWordStart(c) || isPyDigit(c) }

// isPySpace is what chroma's \s matches among ASCII bytes (Go's
// unicode.IsSpace, which regexp2 uses).
func isPySpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func pyWordEnd(src string, i int) int {
	for i < len(src) && isPyWordByte(src[i]) {
		i++
	}
	return i
}

// word returns the end of the name at i ([_\p{L}][_\p{L}\p{N}]*): a name
// followed by a non-ASCII character is left to chroma, which may take the
// character as part of it.
func (l *pyLexer) word(i int) (int, error) {
	e := pyWordEnd(l.src, i)
	if l.at(e) >= 0x80 {
		return 0, errDecline
	}
	return e, nil
}

// spaces skips \s from i; a non-ASCII character after them may be space
// to chroma, so it is left to chroma.
func (l *pyLexer) spaces(i int) (int, error) {
	for i < len(l.src) && isPySpace(l.src[i]) {
		i++
	}
	if l.at(i) >= 0x80 {
		return 0, errDecline
	}
	return i, nil
}

// root is chroma's root state.
func (l *pyLexer) root() error {
	src, i := l.src, l.pos
	c := src[i]
	switch {
	case c == '\n':
		l.emit(chroma.Text, i+1)
		return nil
	case c == '#':
		end := l.next('\n', i, &l.nextNL)
		if i == 0 && l.at(1) == '!' && end > 2 {
			l.emit(chroma.CommentHashbang, end)
		} else {
			l.emit(chroma.CommentSingle, end)
		}
		return nil
	case c == '\\':
		if l.at(i+1) == '\n' {
			l.emit(chroma.Text, i+2)
		} else {
			l.emit(chroma.Text, i+1)
		}
		return nil
	case isPyWordStart(c):
		e, err := l.word(i)
		if err != nil {
			return err
		}
		w := src[i:e]
		if done, err := l.listed(&l.p.keywords, w, i, e); done || err != nil {
			return err
		}
		var next pyState
		t := chroma.Keyword
		switch w {
		case "def":
			next = pyFuncName
		case "class":
			next = pyClassName
		case "from":
			next, t = pyFromImport, chroma.KeywordNamespace
		case "import":
			next, t = pyImport, chroma.KeywordNamespace
		}
		if next != pyRoot {
			// (def)((?:\s|\\\s)+)
			j := e
			for j < len(src) {
				if isPySpace(src[j]) {
					j++
				} else if src[j] == '\\' && j+1 < len(src) && isPySpace(src[j+1]) {
					j += 2
				} else {
					break
				}
			}
			if l.at(j) >= 0x80 || (l.at(j) == '\\' && l.at(j+1) >= 0x80) {
				return errDecline
			}
			if j > e {
				l.emit(t, e)
				l.emit(chroma.Text, j)
				l.push(pyFrame{state: next})
				return nil
			}
		}
		return l.exprWord(i, e)
	case c >= 0x80:
		return errDecline
	}
	return l.expr(pyRoot)
}

// listed matches the word src[i:e] against a word table: a phrase
// starting with it, else the word alone. It reports whether it matched.
func (l *pyLexer) listed(table *pyWords, w string, i, e int) (bool, error) {
	res := table.get(w)
	if res == nil {
		return false, nil
	}
	dot := 0
	if i > 0 && l.src[i-1] == '.' {
		dot = 1
	}
	r := &res[dot]
	for _, ph := range r.phrases {
		end := i + len(ph.text)
		if strings.HasPrefix(l.src[i:], ph.text) {
			if c := l.at(end); c >= 0x80 {
				return false, errDecline
			} else if !isPyWordByte(c) {
				l.emit(ph.typ, end)
				return true, nil
			}
		}
	}
	if r.found {
		l.emit(r.typ, e)
		return true, nil
	}
	return false, nil
}

// exprWord is a word in chroma's expr state: a string's prefix, a word of
// the lists, or a name.
func (l *pyLexer) exprWord(i, e int) error {
	src := l.src
	if q := l.at(e); q == '"' || q == '\'' {
		w := src[i:e]
		var f pyFrame
		ok := true
		switch {
		case strings.EqualFold(w, "rf") || strings.EqualFold(w, "fr"):
			f = pyFrame{fmt: true}
		case w == "f" || w == "F":
			f = pyFrame{fmt: true, escape: true}
		case strings.EqualFold(w, "rb") || strings.EqualFold(w, "br") || strings.EqualFold(w, "r"):
			f = pyFrame{}
		case w == "u" || w == "U" || w == "b" || w == "B":
			f = pyFrame{escape: true}
		default:
			ok = false
		}
		if ok {
			l.emit(chroma.LiteralStringAffix, e)
			l.openString(f)
			return nil
		}
	}
	if done, err := l.listed(&l.p.expr, src[i:e], i, e); done || err != nil {
		return err
	}
	l.emit(chroma.Name, e)
	return nil
}

// openString takes the quote at pos and pushes the string's state.
func (l *pyLexer) openString(f pyFrame) {
	q := l.src[l.pos]
	f.state, f.quote = pyString, q
	n := 1
	if l.at(l.pos+1) == q && l.at(l.pos+2) == q {
		f.triple, n = true, 3
	}
	l.emit(stringType(q), l.pos+n)
	l.push(f)
}

func stringType(q byte) chroma.TokenType {
	if q == '"' {
		return chroma.LiteralStringDouble
	}
	return chroma.LiteralStringSingle
}

// expr is chroma's expr state at a byte that does not start a word (in
// root, after root's own rules).
func (l *pyLexer) expr(st pyState) error {
	src, i := l.src, l.pos
	c := src[i]
	switch {
	case c == '"' || c == '\'':
		l.openString(pyFrame{escape: true})
	case c == ' ' || c == '\t' || c == '\v' || c == '\f':
		// [^\S\n]+
		j := i + 1
		for j < len(src) && isPySpace(src[j]) && src[j] != '\n' {
			j++
		}
		if l.at(j) >= 0x80 {
			return errDecline
		}
		l.emit(chroma.Text, j)
	case isPyDigit(c) || (c == '.' && isPyDigit(l.at(i+1))):
		l.number()
	case c == '!':
		if l.at(i+1) == '=' {
			l.emit(chroma.Operator, i+2)
		} else {
			l.emit(chroma.Error, i+1)
		}
	case (c == '=' || c == ':') && l.at(i+1) == '=', (c == '<' || c == '>') && l.at(i+1) == c:
		l.emit(chroma.Operator, i+2)
	case pyOperators[c]:
		l.emit(chroma.Operator, i+1)
	case pyPunctuation[c]:
		l.emit(chroma.Punctuation, i+1)
	case isPyWordStart(c):
		e, err := l.word(i)
		if err != nil {
			return err
		}
		return l.exprWord(i, e)
	case c == '@':
		if l.at(i+1) >= 0x80 {
			return errDecline
		}
		if !isPyWordStart(l.at(i + 1)) {
			l.emit(chroma.Operator, i+1)
			return nil
		}
		// @name(\s*\.\s*name)*
		e, err := l.word(i + 1)
		if err != nil {
			return err
		}
		for {
			j, err := l.spaces(e)
			if err != nil {
				return err
			}
			if l.at(j) != '.' {
				break
			}
			k, err := l.spaces(j + 1)
			if err != nil {
				return err
			}
			if !isPyWordStart(l.at(k)) {
				break
			}
			l.work += k - e
			if e, err = l.word(k); err != nil {
				return err
			}
		}
		l.emit(chroma.NameDecorator, e)
	case c >= 0x80:
		return errDecline
	default:
		// No rule matches: chroma gives the character as an error, or
		// at a line's end in any state but root, goes back to root.
		if c == '\n' && st != pyRoot {
			l.stack = l.stack[:1]
			return nil
		}
		l.emit(chroma.Error, i+1)
	}
	return nil
}

// digits is the end of \d(?:_?\d)* at i (a digit).
func (l *pyLexer) digits(i int) int {
	i++
	for {
		if isPyDigit(l.at(i)) {
			i++
		} else if l.at(i) == '_' && isPyDigit(l.at(i+1)) {
			i += 2
		} else {
			return i
		}
	}
}

// number is chroma's numbers state, its rules in order.
func (l *pyLexer) number() {
	src, i := l.src, l.pos
	// (\d(?:_?\d)*\.(?:\d(?:_?\d)*)?|(?:\d(?:_?\d)*)?\.\d(?:_?\d)*)([eE][+-]?\d(?:_?\d)*)?
	m := -1
	if src[i] == '.' {
		m = l.digits(i + 1)
	} else if d := l.digits(i); l.at(d) == '.' {
		m = d + 1
		if isPyDigit(l.at(m)) {
			m = l.digits(m)
		}
	}
	if m >= 0 {
		if e := l.at(m); e == 'e' || e == 'E' {
			k := m + 1
			if l.at(k) == '+' || l.at(k) == '-' {
				k++
			}
			if isPyDigit(l.at(k)) {
				m = l.digits(k)
			}
		}
		l.emit(chroma.LiteralNumberFloat, m)
		return
	}
	d := l.digits(i)
	// \d(?:_?\d)*[eE][+-]?\d(?:_?\d)*j?
	if e := l.at(d); e == 'e' || e == 'E' {
		k := d + 1
		if l.at(k) == '+' || l.at(k) == '-' {
			k++
		}
		if isPyDigit(l.at(k)) {
			k = l.digits(k)
			if l.at(k) == 'j' {
				k++
			}
			l.emit(chroma.LiteralNumberFloat, k)
			return
		}
	}
	// 0[oO](?:_?[0-7])+, 0[bB](?:_?[01])+, 0[xX](?:_?[a-fA-F0-9])+
	if src[i] == '0' {
		var in func(byte) bool
		t := chroma.LiteralNumberOct
		switch l.at(i + 1) {
		case 'o', 'O':
			in = func(c byte) bool { return c >= '0' && c <= '7' }
		case 'b', 'B':
			in, t = func(c byte) bool { return c == '0' || c == '1' }, chroma.LiteralNumberBin
		case 'x', 'X':
			in, t = func(c byte) bool {
				return isPyDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
			}, chroma.LiteralNumberHex
		}
		if in != nil {
			k := i + 2
			for {
				if in(l.at(k)) {
					k++
				} else if l.at(k) == '_' && in(l.at(k+1)) {
					k += 2
				} else {
					break
				}
			}
			if k > i+2 {
				l.emit(t, k)
				return
			}
		}
	}
	l.emit(chroma.LiteralNumberInteger, d)
}

// str is a string's state: chroma's [s]tringescape, the string's own
// rules (tdqs, dqs, tdqf, dqf, ...), and strings-* or fstrings-*.
func (l *pyLexer) str(f pyFrame) error {
	src, i := l.src, l.pos
	c := src[i]
	t := stringType(f.quote)
	if f.fmt && (c == '{' || c == '}') && l.at(i+1) == c {
		l.emit(chroma.LiteralStringEscape, i+2) // rfstringescape
		return nil
	}
	if f.escape && c == '\\' {
		if n := l.escape(i); n > 0 {
			l.emit(chroma.LiteralStringEscape, i+n)
			return nil
		}
	}
	if c == f.quote && (!f.triple || (l.at(i+1) == c && l.at(i+2) == c)) {
		n := 1
		if f.triple {
			n = 3
		}
		l.emit(t, i+n)
		l.pop()
		return nil
	}
	if !f.triple && c == '\\' {
		// \\\\|\\"|\\\n
		if n := l.at(i + 1); n == '\\' || n == f.quote || n == '\n' {
			l.emit(chroma.LiteralStringEscape, i+2)
			return nil
		}
	}
	if f.fmt {
		switch c {
		case '}':
			l.emit(chroma.LiteralStringInterpol, i+1)
			return nil
		case '{':
			l.emit(chroma.LiteralStringInterpol, i+1)
			l.push(pyFrame{state: pyFExpr})
			return nil
		}
	} else {
		switch c {
		case '%':
			if n, err := l.percent(i); err != nil {
				return err
			} else if n > 0 {
				l.emit(chroma.LiteralStringInterpol, i+n)
				return nil
			}
			l.emit(t, i+1)
			return nil
		case '{':
			if n, err := l.brace(i); err != nil {
				return err
			} else if n > 0 {
				l.emit(chroma.LiteralStringInterpol, i+n)
				return nil
			}
			if l.at(i+1) == '{' {
				l.emit(t, i+2)
			} else {
				l.emit(t, i+1)
			}
			return nil
		}
	}
	switch c {
	case '\\', '\'', '"':
		l.emit(t, i+1)
		return nil
	case '\n':
		if f.triple {
			l.emit(t, i+1)
		} else {
			// No rule matches a newline in a one-line string: chroma
			// goes back to root.
			l.stack = l.stack[:1]
		}
		return nil
	}
	// [^\\'"%{\n]+, or [^\\'"{}\n]+ in an f-string
	stop := &pyStringStops
	if f.fmt {
		stop = &pyFStringStops
	}
	j := i + 1
	for j < len(src) && !stop[src[j]] {
		j++
	}
	l.emit(t, j)
	return nil
}

// pyOperators and pyPunctuation are chroma's one-byte operators and
// punctuation.
var pyOperators, pyPunctuation = byteSet("-~+/*%=<>&^|."), byteSet("[]{}:(),;")

// pyStringStops and pyFStringStops are the bytes that end a run of plain
// string text.
var pyStringStops, pyFStringStops = byteSet("\\'\"%{\n"), byteSet("\\'\"{}\n")

func byteSet(s string) (set [256]bool) {
	for i := range len(s) {
		set[s[i]] = true
	}
	return set
}

func isHex(c byte) bool {
	return isPyDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// escape is the length of chroma's stringescape at i (a backslash), or 0:
// \\([\\abfnrtv"']|\n|N\{.*?\}|u[a-fA-F0-9]{4}|U[a-fA-F0-9]{8}|x[a-fA-F0-9]{2}|[0-7]{1,3})
func (l *pyLexer) escape(i int) int {
	c := l.at(i + 1)
	hex := func(n int) int {
		for k := range n {
			if !isHex(l.at(i + 2 + k)) {
				return 0
			}
		}
		return n + 2
	}
	switch {
	case strings.IndexByte("\\abfnrtv\"'\n", c) >= 0 && c != 0:
		return 2
	case c == 'N' && l.at(i+2) == '{':
		// The first '}' on the line.
		end := l.next('}', i+3, &l.nextBrace)
		if end < len(l.src) && end < l.next('\n', i+3, &l.nextNL) {
			return end + 1 - i
		}
		return 0
	case c == 'u':
		return hex(4)
	case c == 'U':
		return hex(8)
	case c == 'x':
		return hex(2)
	case c >= '0' && c <= '7':
		n := 2
		for n < 4 && l.at(i+n) >= '0' && l.at(i+n) <= '7' {
			n++
		}
		return n
	}
	return 0
}

// pyWordRun is the end of \w+ at i, or i when there is none; a non-ASCII
// character there may be a word character to chroma.
func (l *pyLexer) pyWordRun(i int) (int, error) {
	j := pyWordEnd(l.src, i)
	if l.at(j) >= 0x80 {
		return 0, errDecline
	}
	l.work += j - i
	return j, nil
}

// percent is the length of a %-format at i, or 0:
// %(\(\w+\))?[-#0 +]*([0-9]+|[*])?(\.([0-9]+|[*]))?[hlL]?[E-GXc-giorsaux%]
func (l *pyLexer) percent(i int) (int, error) {
	j := i + 1
	if l.at(j) == '(' {
		k, err := l.pyWordRun(j + 1)
		if err != nil {
			return 0, err
		}
		if k > j+1 && l.at(k) == ')' {
			j = k + 1
		}
	}
	for strings.IndexByte("-#0 +", l.at(j)) >= 0 && l.at(j) != 0 {
		j++
	}
	if l.at(j) == '*' {
		j++
	} else {
		for isPyDigit(l.at(j)) {
			j++
		}
	}
	if l.at(j) == '.' && (l.at(j+1) == '*' || isPyDigit(l.at(j+1))) {
		j++
		if l.at(j) == '*' {
			j++
		} else {
			for isPyDigit(l.at(j)) {
				j++
			}
		}
	}
	if c := l.at(j); c == 'h' || c == 'l' || c == 'L' {
		j++
	}
	l.work += j - i
	if c := l.at(j); (c >= 'E' && c <= 'G') || c == 'X' || (c >= 'c' && c <= 'g') || strings.IndexByte("iorsaux%", c) >= 0 && c != 0 {
		return j + 1 - i, nil
	}
	return 0, nil
}

// brace is the length of a str.format field at i, or 0:
// \{((\w+)((\.\w+)|(\[[^\]]+\]))*)?(\![sra])?(\:(.?[<>=\^])?[-+ ]?#?0?(\d+)?,?(\.\d+)?[E-GXb-gnosx%]?)?\}
func (l *pyLexer) brace(i int) (int, error) {
	j, err := l.pyWordRun(i + 1)
	if err != nil {
		return 0, err
	}
	if j > i+1 {
		for {
			if l.at(j) == '.' {
				k, err := l.pyWordRun(j + 1)
				if err != nil {
					return 0, err
				}
				if k == j+1 {
					break
				}
				j = k
			} else if l.at(j) == '[' && l.at(j+1) != ']' && j+1 < len(l.src) {
				k := l.next(']', j+1, &l.nextBracket)
				if k == len(l.src) {
					break
				}
				l.work += 8
				j = k + 1
			} else {
				break
			}
		}
	}
	if l.at(j) == '!' && strings.IndexByte("sra", l.at(j+1)) >= 0 && l.at(j+1) != 0 {
		j += 2
	}
	if l.at(j) == '}' {
		return j + 1 - i, nil
	}
	if l.at(j) != ':' {
		return 0, nil
	}
	// The format spec: its optional alignment tried as a character and
	// an alignment, an alignment alone, and none.
	align := func(c byte) bool { return c == '<' || c == '>' || c == '=' || c == '^' }
	var starts []int
	if r, n := utf8.DecodeRuneInString(l.src[min(j+1, len(l.src)):]); n > 0 && r != '\n' && align(l.at(j+1+n)) {
		starts = append(starts, j+2+n)
	}
	if align(l.at(j + 1)) {
		starts = append(starts, j+2)
	}
	starts = append(starts, j+1)
	for _, k := range starts {
		if c := l.at(k); c == '-' || c == '+' || c == ' ' {
			k++
		}
		if l.at(k) == '#' {
			k++
		}
		if l.at(k) == '0' {
			k++
		}
		for isPyDigit(l.at(k)) {
			k++
		}
		if l.at(k) == ',' {
			k++
		}
		if l.at(k) == '.' && isPyDigit(l.at(k+1)) {
			k++
			for isPyDigit(l.at(k)) {
				k++
			}
		}
		if l.at(k) >= 0x80 || (l.at(k) == '.' && l.at(k+1) >= 0x80) {
			return 0, errDecline // \d is Unicode's
		}
		if c := l.at(k); (c >= 'E' && c <= 'G') || c == 'X' || (c >= 'b' && c <= 'g') || strings.IndexByte("nosx%", c) >= 0 && c != 0 {
			k++
		}
		l.work += k - j
		if l.at(k) == '}' {
			return k + 1 - i, nil
		}
	}
	return 0, nil
}

// fexpr is expr-inside-fstring and expr-inside-fstring-inner.
func (l *pyLexer) fexpr(st pyState) error {
	src, i := l.src, l.pos
	c := src[i]
	switch {
	case c == '{' || c == '(' || c == '[':
		l.emit(chroma.Punctuation, i+1)
		l.push(pyFrame{state: pyFInner})
		return nil
	case st == pyFInner && (c == '}' || c == ')' || c == ']'):
		l.emit(chroma.Punctuation, i+1)
		l.pop()
		return nil
	case st == pyFExpr && (c == '=' || c == '!' || c == '}' || c == ':'):
		// (=\s*)?(\![sraf])?\} and (=\s*)?(\![sraf])?:
		try := func(j int) int {
			if l.at(j) == '!' && strings.IndexByte("sraf", l.at(j+1)) >= 0 && l.at(j+1) != 0 {
				j += 2
			}
			if l.at(j) == '}' || l.at(j) == ':' {
				return j + 1
			}
			return -1
		}
		end := -1
		if c == '=' {
			j, err := l.spaces(i + 1)
			if err != nil {
				return err
			}
			l.work += j - i
			end = try(j)
		}
		if end < 0 {
			end = try(i)
		}
		if end > 0 {
			l.emit(chroma.LiteralStringInterpol, end)
			l.pop()
			return nil
		}
	case isPySpace(c):
		j, err := l.spaces(i)
		if err != nil {
			return err
		}
		l.emit(chroma.Text, j)
		return nil
	}
	return l.expr(st)
}

// funcName is chroma's funcname state: a magic name (which stays in the
// state), a name, or nothing.
func (l *pyLexer) funcName() error {
	i := l.pos
	c := l.src[i]
	if c >= 0x80 {
		return errDecline
	}
	if !isPyWordStart(c) {
		l.pop()
		return nil
	}
	e, err := l.word(i)
	if err != nil {
		return err
	}
	if done, err := l.listed(&l.p.funcs, l.src[i:e], i, e); done || err != nil {
		return err
	}
	l.emit(chroma.NameFunction, e)
	l.pop()
	return nil
}

// className is chroma's classname state: a name, or else an error token
// (back to root at a newline).
func (l *pyLexer) className() error {
	i := l.pos
	c := l.src[i]
	switch {
	case c >= 0x80:
		return errDecline
	case isPyWordStart(c):
		e, err := l.word(i)
		if err != nil {
			return err
		}
		l.emit(chroma.NameClass, e)
		l.pop()
	case c == '\n':
		l.stack = l.stack[:1]
	default:
		l.emit(chroma.Error, i+1)
	}
	return nil
}

// fromImport is chroma's fromimport state.
func (l *pyLexer) fromImport() error {
	src, i := l.src, l.pos
	c := src[i]
	switch {
	case isPySpace(c):
		// (\s+)(import)\b
		j, err := l.spaces(i)
		if err != nil {
			return err
		}
		if strings.HasPrefix(src[j:], "import") {
			if n := l.at(j + 6); n >= 0x80 {
				return errDecline
			} else if !isPyWordByte(n) {
				l.emit(chroma.Text, j)
				l.emit(chroma.KeywordNamespace, j+6)
				l.pop()
				return nil
			}
		}
	case c == '.':
		l.emit(chroma.NameNamespace, i+1)
		return nil
	case isPyWordStart(c):
		e, err := l.word(i)
		if err != nil {
			return err
		}
		if src[i:e] == "None" {
			l.emit(chroma.NameBuiltinPseudo, e)
			l.pop()
			return nil
		}
		l.emit(chroma.NameNamespace, e)
		return nil
	case c >= 0x80:
		return errDecline
	}
	l.pop()
	return nil
}

// importState is chroma's import state.
func (l *pyLexer) importState() error {
	src, i := l.src, l.pos
	c := src[i]
	switch {
	case c == '.':
		l.emit(chroma.NameNamespace, i+1)
		return nil
	case isPyWordStart(c):
		e, err := l.word(i)
		if err != nil {
			return err
		}
		l.emit(chroma.NameNamespace, e)
		return nil
	case c >= 0x80:
		return errDecline
	}
	j, err := l.spaces(i)
	if err != nil {
		return err
	}
	// (\s+)(as)(\s+)
	if j > i && strings.HasPrefix(src[j:], "as") && l.at(j+2) >= 0x80 {
		return errDecline
	}
	if j > i && strings.HasPrefix(src[j:], "as") && isPySpace(l.at(j+2)) {
		k, err := l.spaces(j + 2)
		if err != nil {
			return err
		}
		l.emit(chroma.Text, j)
		l.emit(chroma.Keyword, j+2)
		l.emit(chroma.Text, k)
		return nil
	}
	// (\s*)(,)(\s*)
	if l.at(j) == ',' {
		k, err := l.spaces(j + 1)
		if err != nil {
			return err
		}
		l.emit(chroma.Text, j)
		l.emit(chroma.Operator, j+1)
		l.emit(chroma.Text, k)
		return nil
	}
	l.pop()
	return nil
}
