package tomlstrict

import (
	"math"
	"reflect"
	"strings"
	"unicode/utf8"
)

// suggest is the known key an unknown key k of the table at path (of
// struct type t) most likely means, as a full path, or "": a misspelling
// of one of the table's keys; else the same name in another table
// ("output" in [eval] is site.output), or a close name in a table below
// (a key written above its [site] header).
func (d *decoder) suggest(path, k string, t reflect.Type) string {
	k = strings.ToLower(k)
	best, bestDist := "", math.MaxInt
	for _, f := range fields(t) {
		if dist := closeness(k, f.name); dist < bestDist {
			best, bestDist = join(path, f.name), dist
		}
	}
	if best != "" {
		return best
	}
	here := stripIndices(path)
	eachTable(d.root, "", nil, func(table string, names []string) {
		below := here == "" || strings.HasPrefix(table, here+".")
		for _, name := range names {
			dist := closeness(k, name)
			if table != here && (dist == 0 || below && dist < math.MaxInt) && dist < bestDist {
				best, bestDist = join(table, name), dist
			}
		}
	})
	return best
}

// closeness is the edit distance from the (lower-case) key k to name, or
// math.MaxInt when k is too far to be a misspelling of name: one edit for
// short names, where two would match unrelated words, else two.
func closeness(k, name string) int {
	name = strings.ToLower(name)
	limit := 2
	if len(name) <= 4 {
		limit = 1
	}
	// The distance is at least the difference in length; checking it first
	// keeps a key as long as the file cheap.
	if diff := utf8.RuneCountInString(k) - utf8.RuneCountInString(name); diff > limit || -diff > limit {
		return math.MaxInt
	}
	if dist := editDistance(k, name); dist <= limit {
		return dist
	}
	return math.MaxInt
}

// eachTable calls f with each table of the model t (not arrays of tables,
// nor tables keyed by the file, as maps are) and the names of its keys.
func eachTable(t reflect.Type, prefix string, seen []reflect.Type, f func(table string, names []string)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == timeType || reflect.PointerTo(t).Implements(unmarshalerType) {
		return
	}
	for _, s := range seen {
		if s == t {
			return // a recursive model
		}
	}
	seen = append(seen, t)
	var names []string
	for _, fld := range fields(t) {
		names = append(names, fld.name)
		eachTable(t.Field(fld.index).Type, join(prefix, fld.name), seen, f)
	}
	f(prefix, names)
}

// stripIndices turns site.badges[1] into site.badges.
func stripIndices(key string) string {
	var b strings.Builder
	depth := 0
	for _, r := range key {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of neighbours count one each.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows: the one before the previous is needed for swaps.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
