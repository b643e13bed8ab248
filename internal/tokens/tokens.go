// Package tokens estimates how many tokens a model's tokenizer makes of a
// text, where no tokenizer is at hand: to fill a prompt's budget, to bound a
// gold patch's size.
package tokens

import (
	"regexp"
	"unicode/utf8"
)

var tokenPiece = regexp.MustCompile(`[\p{L}]+|[0-9]{1,3}|\n+|[ \t]+|[^\p{L}0-9\s]`)

// Estimate approximates the tokens a BPE tokenizer of today's
// models makes of s, to fill a budget without one: a run of letters is one
// token per four letters (rounded up), up to three digits one, a run of
// newlines one, a run of spaces or tabs one unless it is a single space
// (which joins the word after it), any other character one. The meter
// counts the real tokens the model's server reports.
func Estimate(s string) int {
	n := 0
	for _, m := range tokenPiece.FindAllString(s, -1) {
		switch r, _ := utf8.DecodeRuneInString(m); {
		case m == " ":
		case r == ' ' || r == '\t' || r == '\n':
			n++
		case len(m) > 0 && (r > 127 || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z'):
			n += (utf8.RuneCountInString(m) + 3) / 4
		default:
			n++
		}
	}
	return n
}
