package site_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/featbench/featbench/metrics"
	"github.com/featbench/featbench/site"
)

// TestFilePercentLeavesOutLevelTwo: on the example's lite board the gold
// patch touches every gold file of its level 1 instances; its level 2
// results give no file_recall (nothing to localise when building from
// scratch) and must not count as 0 (the board showed 50.0).
func TestFilePercentLeavesOutLevelTwo(t *testing.T) {
	out, _ := buildShipped(t)
	page := read(t, out, "leaderboard/example/v2/lite/index.html")
	if got := boardCells(t, page, "Gold patch")["file"][0]; got != "100.0" {
		t.Errorf("the gold patch's File %% on the example lite board is %q, want 100.0", got)
	}
}

// TestBoardCountsAgree: every page that counts a board's systems counts
// ranked systems and reference rows apart, and agrees (the example full
// board said "0 systems" and "0 of 0 shown" while the dataset page said
// 2); a board without ranked systems says so, and an empty one too.
func TestBoardCountsAgree(t *testing.T) {
	out, _ := buildShipped(t)
	board := parse(t, read(t, out, "leaderboard/example/v2/full/index.html"))
	want := "no ranked system, 2 reference rows"
	if c := find(board, func(n *html.Node) bool { return n.Data == "caption" }); len(c) == 0 || !strings.Contains(text(c[0]), want) {
		t.Errorf("the example full board's caption does not say %q", want)
	}
	if msg := find(board, hasClass("board-empty")); len(msg) != 1 || !strings.Contains(text(msg[0]), "No system is ranked on this split yet") {
		t.Errorf("the example full board, with only reference rows, does not say that no system is ranked")
	}
	if f := find(board, func(n *html.Node) bool { return n.Data == "form" }); len(f) != 0 {
		t.Errorf("the example full board has a filter form with no ranked system to filter")
	}
	home := read(t, out, "index.html")
	if !strings.Contains(home, "FeatBench example v2 — full ("+want+")") || !strings.Contains(home, "FeatureBench v1.0 — lite (20 ranked systems)") {
		t.Errorf("the home page's list of boards does not count as the boards do")
	}
	ds := parse(t, read(t, out, "datasets/example/v2/index.html"))
	for split, want := range map[string]string{"full": "0 + 2 reference rows", "lite": "2 + 2 reference rows"} {
		row := rowNode(t, ds, split, "Splits of")
		cells := find(row, func(n *html.Node) bool { return n.Data == "td" })
		if len(cells) < 2 || strings.Join(strings.Fields(text(cells[1])), " ") != want {
			t.Errorf("the dataset page counts the %s split's systems as %q, want %q", split, text(cells[1]), want)
		}
	}
	repos := read(t, out, "datasets/example/v2/repos/index.html")
	if !strings.Contains(repos, "2 ranked systems, 2 reference rows on the") {
		t.Errorf("the per-repository page does not count the lite board's systems as the board does")
	}

	// A split nobody was evaluated on.
	root := fixtureRoot(t, map[string]string{"data/datasets/demo/v1/dataset.toml": `name = "demo"
title = "Demo"
version = "v1"
release_date = 2026-02-01

[[repositories]]
name = "demo/pkg"

[[splits]]
name = "full"
instances = ["demo__pkg-1", "demo__pkg-2"]

[[splits]]
name = "empty"
instances = ["demo__pkg-1"]
`})
	if _, err := site.Build(context.Background(), fixtureOptions(t, root)); err != nil {
		t.Fatal(err)
	}
	empty := parse(t, read(t, filepath.Join(root, "public"), "leaderboard/demo/v1/empty/index.html"))
	if msg := find(empty, hasClass("board-empty")); len(msg) != 1 || text(msg[0]) != "No system has been evaluated on this split yet." {
		t.Errorf("an empty board does not say that no system was evaluated on it")
	}
	if tables := find(empty, func(n *html.Node) bool { return n.Data == "table" }); len(tables) != 0 {
		t.Errorf("an empty board shows %d tables, want none", len(tables))
	}
}

// hasClass matches elements whose class attribute holds c.
func hasClass(c string) func(*html.Node) bool {
	return func(n *html.Node) bool {
		v, _ := attr(n, "class")
		return n.Type == html.ElementNode && slices.Contains(strings.Fields(v), c)
	}
}

