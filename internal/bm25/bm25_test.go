package bm25

import (
	"math"
	"reflect"
	"testing"
)

func TestTerms(t *testing.T) {
	got := Terms("def parse_header(rawHTTPLine): return a + HTTPServer.x # Héllo 42")
	want := []string{"def", "parse_header", "parse", "header", "rawhttpline", "raw", "httpline", "return", "httpserver", "héllo", "42"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("terms %q\nwant %q", got, want)
	}
}

// TestRankByHand checks the scores against ones worked out by hand.
//
// Three documents, as terms:
//
//	a: cache cache lru          (3 terms)
//	b: lru ttl                  (2 terms)
//	c: parse header parse ttl   (4 terms)
//
// N = 3, average length 3. Query "lru cache".
//
//	idf(cache) = ln(1 + (3-1+0.5)/(1+0.5)) = ln(1 + 2.5/1.5) = ln(8/3) = 0.980829
//	idf(lru)   = ln(1 + (3-2+0.5)/(2+0.5)) = ln(1 + 1.5/2.5) = ln(1.6) = 0.470004
//
// a: norm = 1 - 0.75 + 0.75·3/3 = 1
//
//	cache: tf 2 → 2·2.2/(2 + 1.2·1) = 4.4/3.2 = 1.375; × 0.980829 = 1.348640
//	lru:   tf 1 → 2.2/2.2 = 1;                     × 0.470004 = 0.470004
//	score 1.818644
//
// b: norm = 0.25 + 0.75·2/3 = 0.75
//
//	lru: 2.2/(1 + 0.9) = 1.157895; × 0.470004 = 0.544215
//
// c: no query term, 0.
func TestRankByHand(t *testing.T) {
	ix := New([]Doc{{"c.py", "parse header parse ttl"}, {"b.py", "lru ttl"}, {"a.py", "cache cache lru"}})
	got := ix.Rank("lru cache cache")
	want := []Scored{{"a.py", 1.818644}, {"b.py", 0.544215}, {"c.py", 0}}
	if len(got) != len(want) {
		t.Fatalf("%d results", len(got))
	}
	for i := range want {
		if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-5 {
			t.Errorf("rank %d: %s %.6f, want %s %.6f", i+1, got[i].ID, got[i].Score, want[i].ID, want[i].Score)
		}
	}
}

// TestRankLengthNormalisation: of two documents with the term once, the
// shorter ranks first (b = 0.75); an empty index ranks nothing.
func TestRankLengthNormalisation(t *testing.T) {
	ix := New([]Doc{{"long.py", "retry " + "x1 x2 x3 x4 x5 x6 x7 x8"}, {"short.py", "retry now"}, {"none.py", "nothing here"}})
	got := ix.Rank("retry")
	if got[0].ID != "short.py" || got[1].ID != "long.py" || got[0].Score <= got[1].Score || got[2].Score != 0 {
		t.Errorf("ranking %+v", got)
	}
	if r := New(nil).Rank("x"); len(r) != 0 {
		t.Errorf("empty index ranked %+v", r)
	}
}
