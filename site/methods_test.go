package site_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/featbench/featbench/site"
)

// methodsFixture is fixtureRoot with a dataset that mixes the three
// collection methods: pkg-1 test-driven, pkg-2 new-components (from pull
// request 42, with a hostile component), pkg-3 release. Agent A resolves
// pkg-1 and pkg-3.
func methodsFixture(t *testing.T) string {
	t.Helper()
	inst := func(id string, extra map[string]any) string {
		m := map[string]any{
			"instance_id": id, "repo": "demo/pkg", "base_commit": "abc123", "level": 1,
			"problem_statement": "Add a feature.",
			"patch":             "diff --git a/pkg/a.py b/pkg/a.py\n--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1 +1,2 @@\n x = 1\n+def new(): return 1\n",
			"test_patch":        "diff --git a/tests/test_a.py b/tests/test_a.py\n--- /dev/null\n+++ b/tests/test_a.py\n@@ -0,0 +1 @@\n+def test_new(): pass\n",
			"FAIL_TO_PASS":      []string{"tests/test_a.py::test_new"}, "PASS_TO_PASS": []string{},
			"image_name": "demo:base", "created_at": "2026-02-01T00:00:00Z", "top_objects": []string{},
		}
		for k, v := range extra {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		return string(b) + "\n"
	}
	result := func(id string, resolved bool) string {
		passed, failed := []string{}, []string{"tests/test_a.py::test_new"}
		if resolved {
			passed, failed = failed, passed
		}
		b, _ := json.Marshal(map[string]any{"instance_id": id, "resolved": resolved, "patch_applied": true,
			"f2p_passed": passed, "f2p_failed": failed, "p2p_passed": []string{}, "p2p_failed": []string{}})
		return string(b) + "\n"
	}
	return fixtureRoot(t, map[string]string{
		"data/datasets/demo/v1/dataset.toml": `name = "demo"
title = "Demo"
version = "v1"
release_date = 2026-02-01
description = "Three methods."

[[repositories]]
name = "demo/pkg"
url = "https://github.com/demo/pkg"

[[splits]]
name = "full"
instances = ["demo__pkg-1", "demo__pkg-2", "demo__pkg-3"]
`,
		"data/datasets/demo/v1/instances.jsonl": inst("demo__pkg-1", nil) +
			inst("demo__pkg-2", map[string]any{"method": "new-components", "pull_number": 42, "release": "v1.2.0",
				"components": []map[string]string{{"file": "pkg/a.py", "name": "Parser.<script>x", "kind": "method",
					"signature": "def parse(self, text: str) -> \"<b>Tree</b>\":", "docstring": "Parse <img src=x onerror=alert(1)> text."}}}) +
			inst("demo__pkg-3", map[string]any{"method": "release", "pull_number": 7, "release": "v1.1.0"}),
		"data/submissions/demo/v1/full/20260301_agent-a/results.jsonl": result("demo__pkg-1", true) + result("demo__pkg-2", false) + result("demo__pkg-3", true),
	})
}

func TestMethodsOnTheSite(t *testing.T) {
	root := methodsFixture(t)
	if _, err := site.Build(context.Background(), fixtureOptions(t, root)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "public")

	// The board: a % resolved column per method, and a filter.
	board := read(t, out, "leaderboard/demo/v1/full/index.html")
	cells := boardCells(t, board, "Agent A")
	for key, want := range map[string]string{"m-test-driven": "100.0", "m-release": "100.0", "m-new-components": "0.0"} {
		if cells[key][0] != want {
			t.Errorf("board column %s: %q, want %q", key, cells[key][0], want)
		}
	}
	doc := parse(t, board)
	sel := find(doc, func(n *html.Node) bool { v, _ := attr(n, "name"); return n.Data == "select" && v == "method" })
	if len(sel) != 1 || len(find(sel[0], func(n *html.Node) bool { return n.Data == "option" })) != 4 {
		t.Errorf("the board has no method filter with any and the three methods")
	}

	// The dataset page: a method column and filter.
	ds := read(t, out, "datasets/demo/v1/index.html")
	for _, want := range []string{`data-method="new-components"`, `<option value="release">Release</option>`, ">New components</td>"} {
		if !strings.Contains(ds, want) {
			t.Errorf("the dataset page lacks %q", want)
		}
	}

	// The instance pages: pull request, release, components escaped,
	// and for release that the request was synthesized.
	nc := read(t, out, "datasets/demo/v1/instances/demo__pkg-2/index.html")
	for _, want := range []string{`href="https://github.com/demo/pkg/pull/42"`, "#42", "v1.2.0", "New components",
		"Parser.&lt;script&gt;x", "def parse(self, text: str) -&gt; &#34;&lt;b&gt;Tree&lt;/b&gt;&#34;:", "Parse &lt;img src=x onerror=alert(1)&gt; text."} {
		if !strings.Contains(nc, want) {
			t.Errorf("the new-components instance page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>x", "<img src=x", "<b>Tree"} {
		if strings.Contains(nc, bad) {
			t.Errorf("the instance page holds %q unescaped", bad)
		}
	}
	if strings.Contains(nc, "synthesized") {
		t.Error("a new-components statement is said to be synthesized")
	}
	rel := read(t, out, "datasets/demo/v1/instances/demo__pkg-3/index.html")
	if !strings.Contains(rel, "synthesized") || !strings.Contains(rel, "#7") || !strings.Contains(rel, "v1.1.0") {
		t.Error("the release instance page does not say its request was synthesized, or lacks its pull request and release")
	}
	td := read(t, out, "datasets/demo/v1/instances/demo__pkg-1/index.html")
	if strings.Contains(td, "Pull request") || !strings.Contains(td, "Test-driven") {
		t.Error("the test-driven instance page shows a pull request, or not its method")
	}
}

// TestOneMethodShowsNoMethodColumn: a dataset of test-driven instances
// only (every dataset before the history methods) has no method column or
// filter on its board and page.
func TestOneMethodShowsNoMethodColumn(t *testing.T) {
	root := fixtureRoot(t, nil)
	if _, err := site.Build(context.Background(), fixtureOptions(t, root)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "public")
	for _, page := range []string{"leaderboard/demo/v1/full/index.html", "datasets/demo/v1/index.html"} {
		if p := read(t, out, page); strings.Contains(p, `name="method"`) || strings.Contains(p, "method-col") {
			t.Errorf("%s shows a method filter or column for a dataset of one method", page)
		}
	}
}

// mixedCollection is a collection.json of two methods.
const mixedCollection = `{"dataset": "demo/v1", "seed": 1, "instances": 3, "repositories": [
 {"repository": "demo/pkg", "test_files": 4, "passing": 4, "candidates": 4, "traced": 4, "classified": 3, "with_p2p": 3,
  "masked": 3, "verified": 2, "kept": 1, "drops": [{"file": "tests/test_a.py", "stage": "verify", "reason": "flaky"}]},
 {"repository": "demo/pkg", "method": "new-components", "test_files": 0, "passing": 0, "candidates": 0, "traced": 0,
  "classified": 0, "with_p2p": 0, "masked": 0, "verified": 1, "kept": 1,
  "funnel": [{"step": "pull requests", "count": 9}, {"step": "adding new components", "count": 4}, {"step": "verified", "count": 2}, {"step": "kept", "count": 1}],
  "drops": [{"pull": 12, "stage": "filter", "reason": "the code patch adds no function, class or method"},
   {"pull": 15, "stage": "filter", "reason": "the code patch adds no function, class or method"},
   {"pull": 20, "stage": "statements", "reason": "statement incomplete: <b>x</b>"}]}]}`

// TestFunnelPerMethod: a dataset collected by two methods shows each
// method's funnel (the history-based method's steps per repository) and
// its drops with their one-line reasons, the pull requests named.
func TestFunnelPerMethod(t *testing.T) {
	root := methodsFixture(t)

	if err := os.WriteFile(filepath.Join(root, "data/datasets/demo/v1/collection.json"), []byte(mixedCollection), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := site.Build(context.Background(), fixtureOptions(t, root)); err != nil {
		t.Fatal(err)
	}
	page := read(t, filepath.Join(root, "public"), "datasets/demo/v1/index.html")
	doc := parse(t, page)
	if got := text(rowNode(t, doc, "demo/pkg", "From test files")); got != "demo/pkg 4 4 4 4 3 3 files 3 instances 2 1" {
		t.Errorf("the test-driven funnel row = %q", got)
	}
	for head, want := range map[string]string{"pull requests": "pull requests 9", "adding new components": "adding new components 4", "kept": "kept 1"} {
		if got := text(rowNode(t, doc, head, "New components: the funnel")); got != want {
			t.Errorf("funnel step %q = %q, want %q", head, got, want)
		}
	}
	drops := text(tableWithCaption(t, doc, "New components: why pull requests were dropped"))
	for _, want := range []string{"demo/pkg filter 2 the code patch adds no function, class or method #12, #15", "statements 1 statement incomplete: <b>x</b> #20"} {
		if !strings.Contains(drops, want) {
			t.Errorf("the new-components drops lack %q:\n%s", want, drops)
		}
	}
	if !strings.Contains(text(tableWithCaption(t, doc, "Why candidates and instances")), "verify 1 flaky tests/test_a.py") {
		t.Error("the test-driven drops are not shown apart")
	}
	if strings.Contains(page, "<b>x</b>") {
		t.Error("a drop reason reached the HTML unescaped")
	}
}