// TestBaselinesShownAsBaselines: the empty patch is an empty patch at both
// levels (cmd/eval grades it "applied, ImportError" at level 1, where the
// tests run on the base, and "not applied, EmptyPatch" at level 2); the
// gold and empty rows carry no open or closed scaffold and weights tags;
// an instance page that counts who resolved it says how the reference
// rows did and that they are not counted.
func TestBaselinesShownAsBaselines(t *testing.T) {
	out, _ := buildShipped(t)
	const ds = "datasets/example/v2/"
	empty := parse(t, read(t, out, ds+"systems/empty/index.html"))
	for _, id := range []string{"featbench__textkit.test_case.3f4c65e3.lv1", "featbench__textkit.test_case.3f4c65e3.lv2"} {
		row := rowNode(t, empty, id, "Result on each instance of the full split")
		cells := find(row, func(n *html.Node) bool { return n.Data == "td" })
		if got := text(cells[2]); got != "✗ empty patch" {
			t.Errorf("the empty patch on %s: resolved column %q, want \"✗ empty patch\"", id, got)
		}
		if got := text(cells[5]); !strings.HasPrefix(got, "EmptyPatch") {
			t.Errorf("the empty patch on %s: failure modes %q, want EmptyPatch first", id, got)
		}
		inst := parse(t, read(t, out, ds+"instances/"+id+"/index.html"))
		erow := rowNode(t, inst, "Empty patch reference", "Systems evaluated on this instance")
		if got := text(find(erow, func(n *html.Node) bool { return n.Data == "td" })[2]); got != "empty patch" {
			t.Errorf("instance %s: the empty patch's applied column is %q, want \"empty patch\" at either level", id, got)
		}
		var resolvedBy string
		for _, dt := range find(inst, func(n *html.Node) bool { return n.Data == "dt" }) {
			if text(dt) == "Resolved by" {
				resolvedBy = strings.Join(strings.Fields(text(dt.NextSibling)), " ")
			}
		}
		for _, want := range []string{"reference rows such as the gold and empty patches are not counted", "Reference rows, not counted: Gold patch (full) resolves it; Empty patch (full) does not resolve it."} {
			if !strings.Contains(resolvedBy, want) {
				t.Errorf("instance %s: \"Resolved by\" reads %q, want it to say %q", id, resolvedBy, want)
			}
		}
	}
	board := read(t, out, "leaderboard/example/v2/lite/index.html")
	for _, name := range []string{"Gold patch", "Empty patch"} {
		row := rowOf(t, board, ">"+name+"<")
		if strings.Contains(row, "scaffold</span>") || strings.Contains(row, "weights</span>") || !strings.Contains(row, ">reference</span>") {
			t.Errorf("the %s row carries open/closed scaffold or weights tags, or no reference tag: %s", name, row)
		}
	}
	for _, slug := range []string{"gold", "empty"} {
		if page := read(t, out, ds+"systems/"+slug+"/index.html"); strings.Contains(page, "scaffold</span>") || strings.Contains(page, "weights</span>") {
			t.Errorf("the %s system page tags the baseline's scaffold or weights as open or closed", slug)
		}
	}
}

