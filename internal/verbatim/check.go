// Package verbatim checks that a problem statement gives what the tests
// compare verbatim: an error or warning message, or output, that a test
// spells out (str(e) == "… (at line 3, column 7)", pytest.raises(match=…),
// assertRaisesRegex) and that the feature's own code makes. An agent that
// implements the feature from the statement alone cannot guess such a text;
// a statement that neither quotes the message nor shows the format the code
// makes it from is incomplete, whatever the method that collected it.
//
// Both sides are read with a small Python lexer ([Compared], [Templates]),
// not an interpreter: the test code as the test patch adds it, the feature's
// code as the gold patch adds it, each string literal of the latter a
// template whose format fields (%s, {}, an f-string's {expression}) match
// anything.
package verbatim

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Template is a string literal of the feature's code, with its format
// fields as holes.
type Template struct {
	Pieces []piece
	Line   int
}

// Text is the template with each hole shown as "…".
func (t Template) Text() string { return render(t.Pieces, "…") }

// Templates are the message-like string literals of code: adjacent
// literals joined, format fields ("%s", "%(name)d", "{}", "{0!r}",
// f-string fields) as holes. A literal with fewer than two words or eight
// letters of literal text is left out: it is a key, a name or a separator,
// not a message.
func Templates(code string) []Template {
	toks := lex(code)
	var out []Template
	for i := 0; i < len(toks); {
		n := strRunLen(toks, i)
		if n == 0 {
			i++
			continue
		}
		var ps []piece
		fstring := false
		for _, t := range toks[i : i+n] {
			if strings.Contains(t.prefix, "f") {
				fstring = true
			}
		}
		for _, p := range strRun(toks, i) {
			if p.hole || fstring {
				ps = append(ps, p)
				continue
			}
			ps = append(ps, formatPieces(p.text)...)
		}
		ps = merge(ps)
		if messageLike(ps) {
			out = append(out, Template{Pieces: ps, Line: toks[i].line})
		}
		i += n
	}
	return out
}

var formatField = regexp.MustCompile(`%(\([^)]*\))?[-#0 +]*(\*|\d+)?(\.(\*|\d+))?[hlL]?[diouxXeEfFgGcrsa]|\{[^{}]*\}`)

// formatPieces reads a plain string's %-format and str.format fields as
// holes ("%%", "{{" and "}}" are literal).
func formatPieces(s string) []piece {
	var out []piece
	s = strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(s, "%%", "\x00"), "{{", "\x01"), "}}", "\x02")
	last := 0
	for _, m := range formatField.FindAllStringIndex(s, -1) {
		out = append(out, piece{text: s[last:m[0]]}, piece{hole: true})
		last = m[1]
	}
	out = append(out, piece{text: s[last:]})
	for i := range out {
		out[i].text = strings.NewReplacer("\x00", "%", "\x01", "{", "\x02", "}").Replace(out[i].text)
	}
	return merge(out)
}

// messageLike: at least two words of two letters, or eight letters, in
// the literal text, and a space.
func messageLike(ps []piece) bool {
	lit := render(ps, " ")
	letters, words := 0, 0
	for _, w := range strings.FieldsFunc(lit, func(r rune) bool { return !unicode.IsLetter(r) }) {
		letters += len([]rune(w))
		if len([]rune(w)) >= 2 {
			words++
		}
	}
	return strings.ContainsAny(strings.TrimSpace(lit), " ") && (words >= 2 || letters >= 8)
}

// Finding is a message the tests compare that the feature's code makes
// and the statement does not give.
type Finding struct {
	Message  Message
	Template Template // the feature's literal it comes from (the first not given)
}

// String is the finding as a drop reason's detail.
func (f Finding) String() string {
	return fmt.Sprintf("the tests compare %q verbatim (%s), which the feature's code makes from %q, and the statement gives neither",
		clip(f.Message.Text()), f.Message.How, clip(f.Template.Text()))
}

func clip(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:77]) + "..."
	}
	return s
}

// Missing is what the tests compare verbatim that the statement does not
// give. tests is test code (the lines the test patch adds), code the
// feature's code (the lines the gold patch adds). A message counts when a
// template of the feature's code matches inside it; it is given when the
// statement holds the message's literal text, or every such template's
// literal pieces in order (a docstring that shows the format).
func Missing(statement, tests, code string) []Finding {
	norm := normSpace(statement)
	tmpls := Templates(code)
	var out []Finding
	seen := map[string]bool{}
	for _, m := range Compared(tests) {
		if seen[m.Text()] {
			continue
		}
		seen[m.Text()] = true
		if inOrder(norm, m.Pieces) {
			continue
		}
		for _, t := range tmpls {
			if !matchesInside(t, m) {
				continue
			}
			if !inOrder(norm, t.Pieces) {
				out = append(out, Finding{Message: m, Template: t})
				break
			}
		}
	}
	return out
}

func normSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// inOrder reports whether the literal pieces appear in s in order (each
// normalised for white space; pieces of white space alone are skipped).
func inOrder(s string, ps []piece) bool {
	at := 0
	any := false
	for _, p := range ps {
		if p.hole {
			continue
		}
		lit := normSpace(p.text)
		if lit == "" {
			continue
		}
		any = true
		i := strings.Index(s[at:], lit)
		if i < 0 {
			return false
		}
		at += i + len(lit)
	}
	return any
}

// matchesInside reports whether the template, its holes matching
// anything, matches inside the message (whose own holes match anything
// too). Literal pieces of the template are compared with white space
// normalised.
func matchesInside(t Template, m Message) bool {
	var re strings.Builder
	re.WriteString("(?s)")
	lits := 0
	for _, p := range t.Pieces {
		if p.hole {
			re.WriteString(".*?")
			continue
		}
		lit := normSpace(p.text)
		if lit == "" {
			re.WriteString(`\s*`)
			continue
		}
		lits++
		// A space at either end of the literal is kept as optional: a
		// hole may have been a space in the message.
		if strings.HasPrefix(p.text, " ") {
			re.WriteString(`\s*`)
		}
		re.WriteString(regexp.QuoteMeta(lit))
		if strings.HasSuffix(p.text, " ") {
			re.WriteString(`\s*`)
		}
	}
	if lits == 0 {
		return false
	}
	rx, err := regexp.Compile(re.String())
	if err != nil {
		return false
	}
	// The message's holes become a character no template holds.
	return rx.MatchString(normSpace(render(m.Pieces, "\uFFFC")))
}
