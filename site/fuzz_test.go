package site_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/featbench/featbench/site"
)

// buildBudget is how long a build of the fuzz project may take. The
// project is two instances and two submissions, which build in well under
// a second; the budget is there to catch the inputs that made the
// markdown renderer take minutes (1 MB of nested block quotes took over
// ten), not to time the build.
const buildBudget = 20 * time.Second

// FuzzCheckThenBuild is the promise the submission workflow relies on:
// whatever `build --check` accepts, the build renders, within its budget.
// The fuzzer controls the fields a submitter controls: an instance's
// problem statement, gold patch and a test id, a submission's name, a
// tag, its notes and a reported figure, and a drop in collection.json. The seeds are the inputs that
// broke that promise before: they run with every `go test`.
//
//	go test ./site -run '^$' -fuzz FuzzCheckThenBuild -fuzztime 5m
func FuzzCheckThenBuild(f *testing.F) {
	seeds := []struct{ statement, patch, testID, name, tag, notes, figure string }{
		{"Implement `new()`.", "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1,2 @@\n x\n+y\n", "tests/test_a.py::test_new", "Agent", "tag", "notes", "50.0"},
		// A diff line that is exactly "--- " or "+++ " panicked the renderer.
		{"x", "--- \n+++ \n-- \n", "t::a", "A", "t", "", "1"},
		{"x", "diff --git a/a b/a\n--- \n+++ b/a\n@@ -1 +1 @@\n-- \n+x\n", "t::a", "A", "t", "", "1"},
		// NaN and infinite figures passed --check and broke the charts.
		{"x", "", "t::a", "A", "t", "", "nan"},
		{"x", "", "t::a", "A", "t", "", "inf"},
		{"x", "", "t::a", "A", "t", "", "1e308M"},
		// Small versions of the markdown goldmark renders in quadratic
		// time; TestPathologicalStatementsBuild has them at full size.
		{strings.Repeat(">", 200), "", "t::a", "A", "t", "", "1"},
		{strings.Repeat("[a](", 200), "", "t::a", "A", "t", "", "1"},
		// Hostile text in every field.
		{"<script>alert(1)</script>![x](https://tracker.example/p.gif)", "+<script>", "t::a[<b>]", "<img src=x onerror=alert(1)>", "a|b", "</textarea>", "1"},
	}
	for _, s := range seeds {
		f.Add(s.statement, s.patch, s.testID, s.name, s.tag, s.notes, s.figure)
	}
	f.Fuzz(func(t *testing.T, statement, patch, testID, name, tag, notes, figure string) {
		checkThenBuild(t, fuzzProject(t, statement, patch, testID, name, tag, notes, figure))
	})
}

// TestPathologicalStatementsBuild builds statements of the largest size
// allowed (1 MiB) in the shapes goldmark renders in quadratic time: before
// the markdown guard, 1 MB of nested block quotes took over ten minutes.
func TestPathologicalStatementsBuild(t *testing.T) {
	const size = 1<<20 - 64
	for name, statement := range map[string]string{
		"nested quotes":        strings.Repeat(">", size),
		"nested quotes, lists": strings.Repeat("> - ", size/4),
		"nested lists":         strings.Repeat("- ", size/2),
		"unclosed links":       strings.Repeat("[a](", size/4),
		"unclosed images":      strings.Repeat("![a](", size/5),
		"wide table":           "|" + strings.Repeat("a|", 500) + "\n|" + strings.Repeat("-|", 500) + "\n" + strings.Repeat("|x\n", (size-2004)/3),
	} {
		t.Run(name, func(t *testing.T) {
			checkThenBuild(t, fuzzProject(t, statement, "", "t::a", "A", "t", "", "1"))
		})
	}
}