// TestBoardFiguresReadAlike: each figure column gives its numbers with
// one number of decimals (the lite board mixed "20" and "20.0"), a padded
// published figure keeps its text in the cell's title, the board says what
// it ranks by, and FV, RT and File % are explained in words on the page,
// not only in tooltips.
func TestBoardFiguresReadAlike(t *testing.T) {
	out, _ := buildShipped(t)
	for _, page := range []string{"leaderboard/featurebench/v1.0/lite/index.html", "leaderboard/featurebench/v1.0/full/index.html", "leaderboard/featurebench/v1.0/fast/index.html", "leaderboard/example/v2/lite/index.html", "index.html"} {
		doc := parse(t, read(t, out, page))
		table := find(doc, hasClass("board"))[0]
		var keys []string
		for _, th := range find(table, func(n *html.Node) bool { return n.Data == "th" && n.Parent.Parent.Data == "thead" }) {
			k, _ := attr(th, "data-key")
			keys = append(keys, k)
		}
		decimals := map[string]map[int]bool{}
		for _, tr := range find(table, func(n *html.Node) bool { return n.Data == "tr" && n.Parent.Data == "tbody" }) {
			cells := find(tr, func(n *html.Node) bool { return (n.Data == "td" || n.Data == "th") && n.Parent == tr })
			if len(cells) != len(keys) {
				continue // the reference rows' heading
			}
			for i, c := range cells {
				switch keys[i] {
				case "resolved", "passed", "l1", "l1passed", "l2", "l2passed", "fv", "rt", "file":
				default:
					continue
				}
				f := strings.Fields(text(c))
				if len(f) == 0 || f[0] == "—" {
					continue
				}
				d := 0
				if i := strings.IndexByte(f[0], '.'); i >= 0 {
					d = len(f[0]) - i - 1
				}
				if decimals[keys[i]] == nil {
					decimals[keys[i]] = map[int]bool{}
				}
				decimals[keys[i]][d] = true
			}
		}
		for k, ds := range decimals {
			if len(ds) != 1 {
				t.Errorf("%s: column %s shows its figures with %v decimals, want one number of decimals", page, k, slices.Sorted(maps.Keys(ds)))
			}
		}
		note := find(doc, hasClass("rank-note"))
		if len(note) == 0 || !strings.HasPrefix(strings.TrimSpace(text(note[0])), "Ranked by %") {
			t.Errorf("%s does not say what it ranks by", page)
		}
		legend := find(doc, hasClass("col-legend"))
		abbreviated := slices.Contains(keys, "l1") || slices.Contains(keys, "fv")
		if abbreviated && len(legend) == 0 {
			t.Errorf("%s explains its abbreviated columns only in tooltips", page)
		} else if strings.Contains(page, "example") && !strings.Contains(text(legend[0]), "feature validation") {
			t.Errorf("%s: the column legend does not explain FV %%: %q", page, text(legend[0]))
		}
	}
	row := rowOf(t, read(t, out, "leaderboard/featurebench/v1.0/lite/index.html"), ">OpenHands + Claude Opus 4.6<")
	if !strings.Contains(row, `<span title="as published: 20">20.0</span>`) {
		t.Errorf("the padded figure 20.0 does not keep the published 20 in its title: %s", row)
	}
}

// TestBoardShowsIntegrityFlags: a ranked system whose predictions copy the
// gold patch is marked on the board, not only on its own page (bench
// refuses one that is mostly gold copies unless it is a reference row, but
// fewer pass), and the board says what the marks mean; the gold reference
// row, gold-identical by design, carries no mark.
func TestBoardShowsIntegrityFlags(t *testing.T) {
	out, _ := buildShipped(t)
	page := read(t, out, "leaderboard/example/v2/lite/index.html")
	row := rowOf(t, page, ">Tiny Agent + Example-LM-7B<")
	if !strings.Contains(row, `href="/featbench/datasets/example/v2/systems/tiny-agent/#flags"`) || !strings.Contains(row, ">gold-identical 3/5</a>") {
		t.Errorf("the tiny agent's row, 3 of whose 5 predictions are gold-identical, does not say so with a link to its flags: %s", row)
	}
	if gold := rowOf(t, page, ">Gold patch<"); strings.Contains(gold, "gold-identical") {
		t.Errorf("the gold reference row carries a gold-identical mark: %s", gold)
	}
	doc := parse(t, page)
	if n := find(doc, hasClass("flag-note")); len(n) != 1 || !strings.Contains(text(n[0]), "refused unless it is marked as a reference row") {
		t.Errorf("the board does not explain its integrity marks")
	}
	sys := read(t, out, "datasets/example/v2/systems/tiny-agent/index.html")
	if !strings.Contains(sys, `id="flags"`) {
		t.Errorf("the tiny agent's page has no #flags section for the board to link to")
	}
	if fb := read(t, out, "leaderboard/featurebench/v1.0/lite/index.html"); strings.Contains(fb, "flag-note") {
		t.Errorf("a board without flagged results explains flags")
	}
}

