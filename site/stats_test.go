package site_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/featbench/featbench/site"
)

// The statistics the site shows beside the figures: ranges of ranks,
// paired comparisons, pass@k and instance difficulty, on a project whose
// systems are built to give known answers.

const statsInstances = 60

// statsSystem is a system of the statistics project: the instances it
// resolves (by index), the ones it has no prediction for, and, with
// attempts > 1, how many attempts resolved each instance.
type statsSystem struct {
	slug, name string
	reference  bool
	resolves   func(i int) bool
	missing    func(i int) bool
	attempts   int
	resolvedOf func(i int) int // attempts that resolved instance i
}

func statsID(i int) string { return fmt.Sprintf("demo__pkg-%d", i) }

// statsSystems: top resolves the first 50 instances; the twins resolve
// the same even instances below 40; low resolves 0-2; tries made 4
// attempts at each of the first 30 instances and resolved i%5 of them
// (none at multiples of 5); gold, a reference row, resolves all. No
// system resolves the instances from 50 up.
func statsSystems() []statsSystem {
	never := func(int) bool { return false }
	return []statsSystem{
		{slug: "top", name: "Top", resolves: func(i int) bool { return i < 50 }, missing: never},
		{slug: "twin-a", name: "Twin A", resolves: func(i int) bool { return i < 40 && i%2 == 0 }, missing: never},
		{slug: "twin-b", name: "Twin B", resolves: func(i int) bool { return i < 40 && i%2 == 0 }, missing: never},
		{slug: "low", name: "Low", resolves: func(i int) bool { return i < 3 }, missing: func(i int) bool { return i >= 55 }},
		{slug: "tries", name: "Tries", attempts: 4, resolves: func(i int) bool { return i < 30 && i%5 != 0 },
			missing: func(i int) bool { return i >= 30 }, resolvedOf: func(i int) int { return i % 5 }},
		{slug: "gold", name: "Gold", reference: true, resolves: func(int) bool { return true }, missing: never},
	}
}

