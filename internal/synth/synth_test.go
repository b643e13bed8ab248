package synth_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/synth"
	"github.com/featbench/featbench/site"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestGenerateLoads checks that the generated tree passes the loader's full
// validation in both test id shapes, so benchmarks measure a build of
// valid data.
func TestGenerateLoads(t *testing.T) {
	for _, shape := range []struct {
		ids      string
		f2pRange [2]int // fail-to-pass tests per instance
		p2pRange [2]int
	}{
		{synth.TestFiles, [2]int{1, 2}, [2]int{5, 5}},
		{synth.TestFunctions, [2]int{3, 15}, [2]int{5, 30}},
	} {
		t.Run(shape.ids, func(t *testing.T) {
			testGenerateLoads(t, shape.ids, shape.f2pRange, shape.p2pRange)
		})
	}
	if err := synth.Generate(t.TempDir(), synth.Config{RepoRoot: repoRoot(t), TestIDs: "lines"}); err == nil {
		t.Error("an unknown TestIDs shape was accepted")
	}
}

func testGenerateLoads(t *testing.T, ids string, f2pRange, p2pRange [2]int) {
	dir := t.TempDir()
	const nInst, nSubs = 50, 3
	if err := synth.Generate(dir, synth.Config{RepoRoot: repoRoot(t), Instances: nInst, Submissions: nSubs, LiteSize: 20, TestIDs: ids}); err != nil {
		t.Fatal(err)
	}
	data, err := bench.Load(context.Background(), filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	if len(data.Datasets) != 1 {
		t.Fatalf("got %d datasets, want 1", len(data.Datasets))
	}
	ds := data.Datasets[0]
	if ds.Key() != "synthetic/v1" {
		t.Errorf("dataset key %q, want synthetic/v1", ds.Key())
	}
	if len(ds.Instances) != nInst {
		t.Errorf("got %d instances, want %d", len(ds.Instances), nInst)
	}
	if n := ds.SplitSize("full"); n != nInst {
		t.Errorf("full split has %d instances, want %d", n, nInst)
	}
	if n := ds.SplitSize("lite"); n != 20 {
		t.Errorf("lite split has %d instances, want 20", n)
	}
	if len(data.Submissions) != nSubs {
		t.Fatalf("got %d submissions, want %d", len(data.Submissions), nSubs)
	}
	levels := map[int]int{}
	for _, in := range ds.Instances {
		levels[in.Level]++
		if n := len(in.FailToPass); n < f2pRange[0] || n > f2pRange[1] {
			t.Errorf("%s: %d FAIL_TO_PASS tests, want %d-%d", in.InstanceID, n, f2pRange[0], f2pRange[1])
		}
		if n := len(in.PassToPass); n < p2pRange[0] || n > p2pRange[1] {
			t.Errorf("%s: %d PASS_TO_PASS tests, want %d-%d", in.InstanceID, n, p2pRange[0], p2pRange[1])
		}
	}
	if levels[1] == 0 || levels[2] == 0 {
		t.Errorf("levels %v: want both 1 and 2", levels)
	}
	for _, s := range data.Submissions {
		if s.Split != "full" || !s.PerInstance() {
			t.Errorf("%s: split %q, per-instance %v", s.ID(), s.Split, s.PerInstance())
		}
		if n := len(s.Results); n < nInst*8/10 || n > nInst {
			t.Errorf("%s: %d results for %d instances, want about 97%%", s.ID(), n, nInst)
		}
	}

	// The project root is complete: the site's own option loader accepts it.
	opts, err := site.LoadOptions(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Config.DefaultDataset != "synthetic/v1" || opts.Config.Output != "public" {
		t.Errorf("config %+v", opts.Config)
	}
}

// TestGenerateDeterministic checks that one seed always gives the same
// bytes, so benchmark runs compare like with like.
func TestGenerateDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	cfg := synth.Config{RepoRoot: repoRoot(t), Instances: 20, Submissions: 2}
	for _, d := range []string{a, b} {
		if err := synth.Generate(d, cfg); err != nil {
			t.Fatal(err)
		}
	}
	for _, rel := range []string{"data/datasets/synthetic/v1/instances.jsonl", "data/datasets/synthetic/v1/dataset.toml"} {
		x, err := os.ReadFile(filepath.Join(a, rel))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same seed", rel)
		}
	}
	ra, _ := filepath.Glob(filepath.Join(a, "data/submissions/*/*/*/*/results.jsonl"))
	rb, _ := filepath.Glob(filepath.Join(b, "data/submissions/*/*/*/*/results.jsonl"))
	if len(ra) != 2 || len(rb) != 2 {
		t.Fatalf("results files: %v, %v", ra, rb)
	}
	for i := range ra {
		x, _ := os.ReadFile(ra[i])
		y, _ := os.ReadFile(rb[i])
		if filepath.Base(filepath.Dir(ra[i])) != filepath.Base(filepath.Dir(rb[i])) || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same seed", ra[i])
		}
	}
}