// TestGoldRunUnderANormalSlugIsRefused: the gold patches submitted as a
// ranked system (every prediction gold-identical) are not ranked first:
// loading data/ refuses them, naming the reference key, and no site is
// built.
func TestGoldRunUnderANormalSlugIsRefused(t *testing.T) {
	root := fixtureRoot(t, map[string]string{
		"data/submissions/demo/v1/full/20260301_agent-a/results.jsonl": `{"instance_id":"demo__pkg-1","resolved":true,"patch_applied":true,"f2p_passed":["tests/test_a.py::test_new"],"f2p_failed":[],"p2p_passed":["tests/test_b.py::test_old"],"p2p_failed":[],"files_changed":1,"flags":["gold-identical"]}` + "\n" +
			`{"instance_id":"demo__pkg-2","resolved":true,"patch_applied":true,"f2p_passed":["tests/test_a.py::test_new"],"f2p_failed":[],"p2p_passed":["tests/test_b.py::test_old"],"p2p_failed":[],"files_changed":1,"flags":["gold-identical"]}` + "\n",
	})
	_, err := site.Build(context.Background(), fixtureOptions(t, root))
	if err == nil || !strings.Contains(err.Error(), "set reference = true") {
		t.Fatalf("building with a ranked run of gold patches: %v; want it refused, naming reference = true", err)
	}
	if _, serr := os.Stat(filepath.Join(root, "public")); serr == nil {
		t.Errorf("a site was written although the data were refused")
	}
}

// TestDatasetsIndexHasDownloads: the home page's "Datasets — JSONL
// downloads" badge opens the datasets index, which links every split's
// JSONL where the instances are published, and says so where not.
func TestDatasetsIndexHasDownloads(t *testing.T) {
	out, _ := buildShipped(t)
	page := read(t, out, "datasets/index.html")
	for _, want := range []string{
		`href="/featbench/datasets/example/v2/full.jsonl" download>full.jsonl</a>`,
		`href="/featbench/datasets/example/v2/lite.jsonl" download>lite.jsonl</a>`,
		`href="/featbench/datasets/example/v3/lite.jsonl" download>lite.jsonl</a>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the datasets index lacks %s", want)
		}
		if _, err := os.Stat(filepath.Join(out, strings.TrimPrefix(strings.Split(want, `"`)[1], "/featbench/"))); err != nil {
			t.Errorf("the download %s is not in the site: %v", want, err)
		}
	}
	if !strings.Contains(rowOf(t, page, ">FeatureBench v1.0<"), "the instances are not published here") {
		t.Errorf("the datasets index does not say that FeatureBench's instances are not published here")
	}
}

// TestRepoTablesWithoutCountsSayWhy: FeatureBench publishes figures, not
// instances, so its per-repository tables cannot count instances: they
// leave the column out and say why, instead of "—" in every row; the
// example, whose instances are here, keeps its counts.
func TestRepoTablesWithoutCountsSayWhy(t *testing.T) {
	out, _ := buildShipped(t)
	for _, page := range []string{"datasets/featurebench/v1.0/repos/index.html", "datasets/featurebench/v1.0/systems/codex_gpt-5.1-codex/index.html"} {
		doc := parse(t, read(t, out, page))
		tables := find(doc, func(n *html.Node) bool {
			return n.Data == "table" && len(find(n, func(c *html.Node) bool { return c.Data == "th" && text(c) == "pytorch-lightning" })) > 0
		})
		if len(tables) == 0 {
			t.Fatalf("%s has no per-repository table", page)
		}
		for _, tb := range tables {
			caption := text(find(tb, func(n *html.Node) bool { return n.Data == "caption" })[0])
			for _, th := range find(tb, func(n *html.Node) bool { return n.Data == "th" && n.Parent.Parent.Data == "thead" }) {
				if text(th) == "Instances" {
					t.Errorf("%s: the table %q has an Instances column, with no count to show", page, caption)
				}
			}
			if !strings.Contains(caption, "how many instances each repository has is not known here") {
				t.Errorf("%s: the table %q does not say why it has no instance counts", page, caption)
			}
		}
	}
	row := rowNode(t, parse(t, read(t, out, "datasets/example/v2/repos/index.html")), "featbench/textkit", "Per-repository averages")
	if cells := find(row, func(n *html.Node) bool { return n.Data == "td" }); len(cells) == 0 || text(cells[0]) != "28" {
		t.Errorf("the example's gold statistics lost their instance count")
	}
}

