package infer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/atomicfile"
	"github.com/featbench/featbench/internal/meter"
	"github.com/featbench/featbench/internal/predictions"
)

// TestWritePredictions: predictions.jsonl holds each recorded instance in
// the run's order, readable by eval run; a harness failure is no
// prediction; figures with a response that reported no usage are not
// measured; a second run of the id with another agent is refused.
func TestWritePredictions(t *testing.T) {
	dir := t.TempDir()
	cost := 0.5
	recs := map[string]*Record{
		"a__b-1": {InstanceID: "a__b-1", Agent: "x", Model: "m", Turns: 2, TokensIn: 10, TokensOut: 3, Cost: &cost, Seconds: 1.23456},
		"a__b-2": {InstanceID: "a__b-2", Agent: "x", Model: "m", FailureMode: HarnessError},
		"a__b-3": {InstanceID: "a__b-3", Agent: "x", Model: "m", FailureMode: meter.TurnLimit, Turns: 1, TokensIn: 5, TokensOut: 1, Meter: meter.Totals{NoUsage: 1}},
	}
	for id, r := range recs {
		d := filepath.Join(dir, Folder, id)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := atomicfile.WriteJSON(filepath.Join(d, RecordFile), r); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, PatchFile), []byte(""), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meta := Meta{RunID: "r", Dataset: "d/v1", Split: "s", Agent: "x", Model: "m", Instances: []string{"a__b-3", "a__b-1", "a__b-2", "a__b-4"}}
	if _, err := writeMeta(dir, meta); err != nil {
		t.Fatal(err)
	}
	got, err := WritePredictions(dir, meta)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d predictions; want 2", len(got))
	}
	ps, err := predictions.Read(filepath.Join(dir, PredictionsFile))
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].InstanceID != "a__b-3" || ps[0].Measured || ps[0].TokensIn != nil || ps[0].FailureMode != meter.TurnLimit {
		t.Errorf("a count with a response without usage: %+v", ps[0])
	}
	if p := ps[1]; p.InstanceID != "a__b-1" || !p.Measured || *p.TokensIn != 10 || *p.TokensOut != 3 || *p.Cost != 0.5 || *p.Turns != 2 ||
		*p.Duration != 1.235 || string(p.Trajectory) != `"infer/a__b-1/trajectory.jsonl"` || p.Model != "m" {
		t.Errorf("a measured prediction: %+v", p)
	}
	other := meta
	other.Agent = "y"
	if _, err := writeMeta(dir, other); err == nil || !strings.Contains(err.Error(), "choose another --run-id") {
		t.Errorf("another agent under the same id: %v", err)
	}
	// Instances of an earlier run of the id stay.
	fewer := meta
	fewer.Instances = []string{"a__b-1"}
	if m, err := writeMeta(dir, fewer); err != nil || len(m.Instances) != 4 {
		t.Errorf("instances after a run of one: %v, %v", m.Instances, err)
	}
}

// TestJunk: what running code leaves is no one's work.
func TestJunk(t *testing.T) {
	for p, want := range map[string]bool{
		"pkg/__pycache__/a.cpython-311.pyc": true, ".pytest_cache/v/x": true, "x.egg-info/PKG-INFO": true,
		"a.pyc": true, "pkg/mod.py": false, "node_modules/x/index.js": true, "README.md": false,
	} {
		if junk(p) != want {
			t.Errorf("junk(%q) = %v", p, !want)
		}
	}
}

// TestChanges: the agent's changes, as git's numstat lists them, less
// the test files, binaries and caches.
func TestChanges(t *testing.T) {
	in := &bench.Instance{InstanceID: "a__b-1", TestPatch: "diff --git a/spec/check.py b/spec/check.py\n--- a/spec/check.py\n+++ b/spec/check.py\n@@ -1 +1 @@\n-a\n+b\n"}
	numstat := "3\t1\tpkg/mod.py\x00" + "2\t0\ttests/test_new.py\x00" + "-\t-\tlogo.png\x00" + "1\t1\tspec/check.py\x00" +
		"4\t0\tpkg/__pycache__/mod.pyc\x00" + "1\t0\tname with\ttab.py\x00"
	keep, dropped := changes([]byte(numstat), in)
	if strings.Join(keep, "|") != "pkg/mod.py|name with\ttab.py" {
		t.Errorf("kept %q", keep)
	}
	if strings.Join(dropped, "|") != "tests/test_new.py|logo.png|spec/check.py|pkg/__pycache__/mod.pyc" {
		t.Errorf("dropped %q", dropped)
	}
}

// TestDockerfile: the layer runs install scripts only with the
// lockfile's own npm, and puts the packages' programs on PATH.
func TestDockerfile(t *testing.T) {
	df := dockerfile("featbench/env-x:1", true)
	for _, want := range []string{"FROM featbench/env-x:1\n", "COPY agent/ /opt/featbench/agent/", "useradd -u 1000", "npm rebuild --offline", "ENV PATH=/opt/featbench/agent/node_modules/.bin:"} {
		if !strings.Contains(df, want) {
			t.Errorf("the Dockerfile lacks %q:\n%s", want, df)
		}
	}
	if strings.Contains(dockerfile("e", false), "npm") {
		t.Error("a layer without packages runs npm")
	}
}
