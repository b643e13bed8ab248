package site_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/featbench/featbench/internal/testenv"
	"github.com/featbench/featbench/site"
)

// Layout on hostile content: what a submitter or a dataset can put in a
// page (unbroken notes of the longest length allowed, names and ids at
// their bounds) must not widen a page, clip a header or overlap, at a
// phone's width and a laptop's; and a board at 390 px shows its ranked
// figure and % resolved, with a cue that more columns scroll.

const hostileBase = "/hostile/"

// hostileIDs are the hostile project's instance ids: long, and one of
// them 200 characters without a dot or an underscore to break at.
func hostileIDs() []string {
	ids := []string{strings.Repeat("x", 200)}
	for i := range 7 {
		ids = append(ids, fmt.Sprintf("organisation-with-a-long-name__repository-with-a-long-name.test_module_with_a_long_name.%08x.lv%d", 0x9e3779b9*uint32(i+1), 1+i%2))
	}
	return ids
}

// hostileProject writes a dataset of hostileIDs with four systems: one
// whose name, scaffold, model and notes are unbroken text at their
// bounds, one that made four attempts per instance, a plain one and a
// reported one.
func hostileProject(t *testing.T) site.Options {
	t.Helper()
	root := t.TempDir()
	ids := hostileIDs()
	files := map[string]string{}
	var lines, quoted []string
	for i, id := range ids {
		b, err := json.Marshal(map[string]any{
			"instance_id": id, "repo": "demo/" + strings.Repeat("r", 60), "base_commit": "abc123", "level": 1 + i%2,
			"problem_statement": "Implement `new()`: " + strings.Repeat("unbroken", 300) + ".",
			"patch":             "diff --git a/pkg/a.py b/pkg/a.py\n--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1 +1,2 @@\n x = 1\n+y = 2\n",
			"test_patch":        "diff --git a/tests/test_a.py b/tests/test_a.py\n--- /dev/null\n+++ b/tests/test_a.py\n@@ -0,0 +1 @@\n+def test_new(): pass\n",
			"FAIL_TO_PASS":      []string{"tests/test_a.py::test_new"}, "PASS_TO_PASS": []string{"tests/test_b.py::test_old"},
		})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
		quoted = append(quoted, fmt.Sprintf("%q", id))
	}
	files["data/datasets/hostile/v1/dataset.toml"] = `name = "hostile"
title = "Hostile"
version = "v1"
release_date = 2026-02-01
description = "Layout test data."

[[repositories]]
name = "demo/` + strings.Repeat("r", 60) + `"

[[splits]]
name = "full"
instances = [` + strings.Join(quoted, ", ") + `]
`
	files["data/datasets/hostile/v1/instances.jsonl"] = strings.Join(lines, "\n") + "\n"
	long := strings.Repeat("W", 100)
	systems := []struct {
		slug, meta string
		resolves   func(i int) bool
		attempts   int
	}{
		{"long", fmt.Sprintf("name = %q\nscaffold = %q\nmodel = %q\norganisations = [%q]\ntags = [%q]\nnotes = %q\n",
			long, long, long, strings.Repeat("O", 100), strings.Repeat("t", 40), strings.Repeat("n", 4000)),
			func(i int) bool { return i%2 == 0 }, 1},
		{"tries", "name = \"Tries\"\nscaffold = \"S\"\nmodel = \"M\"\nattempts = 4\n", func(i int) bool { return i%3 != 0 }, 4},
		{"plain", "name = \"Plain\"\nscaffold = \"S\"\nmodel = \"P\"\n", func(i int) bool { return i < 3 }, 1},
	}
	for _, s := range systems {
		dir := "data/submissions/hostile/v1/full/20260301_" + s.slug + "/"
		files[dir+"metadata.toml"] = s.meta + "date = 2026-03-01\n"
		var res []string
		for i, id := range ids {
			r := map[string]any{"instance_id": id, "resolved": s.resolves(i), "patch_applied": true,
				"f2p_passed": []string{}, "f2p_failed": []string{"tests/test_a.py::test_new"},
				"p2p_passed": []string{"tests/test_b.py::test_old"}, "p2p_failed": []string{}, "tokens_in": 123456, "tokens_out": 7890}
			if s.resolves(i) {
				r["f2p_passed"], r["f2p_failed"] = []string{"tests/test_a.py::test_new"}, []string{}
			}
			if s.attempts > 1 {
				c := 0
				if s.resolves(i) {
					c = 1 + i%s.attempts
				}
				r["attempts"], r["attempts_resolved"] = s.attempts, c
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			res = append(res, string(b))
		}
		files[dir+"results.jsonl"] = strings.Join(res, "\n") + "\n"
	}
	files["data/submissions/hostile/v1/full/20260302_reported/metadata.toml"] = "name = \"Reported\"\nscaffold = \"R\"\nmodel = \"R\"\ndate = 2026-03-02\n\n[reported]\nsource = \"" + strings.Repeat("s", 200) + "\"\nresolved = \"12.5\"\npassed = \"20.0\"\n"
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := fixtureOptions(t, root)
	opts.Config.BaseURL = hostileBase
	opts.RequireLocalCharts = true
	return opts
}

func TestBrowserHostileLayout(t *testing.T) {
	chromium := testenv.Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	dir := buildSiteForBrowser(t, ctx)
	hopts := hostileProject(t)
	hrep, err := site.Build(ctx, hopts)
	if err != nil {
		t.Fatalf("building the hostile project: %v", err)
	}
	mux := http.NewServeMux()
	mux.Handle(browserBase, site.Handler(dir, browserBase))
	mux.Handle(hostileBase, site.Handler(hrep.Output, hostileBase))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := startBrowser(t, ctx, chromium, srv.URL)

	hds := hostileBase + "datasets/hostile/v1/"
	boards := []string{liteBoard, exampleLite, browserBase + "leaderboard/featurebench/v1.0/full/", hostileBase + "leaderboard/hostile/v1/full/"}
	pages := []string{hds + "systems/long/", hds + "instances/" + hostileIDs()[1] + "/", hds + "instances/" + hostileIDs()[0] + "/",
		hds, hds + "compare/full/", hds + "repos/", hostileBase, browserBase}
	for _, w := range widths {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			b.do(t, fmt.Sprintf("sizing the window to %d px", w), chromedp.EmulateViewport(w, 900))
			t.Run("BoardsShowRankedAndResolved", func(t *testing.T) {
				for _, p := range boards {
					testBoardColumns(t, b, p, w)
				}
			})
			t.Run("NoPageWiderThanWindow", func(t *testing.T) {
				for _, p := range append(append([]string(nil), boards...), pages...) {
					b.open(t, p)
					if p == hds+"compare/full/" {
						b.waitCompare(t)
					}
					if over := eval[int](t, b, openAll+`; document.documentElement.scrollWidth - window.innerWidth`); over > 0 {
						t.Errorf("%s at %d px: the page is %d px wider than the window", p, w, over)
					}
				}
			})
			t.Run("CompareLists", func(t *testing.T) { testCompareLists(t, b, hds+"compare/full/", w) })
			t.Run("SentencesInTablesReadable", func(t *testing.T) {
				for _, p := range []string{exampleDataset, hds} {
					testSentenceCells(t, b, p, w)
				}
			})
			t.Run("SearchPlaceholder", func(t *testing.T) {
				for _, p := range []string{liteBoard, hostileBase + "leaderboard/hostile/v1/full/", exampleDataset} {
					testPlaceholders(t, b, p, w)
				}
			})
		})
	}
	b.do(t, "restoring the window", chromedp.EmulateViewport(1280, 900))
	b.checkNoErrors(t)
}