// checkThenBuild checks a project and, when --check accepts it, builds it:
// the build must succeed within its budget.
func checkThenBuild(t *testing.T, root string) {
	t.Helper()
	{
		opts := fixtureOptions(t, root)
		ctx := context.Background()
		if _, err := site.Check(ctx, opts); err != nil {
			msg := err.Error()
			if len(msg) > 300 {
				msg = msg[:300] + "…"
			}
			t.Logf("refused: %s", msg)
			return // nothing to render
		}
		start := time.Now()
		if _, err := site.Build(ctx, opts); err != nil {
			t.Fatalf("--check accepted the data but the build failed: %v", err)
		}
		if d := time.Since(start); d > buildBudget {
			t.Errorf("the build took %s, over its budget of %s", d.Round(time.Millisecond), buildBudget)
		}
	}
}

// fuzzProject writes a small project whose submitter-controlled fields are
// the fuzzer's, encoded as a submitter would (JSON and TOML encoders), so
// that the fuzzer reaches validation and rendering rather than syntax.
func fuzzProject(t *testing.T, statement, patch, testID, name, tag, notes, figure string) string {
	t.Helper()
	inst := func(id string, level int, statement, patch string) string {
		b, err := json.Marshal(map[string]any{
			"instance_id": id, "repo": "demo/pkg", "base_commit": "abc1234", "level": level,
			"problem_statement": statement, "patch": patch, "test_patch": "",
			"FAIL_TO_PASS": []string{testID}, "PASS_TO_PASS": []string{"tests/test_b.py::test_old"},
			"created_at": "2026-02-01T00:00:00Z",
		})
		if err != nil {
			t.Skip("not JSON-encodable")
		}
		return string(b)
	}
	meta := func(v map[string]any) string {
		var buf bytes.Buffer
		if err := toml.NewEncoder(&buf).Encode(v); err != nil {
			t.Skip("not TOML-encodable")
		}
		return buf.String()
	}
	result, err := json.Marshal(map[string]any{
		"instance_id": "demo__pkg-1", "resolved": false, "patch_applied": true,
		"f2p_passed": []string{}, "f2p_failed": []string{testID},
		"p2p_passed": []string{"tests/test_b.py::test_old"}, "p2p_failed": []string{},
		"failure_modes": []string{tag},
	})
	if err != nil {
		t.Skip("not JSON-encodable")
	}
	// collection.json, as cmd/collect writes it, with the fuzzer's text
	// in a drop: a file, a stage and a reason.
	coll, err := json.Marshal(map[string]any{
		"dataset": "demo/v1", "seed": 1, "instances": 2, "splits": map[string]int{"full": 2},
		"repositories": []map[string]any{{
			"repository": "demo/pkg", "test_files": 3, "passing": 3, "candidates": 3, "traced": 3, "classified": 3,
			"with_p2p": 3, "masked": 4, "verified": 2, "kept": 2,
			"drops": []map[string]any{{"file": testID, "level": 1, "stage": tag, "reason": notes}},
		}},
	})
	if err != nil {
		t.Skip("not JSON-encodable")
	}
	date, _ := time.Parse("2006-01-02", "2026-03-01")
	return fixtureRoot(t, map[string]string{
		"data/datasets/demo/v1/collection.json": string(coll),
		"data/datasets/demo/v1/instances.jsonl": inst("demo__pkg-1", 1, statement, patch) + "\n" + inst("demo__pkg-2", 2, "ok", "") + "\n",
		"data/submissions/demo/v1/full/20260301_agent-a/metadata.toml": meta(map[string]any{
			"name": name, "scaffold": "S", "model": "M", "date": date, "tags": []string{tag}, "notes": notes,
		}),
		"data/submissions/demo/v1/full/20260301_agent-a/results.jsonl": string(result) + "\n",
		"data/submissions/demo/v1/full/20260302_sys-b/metadata.toml": meta(map[string]any{
			"name": "B " + name, "scaffold": "S", "model": "N", "date": date.AddDate(0, 0, 1),
			"reported": map[string]any{"source": "a paper", "resolved": figure, "passed": figure},
		}),
	})
}