// statsProject writes the statistics project: dataset demo/v1 with
// statsInstances instances in two repositories (even instances in
// demo/pkg, odd ones in demo/lib), split full (all) and lite (the first
// ten), and statsSystems' submissions on full.
func statsProject(t *testing.T) site.Options {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{}
	var ids, lines []string
	for i := range statsInstances {
		repo := "demo/pkg"
		if i%2 == 1 {
			repo = "demo/lib"
		}
		ids = append(ids, fmt.Sprintf("%q", statsID(i)))
		b, err := json.Marshal(map[string]any{
			"instance_id": statsID(i), "repo": repo, "base_commit": "abc123", "level": 1 + i%2,
			"problem_statement": "Implement `new()`.",
			"patch":             "diff --git a/pkg/a.py b/pkg/a.py\n--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1 +1,2 @@\n x = 1\n+y = 2\n",
			"test_patch":        "diff --git a/tests/test_a.py b/tests/test_a.py\n--- /dev/null\n+++ b/tests/test_a.py\n@@ -0,0 +1 @@\n+def test_new(): pass\n",
			"FAIL_TO_PASS":      []string{"tests/test_a.py::test_new"}, "PASS_TO_PASS": []string{"tests/test_b.py::test_old"},
		})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	files["data/datasets/demo/v1/dataset.toml"] = `name = "demo"
title = "Demo"
version = "v1"
release_date = 2026-02-01
description = "Statistics test data."

[[repositories]]
name = "demo/pkg"

[[repositories]]
name = "demo/lib"

[[splits]]
name = "full"
instances = [` + strings.Join(ids, ", ") + `]

[[splits]]
name = "lite"
instances = [` + strings.Join(ids[:10], ", ") + `]
`
	files["data/datasets/demo/v1/instances.jsonl"] = strings.Join(lines, "\n") + "\n"
	for _, s := range statsSystems() {
		dir := "data/submissions/demo/v1/full/20260301_" + s.slug + "/"
		meta := fmt.Sprintf("name = %q\nscaffold = \"S\"\nmodel = %q\ndate = 2026-03-01\nreference = %t\n", s.name, s.name, s.reference)
		if s.attempts > 1 {
			meta += fmt.Sprintf("attempts = %d\n", s.attempts)
		}
		files[dir+"metadata.toml"] = meta
		var res []string
		for i := range statsInstances {
			if s.missing(i) {
				continue
			}
			r := map[string]any{"instance_id": statsID(i), "resolved": s.resolves(i), "patch_applied": true,
				"f2p_passed": []string{}, "f2p_failed": []string{"tests/test_a.py::test_new"},
				"p2p_passed": []string{"tests/test_b.py::test_old"}, "p2p_failed": []string{}}
			if s.resolves(i) {
				r["f2p_passed"], r["f2p_failed"] = []string{"tests/test_a.py::test_new"}, []string{}
			}
			if s.attempts > 1 {
				r["attempts"], r["attempts_resolved"] = s.attempts, s.resolvedOf(i)
			}
			if s.slug == "top" && i%2 == 0 {
				r["turns"] = 10 + i%4 // 10 or 12, on the even instances only
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			res = append(res, string(b))
		}
		files[dir+"results.jsonl"] = strings.Join(res, "\n") + "\n"
	}
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return fixtureOptions(t, root)
}

// buildStats builds the statistics project and returns its output folder.
func buildStats(t *testing.T) string {
	t.Helper()
	opts := statsProject(t)
	rep, err := site.Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep.Output
}

// rankCells maps each system on table#id to its rank cell's text.
func rankCells(t *testing.T, doc *html.Node, id string) map[string]string {
	t.Helper()
	table := byID(doc, id)
	if table == nil {
		t.Fatalf("no table#%s", id)
	}
	out := map[string]string{}
	for _, tr := range find(table, func(n *html.Node) bool { return n.Data == "tr" && n.Parent.Data == "tbody" }) {
		cells := find(tr, func(n *html.Node) bool { return (n.Data == "td" || n.Data == "th") && n.Parent == tr })
		if len(cells) < 2 {
			continue
		}
		links := find(cells[1], func(n *html.Node) bool { return n.Data == "a" })
		if len(links) == 0 {
			continue
		}
		out[text(links[0])] = text(cells[0])
	}
	return out
}

// Every ranked row shows its range of ranks: a system ahead of the rest
// on many instances alone at [1], two identical systems sharing [2–3],
// reference rows none; the board says what it ranks by and what the
// brackets are, and its downloads carry the ranges.
func TestBoardShowsRankRanges(t *testing.T) {
	out := buildStats(t)
	page := read(t, out, "leaderboard/demo/v1/full/index.html")
	doc := parse(t, page)
	got := rankCells(t, doc, "board")
	// Top resolves 50, the twins 20 each, Low 3. Tries resolved 24 with
	// some attempt but is ranked per attempt: the mean over its four
	// attempts is 15 of 60 (25%), below the twins' 33%, within their
	// ranges.
	want := map[string]string{"Top": "1 [1]", "Twin A": "2 [2–4]", "Twin B": "2 [2–4]", "Tries": "4 [2–4]", "Low": "5 [5]", "Gold": "ref"}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: rank cell %q, want %q", name, got[name], w)
		}
	}
	// Tries' row: % resolved is the mean over its attempts, pass@4
	// beside it (24 of 60 by any attempt), and % passed is "—": its
	// results do not give each attempt's fail-to-pass count.
	for _, row := range tableRows(t, doc, "board") {
		if len(row) > 1 && strings.HasPrefix(row[1], "Tries") {
			if !strings.HasPrefix(row[2], "25.0") || row[3] != "—" || !strings.HasPrefix(row[4], "40.0") || !strings.Contains(row[4], "k = 4") {
				t.Errorf("Tries' row %q: want %% resolved 25.0 (pass@1), %% passed —, pass@k 40.0 with k = 4", row)
			}
		}
	}
	note := byID(doc, "board-ranking")
	if note == nil {
		t.Fatal("the board has no note on its ranking (#board-ranking)")
	}
	if !strings.Contains(text(note), "mean over instances of the share of its attempts that resolved each (pass@1") {
		t.Errorf("ranking note %q does not say that several attempts are ranked per attempt", text(note))
	}
	for _, s := range []string{"Ranked by % resolved", "the figure this dataset ranks by", "Ranks in brackets are 95% bootstrap ranges over instances", "1,000 resamples", "overlap are tied"} {
		if !strings.Contains(text(note), s) {
			t.Errorf("ranking note %q does not say %q", text(note), s)
		}
	}
	var doc2 struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal([]byte(read(t, out, "leaderboard/demo/v1/full/board.json")), &doc2); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc2.Rows {
		lo, hi := r["rank_ci95_low"], r["rank_ci95_high"]
		switch r["system"] {
		case "Twin A":
			if lo != 2.0 || hi != 4.0 {
				t.Errorf("board.json: Twin A's rank range %v–%v, want 2–4", lo, hi)
			}
		case "Gold":
			if lo != nil || hi != nil {
				t.Errorf("board.json: the reference row has a rank range %v–%v", lo, hi)
			}
		}
	}
	sys := text(parse(t, read(t, out, "datasets/demo/v1/systems/twin-a/index.html")))
	if !strings.Contains(sys, "2 of 5 [2–4]") {
		t.Errorf("Twin A's system page does not show its rank with its range, 2 of 5 [2–4]")
	}
}