// openAll opens every details element: what a reader may open must fit.
const openAll = `document.querySelectorAll("details").forEach(d => d.open = true)`

// testBoardColumns: a board shows its ranked figure and % resolved in
// its box without scrolling (at 390 px, "#", the name and one figure
// were all a phone showed); a table that scrolls says so with a visible
// cue, one that does not shows none, and at 1,366 px the shipped boards
// fit; the caption and the reference rows' heading are not cut by the box.
func testBoardColumns(t *testing.T, b *browserTab, page string, width int64) {
	t.Helper()
	b.open(t, page)
	got := eval[struct {
		Found                 bool
		Ranked, Resolved      float64 // right edges of the two headers
		Box, Scroll, Client   float64
		Cue                   bool
		CaptionOut, CaptionIn int
		GroupOut              int
	}](t, b, `(() => {
		const table = document.getElementById("board");
		if (!table) return {Found: false};
		const wrap = table.closest(".table-wrap");
		const box = wrap.getBoundingClientRect();
		const right = key => { const th = table.querySelector('thead th[data-key="' + key + '"]'); return th ? th.getBoundingClientRect().right : 1e9; };
		const cue = Array.from(document.querySelectorAll(".scroll-cue")).some(c => c.getClientRects().length > 0 && c.getBoundingClientRect().width > 0);
		// The caption's lines: each fragment of its text inside the box;
		// the reference rows' heading too.
		const outside = node => {
			const r = document.createRange();
			let out = 0, inside = 0;
			if (node) {
				r.selectNodeContents(node);
				for (const rect of r.getClientRects()) {
					if (rect.width === 0) continue;
					if (rect.right > box.right + 1 || rect.left < box.left - 1) out++; else inside++;
				}
			}
			return [out, inside];
		};
		const [out, inside] = outside(table.caption);
		const [groupOut] = outside(table.querySelector("tbody.reference tr.group th"));
		return {Found: true, GroupOut: groupOut, Ranked: right(table.querySelector("th.rank-by").getAttribute("data-key")), Resolved: right("resolved"),
			Box: box.right, Scroll: wrap.scrollWidth, Client: wrap.clientWidth, Cue: cue, CaptionOut: out, CaptionIn: inside};
	})()`)
	if !got.Found {
		t.Fatalf("%s: no table#board", page)
	}
	if got.Ranked > got.Box+1 || got.Resolved > got.Box+1 {
		t.Errorf("%s at %d px: the ranked figure's header ends at %.0f px and %% resolved's at %.0f px, the table's box at %.0f px: both should show without scrolling", page, width, got.Ranked, got.Resolved, got.Box)
	}
	scrolls := got.Scroll > got.Client+1
	if scrolls != got.Cue {
		t.Errorf("%s at %d px: the table scrolls: %v (%.0f px in %.0f px); a scroll cue is shown: %v", page, width, scrolls, got.Scroll, got.Client, got.Cue)
	}
	if width >= 1366 && scrolls && !strings.HasPrefix(page, hostileBase) {
		t.Errorf("%s at %d px: the board is %.0f px wide in its %.0f px box: it should fit a laptop", page, width, got.Scroll, got.Client)
	}
	if got.CaptionOut > 0 {
		t.Errorf("%s at %d px: %d of the caption's text fragments lie outside the table's box (cut mid-word)", page, width, got.CaptionOut)
	}
	if got.GroupOut > 0 {
		t.Errorf("%s at %d px: %d of the reference rows' heading's text fragments lie outside the table's box (cut mid-word)", page, width, got.GroupOut)
	}
}

