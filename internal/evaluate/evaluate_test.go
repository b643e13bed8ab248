package evaluate_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/predictions"
)

// These tests run the example dataset's instances in real containers on
// the Docker engine testenv finds (skipped without one, failed under
// FEATBENCH_REQUIRE_DOCKER=1), from the environment image of
// examples/textkit.

const root = "../.." // the project, for data/ and examples/

var testLimits = evaluate.Limits{
	TestFile: 2 * time.Minute, Instance: 5 * time.Minute,
	Container: container.Limits{Memory: 1 << 30, NanoCPUs: 1e9, Pids: 512},
}

// example loads the shipped example dataset.
// exampleID is the example dataset the tests grade: the newest, whose
// level 2 instances carry their mask.
const exampleID = "example/v3"

func example(t *testing.T) *bench.Dataset {
	t.Helper()
	return exampleAt(t, exampleID)
}

// exampleAt is a dataset of data/ by its id.
func exampleAt(t *testing.T, exampleID string) *bench.Dataset {
	t.Helper()
	data, err := bench.Load(context.Background(), filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Dataset(exampleID)
	if ds == nil {
		t.Fatalf("no %s in data/", exampleID)
	}
	return ds
}

// envImage builds (or finds) the environment image of examples/textkit.
func envImage(t *testing.T) (*container.Engine, string) {
	t.Helper()
	eng, base := imagestest.Base(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ref, err := images.EnsureEnv(ctx, eng, images.EnvSpec{
		Name: "featbench/textkit", Base: base,
		Source:  images.Source{Dir: filepath.Join(root, "examples", "textkit")},
		Install: []string{"pip install --no-index --no-deps --no-build-isolation -e ."},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return eng, ref
}

// run evaluates predictions on instances of ds into a fresh folder.
func run(t *testing.T, eng *container.Engine, img string, ds *bench.Dataset, ids []string, gold bool, preds map[string]evaluate.Prediction, lim evaluate.Limits) (*evaluate.RunReport, map[string]*evaluate.Report, string) {
	t.Helper()
	dir := t.TempDir()
	repos := map[string]string{}
	for _, id := range ids {
		repos[ds.Instance(id).Repo] = img
	}
	rr, err := evaluate.Run(context.Background(), evaluate.Config{
		Meta:    evaluate.Meta{RunID: "test", Dataset: ds.Key(), Split: "full", Predictions: "test", Attempts: 1, Instances: ids},
		Dataset: ds, Gold: gold, Images: repos, Dir: dir, Workers: 2, Limits: lim, Engine: executor.Local(eng),
		Predictions: func(id string, _ int) (evaluate.Prediction, bool) {
			if gold {
				return evaluate.Prediction{Model: "gold", Patch: []byte(ds.Instance(id).Patch)}, true
			}
			p, ok := preds[id]
			return p, ok
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	reps := map[string]*evaluate.Report{}
	for _, id := range ids {
		if r, err := evaluate.ReadReport(filepath.Join(dir, id, "attempt-1")); err == nil {
			reps[id] = r
		}
	}
	return rr, reps, dir
}

func splitIDs(ds *bench.Dataset, split string) []string {
	var ids []string
	for _, in := range ds.SplitInstances(split) {
		ids = append(ids, in.InstanceID)
	}
	return ids
}

// readPredictions reads one of the example's prediction files.
func readPredictions(t *testing.T, name string) map[string]evaluate.Prediction {
	t.Helper()
	ps, err := predictions.Read(filepath.Join(root, "examples", "predictions", name))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]evaluate.Prediction{}
	for _, p := range ps {
		out[p.InstanceID] = evaluate.Prediction{Model: p.Model, Patch: []byte(p.Patch), TokensIn: p.TokensIn, TokensOut: p.TokensOut, Cost: p.Cost}
	}
	return out
}

// TestGoldAndEmpty: the gold patches resolve every instance, an empty
// prediction none, with at most the collection's ceiling of fail-to-pass
// tests passing (30%) and every pass-to-pass test passing. On the lite
// split, both levels; examples/evaluate.sh grades the full split.
func TestGoldAndEmpty(t *testing.T) {
	ds := example(t)
	eng, img := envImage(t)
	ids := splitIDs(ds, "lite")
	rr, reps, _ := run(t, eng, img, ds, ids, true, nil, testLimits)
	if rr.ResolvedInstances != len(ids) || rr.ErrorInstances != 0 {
		t.Fatalf("gold: %d of %d resolved, %d errors: %+v", rr.ResolvedInstances, len(ids), rr.ErrorInstances, rr)
	}
	for id, r := range reps {
		// File recall compares files with the gold patch's: level 1 only.
		if !r.Resolved || r.ApplyMethod != "git apply" || (r.Level == 1) != (r.FileRecall != nil) || (r.FileRecall != nil && *r.FileRecall != 1) {
			t.Errorf("gold %s: resolved %v, applied by %q, file recall %v", id, r.Resolved, r.ApplyMethod, r.FileRecall)
		}
	}
	empty := map[string]evaluate.Prediction{}
	for _, id := range ids {
		empty[id] = evaluate.Prediction{Model: "empty"}
	}
	rr, reps, _ = run(t, eng, img, ds, ids, false, empty, testLimits)
	if rr.ResolvedInstances != 0 || rr.EmptyPatchInstances != len(ids) {
		t.Fatalf("empty: %d resolved, %d empty patches, want 0 and %d", rr.ResolvedInstances, rr.EmptyPatchInstances, len(ids))
	}
	for id, r := range reps {
		switch {
		case r.Level == 2 && (r.PatchApplied || r.PassedRate != 0):
			// Level 2: no package to install, no test passes.
			t.Errorf("empty %s: applied %v, passed %v, want nothing applied and no test passing", id, r.PatchApplied, r.PassedRate)
		case r.Level == 1 && (r.FV || !r.RT || r.PassedRate > 0.3):
			t.Errorf("empty %s: FV %v RT %v passed %v, want at most 30%% of F2P passing and every P2P passing", id, r.FV, r.RT, r.PassedRate)
		}
	}
}

// TestExamplePredictions evaluates the example's hand-written predictions
// and checks the outcomes they were written to show, and that the results
// equal the shipped results.jsonl, which examples/evaluate.sh makes with
// cmd/eval. They answer example/v2's lite split.
func TestExamplePredictions(t *testing.T) {
	ds := exampleAt(t, "example/v2")
	eng, img := envImage(t)
	ids := splitIDs(ds, "lite") // the agents predicted for the lite split
	tiny := readPredictions(t, "tiny-agent.jsonl")
	_, reps, dir := run(t, eng, img, ds, ids, false, tiny, testLimits)
	// Half a feature: some fail-to-pass tests pass, not all.
	for _, id := range []string{"featbench__textkit.test_wrap.812f8b16.lv2", "featbench__textkit.test_template.765d383f.lv1"} {
		if r := reps[id]; r == nil || r.Resolved || r.PassedRate <= 0 || r.PassedRate >= 1 {
			t.Errorf("half a feature, %s: %+v, want a passed rate strictly between 0 and 1, unresolved", id, r)
		}
	}
	// A patch that does not apply.
	if r := reps["featbench__textkit.test_pipeline.1f1811e3.lv1"]; r == nil || r.PatchApplied || r.Resolved || len(r.FailureModes) != 1 || r.FailureModes[0] != "PatchApplyError" {
		t.Errorf("patch that does not apply: %+v, want not applied", r)
	}
	// No prediction: no report.
	if r := reps["featbench__textkit.test_template.765d383f.lv2"]; r != nil {
		t.Errorf("the instance without a prediction was evaluated: %+v", r)
	}
	checkShipped(t, dir, "lite", "20261123_tiny-agent")
	// The patch that does not apply was tried by every method.
	if r := reps["featbench__textkit.test_pipeline.1f1811e3.lv1"]; r != nil && r.PatchRefused != "" {
		t.Errorf("the example's patch that does not apply was refused before trying: %s", r.PatchRefused)
	}

	shell := readPredictions(t, "shell-loop.jsonl")
	_, reps, dir = run(t, eng, img, ds, ids, false, shell, testLimits)
	// A patch that breaks a pass-to-pass test: unresolved, the regression recorded.
	var broke []string
	for id, r := range reps {
		if r.PatchApplied && !r.RT {
			broke = append(broke, id)
			failed := false
			for tid, tr := range r.Tests {
				if tr.Kind == "P2P" && !tr.Passed {
					failed = true
					if tr.ExcType == "" {
						t.Errorf("%s: the broken P2P test %s has no failure mode", id, tid)
					}
				}
			}
			if r.Resolved || !failed {
				t.Errorf("%s: RT false but resolved %v / no failed P2P test", id, r.Resolved)
			}
		}
	}
	if len(broke) == 0 {
		t.Error("shell-loop breaks a pass-to-pass test of one instance; no report shows a regression")
	}
	checkShipped(t, dir, "lite", "20261123_shell-loop")
}

// checkShipped compares a run's results with the shipped submission's,
// field by field (duration aside, which changes from run to run).
func checkShipped(t *testing.T, dir, split, folder string) {
	t.Helper()
	got := resultsByID(t, filepath.Join(dir, evaluate.ResultsFile))
	want := resultsByID(t, filepath.Join(root, "data", "submissions", "example", "v2", split, folder, bench.ResultsFile))
	if len(got) != len(want) {
		t.Errorf("%s: the run has %d results, the shipped file %d", folder, len(got), len(want))
	}
	for id, w := range want {
		g := got[id]
		delete(g, "duration")
		delete(w, "duration")
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		if string(gj) != string(wj) {
			t.Errorf("%s %s:\n got %s\nwant %s", folder, id, gj, wj)
		}
	}
}

func resultsByID(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]any{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"f2p_passed", "f2p_failed", "p2p_passed", "p2p_failed"} {
			if l, ok := m[k].([]any); ok {
				sort.Slice(l, func(i, j int) bool { return l[i].(string) < l[j].(string) })
			}
		}
		out[m["instance_id"].(string)] = m
	}
	return out
}

// TestMalformedAndHostilePatches: a patch that is not a diff is not
// applied; one that reaches outside the repository is refused before git
// sees it.
func TestMalformedAndHostilePatches(t *testing.T) {
	ds := example(t)
	eng, img := envImage(t)
	id := "featbench__textkit.test_slug.25585a9f.lv1"
	for name, c := range map[string]struct {
		patch   string
		refused bool // refused before any apply command ran
	}{
		"not a diff": {"this is not a patch\n", true},
		// A change to a file the repository does not have: no method
		// applies it (with fuzz 5, patch(1) places hunks whose context
		// is three lines anywhere, so a file is what it cannot invent).
		"a file that is not there": {"diff --git a/textkit/nothere.py b/textkit/nothere.py\n--- a/textkit/nothere.py\n+++ b/textkit/nothere.py\n" +
			"@@ -1,3 +1,4 @@\n nothing like this\n is in\n+x = 1\n the file\n", false},
		"path traversal": {"diff --git a/../../etc/passwd b/../../etc/passwd\n--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-root\n+evil\n", true},
	} {
		t.Run(name, func(t *testing.T) {
			_, reps, _ := run(t, eng, img, ds, []string{id}, false, map[string]evaluate.Prediction{id: {Patch: []byte(c.patch)}}, testLimits)
			r := reps[id]
			if r == nil || r.PatchApplied || r.Resolved || (r.PatchRefused != "") != c.refused ||
				len(r.FailureModes) != 1 || r.FailureModes[0] != "PatchApplyError" {
				t.Errorf("%s: %+v, want not applied (refused before trying: %v)", name, r, c.refused)
			}
		})
	}
}

// TestTimeout: a prediction that makes a test sleep past its timeout is
// graded as timed out, by pytest-timeout per test, and by the run's own
// deadline when there is no per-test timeout.
func TestTimeout(t *testing.T) {
	ds := example(t)
	eng, img := envImage(t)
	id := "featbench__textkit.test_slug.25585a9f.lv1"
	in := ds.Instance(id)
	// The gold patch, with a sleep in the new function (one line for one:
	// the hunk's counts stay right).
	const line = `+    base = slugify(text, sep=sep, max_length=max_length) or "item"`
	if !strings.Contains(in.Patch, line) {
		t.Fatalf("the gold patch of %s changed: no line %q", id, line)
	}
	sleepy := strings.Replace(in.Patch, line, `+    import time; time.sleep(120); base = slugify(text, sep=sep, max_length=max_length) or "item"`, 1)
	for name, lim := range map[string]evaluate.Limits{
		"per test": {TestFile: 2 * time.Minute, Test: 2 * time.Second, Instance: 5 * time.Minute, Container: testLimits.Container},
		"per file": {TestFile: 5 * time.Second, Instance: 5 * time.Minute, Container: testLimits.Container},
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, reps, _ := run(t, eng, img, ds, []string{id}, false, map[string]evaluate.Prediction{id: {Patch: []byte(sleepy)}}, lim)
			r := reps[id]
			if r == nil || !r.PatchApplied {
				t.Fatalf("the sleepy patch: %+v", r)
			}
			timedOut := 0
			for _, tid := range in.FailToPass {
				if tr := r.Tests[tid]; tr.Status == "timeout" && tr.ExcType == "Timeout" {
					timedOut++
				}
			}
			if timedOut == 0 || r.Resolved {
				t.Errorf("no fail-to-pass test timed out: %+v", r.Tests)
			}
			if d := time.Since(start); d > 3*time.Minute {
				t.Errorf("the run took %s: the timeout did not stop the sleep", d)
			}
		})
	}
}

// TestSetUpFailureIsTheHarnesss: the set-up, the prediction's first apply
// method and the level 1 tests run as one command; a set-up step that
// fails (here the test patch, which does not reverse-apply) must still
// stop it and be the harness's error, not pass for a set-up that went
// well (sh ignores "set -e" inside a command left of "||").
func TestSetUpFailureIsTheHarnesss(t *testing.T) {
	ds := example(t)
	eng, img := envImage(t)
	id := "featbench__textkit.test_slug.25585a9f.lv1"
	in := ds.Instance(id)
	in.TestPatch = "diff --git a/tests/test_slug.py b/tests/test_slug.py\n--- a/tests/test_slug.py\n+++ b/tests/test_slug.py\n" +
		"@@ -1,1 +1,2 @@\n this line is not in the file\n+nor is this one\n"
	_, reps, _ := run(t, eng, img, ds, []string{id}, true, nil, testLimits)
	r := reps[id]
	if r == nil {
		t.Fatal("no report")
	}
	if r.Error == "" || !strings.Contains(r.Error, "reaching the base") || r.Resolved {
		t.Errorf("a set-up that failed: error %q, resolved %v; want the set-up's error", r.Error, r.Resolved)
	}
}