// Boards whose ranked systems have only reported figures cannot be
// bootstrapped, and say so instead of showing a range.
func TestReportedBoardsHaveNoRankRanges(t *testing.T) {
	out, _ := buildShipped(t)
	page := read(t, out, "leaderboard/featurebench/v1.0/full/index.html")
	doc := parse(t, page)
	if n := len(find(doc, func(n *html.Node) bool { c, _ := attr(n, "class"); return strings.Contains(c, "rank-range") })); n != 0 {
		t.Errorf("the FeatureBench board shows %d ranges of ranks; its figures are reported, not per instance", n)
	}
	note := text(byID(doc, "board-ranking"))
	for _, s := range []string{"Ranked by % passed", "only reported aggregates", "cannot be bootstrapped", "no range of ranks is given"} {
		if !strings.Contains(note, s) {
			t.Errorf("FeatureBench ranking note %q does not say %q", note, s)
		}
	}
	// The example's lite board, per instance, has them; so does the
	// home page's board.
	if !strings.Contains(read(t, out, "leaderboard/example/v2/lite/index.html"), `class="sub rank-range"`) {
		t.Error("the example's lite board, computed per instance, shows no range of ranks")
	}

	// A board with one system per instance and one reported: no ranges.
	root := fixtureRoot(t, nil)
	rep, err := site.Build(t.Context(), fixtureOptions(t, root))
	if err != nil {
		t.Fatal(err)
	}
	doc = parse(t, read(t, rep.Output, "leaderboard/demo/v1/full/index.html"))
	if note := text(byID(doc, "board-ranking")); !strings.Contains(note, "1 of the 2 ranked systems has only reported aggregates") {
		t.Errorf("mixed board's ranking note %q does not say that one system is reported", note)
	}
	if strings.Contains(read(t, rep.Output, "leaderboard/demo/v1/full/index.html"), "rank-range") {
		t.Error("a board with a reported system shows ranges of ranks")
	}
}

// tableRows returns the text of each body row's cells of table#id.
func tableRows(t *testing.T, doc *html.Node, id string) [][]string {
	t.Helper()
	table := byID(doc, id)
	if table == nil {
		t.Fatalf("no table#%s", id)
	}
	var out [][]string
	for _, tr := range find(table, func(n *html.Node) bool { return n.Data == "tr" && n.Parent.Data == "tbody" }) {
		var row []string
		for _, c := range find(tr, func(n *html.Node) bool { return (n.Data == "td" || n.Data == "th") && n.Parent == tr }) {
			row = append(row, text(c))
		}
		out = append(out, row)
	}
	return out
}

