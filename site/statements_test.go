package site_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/site"
)

// Markers only the statements, the gold patch and the trajectory hold:
// wherever one shows in the output, that was published.
const (
	statementCanary  = "STATEMENT-CANARY-4b1d"
	patchCanary      = "PATCH-CANARY-90ce"
	trajectoryCanary = "TRAJECTORY-CANARY-e27a"
)

// statementsProject is the fixture with a trajectory whose dataset.toml
// says statements = mode ("" leaves it out), its statement, gold patch
// and trajectory marked.
func statementsProject(t *testing.T, mode string) site.Options {
	t.Helper()
	var lines []string
	for i, id := range []string{"demo__pkg-1", "demo__pkg-2"} {
		b, err := json.Marshal(map[string]any{
			"instance_id": id, "repo": "demo/pkg", "base_commit": "abc123", "level": 1 + i,
			"problem_statement": "Implement `pkg.new()`: " + statementCanary + ".",
			"patch":             "diff --git a/pkg/a.py b/pkg/a.py\n--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1 +1,2 @@\n x = 1\n+y = '" + patchCanary + "'\n",
			"test_patch":        "diff --git a/tests/test_a.py b/tests/test_a.py\n--- /dev/null\n+++ b/tests/test_a.py\n@@ -0,0 +1 @@\n+def test_new(): pass\n",
			"FAIL_TO_PASS":      []string{"tests/test_a.py::test_new"}, "PASS_TO_PASS": []string{"tests/test_b.py::test_old"},
		})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	manifest := `name = "demo"
title = "Demo"
version = "v1"
release_date = 2026-02-01
description = "A demo dataset."
`
	if mode != "" {
		manifest += "statements = \"" + mode + "\"\n"
	}
	manifest += `
[[repositories]]
name = "demo/pkg"

[[splits]]
name = "full"
instances = ["demo__pkg-1", "demo__pkg-2"]
`
	root := fixtureRoot(t, map[string]string{
		"data/datasets/demo/v1/dataset.toml":    manifest,
		"data/datasets/demo/v1/instances.jsonl": strings.Join(lines, "\n") + "\n",
		trajSub + "trajectories.tar.gz":         string(packTrajectory(t, trajectoryLines(t, trajectoryCanary))),
	})
	opts := fixtureOptions(t, root)
	// An absolute base, so that the sitemap and the feed are written too.
	opts.Config.BaseURL = "https://example.org/sub/"
	return opts
}

// TestStatementsPublicOrPrivate: a dataset whose statements are public
// (said so, or by default where its instances are here) gets a task page
// per instance with the statement, its splits' JSONL and its
// trajectories; one whose dataset.toml says statements = "private" gets
// none of them, and neither the statement, the gold patch nor the
// trajectory shows in any file of the site (sitemap, compare data and
// search included), while its instances are listed, as text, with their
// results.
func TestStatementsPublicOrPrivate(t *testing.T) {
	for _, mode := range []string{"", "public", "private"} {
		t.Run("statements="+mode, func(t *testing.T) {
			rep, err := site.Build(context.Background(), statementsProject(t, mode))
			if err != nil {
				t.Fatal(err)
			}
			out := rep.Output
			exists := func(rel string) bool {
				_, err := os.Stat(filepath.Join(out, filepath.FromSlash(rel)))
				return err == nil
			}
			dataset := read(t, out, "datasets/demo/v1/index.html")
			system := read(t, out, "datasets/demo/v1/systems/agent-a/index.html")
			if mode != "private" {
				page := read(t, out, trajInstance+"index.html")
				if !strings.Contains(page, statementCanary) || !strings.Contains(page, patchCanary) {
					t.Errorf("the task page %s lacks the statement or the gold patch", trajInstance)
				}
				if !exists("datasets/demo/v1/full.jsonl") || !exists(trajPage+"index.html") || !exists("datasets/demo/v1/systems/agent-a/full/trajectories.tar.gz") {
					t.Error("a public dataset's split JSONL, trajectory page or trajectories.tar.gz is missing")
				}
				for name, page := range map[string]string{"dataset": dataset, "system": system} {
					if !strings.Contains(page, `href="/sub/`+trajInstance+`"`) {
						t.Errorf("the %s page does not link the task page", name)
					}
				}
				if strings.Contains(dataset, "statements of this version are private") {
					t.Error("a public dataset's page says its statements are private")
				}
				return
			}
			for _, rel := range []string{trajInstance + "index.html", trajOther + "index.html", "datasets/demo/v1/full.jsonl",
				trajPage + "index.html", "datasets/demo/v1/systems/agent-a/full/trajectories.tar.gz"} {
				if exists(rel) {
					t.Errorf("%s is published although the statements are private", rel)
				}
			}
			if !exists("datasets/demo/v1/systems/agent-a/full/results.jsonl") {
				t.Error("the per-instance results are not published")
			}
			if !strings.Contains(dataset, "statements of this version are private") {
				t.Error("the dataset page does not say its statements are private")
			}
			for name, page := range map[string]string{"dataset": dataset, "system": system} {
				if !strings.Contains(text(parse(t, page)), "demo__pkg-1") {
					t.Errorf("the %s page does not list the instance", name)
				}
			}
			err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				raw, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				for _, leak := range []string{statementCanary, patchCanary, trajectoryCanary, "/instances/demo__pkg", "trajectories/demo__pkg"} {
					if strings.Contains(string(raw), leak) {
						t.Errorf("%s holds %q although the statements are private", p, leak)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