// testCompareLists: on the compare view, the lists of instances where a
// pair differs do not overlap (a column was narrower than an id), an
// instance id in the table takes at most two lines at 390 px for the
// example's ids (it took five), and no header of the attempts table is
// clipped.
func testCompareLists(t *testing.T, b *browserTab, page string, width int64) {
	t.Helper()
	for _, p := range []string{page, exampleCompare} {
		b.open(t, p)
		b.waitCompare(t)
		got := eval[struct {
			Items, Overlaps, Overflow int
			Clipped                   []string
		}](t, b, `(() => {
			document.querySelectorAll("details.pair-list").forEach(d => d.open = true);
			const items = Array.from(document.querySelectorAll(".id-list li"));
			const rects = items.map(li => li.getBoundingClientRect());
			let overlaps = 0, overflow = 0;
			for (let i = 0; i < rects.length; i++) {
				const a = items[i].querySelector("a");
				if (a && a.getBoundingClientRect().right > rects[i].right + 1) overflow++;
				for (let j = i + 1; j < rects.length; j++) {
					const x = rects[i], y = rects[j];
					if (x.left < y.right - 1 && y.left < x.right - 1 && x.top < y.bottom - 1 && y.top < x.bottom - 1) overlaps++;
				}
			}
			const clipped = Array.from(document.querySelectorAll("#attempts-table thead th, #neighbours thead th"))
				.filter(th => th.scrollWidth > th.clientWidth + 1).map(th => th.textContent.trim());
			return {Items: items.length, Overlaps: overlaps, Overflow: overflow, Clipped: clipped};
		})()`)
		if p == page && got.Items == 0 {
			t.Errorf("%s: no instance listed where the pair differs", p)
		}
		if got.Overlaps > 0 || got.Overflow > 0 {
			t.Errorf("%s at %d px: of %d listed instances, %d pairs overlap and %d ids run out of their column", p, width, got.Items, got.Overlaps, got.Overflow)
		}
		if len(got.Clipped) > 0 {
			t.Errorf("%s at %d px: headers clipped: %q", p, width, got.Clipped)
		}
	}
	// The example's ids (45 characters) at most two lines each.
	b.open(t, exampleCompare)
	b.waitCompare(t)
	lines := eval[[]float64](t, b, `Array.from(document.querySelectorAll("#compare tbody th[scope=row] a")).map(a => {
		const lh = parseFloat(getComputedStyle(a).lineHeight) || 20;
		return a.getBoundingClientRect().height / lh;
	})`)
	for _, n := range lines {
		if n > 2.2 {
			t.Errorf("%s at %d px: an instance id takes %.1f lines, want at most 2", exampleCompare, width, n)
			break
		}
	}
}