// The compare page pairs each ranked system with the next one down
// without script (counts on shared instances and the exact McNemar
// p-value), carries every pair for site.js, and shows pass@k and the
// spread of a system's attempts.
func TestComparePaired(t *testing.T) {
	out := buildStats(t)
	page := read(t, out, "datasets/demo/v1/compare/full/index.html")
	doc := parse(t, page)
	// Top resolves 0-49; the twins the evens below 40; Tries predicted
	// 0-29, and i%5 of its four attempts resolved instance i; Low
	// predicted 0-54 and resolved 0-2. A pair with Tries compares each
	// instance's share of attempts resolving it: against Twin B, Tries
	// is higher on the 12 odd instances not multiples of 5, the twin on
	// the 12 evens where Tries' share is below 1, equal and above 0 on
	// 4, 14, 24, both 0 on 5, 15, 25; against Low, Tries is higher on
	// the 22 instances from 3 not multiples of 5, Low on 0-2. Sign test:
	// 1 for 12 against 12; 2·(1+25+300+2300)/2^25 for 22 against 3.
	want := [][]string{
		{"1. Top", "2. Twin A", "60", "20", "30", "0", "10", "< 0.0001"},
		{"2. Twin A", "2. Twin B", "60", "20", "0", "0", "40", "1"},
		{"2. Twin B", "4. Tries", "30", "3", "12", "12", "3", "1 per attempt"},
		{"4. Tries", "5. Low", "30", "0", "22", "3", "5", "0.00016 per attempt"},
	}
	got := tableRows(t, doc, "neighbours")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("neighbours table:\n got %q\nwant %q", got, want)
	}
	// The page says what a pair with several attempts compares.
	if note := byID(doc, "per-attempt-note"); note == nil || !strings.Contains(text(note), "the share of its attempts that resolved each instance") || !strings.Contains(text(note), "sign test") {
		t.Errorf("the compare page does not say what it compares for a system with several attempts")
	}
	// Every pair of the six systems, gold included, for the picker.
	raw := byID(doc, "compare-data")
	if raw == nil {
		t.Fatal("no #compare-data")
	}
	var data struct {
		Systems []struct{ Slug string }
		Pairs   []struct {
			N   [4]int
			P   string
			Low bool
		}
		First, Second int
	}
	if err := json.Unmarshal([]byte(text(raw)), &data); err != nil {
		t.Fatal(err)
	}
	if len(data.Systems) != 6 || len(data.Pairs) != 15 {
		t.Fatalf("compare data: %d systems, %d pairs; want 6 and 15", len(data.Systems), len(data.Pairs))
	}
	if data.Systems[data.First].Slug != "top" || data.Systems[data.Second].Slug != "twin-a" {
		t.Errorf("the pair shown first is %s and %s, want the two best ranked, top and twin-a", data.Systems[data.First].Slug, data.Systems[data.Second].Slug)
	}
	// Pair (top, gold): gold resolves all 60, top 50.
	idx := map[string]int{}
	for i, s := range data.Systems {
		idx[s.Slug] = i
	}
	i, j, n := idx["top"], idx["gold"], len(data.Systems)
	if p := data.Pairs[i*n-i*(i+1)/2+(j-i-1)]; p.N != [4]int{50, 0, 10, 0} || p.P != "0.002" || !p.Low {
		t.Errorf("pair top, gold: %+v; want counts 50, 0, 10, 0 and p 0.002 (2/1024)", p)
	}

	// Tries made four attempts: c = i%5 of them resolved instance i < 30.
	rows := tableRows(t, doc, "attempts-table")
	if len(rows) != 1 {
		t.Fatalf("attempts table has %d rows, want Tries alone", len(rows))
	}
	wantRow := []string{"Tries", "4", "pass@1 25.0 pass@2 33.3 pass@3 37.5 pass@4 40.0", "6", "18", "36", "25.0 ± 3.7"}
	if fmt.Sprint(rows[0]) != fmt.Sprint(wantRow) {
		t.Errorf("attempts row:\n got %q\nwant %q", rows[0], wantRow)
	}
	// Without script the page says what needs it.
	if !strings.Contains(page, "Choosing any two systems, and listing the instances where they differ, needs JavaScript") {
		t.Error("the compare page does not say that picking a pair needs JavaScript")
	}
}

