package integrity

import "strings"

// GoldThreshold is the similarity from which a prediction counts as the
// gold patch: 0.95, so that reformatting, a changed comment or a few
// renamed lines in a patch of a hundred still count, while a solution
// written independently, which shares its blank lines, imports and
// signatures with the gold patch but rarely its bodies, does not.
const GoldThreshold = 0.95

// minGoldLines is the fewest changed lines a gold patch needs for the
// comparison to mean anything: below it, two honest patches of a line or
// two are often the same.
const minGoldLines = 3

// similarity measures how close a prediction's changes are to the gold
// solution's, from 0 to 1: the Dice coefficient of the two multisets of
// changed lines, 2·|P∩G| / (|P|+|G|). A changed line is its mark (+ or -)
// and its text with runs of white space made one space and the ends
// trimmed; lines that are blank after that are left out, and so are file
// names and the order of lines (a patch split over other files, or its
// hunks reordered, is still the same patch). It is 0 when the gold patch
// has fewer than minGoldLines changed lines.
func similarity(pred, gold []fileChange) float64 {
	g := lineBag(gold)
	ng := 0
	for _, n := range g {
		ng += n
	}
	if ng < minGoldLines {
		return 0
	}
	np, common := 0, 0
	for _, fc := range pred {
		for _, h := range fc.Hunks {
			for i, l := range h.Lines {
				k, ok := lineKey(h.Marks[i], l)
				if !ok {
					continue
				}
				np++
				if g[k] > 0 {
					g[k]--
					common++
				}
			}
		}
	}
	return 2 * float64(common) / float64(np+ng)
}

// lineBag counts the changed lines of a diff by key.
func lineBag(fcs []fileChange) map[string]int {
	bag := map[string]int{}
	for _, fc := range fcs {
		for _, h := range fc.Hunks {
			for i, l := range h.Lines {
				if k, ok := lineKey(h.Marks[i], l); ok {
					bag[k]++
				}
			}
		}
	}
	return bag
}

// lineKey is a changed line's key in the multiset; ok is false for a
// context line or a blank one.
func lineKey(mark byte, l string) (string, bool) {
	if mark == ' ' {
		return "", false
	}
	t := strings.Join(strings.Fields(l), " ")
	if t == "" {
		return "", false
	}
	return string(mark) + t, true
}