// testPlaceholders: every search box is wide enough for its placeholder.
func testPlaceholders(t *testing.T, b *browserTab, page string, width int64) {
	t.Helper()
	b.open(t, page)
	cut := eval[[]string](t, b, `(() => {
		const c = document.createElement("canvas").getContext("2d");
		return Array.from(document.querySelectorAll("input[placeholder]")).filter(i => i.getClientRects().length > 0).filter(i => {
			const s = getComputedStyle(i);
			c.font = s.fontStyle + " " + s.fontWeight + " " + s.fontSize + " " + s.fontFamily;
			const room = i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
			return c.measureText(i.placeholder).width > room + 1;
		}).map(i => i.placeholder);
	})()`)
	if len(cut) > 0 {
		t.Errorf("%s at %d px: placeholders cut: %q", page, width, cut)
	}
}

// testSentenceCells: a table cell holding a sentence (five words or
// more: a split's description, a drop's reason) keeps a readable measure
// when its table scrolls; at 390 px the dataset page's shrank to their
// longest word, a word a line, cut at the box's edge.
func testSentenceCells(t *testing.T, b *browserTab, page string, width int64) {
	t.Helper()
	b.open(t, page)
	narrow := eval[[]string](t, b, `Array.from(document.querySelectorAll(".table-wrap td")).filter(td => {
		const words = td.textContent.trim().split(/\s+/).length;
		return words >= 5 && td.getBoundingClientRect().width < 150;
	}).map(td => Math.round(td.getBoundingClientRect().width) + " px: " + td.textContent.trim().slice(0, 50))`)
	if len(narrow) > 0 {
		t.Errorf("%s at %d px: sentences in cells narrower than 150 px: %q", page, width, narrow)
	}
}