// Filter checkboxes come from the dataset's tag vocabulary
// (featbench.toml's filter_tags), not from whatever a submitter tags: the
// FeatureBench boards offer its reasoning levels, the example's boards
// none, and every other tag shows on its row as text. The boards also
// offer each distinct model, scaffold and organisation.
func TestBoardTagsFromVocabulary(t *testing.T) {
	out, _ := buildShipped(t)
	checkboxes := func(page string) []string {
		var out []string
		for _, in := range find(parse(t, page), func(n *html.Node) bool {
			name, _ := attr(n, "name")
			return n.Data == "input" && name == "tag"
		}) {
			v, _ := attr(in, "value")
			out = append(out, v)
		}
		return out
	}
	fb := read(t, out, "leaderboard/featurebench/v1.0/lite/index.html")
	if got := checkboxes(fb); fmt.Sprint(got) != "[low reasoning medium reasoning]" {
		t.Errorf("FeatureBench lite offers tag filters %q, want its vocabulary [low reasoning medium reasoning]", got)
	}
	ex := read(t, out, "leaderboard/example/v2/lite/index.html")
	if got := checkboxes(ex); len(got) != 0 {
		t.Errorf("the example's board offers tag filters %q; its dataset defines none", got)
	}
	if !strings.Contains(ex, `<span class="tag">hand-written</span>`) {
		t.Error("the example's board does not show the tag hand-written as text")
	}
	doc := parse(t, fb)
	for name, want := range map[string]string{"model": "Claude Opus 4.5", "scaffold_name": "Mini-SWE-Agent", "org": "Anthropic"} {
		sel := find(doc, func(n *html.Node) bool { v, _ := attr(n, "name"); return n.Data == "select" && v == name })
		if len(sel) != 1 {
			t.Errorf("FeatureBench lite has %d selects named %s, want 1", len(sel), name)
			continue
		}
		if !slices.ContainsFunc(find(sel[0], func(n *html.Node) bool { return n.Data == "option" }), func(n *html.Node) bool { return text(n) == want }) {
			t.Errorf("the %s filter does not offer %q", name, want)
		}
	}
}

