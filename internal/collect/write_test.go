package collect

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
)

// shippedInstance is the first instance of the shipped example/v3: a
// verified instance as collection makes them, for tests of the last stage.
func shippedInstance(t *testing.T) *bench.Instance {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "data", "datasets", "example", "v3", bench.InstancesFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	if !sc.Scan() {
		t.Fatalf("no instance: %v", sc.Err())
	}
	var in bench.Instance
	if err := in.UnmarshalJSON(sc.Bytes()); err != nil {
		t.Fatal(err)
	}
	return &in
}

// writeFixture is a project folder and what the stages before the dataset
// stage gave: one repository with one verified instance.
func writeFixture(t *testing.T) (Options, []*repoResult, *Report) {
	t.Helper()
	root := t.TempDir()
	cfg := config.Default()
	cfg.Collect.ReleaseDate = "2026-11-01"
	rc := config.Repo{}
	rc.SetDefaults()
	rc.Repository, rc.Source, rc.ImportName = "featbench/textkit", "examples/textkit", "textkit"
	rc.Install = []string{"pip install -e ."}
	rc.MinLines, rc.MinF2PPoints = 1, 1
	res := &repoResult{rc: rc, report: &RepoReport{Repository: rc.Repository, TestFiles: 1, Passing: 1},
		instances: []*candidateInstance{{in: shippedInstance(t), file: "tests/test_case.py"}}}
	rep := &Report{Collection: bench.Collection{Dataset: "mini/v1", Repos: []*RepoReport{res.report}}}
	return Options{Root: root, Config: cfg, Dataset: "mini/v1"}, []*repoResult{res}, rep
}

// TestWriteDatasetChecksFirst: a dataset the loader would refuse (here a
// drop reason over two lines, as pytest's output made one) is refused
// before anything is written: no folder under data/, no staging folder
// left, no lock. The error names the file and the field.
func TestWriteDatasetChecksFirst(t *testing.T) {
	o, results, rep := writeFixture(t)
	results[0].report.Drops = []Drop{{File: "tests/test_x.py", Stage: StageTrace, Reason: "the traced run failed: exit 1:\nE   ImportError: x"}}
	data := filepath.Join(o.Root, "data")
	out := filepath.Join(data, "datasets", "mini", "v1")
	err := writeDataset(context.Background(), o, out, "mini", "v1", results, rep)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(out, bench.CollectionFile)) || !strings.Contains(err.Error(), "drops[0].reason") {
		t.Errorf("error %v; want one naming %s and the reason's field", err, filepath.Join(out, bench.CollectionFile))
	}
	left, _ := filepath.Glob(filepath.Join(o.Root, "*", "*"))
	hidden, _ := filepath.Glob(filepath.Join(o.Root, ".*"))
	if left = append(left, hidden...); len(left) > 0 {
		t.Errorf("a refused dataset left %v", left)
	}
}

// TestWriteDataset: a good dataset is written whole, locked, and loads;
// nothing else is left beside it.
func TestWriteDataset(t *testing.T) {
	o, results, rep := writeFixture(t)
	data := filepath.Join(o.Root, "data")
	out := filepath.Join(data, "datasets", "mini", "v1")
	if err := writeDataset(context.Background(), o, out, "mini", "v1", results, rep); err != nil {
		t.Fatal(err)
	}
	d, err := bench.LoadDatasets(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Datasets) != 1 || len(d.Datasets[0].Instances) != 1 || len(d.Unlocked) != 0 {
		t.Errorf("loaded %d datasets, unlocked %v", len(d.Datasets), d.Unlocked)
	}
	entries, _ := os.ReadDir(o.Root)
	if len(entries) != 1 || entries[0].Name() != "data" {
		t.Errorf("the project folder holds %v", entries)
	}

	// A version the lock lists is never written again, even when its
	// folder is gone: the lock refuses it before anything is written.
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	lock, _ := os.ReadFile(filepath.Join(data, bench.LockFile))
	o, results, rep = writeFixture(t)
	o.Root = filepath.Dir(data)
	if err := writeDataset(context.Background(), o, out, "mini", "v1", results, rep); err == nil || !strings.Contains(err.Error(), "locks mini/v1 already") {
		t.Errorf("writing a locked version again: %v", err)
	}
	if _, err := os.Lstat(out); !os.IsNotExist(err) {
		t.Errorf("the refused version was moved into place (%v)", err)
	}
	if again, _ := os.ReadFile(filepath.Join(data, bench.LockFile)); string(again) != string(lock) {
		t.Errorf("the refused version changed the lock:\n%s", again)
	}
}

// TestWriteDatasetStatements: [collect] statements goes into the
// manifest, which says so to the site; left out, the manifest says
// nothing and the statements are public.
func TestWriteDatasetStatements(t *testing.T) {
	for _, mode := range []string{"", bench.StatementsPrivate, bench.StatementsPublic} {
		o, results, rep := writeFixture(t)
		o.Config.Collect.Statements = mode
		data := filepath.Join(o.Root, "data")
		out := filepath.Join(data, "datasets", "mini", "v1")
		if err := writeDataset(context.Background(), o, out, "mini", "v1", results, rep); err != nil {
			t.Fatal(err)
		}
		d, err := bench.LoadDatasets(context.Background(), data)
		if err != nil {
			t.Fatal(err)
		}
		ds := d.Datasets[0]
		if ds.Statements != mode || ds.PublishesStatements() != (mode != bench.StatementsPrivate) {
			t.Errorf("[collect] statements = %q: the manifest says %q, publishes statements: %v", mode, ds.Statements, ds.PublishesStatements())
		}
	}
}

// TestPreflight: what writing the dataset needs of the configuration is
// checked before any stage runs (no engine is needed to see these fail),
// not after the collection's work.
func TestPreflight(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(o *Options)
		want string
	}{
		{"no release date", func(o *Options) { o.Config.Collect.ReleaseDate = "" }, "no release date"},
		{"a source outside the project", func(o *Options) { o.Config.Collect.Repos[0].Source = "/srv/minilib" }, `field "repositories[0].source.path"`},
		{"a title over lines", func(o *Options) { o.Config.Collect.Title = "Mini\nbench" }, `field "title"`},
		{"a version the lock lists", func(o *Options) {
			lock := "[[locked]]\ndataset = \"mini/v1\"\n[locked.files]\n\"dataset.toml\" = \"" + strings.Repeat("0", 64) + "\"\n"
			if err := os.MkdirAll(filepath.Join(o.Root, "data"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(o.Root, "data", bench.LockFile), []byte(lock), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "locks mini/v1 already"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, cfg := project(t, "")
			o := Options{Root: root, Config: cfg, Dataset: "mini/v1"}
			c.edit(&o)
			rep, err := Run(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), c.want) || rep != nil {
				t.Errorf("error %v, report %v; want %q before any stage", err, rep, c.want)
			}
			if _, err := os.Stat(filepath.Join(root, ".cache")); !os.IsNotExist(err) {
				t.Errorf("a stage ran (%v)", err)
			}
		})
	}
}
