package trace

import (
	"github.com/featbench/featbench/internal/objid"
	"reflect"
	"strings"
	"testing"
)

// graph builds a graph from "id start end callee..." lines; ids are
// file::qualname::line.
func graph(t *testing.T, lines ...string) *Graph {
	t.Helper()
	g := &Graph{Version: Version}
	for _, l := range lines {
		f := strings.Fields(l)
		p, q, line, err := objid.Parse(f[0])
		if err != nil {
			t.Fatal(err)
		}
		n := Node{ID: f[0], File: p, Qualname: q, Line: line, Kind: KindFunction, Callees: f[3:]}
		if q == "<module>" {
			n.Kind = KindModule
		}
		n.Start, n.End = atoi(t, f[1]), atoi(t, f[2])
		g.Nodes = append(g.Nodes, n)
	}
	if err := g.index(); err != nil {
		t.Fatal(err)
	}
	return g
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("bad number %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func TestWalk(t *testing.T) {
	// top -> a -> c ; top -> b (kept) -> d ; a -> u (utility, ineligible) ;
	// c is nested in a (lines 12-13 inside 10-15).
	g := graph(t,
		"lib/m.py::a.c::12 12 13",
		"lib/m.py::a::10 10 15 lib/m.py::a.c::12 lib/u.py::u::1",
		"lib/m.py::b::20 20 29 lib/m.py::d::40",
		"lib/m.py::d::40 40 49",
		"lib/m.py::top::1 1 5 lib/m.py::a::10 lib/m.py::b::20",
		"lib/u.py::u::1 1 3",
		"tests/test_m.py::test_top::3 3 6 lib/m.py::top::1",
	)
	kept := map[string]bool{"lib/m.py::b::20": true}
	in := WalkInput{
		Graph: g, Tops: []string{"lib/m.py::top::1"}, Budget: 100,
		Kept:     func(id string) bool { return kept[id] },
		Eligible: func(n *Node) bool { return !strings.HasPrefix(n.File, "lib/u") },
	}
	res := Walk(in)
	want := WalkResult{
		Tops:      []string{"lib/m.py::top::1"},
		Extracted: []string{"lib/m.py::a.c::12", "lib/m.py::a::10", "lib/m.py::top::1"},
		Kept:      []string{"lib/m.py::b::20"},
		Skipped:   []string{"lib/u.py::u::1"},
		Lines:     5 + 6, // the nested span adds nothing; d is behind a kept node
	}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("Walk = %+v\nwant   %+v", res, want)
	}

	// A budget that the next node would pass stops the walk there.
	in.Budget = 8
	res = Walk(in)
	if !res.Stopped || res.Lines != 5 || len(res.Extracted) != 1 {
		t.Errorf("budget 8: %+v, want only the top (5 lines) and Stopped", res)
	}
	// The tops are extracted even beyond the budget: they are the feature.
	in.Budget = 1
	if res = Walk(in); res.Lines != 5 || len(res.Tops) != 1 {
		t.Errorf("budget 1: %+v, want the top alone", res)
	}
	// A top seen in pass-to-pass runs stays.
	kept["lib/m.py::top::1"] = true
	in.Budget = 100
	if res = Walk(in); len(res.Extracted) != 0 || len(res.Kept) != 1 {
		t.Errorf("kept top: %+v", res)
	}
}

func TestWalkThroughLocal(t *testing.T) {
	// top calls wrapper, local to deco; wrapper calls f. The walk goes
	// through wrapper (it cannot be removed apart from deco) to f.
	g := graph(t,
		"m.py::deco.wrapper::3 3 4 m.py::f::10",
		"m.py::f::10 10 12",
		"m.py::top::20 20 22 m.py::deco.wrapper::3",
	)
	res := Walk(WalkInput{Graph: g, Tops: []string{"m.py::top::20"}, Budget: 100,
		Through: func(n *Node) bool { return strings.Contains(n.Qualname, ".") }})
	if want := []string{"m.py::f::10", "m.py::top::20"}; !reflect.DeepEqual(res.Extracted, want) {
		t.Errorf("Extracted = %v, want %v", res.Extracted, want)
	}
}

func TestWalkDeterministic(t *testing.T) {
	g := graph(t,
		"m.py::a::1 1 10 m.py::c::30 m.py::b::20",
		"m.py::b::20 20 29",
		"m.py::c::30 30 39",
	)
	first := Walk(WalkInput{Graph: g, Tops: []string{"m.py::a::1"}, Budget: 20})
	for range 20 {
		if got := Walk(WalkInput{Graph: g, Tops: []string{"m.py::a::1"}, Budget: 20}); !reflect.DeepEqual(got, first) {
			t.Fatalf("walks differ: %+v and %+v", first, got)
		}
	}
	// Budget 20 fits a and one callee: the first in id order, b.
	if want := []string{"m.py::a::1", "m.py::b::20"}; !reflect.DeepEqual(first.Extracted, want) {
		t.Errorf("Extracted = %v, want %v", first.Extracted, want)
	}
}

func TestDecodeChecks(t *testing.T) {
	for name, js := range map[string]string{
		"unknown field":  `{"version":1,"nodes":[],"imports":{},"extra":1}`,
		"old version":    `{"version":0,"nodes":[]}`,
		"dangling edge":  `{"version":1,"nodes":[{"id":"a.py::f::1","callees":["a.py::g::2"]}]}`,
		"duplicate node": `{"version":1,"nodes":[{"id":"a.py::f::1"},{"id":"a.py::f::1"}]}`,
		"unsorted":       `{"version":1,"nodes":[{"id":"b.py::f::1"},{"id":"a.py::f::1"}]}`,
	} {
		if _, err := Decode(strings.NewReader(js)); err == nil {
			t.Errorf("%s: Decode accepted %s", name, js)
		}
	}
}

func TestWriteDOT(t *testing.T) {
	g := graph(t,
		`m.py::a::1 1 3 m.py::b::5`,
		`m.py::b::5 5 6`,
	)
	var b strings.Builder
	if err := WriteDOT(&b, g, func(n *Node) string {
		if n.Qualname == "a" {
			return StyleTop
		}
		return ""
	}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"digraph trace {", `"m.py::a::1" -> "m.py::b::5";`, `label="a\n3 lines, 0 calls" style=filled fillcolor="#d62728"`, `label="m.py"`} {
		if !strings.Contains(out, want) {
			t.Errorf("DOT lacks %q:\n%s", want, out)
		}
	}
}