// RT % is over the instances whose pass-to-pass tests run: the example's
// empty patch scored 50% because level 1 passes them untouched and level
// 2 runs none; it now shows "—" (every prediction empty), and the gold
// patch 100% over the level 1 instances alone.
func TestRTOverLevel1(t *testing.T) {
	out, _ := buildShipped(t)
	var doc struct {
		Rows []struct {
			System string   `json:"system"`
			RT     *float64 `json:"rt_pct"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(read(t, out, "leaderboard/example/v2/lite/board.json")), &doc); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range doc.Rows {
		switch r.System {
		case "Empty patch":
			seen++
			if r.RT != nil {
				t.Errorf("the empty patch's RT %% is %v, want none (—)", *r.RT)
			}
		case "Gold patch":
			seen++
			if r.RT == nil || *r.RT != 100 {
				t.Errorf("the gold patch's RT %% is %v, want 100", r.RT)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("board.json of example v2 lite lacks the gold or empty row")
	}
	if page := read(t, out, "leaderboard/example/v2/lite/index.html"); !strings.Contains(page, "Level 2 instances are left out") {
		t.Error("the board does not say what RT % is over")
	}
}

// Marks are explained where they show: "(routing)" and "(mock)" in
// FeatureBench's names carry a note the board explains (and the system
// page), logos show only on a board whose every organisation has one
// (the example's, whose systems are all FeatBench's; not FeatureBench's),
// and the checked mark says what it is in words, on reference rows too.
func TestBoardMarksExplained(t *testing.T) {
	out, _ := buildShipped(t)
	fb := read(t, out, "leaderboard/featurebench/v1.0/lite/index.html")
	doc := parse(t, fb)
	legend := map[string]string{}
	for _, dt := range find(doc, func(n *html.Node) bool {
		id, _ := attr(n, "id")
		return n.Data == "dt" && strings.HasPrefix(id, "board-mark-")
	}) {
		id, _ := attr(dt, "id")
		legend[id] = text(dt)
	}
	for _, mark := range []string{"(routing)", "(mock)"} {
		var id string
		for k, v := range legend {
			if strings.Contains(v, mark) {
				id = k
			}
		}
		if id == "" {
			t.Errorf("the FeatureBench board does not explain %s: legend %q", mark, legend)
			continue
		}
		refs := find(doc, func(n *html.Node) bool { h, _ := attr(n, "href"); return n.Data == "a" && h == "#"+id })
		if len(refs) == 0 {
			t.Errorf("no row refers to the note on %s", mark)
		}
	}
	if strings.Contains(fb, `class="logo"`) {
		t.Error("the FeatureBench board shows a logo although its organisations have none")
	}
	ex := read(t, out, "leaderboard/example/v2/lite/index.html")
	if !strings.Contains(ex, `class="logo"`) || !strings.Contains(ex, "every organisation on this board has one") {
		t.Error("the example's board, whose every organisation has a logo, does not show them and say why")
	}
	if !strings.Contains(ex, `<span class="checked-mark" title="re-run and checked by the maintainers">✓ checked</span>`) {
		t.Error("the checked mark on the example's reference rows does not say what it is")
	}
	sys := text(parse(t, read(t, out, "datasets/featurebench/v1.0/systems/claude-code-routing_claude-opus-4.5/index.html")))
	if !strings.Contains(sys, "(routing)Claude Code as it ships") && !strings.Contains(sys, "(routing) Claude Code as it ships") {
		t.Errorf("the system page of Claude Code (routing) does not explain the mark")
	}
}

// What readers of other boards rely on: each row links its per-instance
// results (now published beside its system page), logs and trajectories
// where it has them; a reported row has an interval too, derived from
// its published rate and the split's size and marked so.
func TestBoardRowsLinkAndDerive(t *testing.T) {
	out, _ := buildShipped(t)
	page := read(t, out, "leaderboard/example/v2/lite/index.html")
	for _, href := range []string{
		"/featbench/datasets/example/v2/systems/tiny-agent/lite/results.jsonl",
		"/featbench/datasets/example/v2/systems/tiny-agent/lite/logs.tar.gz",
	} {
		if !strings.Contains(page, `href="`+href+`"`) {
			t.Errorf("the example's board does not link %s from its row", href)
		}
	}
	raw := read(t, out, "datasets/example/v2/systems/tiny-agent/lite/results.jsonl")
	if want, _ := os.ReadFile("../data/submissions/example/v2/lite/20261123_tiny-agent/results.jsonl"); raw != string(want) {
		t.Error("the published results.jsonl is not the submission's")
	}
	var doc struct {
		Rows []struct {
			System   string   `json:"system"`
			Resolved *float64 `json:"resolved_pct"`
			Lo       *float64 `json:"resolved_ci95_low"`
			Hi       *float64 `json:"resolved_ci95_high"`
			Derived  bool     `json:"resolved_ci95_derived"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(read(t, out, "leaderboard/featurebench/v1.0/lite/board.json")), &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Rows {
		if r.Resolved == nil {
			continue
		}
		lo, hi := metrics.WilsonRate(*r.Resolved/100, 30, metrics.Z95)
		if r.Lo == nil || r.Hi == nil || !r.Derived || *r.Lo != round1(lo*100) || *r.Hi != round1(hi*100) {
			t.Errorf("%s: reported %v%% of 30 has interval %v–%v (derived %v), want %.1f–%.1f derived", r.System, *r.Resolved, r.Lo, r.Hi, r.Derived, lo*100, hi*100)
		}
	}
	if !strings.Contains(read(t, out, "leaderboard/featurebench/v1.0/lite/index.html"), "derived</span>") {
		t.Error("the FeatureBench board does not mark its intervals as derived")
	}
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// A turns column where figures exist: the mean model requests per
// instance over the results that report them (the statistics project's
// Top reports 10 or 12 on its even instances), "—" elsewhere, and in
// the downloads with the count it is over.
func TestBoardTurns(t *testing.T) {
	out := buildStats(t)
	doc := parse(t, read(t, out, "leaderboard/demo/v1/full/index.html"))
	if len(find(doc, func(n *html.Node) bool { k, _ := attr(n, "data-key"); return n.Data == "th" && k == "turns" })) != 1 {
		t.Fatal("the board has no Turns column although a system reports turns")
	}
	var board struct {
		Rows []struct {
			System string   `json:"system"`
			Turns  *float64 `json:"turns"`
			N      *int     `json:"results_with_turns"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(read(t, out, "leaderboard/demo/v1/full/board.json")), &board); err != nil {
		t.Fatal(err)
	}
	for _, r := range board.Rows {
		switch {
		case r.System == "Top" && (r.Turns == nil || *r.Turns != 11 || r.N == nil || *r.N != 30):
			t.Errorf("Top's turns %v over %v results, want 11 over 30", r.Turns, r.N)
		case r.System != "Top" && r.Turns != nil:
			t.Errorf("%s reports no turns but shows %v", r.System, *r.Turns)
		}
	}
	// Shipped boards report none: no column.
	shipped, _ := buildShipped(t)
	if strings.Contains(read(t, shipped, "leaderboard/example/v2/lite/index.html"), `data-key="turns"`) {
		t.Error("a board whose systems report no turns has a Turns column")
	}
}
