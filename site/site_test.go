package site_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/site"
)

// buildShipped builds the repository's own data/ under the subpath
// /featbench/ into a temporary folder.
func buildShipped(t *testing.T) (string, site.Report) {
	t.Helper()
	opts, err := site.LoadOptions("..", "")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	opts.Config.BaseURL = "https://example.org/featbench/"
	opts.Config.Output = out
	opts.Now = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	rep, err := site.Build(context.Background(), opts)
	if err != nil {
		t.Fatalf("building the shipped data: %v", err)
	}
	return out, rep
}

func read(t *testing.T, dir, rel string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatalf("page %s: %v", rel, err)
	}
	return string(raw)
}

func TestBuildShippedDataRendersEveryPageType(t *testing.T) {
	out, rep := buildShipped(t)
	if rep.Pages < 30 {
		t.Errorf("built %d pages, want at least 30", rep.Pages)
	}
	for _, rel := range []string{
		"index.html", "404.html", "datasets/index.html", "robots.txt", "sitemap.xml", "feed.xml",
		"assets/style.css", "assets/site.js",
		"leaderboard/featurebench/v1.0/full/index.html",
		"leaderboard/featurebench/v1.0/lite/index.html",
		"leaderboard/featurebench/v1.0/fast/index.html",
		"leaderboard/featurebench/v1.0/full/board.csv",
		"leaderboard/featurebench/v1.0/full/board.json",
		"datasets/featurebench/v1.0/index.html",
		"datasets/featurebench/v1.0/repos/index.html",
		"datasets/featurebench/v1.0/charts/index.html",
		"datasets/featurebench/v1.0/systems/codex_gpt-5.1-codex/index.html",
	} {
		if _, err := os.Stat(filepath.Join(out, rel)); err != nil {
			t.Errorf("missing %s: %v", rel, err)
		}
	}
	// Every page shares the layout and is a complete document.
	for _, rel := range []string{"index.html", "datasets/featurebench/v1.0/index.html", "404.html"} {
		page := read(t, out, rel)
		for _, want := range []string{"<!doctype html>", `<html lang="en">`, "/featbench/assets/style.css", `id="theme-select"`, `property="og:title"`} {
			if !strings.Contains(strings.ToLower(page), strings.ToLower(want)) {
				t.Errorf("%s lacks %q", rel, want)
			}
		}
	}
}

// TestShippedFiguresExactlyAsPublished checks that each reported figure of
// every submission appears on its leaderboard as printed, e.g. "26.30".
func TestShippedFiguresExactlyAsPublished(t *testing.T) {
	out, _ := buildShipped(t)
	data, err := bench.Load(context.Background(), "../data")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, s := range data.Submissions {
		if s.Reported == nil {
			continue
		}
		page := read(t, out, "leaderboard/"+s.Dataset.Name+"/"+s.Dataset.Version+"/"+s.Split+"/index.html")
		row := rowOf(t, page, s.Name)
		for _, f := range []bench.Figure{s.Reported.Resolved, s.Reported.Passed, s.Reported.TokensIn, s.Reported.TokensOut} {
			if f.Set() && !strings.Contains(row, f.Text) {
				t.Errorf("%s: the row of %q lacks the published figure %q", s.ID(), s.Name, f.Text)
			}
			checked++
		}
		for name, sc := range s.Reported.Repos {
			sys := read(t, out, "datasets/"+s.Dataset.Name+"/"+s.Dataset.Version+"/systems/"+s.Slug+"/index.html")
			r := rowOf(t, sys, ">"+name+"<")
			for _, f := range []bench.Figure{sc.Passed, sc.Resolved, sc.TokensIn, sc.TokensOut} {
				if f.Set() && !strings.Contains(r, ">"+f.Text) && !strings.Contains(r, "/ "+f.Text) {
					t.Errorf("%s repo %s: figure %q missing from %s", s.ID(), name, f.Text, r)
				}
				checked++
			}
		}
	}
	if checked < 500 {
		t.Errorf("checked only %d figures; the FeatureBench data should give well over 500", checked)
	}
}

// rowOf returns the table row of page that contains needle.
func rowOf(t *testing.T, page, needle string) string {
	t.Helper()
	i := strings.Index(page, html.EscapeString(needle))
	if i < 0 {
		i = strings.Index(page, needle)
	}
	if i < 0 {
		t.Fatalf("no %q on the page", needle)
	}
	start := strings.LastIndex(page[:i], "<tr")
	end := strings.Index(page[i:], "</tr>")
	if start < 0 || end < 0 {
		t.Fatalf("%q is not inside a table row", needle)
	}
	return page[start : i+end]
}

