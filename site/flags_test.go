package site_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/site"
)

// flagRow returns the table row whose header cell reads name, or nil.
func flagRow(doc *html.Node, name string) *html.Node {
	for _, tr := range find(doc, func(n *html.Node) bool { return n.Data == "tr" }) {
		for _, th := range find(tr, func(n *html.Node) bool { return n.Data == "th" }) {
			if text(th) == name {
				return tr
			}
		}
	}
	return nil
}

// TestFlagsShown: a result's integrity flags appear, as visible text with
// their explanation in a legend, in its row of the system page and the
// instance page, and counted in the system page's summary; a result
// without flags shows none.
func TestFlagsShown(t *testing.T) {
	root := fixtureRoot(t, map[string]string{
		"data/submissions/demo/v1/full/20260301_agent-a/results.jsonl": `{"instance_id":"demo__pkg-1","resolved":true,"patch_applied":true,"f2p_passed":["tests/test_a.py::test_new"],"f2p_failed":[],"p2p_passed":["tests/test_b.py::test_old"],"p2p_failed":[]}` + "\n" +
			`{"instance_id":"demo__pkg-2","resolved":false,"patch_applied":true,"f2p_passed":[],"f2p_failed":["tests/test_a.py::test_new"],"p2p_passed":["tests/test_b.py::test_old"],"p2p_failed":[],"flags":["touches-tests","reads-git"]}` + "\n",
	})
	if _, err := site.Build(context.Background(), fixtureOptions(t, root)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "public")
	touches, git := bench.FlagExplanation(bench.FlagTouchesTests), bench.FlagExplanation(bench.FlagReadsGit)
	pytest := bench.FlagExplanation(bench.FlagReferencesPytest)

	sys := parse(t, read(t, out, "datasets/demo/v1/systems/agent-a/index.html"))
	flagged, clean := flagRow(sys, "demo__pkg-2"), flagRow(sys, "demo__pkg-1")
	if flagged == nil || clean == nil {
		t.Fatal("the system page has no row for the instances")
	}
	if s := text(flagged); !strings.Contains(s, "touches-tests reads-git") {
		t.Errorf("system page: the flagged row reads %q", s)
	}
	if s := text(clean); strings.Contains(s, "touches-tests") || strings.Contains(s, "reads-git") {
		t.Errorf("system page: the clean row reads %q", s)
	}
	page := text(sys)
	if !strings.Contains(page, "touches-tests "+touches) || !strings.Contains(page, "reads-git "+git) {
		t.Error("system page: no legend explaining the flags in visible text")
	}
	if strings.Contains(page, pytest) {
		t.Error("system page: the legend explains a flag no result carries")
	}
	summary := byID(sys, "flags")
	if summary == nil {
		t.Fatal("system page: no integrity flags summary")
	}
	counts := flagRow(sys, "touches-tests")
	if counts == nil || !strings.Contains(text(counts), touches+" 1 of 2") {
		t.Errorf("system page: the summary's touches-tests row is %v", counts)
	}

	inst := parse(t, read(t, out, "datasets/demo/v1/instances/demo__pkg-2/index.html"))
	row := flagRow(inst, "Agent A")
	if row == nil {
		t.Fatal("instance page: no row for Agent A")
	}
	if s := text(row); !strings.Contains(s, "touches-tests reads-git") {
		t.Errorf("instance page: Agent A's row reads %q", s)
	}
	if page := text(inst); !strings.Contains(page, "touches-tests "+touches) || !strings.Contains(page, "reads-git "+git) {
		t.Error("instance page: no legend explaining the flags in visible text")
	}
	other := text(parse(t, read(t, out, "datasets/demo/v1/instances/demo__pkg-1/index.html")))
	if strings.Contains(other, "touches-tests") {
		t.Error("the page of an instance without flags shows them")
	}
}
