// Package bm25 ranks documents against a query with Okapi BM25 (Robertson
// and Zaragoza, 2009), the retrieval FEA-Bench's BM25 context uses (paper
// 004, section 4.2): the repository's files at the base commit, ranked by
// the request's text.
//
// It is small on purpose: the maintained Go search libraries (bleve) are
// whole index engines with dozens of modules, and the small BM25 packages
// the module proxy serves are unmaintained. The scores are checked against
// ones computed by hand (bm25_test.go).
package bm25

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
)

// Parameters: Robertson's classic k1 and b (Lucene's defaults).
const (
	K1 = 1.2
	B  = 0.75
)

// Doc is a document: an id (a file's path) and its text.
type Doc struct {
	ID   string
	Text string
}

// Scored is a document's score for a query.
type Scored struct {
	ID    string
	Score float64
}

// Index holds the term counts of a corpus.
type Index struct {
	ids    []string
	tf     []map[string]int
	length []int
	df     map[string]int
	avg    float64
}

// New indexes the documents.
func New(docs []Doc) *Index {
	ix := &Index{df: map[string]int{}}
	total := 0
	for _, d := range docs {
		terms := Terms(d.Text)
		tf := map[string]int{}
		for _, t := range terms {
			tf[t]++
		}
		for t := range tf {
			ix.df[t]++
		}
		ix.ids = append(ix.ids, d.ID)
		ix.tf = append(ix.tf, tf)
		ix.length = append(ix.length, len(terms))
		total += len(terms)
	}
	if len(docs) > 0 {
		ix.avg = float64(total) / float64(len(docs))
	}
	return ix
}

// IDF is a term's inverse document frequency, in Lucene's form, which is
// never negative: log(1 + (N - n + 0.5) / (n + 0.5)).
func (ix *Index) IDF(term string) float64 {
	n := float64(ix.df[term])
	N := float64(len(ix.ids))
	return math.Log(1 + (N-n+0.5)/(n+0.5))
}

// Rank scores every document against the query, best first; ties (and
// documents that share no term with it, at 0) in the order given.
// A query term counts once however often it occurs.
func (ix *Index) Rank(query string) []Scored {
	seen := map[string]bool{}
	var q []string
	for _, t := range Terms(query) {
		if !seen[t] {
			seen[t] = true
			q = append(q, t)
		}
	}
	out := make([]Scored, len(ix.ids))
	for i, id := range ix.ids {
		s := 0.0
		for _, t := range q {
			f := float64(ix.tf[i][t])
			if f == 0 {
				continue
			}
			norm := 1 - B + B*float64(ix.length[i])/ix.avg
			s += ix.IDF(t) * f * (K1 + 1) / (f + K1*norm)
		}
		out[i] = Scored{ID: id, Score: s}
	}
	slices.SortStableFunc(out, func(a, b Scored) int { return cmp.Compare(b.Score, a.Score) })
	return out
}

// Terms splits text into lower-case terms for code and prose alike: runs
// of letters and digits, identifiers also split at underscores and case
// changes (parse_header and parseHeader give parse, header); terms of one
// character are left out.
func Terms(text string) []string {
	var out []string
	add := func(w string) {
		if len([]rune(w)) > 1 {
			out = append(out, strings.ToLower(w))
		}
	}
	for _, word := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }) {
		parts := splitIdent(word)
		if len(parts) > 1 {
			add(strings.Trim(word, "_"))
		}
		for _, p := range parts {
			add(p)
		}
	}
	return out
}

// splitIdent splits an identifier at underscores and lower-to-upper case
// changes (HTTPServer stays one part: no lower letter before the S).
func splitIdent(w string) []string {
	var parts []string
	for _, chunk := range strings.Split(w, "_") {
		rs := []rune(chunk)
		start := 0
		for i := 1; i < len(rs); i++ {
			if unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i-1]) {
				parts = append(parts, string(rs[start:i]))
				start = i
			}
		}
		if start < len(rs) {
			parts = append(parts, string(rs[start:]))
		}
	}
	return parts
}