// TestLinksResolve parses every HTML page and checks that every link and
// asset under the base path names a file of the site, and that every
// fragment (#id), on the same page or another, names an element there.
func TestLinksResolve(t *testing.T) {
	out, _ := buildShipped(t)
	pages := 0
	type fragment struct{ from, page, id string }
	var fragments []fragment
	ids := map[string]map[string]bool{} // page file -> its ids
	err := filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
			return err
		}
		pages++
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		doc, err := html.Parse(bytes.NewReader(raw))
		if err != nil {
			t.Errorf("%s does not parse: %v", path, err)
			return nil
		}
		ids[path] = map[string]bool{}
		var walk func(*html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.ElementNode {
				for _, a := range n.Attr {
					if a.Key == "id" {
						ids[path][a.Val] = true
					}
					if a.Key != "href" && a.Key != "src" {
						continue
					}
					v := a.Val
					if strings.HasPrefix(v, "#") {
						fragments = append(fragments, fragment{path, path, v[1:]})
						continue
					}
					if strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") {
						continue
					}
					if !strings.HasPrefix(v, "/featbench/") {
						t.Errorf("%s: link %q does not carry the base path /featbench/", path, v)
						continue
					}
					rel := strings.TrimPrefix(strings.SplitN(v, "#", 2)[0], "/featbench/")
					target := filepath.Join(out, filepath.FromSlash(rel))
					if rel == "" || strings.HasSuffix(rel, "/") {
						target = filepath.Join(target, "index.html")
					}
					if _, err := os.Stat(target); err != nil {
						t.Errorf("%s: broken link %q", path, v)
					} else if _, id, ok := strings.Cut(v, "#"); ok {
						fragments = append(fragments, fragment{path, target, id})
					}
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pages < 30 {
		t.Errorf("checked %d pages, want at least 30", pages)
	}
	for _, f := range fragments {
		if !ids[f.page][f.id] {
			t.Errorf("%s: link to #%s on %s, which has no element with that id", f.from, f.id, f.page)
		}
	}
	if len(fragments) < pages {
		t.Errorf("checked %d fragment links on %d pages; every page has at least its skip link", len(fragments), pages)
	}
}

// boardDoc is board.json.
type boardDoc struct {
	Dataset   string           `json:"dataset"`
	Split     string           `json:"split"`
	Instances int              `json:"instances"`
	RankBy    string           `json:"rank_by"`
	Rows      []map[string]any `json:"rows"`
}

// TestBoardDownloadsMatchTheTable checks board.json and board.csv against
// the published figures and the board's own table: numbers as numbers
// (2.6M is 2600000), the rank order of the dataset's ranking figure, the
// interval bounds in columns of their own, and both files agreeing.
func TestBoardDownloadsMatchTheTable(t *testing.T) {
	out, _ := buildShipped(t)
	var doc boardDoc
	if err := json.Unmarshal([]byte(read(t, out, "leaderboard/featurebench/v1.0/full/board.json")), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Instances != 200 || doc.Split != "full" || doc.RankBy != "passed" || len(doc.Rows) != 8 {
		t.Fatalf("board.json: %d instances, split %q, rank_by %q, %d rows; want 200, full, passed, 8", doc.Instances, doc.Split, doc.RankBy, len(doc.Rows))
	}
	// FeatureBench ranks by % passed.
	for i := 1; i < len(doc.Rows); i++ {
		if doc.Rows[i]["passed_pct"].(float64) > doc.Rows[i-1]["passed_pct"].(float64) {
			t.Errorf("row %d has passed_pct %v above row %d's %v: want the rows by %% passed", i+1, doc.Rows[i]["passed_pct"], i, doc.Rows[i-1]["passed_pct"])
		}
	}
	var codex map[string]any
	for _, r := range doc.Rows {
		if r["system"] == "Codex + GPT-5.1-Codex" {
			codex = r
		}
	}
	want := map[string]any{"resolved_pct": 12.5, "passed_pct": 41.66, "l1_passed_pct": 43.0, "l2_passed_pct": 35.2,
		"tokens_in": 6.3e6, "tokens_out": 39000.0, "cost_per_instance": nil, "reported": true,
		// A reported row's interval is derived from 12.5% of 200, and says so.
		"resolved_ci95_low": 8.6, "resolved_ci95_derived": true,
		"rank": 3.0, "slug": "codex_gpt-5.1-codex"}
	for k, v := range want {
		if codex[k] != v {
			t.Errorf("Codex row: %s = %#v, want %#v", k, codex[k], v)
		}
	}

	// The CSV holds the same rows, numbers written plainly.
	rows, err := csv.NewReader(strings.NewReader(read(t, out, "leaderboard/featurebench/v1.0/full/board.csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 9 {
		t.Fatalf("board.csv has %d lines, want a header and 8 rows", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for i, r := range rows[1:] {
		for _, k := range []string{"system", "resolved_pct", "passed_pct", "tokens_in", "rank"} {
			jv := doc.Rows[i][k]
			var js string
			switch v := jv.(type) {
			case float64:
				js = strconv.FormatFloat(v, 'f', -1, 64)
			case string:
				js = v
			}
			if r[col[k]] != js {
				t.Errorf("board.csv row %d column %s = %q, board.json has %q", i+1, k, r[col[k]], js)
			}
		}
	}

	// Computed figures: the example's lite board has agents with intervals and reference rows.
	var ex boardDoc
	if err := json.Unmarshal([]byte(read(t, out, "leaderboard/example/v2/lite/board.json")), &ex); err != nil {
		t.Fatal(err)
	}
	refs := 0
	for _, r := range ex.Rows {
		if r["reference"] == true {
			refs++
			if r["rank"] != nil {
				t.Errorf("reference row %v has rank %v, want null", r["system"], r["rank"])
			}
			continue
		}
		lo, hi, res := r["resolved_ci95_low"], r["resolved_ci95_high"], r["resolved_pct"]
		l, ok1 := lo.(float64)
		h, ok2 := hi.(float64)
		v, ok3 := res.(float64)
		if !ok1 || !ok2 || !ok3 || l > v || v > h {
			t.Errorf("%v: resolved %v with interval [%v, %v], want numbers with low ≤ resolved ≤ high", r["system"], res, lo, hi)
		}
	}
	if refs != 2 {
		t.Errorf("the example board lists %d reference rows, want the gold and empty patches", refs)
	}
}

// TestCSVCellsAreNotFormulas: a name a spreadsheet would run as a formula
// is written with a leading apostrophe.
func TestCSVCellsAreNotFormulas(t *testing.T) {
	root := fixtureRoot(t, map[string]string{
		"data/submissions/demo/v1/full/20260302_sys-b/metadata.toml": `name = "=HYPERLINK(\"http://evil.example\")"
scaffold = "+S"
model = "@M"
date = 2026-03-02
tags = ["-1+1"]

[reported]
source = "a paper"
resolved = "50.0"
`,
	})
	if _, err := site.Build(context.Background(), fixtureOptions(t, root)); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(read(t, filepath.Join(root, "public"), "leaderboard/demo/v1/full/board.csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		for _, cell := range r {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("board.csv has the cell %q, which a spreadsheet would run as a formula", cell)
			}
		}
	}
	if !strings.Contains(read(t, filepath.Join(root, "public"), "leaderboard/demo/v1/full/board.csv"), `"'=HYPERLINK(""http://evil.example"")"`) {
		t.Errorf("board.csv lacks the defused name")
	}
}

func TestFeedAndSitemapUseAbsoluteURLs(t *testing.T) {
	out, _ := buildShipped(t)
	sm := read(t, out, "sitemap.xml")
	if !strings.Contains(sm, "<loc>https://example.org/featbench/leaderboard/featurebench/v1.0/full/</loc>") {
		t.Errorf("sitemap lacks the absolute leaderboard URL:\n%.400s", sm)
	}
	feed := read(t, out, "feed.xml")
	if !strings.Contains(feed, `<feed xmlns="http://www.w3.org/2005/Atom">`) || !strings.Contains(feed, "<entry>") {
		t.Errorf("feed.xml is not an Atom feed with entries:\n%.400s", feed)
	}
	if robots := read(t, out, "robots.txt"); !strings.Contains(robots, "Sitemap: https://example.org/featbench/sitemap.xml") {
		t.Errorf("robots.txt = %q", robots)
	}
}

func TestRebuildSkipsUnchangedWork(t *testing.T) {
	root := fixtureRoot(t, nil)
	opts := fixtureOptions(t, root)
	first, err := site.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if first.UpToDate || first.Written == 0 {
		t.Fatalf("first build: %+v", first)
	}
	again, err := site.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if !again.UpToDate {
		t.Errorf("second build with nothing changed did work: %+v", again)
	}
	// Change one submission's metadata: some pages change, most do not.
	meta := filepath.Join(root, "data/submissions/demo/v1/full/20260301_agent-a/metadata.toml")
	raw, _ := os.ReadFile(meta)
	future := time.Now().Add(2 * time.Second)
	if err := os.WriteFile(meta, bytes.Replace(raw, []byte(`name = "Agent A"`), []byte(`name = "Agent A2"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Chtimes(meta, future, future)
	third, err := site.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if third.UpToDate || third.Written == 0 || third.Written >= third.Files {
		t.Errorf("after one change: wrote %d of %d files; want some but not all", third.Written, third.Files)
	}
}

// TestNewSiteIsStaged checks that a build of a missing output folder
// writes it in a stage beside it and moves it into place whole, after
// removing a stage a killed build left behind.
func TestNewSiteIsStaged(t *testing.T) {
	root := fixtureRoot(t, nil)
	opts := fixtureOptions(t, root)
	out := filepath.Join(root, "public")
	// A killed build's leftover: its process (pid 2^22+1, beyond Linux's
	// pid_max) does not exist.
	dead := out + ".stage-4194305"
	if err := os.MkdirAll(filepath.Join(dead, "datasets"), 0o755); err != nil {
		t.Fatal(err)
	}
	rep, err := site.Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Written != rep.Files || rep.Files == 0 {
		t.Errorf("new site: wrote %d of %d files", rep.Written, rep.Files)
	}
	if left, _ := filepath.Glob(out + ".stage-*"); len(left) != 0 {
		t.Errorf("stages left behind: %v", left)
	}
	if _, err := os.Stat(filepath.Join(out, "index.html")); err != nil {
		t.Errorf("the site is not in place: %v", err)
	}
	tmp := 0
	_ = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			tmp++
		}
		return nil
	})
	if tmp > 0 {
		t.Errorf("%d temporary files left in the site", tmp)
	}
	// The next build of the same site is incremental, in place.
	again, err := site.Build(context.Background(), opts)
	if err != nil || !again.UpToDate {
		t.Errorf("rebuild: %+v, %v; want up to date", again, err)
	}
}

func TestBrokenDataWritesNothing(t *testing.T) {
	root := fixtureRoot(t, map[string]string{
		"data/submissions/demo/v1/full/20260301_agent-a/results.jsonl": `{"instance_id":"demo__pkg-1","resolved":true,"patch_applied":true,"f2p_passed":[],"f2p_failed":["tests/test_a.py::test_new"],"p2p_passed":[],"p2p_failed":[]}` + "\n",
	})
	opts := fixtureOptions(t, root)
	_, err := site.Build(context.Background(), opts)
	var ps bench.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("want bench.Problems, got %v", err)
	}
	if !strings.Contains(err.Error(), "results.jsonl:1") || !strings.Contains(err.Error(), `"resolved"`) {
		t.Errorf("error does not name file, line and field: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "public")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed build left an output folder behind (stat: %v)", err)
	}
}

func TestHostileDataIsEscaped(t *testing.T) {
	root := fixtureRoot(t, nil)
	out := filepath.Join(root, "public")
	opts := fixtureOptions(t, root)
	if _, err := site.Build(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	_ = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".html") {
			raw, _ := os.ReadFile(path)
			all.Write(raw)
		}
		return nil
	})
	s := all.String()
	for _, bad := range []string{"<script>alert", "<img src=x", `href="javascript:`} {
		if strings.Contains(s, bad) {
			t.Errorf("hostile input reached the HTML unescaped: %q", bad)
		}
	}
	board := read(t, out, "leaderboard/demo/v1/full/index.html")
	if !strings.Contains(board, "&lt;script&gt;alert(&#34;name&#34;)&lt;/script&gt;") {
		t.Errorf("the hostile system name is not shown as text on the leaderboard")
	}
	inst := read(t, out, "datasets/demo/v1/instances/demo__pkg-1/index.html")
	if !strings.Contains(inst, `class="chroma"`) {
		t.Errorf("the problem statement's code block is not highlighted")
	}
	if !strings.Contains(inst, "<table>") {
		t.Errorf("the problem statement's markdown table is not rendered")
	}
	// Raw HTML in a statement is shown as the text it is, not dropped.
	for _, text := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(1)&gt;"} {
		if !strings.Contains(inst, text) {
			t.Errorf("the statement's raw HTML %q is not shown as text", text)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func fixtureOptions(t *testing.T, root string) site.Options {
	t.Helper()
	cfg := config.Default()
	cfg.Site.BaseURL = "/sub/"
	raw, _ := os.ReadFile(filepath.Join("..", "package-lock.json"))
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	abs, _ := filepath.Abs(filepath.Join("..", ".cache", "npm"))
	return site.Options{Root: root, Config: cfg.Site, ConfigBytes: raw, CacheDir: abs,
		Now: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)}
}

// fixtureRoot writes a small project with hostile strings in every field a
// submitter controls; files in override replace the defaults.
func fixtureRoot(t *testing.T, override map[string]string) string {
	t.Helper()
	root := t.TempDir()
	statement := "Implement `pkg.new()`.\n\n<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n" +
		"[click](javascript:alert(1))\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\ndef new() -> int:\n    ...\n```\n"
	inst := func(id string, level int) string {
		m := map[string]any{
			"instance_id": id, "repo": "demo/pkg", "base_commit": "abc123", "level": level,
			"problem_statement": statement,
			"patch":             "diff --git a/pkg/a.py b/pkg/a.py\n--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1 +1,2 @@\n x = 1\n+def new(): return 1 # <script>\n",
			"test_patch":        "diff --git a/tests/test_a.py b/tests/test_a.py\n--- /dev/null\n+++ b/tests/test_a.py\n@@ -0,0 +1 @@\n+def test_new(): pass\n",
			"FAIL_TO_PASS":      []string{"tests/test_a.py::test_new"}, "PASS_TO_PASS": []string{"tests/test_b.py::test_old"},
			"image_name": "demo:base", "created_at": "2026-02-01T00:00:00Z", "lines": 1, "files": 1, "functions": 1,
			"f2p_test_points": 1, "p2p_test_points": 1, "top_objects": []string{"new"}, "custom_field": "kept",
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	files := map[string]string{
		"data/datasets/demo/v1/dataset.toml": `name = "demo"
title = "Demo <b>bold</b>"
version = "v1"
release_date = 2026-02-01
description = "A demo dataset <script>alert('d')</script>"

[[repositories]]
name = "demo/pkg"

[[splits]]
name = "full"
instances = ["demo__pkg-1", "demo__pkg-2"]
`,
		"data/datasets/demo/v1/instances.jsonl": inst("demo__pkg-1", 1) + "\n" + inst("demo__pkg-2", 2) + "\n",
		"data/submissions/demo/v1/full/20260301_agent-a/metadata.toml": `name = "Agent A"
scaffold = "<script>alert(\"name\")</script>"
model = "M"
date = 2026-03-01
tags = ["<img src=x onerror=alert(1)>"]
notes = "<script>alert('n')</script>"
`,
		"data/submissions/demo/v1/full/20260301_agent-a/results.jsonl": `{"instance_id":"demo__pkg-1","resolved":true,"patch_applied":true,"f2p_passed":["tests/test_a.py::test_new"],"f2p_failed":[],"p2p_passed":["tests/test_b.py::test_old"],"p2p_failed":[],"tokens_in":1000,"tokens_out":10,"cost":0.5}` + "\n" +
			`{"instance_id":"demo__pkg-2","resolved":false,"patch_applied":true,"f2p_passed":[],"f2p_failed":["tests/test_a.py::test_new"],"p2p_passed":["tests/test_b.py::test_old"],"p2p_failed":[],"failure_modes":["NameError"]}` + "\n",
		"data/submissions/demo/v1/full/20260302_sys-b/metadata.toml": `name = "<script>alert(\"name\")</script>"
scaffold = "S"
model = "M"
date = 2026-03-02

[reported]
source = "a paper"
resolved = "50.0"
passed = "75.25"
`,
	}
	for k, v := range override {
		files[k] = v
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
	return root
}

// ---- level figures, level charts and the per-repository page ------------

// gridColumn returns a system's column of a repositories × systems grid,
// cell text by repository; nil when the grid or the column is missing.
func gridColumn(t *testing.T, sec *html.Node, id, system string) map[string]string {
	t.Helper()
	tbl := byID(sec, id)
	if tbl == nil {
		return nil
	}
	ths := find(tbl, func(n *html.Node) bool { return n.Data == "th" && n.Parent.Parent.Data == "thead" })
	idx := -1
	for i, th := range ths {
		if a := find(th, func(n *html.Node) bool { return n.Data == "a" }); len(a) > 0 && text(a[0]) == system {
			idx = i
		}
	}
	if idx < 0 {
		return nil
	}
	out := map[string]string{}
	for _, tr := range find(tbl, func(n *html.Node) bool { return n.Data == "tr" && n.Parent.Data == "tbody" }) {
		cells := find(tr, func(n *html.Node) bool { return (n.Data == "td" || n.Data == "th") && n.Parent == tr })
		if idx < len(cells) {
			out[text(cells[0])] = text(cells[idx])
		}
	}
	return out
}

// parse parses an HTML page.
func parse(t *testing.T, page string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatalf("page does not parse: %v", err)
	}
	return doc
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// find returns the elements under n, n included, for which match holds,
// in document order.
func find(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

// byID returns the element of doc with the given id, or nil.
func byID(doc *html.Node, id string) *html.Node {
	els := find(doc, func(n *html.Node) bool { v, ok := attr(n, "id"); return ok && v == id })
	if len(els) == 0 {
		return nil
	}
	return els[0]
}

// text is the text of n, its words separated by single spaces (and by a
// space between elements).
func text(n *html.Node) string {
	var b strings.Builder
	for _, t := range find(n, func(*html.Node) bool { return true }) {
		for c := t.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
				// An id's parts, split by <wbr>, read as one word.
				if n := c.NextSibling; n == nil || n.Type != html.ElementNode || n.Data != "wbr" {
					b.WriteByte(' ')
				}
			}
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// boardCells returns the cells of the row of table#board whose header cell
// names the system, keyed by the data-key of their column; each value is
// the cell's first word (the figure as shown, without notes) and its
// data-sort attribute.
func boardCells(t *testing.T, page, system string) map[string][2]string {
	t.Helper()
	table := byID(parse(t, page), "board")
	if table == nil {
		t.Fatal("the page has no table#board")
	}
	var keys []string
	for _, th := range find(table, func(n *html.Node) bool { return n.Data == "th" && n.Parent.Parent.Data == "thead" }) {
		k, _ := attr(th, "data-key")
		keys = append(keys, k)
	}
	for _, tr := range find(table, func(n *html.Node) bool { return n.Data == "tr" && n.Parent.Data == "tbody" }) {
		cells := find(tr, func(n *html.Node) bool { return (n.Data == "td" || n.Data == "th") && n.Parent == tr })
		if len(cells) < 2 {
			continue
		}
		if a := find(cells[1], func(n *html.Node) bool { return n.Data == "a" }); len(a) == 0 || text(a[0]) != system {
			continue
		}
		if len(cells) != len(keys) {
			t.Fatalf("the row of %q has %d cells under %d headers", system, len(cells), len(keys))
		}
		out := map[string][2]string{}
		for i, c := range cells {
			first := ""
			if f := strings.Fields(text(c)); len(f) > 0 {
				first = f[0]
			}
			sort, _ := attr(c, "data-sort")
			out[keys[i]] = [2]string{first, sort}
		}
		return out
	}
	t.Fatalf("table#board has no row for %q", system)
	return nil
}

// TestShippedLevelFiguresExactlyAsPublished checks the L1 and L2 % resolved
// and % passed columns (paper Table 8) against data/: each figure as
// printed, "—" where a submission publishes none.
func TestShippedLevelFiguresExactlyAsPublished(t *testing.T) {
	out, _ := buildShipped(t)
	data, err := bench.Load(context.Background(), "../data")
	if err != nil {
		t.Fatal(err)
	}
	checked, passed := 0, 0
	for _, s := range data.Submissions {
		if s.Reported == nil {
			continue
		}
		page := read(t, out, "leaderboard/"+s.Dataset.Name+"/"+s.Dataset.Version+"/"+s.Split+"/index.html")
		cells := boardCells(t, page, s.Name)
		if _, ok := cells["l1"]; !ok {
			if len(s.Reported.Levels) > 0 {
				t.Errorf("%s publishes figures by level but its board has no level columns", s.ID())
			}
			continue
		}
		for _, c := range []struct {
			key, level string
			fig        func(*bench.Score) bench.Figure
		}{
			{"l1", "L1", func(l *bench.Score) bench.Figure { return l.Resolved }},
			{"l1passed", "L1", func(l *bench.Score) bench.Figure { return l.Passed }},
			{"l2", "L2", func(l *bench.Score) bench.Figure { return l.Resolved }},
			{"l2passed", "L2", func(l *bench.Score) bench.Figure { return l.Passed }},
		} {
			got, ok := cells[c.key]
			if !ok {
				t.Errorf("%s: the board has no column th[data-key=%q]", s.ID(), c.key)
				continue
			}
			want, sort := "—", ""
			var f bench.Figure
			if l := s.Reported.Levels[c.level]; l != nil {
				f = c.fig(l)
			}
			if f.Set() {
				want = f.Text
				sort = strconv.FormatFloat(f.Value, 'g', -1, 64)
				if strings.HasSuffix(c.key, "passed") {
					passed++
				}
			}
			if got[0] != want || got[1] != sort {
				t.Errorf("%s: column %s shows %q (data-sort %q), want %q (data-sort %q)", s.ID(), c.key, got[0], got[1], want, sort)
			}
			checked++
		}
	}
	// Paper Table 8 gives L1 and L2 % passed for seven systems.
	if passed < 14 || checked < 32 {
		t.Errorf("checked %d level cells, %d of them published %% passed; the FeatureBench data should give at least 32 and 14", checked, passed)
	}
}

// TestLevelFiguresFromPerInstanceResults checks the level columns computed
// from per-instance results, and that a submission without figures by
// level shows "—" in all four.
func TestLevelFiguresFromPerInstanceResults(t *testing.T) {
	root := fixtureRoot(t, nil)
	if _, err := site.Build(context.Background(), fixtureOptions(t, root)); err != nil {
		t.Fatal(err)
	}
	page := read(t, filepath.Join(root, "public"), "leaderboard/demo/v1/full/index.html")
	for _, key := range []string{"l1", "l1passed", "l2", "l2passed"} {
		if !strings.Contains(page, `data-key="`+key+`" data-type="num"`) {
			t.Errorf("the board has no numeric, sortable column %q", key)
		}
	}
	// Agent A resolved its level 1 instance and passed none of the F2P
	// tests of its level 2 instance.
	a := boardCells(t, page, "Agent A")
	for key, want := range map[string]string{"l1": "100.0", "l1passed": "100.00", "l2": "0.0", "l2passed": "0.00"} {
		if a[key][0] != want {
			t.Errorf("Agent A: column %s shows %q, want %q", key, a[key][0], want)
		}
	}
	b := boardCells(t, page, `<script>alert("name")</script>`)
	for _, key := range []string{"l1", "l1passed", "l2", "l2passed"} {
		if b[key][0] != "—" || b[key][1] != "" {
			t.Errorf("reported system without level figures: column %s shows %q (data-sort %q), want — sorting last", key, b[key][0], b[key][1])
		}
	}
	sys := read(t, filepath.Join(root, "public"), "datasets/demo/v1/systems/agent-a/index.html")
	if !strings.Contains(sys, "L1 % Pass.") || !strings.Contains(sys, "100.00") {
		t.Errorf("the system page lacks the L1 %% passed column or Agent A's 100.00")
	}
}

// chartOptions returns the ECharts options a charts page embeds for id.
func chartOptions(t *testing.T, page, id string) map[string]any {
	t.Helper()
	el := byID(parse(t, page), id+"-options")
	if el == nil || el.FirstChild == nil {
		t.Fatalf("the charts page has no options for %s", id)
	}
	var o map[string]any
	if err := json.Unmarshal([]byte(el.FirstChild.Data), &o); err != nil {
		t.Fatalf("options of %s: %v", id, err)
	}
	return o
}

// TestLevelCharts checks that the level charts show the published L1 and
// L2 figures, % resolved and % passed, one bar per system and level, with
// the systems named on the axis.
func TestLevelCharts(t *testing.T) {
	out, _ := buildShipped(t)
	data, err := bench.Load(context.Background(), "../data")
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Dataset("featurebench/v1.0")
	page := read(t, out, "datasets/featurebench/v1.0/charts/index.html")
	for _, c := range []struct {
		id  string
		fig func(*bench.Score) bench.Figure
	}{
		{"split-full-levels", func(l *bench.Score) bench.Figure { return l.Resolved }},
		{"split-full-levels-passed", func(l *bench.Score) bench.Figure { return l.Passed }},
	} {
		if byID(parse(t, page), c.id) == nil {
			t.Errorf("the charts page has no div#%s to draw into", c.id)
			continue
		}
		o := chartOptions(t, page, c.id)
		raw, _ := json.Marshal(o)
		// The bars lie along the y axis, one system a row.
		var opt struct {
			YAxis  []struct{ Data []string } `json:"yAxis"`
			Series []struct {
				Name string
				Data []struct{ Value any }
			} `json:"series"`
		}
		if err := json.Unmarshal(raw, &opt); err != nil {
			t.Fatal(err)
		}
		if len(opt.YAxis) == 0 || len(opt.Series) != 2 || opt.Series[0].Name != "L1" || opt.Series[1].Name != "L2" {
			t.Errorf("%s: want a y axis of systems and the series L1 and L2, got %s", c.id, raw)
			continue
		}
		systems := opt.YAxis[0].Data
		if len(systems) < 7 {
			t.Errorf("%s names %d systems on its axis, want the 7 or more with published figures by level", c.id, len(systems))
		}
		for i, name := range systems {
			var sub *bench.Submission
			for _, s := range data.SubmissionsFor(ds, "full") {
				if s.Name == name {
					sub = s
				}
			}
			if sub == nil || sub.Reported == nil {
				t.Errorf("%s: %q is not a reported system of the full split", c.id, name)
				continue
			}
			for j, level := range []string{"L1", "L2"} {
				var want any = "-"
				var f bench.Figure
				if l := sub.Reported.Levels[level]; l != nil {
					f = c.fig(l)
				}
				if f.Set() {
					want = f.Value
				}
				if got := opt.Series[j].Data[i].Value; got != want {
					t.Errorf("%s: %s %s = %v, want %v", c.id, name, level, got, want)
				}
			}
		}
	}
}

// TestShippedReposPageCoversEverySplit checks that the per-repository page
// has a section for each split with systems, that leaderboards and the
// dataset page link to it, and that the published per-repository figures
// sit in their split's section.
func TestShippedReposPageCoversEverySplit(t *testing.T) {
	out, _ := buildShipped(t)
	data, err := bench.Load(context.Background(), "../data")
	if err != nil {
		t.Fatal(err)
	}
	tables := 0
	for _, ds := range data.Datasets {
		base := "datasets/" + ds.Name + "/" + ds.Version + "/"
		doc := parse(t, read(t, out, base+"repos/index.html"))
		dsPage := read(t, out, base+"index.html")
		for _, sp := range ds.Splits {
			subs := data.SubmissionsFor(ds, sp.Name)
			sec := byID(doc, "split-"+sp.Name)
			link := `href="/featbench/` + base + `repos/#split-` + sp.Name + `"`
			board := read(t, out, "leaderboard/"+ds.Name+"/"+ds.Version+"/"+sp.Name+"/index.html")
			if len(subs) == 0 {
				if sec != nil || strings.Contains(board, link) {
					t.Errorf("%s %s has no systems but a per-repository section or a link to one", ds.Key(), sp.Name)
				}
				continue
			}
			if sec == nil {
				t.Errorf("%s: the per-repository page has no section#split-%s", ds.Key(), sp.Name)
				continue
			}
			if !strings.Contains(board, link) {
				t.Errorf("the %s %s leaderboard does not link to its per-repository section (%s)", ds.Key(), sp.Name, link)
			}
			if !strings.Contains(dsPage, link) {
				t.Errorf("the %s dataset page does not link to the %s per-repository section", ds.Key(), sp.Name)
			}
			for _, s := range subs {
				if s.Reported == nil || len(s.Reported.Repos) == 0 {
					continue
				}
				passed := gridColumn(t, sec, "split-"+sp.Name+"-passed", s.Name)
				resolved := gridColumn(t, sec, "split-"+sp.Name+"-resolved", s.Name)
				if passed == nil || resolved == nil {
					t.Errorf("%s: no column of %q in the grids of section#split-%s", s.ID(), s.Name, sp.Name)
					continue
				}
				tables++
				for _, repo := range ds.Repos {
					sc := s.Reported.Repos[repo.Name]
					for _, g := range []struct {
						col map[string]string
						fig func(*bench.Score) bench.Figure
					}{{passed, func(sc *bench.Score) bench.Figure { return sc.Passed }}, {resolved, func(sc *bench.Score) bench.Figure { return sc.Resolved }}} {
						want := "—"
						if sc != nil {
							if f := g.fig(sc); f.Set() {
								want = f.Text
							}
						}
						if got := g.col[repo.Name]; got != want {
							t.Errorf("%s %s: the grid shows %q, want %q", s.ID(), repo.Name, got, want)
						}
					}
				}
			}
		}
	}
	if tables < 7 {
		t.Errorf("found %d published per-repository tables, want the 7 of paper Tables 15–21", tables)
	}
}

// TestReposPageSectionPerSplit builds a dataset with two splits of
// per-instance results: each split gets its section with each system's
// table computed on that split's instances, and ids stay unique.
func TestReposPageSectionPerSplit(t *testing.T) {
	base := fixtureRoot(t, nil)
	ds, _ := os.ReadFile(filepath.Join(base, "data/datasets/demo/v1/dataset.toml"))
	res, _ := os.ReadFile(filepath.Join(base, "data/submissions/demo/v1/full/20260301_agent-a/results.jsonl"))
	meta, _ := os.ReadFile(filepath.Join(base, "data/submissions/demo/v1/full/20260301_agent-a/metadata.toml"))
	root := fixtureRoot(t, map[string]string{
		"data/datasets/demo/v1/dataset.toml":                           string(ds) + "\n[[splits]]\nname = \"lite\"\ninstances = [\"demo__pkg-2\"]\n\n[[splits]]\nname = \"empty\"\ninstances = [\"demo__pkg-1\"]\n",
		"data/submissions/demo/v1/lite/20260301_agent-a/metadata.toml": string(meta),
		"data/submissions/demo/v1/lite/20260301_agent-a/results.jsonl": strings.SplitAfter(string(res), "\n")[1],
	})
	if _, err := site.Build(context.Background(), fixtureOptions(t, root)); err != nil {
		t.Fatal(err)
	}
	page := read(t, filepath.Join(root, "public"), "datasets/demo/v1/repos/index.html")
	doc := parse(t, page)
	ids := map[string]bool{}
	for _, n := range find(doc, func(n *html.Node) bool { _, ok := attr(n, "id"); return ok }) {
		id, _ := attr(n, "id")
		if ids[id] {
			t.Errorf("id %q appears twice on the per-repository page", id)
		}
		ids[id] = true
	}
	if byID(doc, "split-empty") != nil {
		t.Error("the split without systems has a section")
	}
	for _, c := range []struct {
		split, grid, want string
	}{
		{"full", "passed", "50.0"},
		{"full", "resolved", "50.0"},
		{"full", "tokens", "1k / 10"},
		{"lite", "passed", "0.0"},
		{"lite", "resolved", "0.0"},
	} {
		sec := byID(doc, "split-"+c.split)
		if sec == nil {
			t.Errorf("no section#split-%s", c.split)
			continue
		}
		col := gridColumn(t, sec, "split-"+c.split+"-"+c.grid, "Agent A")
		if got := col["demo/pkg"]; got != c.want {
			t.Errorf("%s split, %s grid: Agent A on demo/pkg shows %q, want %q", c.split, c.grid, got, c.want)
		}
	}
	if i, j := strings.Index(page, `id="split-full"`), strings.Index(page, `id="split-lite"`); i < 0 || j < i {
		t.Error("the default split's section does not come first")
	}
}

// TestDatasetPageShowsHowItWasBuilt: collection.json becomes the dataset
// page's funnel table and its drops, one row per reason, escaped.
func TestDatasetPageShowsHowItWasBuilt(t *testing.T) {
	coll := `{"dataset": "demo/v1", "seed": 7, "repositories": [{"repository": "demo/pkg",
 "test_files": 12, "passing": 9, "candidates": 8, "traced": 8, "classified": 7, "with_p2p": 6,
 "masked": 12, "verified": 5, "kept": 2, "drops": [
  {"file": "tests/test_x.py", "level": 1, "stage": "verify", "reason": "flaky <script>alert(1)</script>"},
  {"file": "tests/test_y.py", "stage": "classify", "reason": "no tested top-level object"},
  {"file": "tests/test_x.py", "level": 2, "stage": "verify", "reason": "flaky <script>alert(1)</script>"}]},
 {"repository": "demo/broken", "test_files": 3, "passing": 0, "candidates": 0, "traced": 0, "classified": 0, "with_p2p": 0,
 "masked": 0, "verified": 0, "kept": 0, "drops": [], "failure": {"stage": "run", "reason": "no test file passes fully"}}],
 "instances": 2, "splits": {"full": 2}}`
	for _, tc := range []struct {
		name     string
		override map[string]string
		want     bool
	}{
		{"with collection.json", map[string]string{"data/datasets/demo/v1/collection.json": coll}, true},
		{"without", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := fixtureRoot(t, tc.override)
			if _, err := site.Build(context.Background(), fixtureOptions(t, root)); err != nil {
				t.Fatal(err)
			}
			page := read(t, filepath.Join(root, "public"), "datasets/demo/v1/index.html")
			doc := parse(t, page)
			sec := byID(doc, "collection")
			if !tc.want {
				if sec != nil {
					t.Fatal("a dataset without collection.json has a \"how this dataset was built\" section")
				}
				return
			}
			if sec == nil {
				t.Fatal("no \"how this dataset was built\" section")
			}
			// The unit changes in the funnel itself: files up to "With
			// P2P", instances (two levels a file) from "Masked" on.
			if got := text(rowNode(t, doc, "demo/pkg", "From test files")); got != "demo/pkg 12 9 8 8 7 6 files 12 instances 5 2" {
				t.Errorf("funnel row = %q", got)
			}
			if head := text(tableWithCaption(t, doc, "From test files")); !strings.Contains(head, "Instances: up to two per file, one per level") {
				t.Errorf("the funnel does not say where files become instances: %q", head)
			}
			drops := text(tableWithCaption(t, doc, "Why candidates"))
			for _, want := range []string{
				"verify 2 flaky <script>alert(1)</script> tests/test_x.py (L1), tests/test_x.py (L2)",
				"classify 1 no tested top-level object tests/test_y.py",
				"demo/broken run 1 the repository failed: no test file passes fully the whole repository",
			} {
				if !strings.Contains(drops, want) {
					t.Errorf("drops table lacks %q:\n%s", want, drops)
				}
			}
			if strings.Index(drops, "flaky") > strings.Index(drops, "no tested") {
				t.Error("the reason that dropped more is not listed first")
			}
			if strings.Contains(page, "<script>alert(1)") {
				t.Error("a drop reason reached the HTML unescaped")
			}
		})
	}
}

// TestDatasetPageShowsHistoryFunnel: a repository collected by a
// history-based method gets its own funnel, step by step, and its
// dropped pull requests are named by number.
func TestDatasetPageShowsHistoryFunnel(t *testing.T) {
	coll := `{"dataset": "demo/v1", "seed": 7, "repositories": [{"repository": "demo/pkg",
 "test_files": 0, "passing": 0, "candidates": 0, "traced": 0, "classified": 0, "with_p2p": 0,
 "masked": 0, "verified": 2, "kept": 2, "method": "release",
 "funnel": [{"step": "releases", "count": 3}, {"step": "pull requests", "count": 5}, {"step": "kept", "count": 2}],
 "drops": [{"file": "", "pull": 4, "stage": "filter", "reason": "no test patch"},
  {"file": "", "pull": 9, "stage": "filter", "reason": "no test patch"},
  {"file": "v1.2: Docs <b>fixed</b>", "stage": "select", "reason": "not wanted: its kind is other"}]}],
 "instances": 2, "splits": {"full": 2}}`
	root := fixtureRoot(t, map[string]string{"data/datasets/demo/v1/collection.json": coll})
	if _, err := site.Build(context.Background(), fixtureOptions(t, root)); err != nil {
		t.Fatal(err)
	}
	page := read(t, filepath.Join(root, "public"), "datasets/demo/v1/index.html")
	doc := parse(t, page)
	funnel := text(tableWithCaption(t, doc, "Release: the funnel"))
	if funnel != "Release: the funnel, per repository Step demo/pkg releases 3 pull requests 5 kept 2" {
		t.Errorf("funnel table = %q", funnel)
	}
	if !strings.Contains(page, "With FeatBench: a feature pull request named in a release&#39;s notes") {
		t.Error("the method is not named")
	}
	drops := text(tableWithCaption(t, doc, "Release: why pull requests were dropped"))
	for _, want := range []string{"filter 2 no test patch #4, #9", "select 1 not wanted: its kind is other v1.2: Docs <b>fixed</b>"} {
		if !strings.Contains(drops, want) {
			t.Errorf("drops table lacks %q:\n%s", want, drops)
		}
	}
	if strings.Contains(page, "<b>fixed") || strings.Contains(page, "From test files to instances") {
		t.Error("an entry reached the HTML unescaped, or the test-driven table is shown for a history method's repository")
	}
}

// tableWithCaption is the table whose caption starts with prefix.
func tableWithCaption(t *testing.T, doc *html.Node, prefix string) *html.Node {
	t.Helper()
	for _, tb := range find(doc, func(n *html.Node) bool { return n.Data == "table" }) {
		for _, c := range find(tb, func(n *html.Node) bool { return n.Data == "caption" }) {
			if strings.HasPrefix(strings.TrimSpace(text(c)), prefix) {
				return tb
			}
		}
	}
	t.Fatalf("no table captioned %q", prefix)
	return nil
}

// rowNode is the row of the table captioned prefix whose header cell is head.
func rowNode(t *testing.T, doc *html.Node, head, prefix string) *html.Node {
	t.Helper()
	for _, tr := range find(tableWithCaption(t, doc, prefix), func(n *html.Node) bool { return n.Data == "tr" }) {
		for _, th := range find(tr, func(n *html.Node) bool { return n.Data == "th" }) {
			if strings.TrimSpace(text(th)) == head {
				return tr
			}
		}
	}
	t.Fatalf("no row %q in the table captioned %q", head, prefix)
	return nil
}