// The dataset page lists the instances no ranked system solves; instance
// pages say how many ranked systems solve them, and that reference rows
// do not count; the per-repository page gives each instance's count.
func TestInstanceDifficulty(t *testing.T) {
	out := buildStats(t)
	doc := parse(t, read(t, out, "datasets/demo/v1/index.html"))
	sec := byID(doc, "unsolved")
	if sec == nil {
		t.Fatal("the dataset page has no section on unsolved instances (#unsolved)")
	}
	// Gold resolves everything, but is a reference row: 50-59 are
	// resolved by no ranked system.
	var want []string
	for i := 50; i < statsInstances; i++ {
		want = append(want, "/sub/datasets/demo/v1/instances/"+statsID(i)+"/")
	}
	var got []string
	if list := byID(doc, "unsolved-list"); list != nil {
		for _, a := range find(list, func(n *html.Node) bool { return n.Data == "a" }) {
			href, _ := attr(a, "href")
			got = append(got, href)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("unsolved instances linked: %q, want %q", got, want)
	}
	page := text(doc)
	for _, s := range []string{"10 of the 60 instances ranked systems were evaluated on are resolved by none of them.", "Reference rows such as the gold and empty patches are not counted"} {
		if !strings.Contains(page, s) {
			t.Errorf("the dataset page does not say %q", s)
		}
	}

	for id, want := range map[string]string{
		statsID(55): "Resolved by 0 of 5 systems (0%) no system solves it Ranked systems evaluated on a split that holds it, each once; reference rows such as the gold and empty patches are not counted.",
		statsID(0):  "Resolved by 4 of 5 systems (80%) Ranked systems",
	} {
		page := text(parse(t, read(t, out, "datasets/demo/v1/instances/"+id+"/index.html")))
		if !strings.Contains(page, want) {
			i := strings.Index(page, "Resolved by")
			t.Errorf("instance %s: %q…, want %q", id, page[i:min(len(page), i+200)], want)
		}
	}

	doc = parse(t, read(t, out, "datasets/demo/v1/repos/index.html"))
	rows := tableRows(t, doc, "difficulty-table")
	wantRows := [][]string{
		{"demo/pkg", "30", "30", "5", "24", "1", "53"},
		{"demo/lib", "30", "30", "5", "25", "0", "25"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(wantRows) {
		t.Errorf("difficulty per repository:\n got %q\nwant %q", rows, wantRows)
	}
	details := find(doc, func(n *html.Node) bool { c, _ := attr(n, "class"); return n.Data == "details" && c == "solved-by" })
	if len(details) != 2 {
		t.Fatalf("%d lists of instances by repository, want 2", len(details))
	}
	// An item: the instance's link, then its count.
	item := func(li *html.Node) string {
		return text(find(li, func(n *html.Node) bool { return n.Data == "a" })[0]) + " " + strings.TrimSpace(li.LastChild.Data)
	}
	items := find(details[0], func(n *html.Node) bool { return n.Data == "li" })
	if len(items) != 30 || item(items[0]) != statsID(50)+" 0 of 5" || item(items[29]) != statsID(2)+" 5 of 5" {
		t.Errorf("demo/pkg's instances, hardest first: %d items, first %q, last %q; want 30 from %q to %q",
			len(items), item(items[0]), item(items[len(items)-1]), statsID(50)+" 0 of 5", statsID(2)+" 5 of 5")
	}
}

// With only reference rows evaluated (example/v3: gold and empty), no
// instance is called unsolved, and the page says why.
func TestNoUnsolvedWithoutRankedSystems(t *testing.T) {
	out, _ := buildShipped(t)
	page := text(parse(t, read(t, out, "datasets/example/v3/index.html")))
	if !strings.Contains(page, "No ranked system has per-instance results on this version yet, so no instance can be called unsolved") {
		t.Error("example/v3's page does not say that no instance can be called unsolved")
	}
	if strings.Contains(read(t, out, "datasets/example/v3/repos/index.html"), `id="difficulty"`) {
		t.Error("example/v3's per-repository page shows instance difficulty without a ranked system")
	}
	if strings.Contains(read(t, out, "datasets/featurebench/v1.0/index.html"), `id="unsolved"`) {
		t.Error("FeatureBench, without instances here, lists unsolved instances")
	}
}
