package site_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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
		for _, want := range []string{"<!doctype html>", `<html lang="en">`, "/featbench/assets/style.css", `id="theme-toggle"`} {
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
// asset under the base path names a file of the site.
func TestLinksResolve(t *testing.T) {
	out, _ := buildShipped(t)
	pages := 0
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
		var walk func(*html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.ElementNode {
				for _, a := range n.Attr {
					if a.Key != "href" && a.Key != "src" {
						continue
					}
					v := a.Val
					if strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") || strings.HasPrefix(v, "#") {
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
}

func TestBoardDownloadsMatchTheTable(t *testing.T) {
	out, _ := buildShipped(t)
	var doc struct {
		Dataset   string `json:"dataset"`
		Split     string `json:"split"`
		Instances int    `json:"instances"`
		Rows      []struct {
			Rank     int     `json:"rank"`
			System   string  `json:"system"`
			Resolved *string `json:"resolved_pct"`
			Passed   *string `json:"passed_pct"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(read(t, out, "leaderboard/featurebench/v1.0/full/board.json")), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Instances != 200 || doc.Split != "full" || len(doc.Rows) != 8 {
		t.Fatalf("board.json: %d instances, split %q, %d rows; want 200, full, 8", doc.Instances, doc.Split, len(doc.Rows))
	}
	top := doc.Rows[0]
	if top.System != "Codex + GPT-5.1-Codex" || top.Resolved == nil || *top.Resolved != "12.5" || *top.Passed != "41.66" {
		t.Errorf("top row = %+v, want Codex + GPT-5.1-Codex with 12.5 resolved and 41.66 passed", top)
	}
	csv := read(t, out, "leaderboard/featurebench/v1.0/full/board.csv")
	if lines := strings.Count(csv, "\n"); lines != 9 {
		t.Errorf("board.csv has %d lines, want a header and 8 rows", lines)
	}
	if !strings.Contains(csv, "1,Codex + GPT-5.1-Codex,Codex,GPT-5.1-Codex,OpenAI,12.5,,41.66") {
		t.Errorf("board.csv lacks the Codex row as published:\n%s", csv)
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
