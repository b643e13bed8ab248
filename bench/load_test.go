package bench_test

import (
	"context"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
)

// goodRoot is a small but complete data/ tree: alpha v1 (instances, two
// splits), alpha v2 (a second version), described v1.0 (described only,
// with reported repository figures), two per-instance submissions and one
// reported aggregate.
const goodRoot = "testdata/good"

// Paths inside the good tree, with forward slashes.
const (
	a1Manifest   = "datasets/alpha/v1/dataset.toml"
	a1Instances  = "datasets/alpha/v1/instances.jsonl"
	a2Manifest   = "datasets/alpha/v2/dataset.toml"
	descManifest = "datasets/described/v1.0/dataset.toml"
	tinyDir      = "submissions/alpha/v1/full/20260115_tiny-agent"
	tinyMeta     = tinyDir + "/metadata.toml"
	tinyResults  = tinyDir + "/results.jsonl"
	liteDir      = "submissions/alpha/v1/lite/20260116_tiny-agent"
	liteResults  = liteDir + "/results.jsonl"
	bigDir       = "submissions/described/v1.0/full/20260120_big-agent"
	bigMeta      = bigDir + "/metadata.toml"
)

func loadGood(t *testing.T) *bench.Data {
	t.Helper()
	data, err := bench.Load(context.Background(), goodRoot)
	if err != nil {
		t.Fatalf("Load(%s): %v", goodRoot, err)
	}
	if data == nil {
		t.Fatal("Load returned no data and no error")
	}
	return data
}

func TestLoadGood(t *testing.T) {
	data := loadGood(t)

	var keys []string
	for _, ds := range data.Datasets {
		keys = append(keys, ds.Key())
	}
	if got, want := strings.Join(keys, " "), "alpha/v1 alpha/v2 described/v1.0"; got != want {
		t.Errorf("datasets = %q, want %q (sorted by name, then release date)", got, want)
	}
	var ids []string
	for _, s := range data.Submissions {
		ids = append(ids, s.ID())
	}
	if got, want := strings.Join(ids, " "),
		"alpha/v1/full/20260115_tiny-agent alpha/v1/lite/20260116_tiny-agent described/v1.0/full/20260120_big-agent"; got != want {
		t.Errorf("submissions = %q, want %q", got, want)
	}
	if data.Dataset("nope/v1") != nil {
		t.Error(`Dataset("nope/v1") is not nil`)
	}

	a1, a2, desc := data.Dataset("alpha/v1"), data.Dataset("alpha/v2"), data.Dataset("described/v1.0")
	if a1 == nil || a2 == nil || desc == nil {
		t.Fatalf("Dataset lookup: alpha/v1=%v alpha/v2=%v described/v1.0=%v", a1, a2, desc)
	}

	t.Run("datasets", func(t *testing.T) {
		for _, c := range []struct {
			ds           *bench.Dataset
			display      string
			instances    int
			hasInstances bool
			release      string
		}{
			{a1, "Alpha v1", 3, true, "2026-01-01"},
			{a2, "Alpha v2", 1, true, "2026-02-01"},
			{desc, "Described v1.0", 0, false, "2026-01-10"},
		} {
			if got := c.ds.DisplayName(); got != c.display {
				t.Errorf("%s: DisplayName = %q, want %q", c.ds.Key(), got, c.display)
			}
			if got := len(c.ds.Instances); got != c.instances {
				t.Errorf("%s: %d instances, want %d", c.ds.Key(), got, c.instances)
			}
			if got := c.ds.HasInstances(); got != c.hasInstances {
				t.Errorf("%s: HasInstances = %v, want %v", c.ds.Key(), got, c.hasInstances)
			}
			if got := c.ds.ReleaseDate.Format("2006-01-02"); got != c.release {
				t.Errorf("%s: release date %s, want %s", c.ds.Key(), got, c.release)
			}
		}
	})

	t.Run("SplitSize", func(t *testing.T) {
		for _, c := range []struct {
			ds    *bench.Dataset
			split string
			want  int
		}{
			{a1, "full", 3},
			{a1, "lite", 2},
			{a1, "medium", 0},
			{a2, "full", 1},
			{desc, "full", 200},
			{desc, "lite", 30},
			{desc, "fast", 0},
		} {
			if got := c.ds.SplitSize(c.split); got != c.want {
				t.Errorf("%s SplitSize(%q) = %d, want %d", c.ds.Key(), c.split, got, c.want)
			}
			if exists := c.ds.Split(c.split) != nil; exists != (c.want > 0) {
				t.Errorf("%s Split(%q) exists = %v, want %v", c.ds.Key(), c.split, exists, c.want > 0)
			}
		}
	})

	t.Run("SplitInstances", func(t *testing.T) {
		for _, c := range []struct {
			ds    *bench.Dataset
			split string
			want  string
		}{
			{a1, "full", "alpha-1 alpha-2 alpha-3"},
			{a1, "lite", "alpha-2 alpha-1"}, // manifest order, not file order
			{a1, "medium", ""},
			{desc, "full", ""}, // described only
		} {
			var got []string
			for _, in := range c.ds.SplitInstances(c.split) {
				got = append(got, in.InstanceID)
			}
			if strings.Join(got, " ") != c.want {
				t.Errorf("%s SplitInstances(%q) = %q, want %q", c.ds.Key(), c.split, got, c.want)
			}
		}
	})

	t.Run("Instance", func(t *testing.T) {
		for _, c := range []struct {
			id        string
			line      int
			level     int
			f2p, p2p  string
			extraKeys string
		}{
			{"alpha-1", 1, 1, "tests/test_a.py::test_one tests/test_a.py::test_two", "tests/test_b.py::test_keep", "difficulty environment_setup_commit"},
			{"alpha-2", 2, 2, "tests/test_c.py::test_new", "", "version"},  // test lists given as JSON strings
			{"alpha-3", 4, 2, "tests/test_d.py::test_x", "", "hints_text"}, // after a blank line
		} {
			in := a1.Instance(c.id)
			if in == nil {
				t.Errorf("Instance(%q) = nil", c.id)
				continue
			}
			if in.InstanceID != c.id || in.Repo != "acme/widgets" || in.Level != c.level || in.Line != c.line {
				t.Errorf("Instance(%q) = id %q repo %q level %d line %d; want level %d line %d",
					c.id, in.InstanceID, in.Repo, in.Level, in.Line, c.level, c.line)
			}
			if got := strings.Join(in.FailToPass, " "); got != c.f2p {
				t.Errorf("%s FAIL_TO_PASS = %q, want %q", c.id, got, c.f2p)
			}
			if got := strings.Join(in.PassToPass, " "); got != c.p2p {
				t.Errorf("%s PASS_TO_PASS = %q, want %q", c.id, got, c.p2p)
			}
			if got := strings.Join(slices.Sorted(maps.Keys(in.Extra)), " "); got != c.extraKeys {
				t.Errorf("%s Extra keys = %q, want %q", c.id, got, c.extraKeys)
			}
		}
		if in := a1.Instance("alpha-1"); in != nil {
			if got := string(in.Extra["difficulty"]); got != `{"bucket": "easy", "score": 0.25}` {
				t.Errorf("alpha-1 Extra[difficulty] = %s, want the raw JSON as written", got)
			}
			if in.Lines == nil || *in.Lines != 12 || in.BaseCommit != "0123abc" {
				t.Errorf("alpha-1 lines=%v base_commit=%q", in.Lines, in.BaseCommit)
			}
		}
		if in := a1.Instance("alpha-3"); in != nil {
			ct, err := in.Created()
			if err != nil || !ct.Equal(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)) {
				t.Errorf("alpha-3 Created() = %v, %v", ct, err)
			}
		}
		for _, id := range []string{"alpha-v2-1", "", "ALPHA-1"} {
			if a1.Instance(id) != nil {
				t.Errorf("alpha/v1 Instance(%q) is not nil", id)
			}
		}
		if a2.Instance("alpha-v2-1") == nil {
			t.Error(`alpha/v2 Instance("alpha-v2-1") = nil`)
		}
		if desc.Instance("alpha-1") != nil {
			t.Error("described dataset returns an instance")
		}
	})

	t.Run("Repositories", func(t *testing.T) {
		r := desc.Repository("big/repo")
		if r == nil || r.Reported == nil {
			t.Fatalf("described Repository(big/repo) = %+v, want reported stats", r)
		}
		if r.License != "Apache-2.0" || r.Reported.Source != "Paper, Table 12" {
			t.Errorf("big/repo license %q source %q", r.License, r.Reported.Source)
		}
		checkFigures(t, "big/repo", []figCase{
			{"lines", r.Reported.Lines, "765.40", 765.4},
			{"files", r.Reported.Files, "24", 24},
			{"functions", r.Reported.Functions, "35.7", 35.7}, // a TOML float loses its trailing zero
			{"test_points", r.Reported.TestPoints, "2.6M", 2.6e6},
		})
		if s := desc.Repository("small/repo"); s == nil || s.Reported != nil {
			t.Errorf("small/repo = %+v, want an entry without reported stats", s)
		}
		if desc.Repository("nope/repo") != nil {
			t.Error("Repository(nope/repo) is not nil")
		}
		if r := a1.Repository("acme/widgets"); r == nil || r.URL != "https://example.org/acme/widgets" {
			t.Errorf("alpha/v1 Repository(acme/widgets) = %+v", r)
		}
	})

	t.Run("per-instance submission", func(t *testing.T) {
		subs := data.SubmissionsFor(a1, "full")
		if len(subs) != 1 {
			t.Fatalf("SubmissionsFor(alpha/v1, full) = %d submissions, want 1", len(subs))
		}
		s := subs[0]
		if s.Dataset != a1 || s.Split != "full" || s.Folder != "20260115_tiny-agent" || s.Slug != "tiny-agent" {
			t.Errorf("submission dataset %v split %q folder %q slug %q", s.Dataset.Key(), s.Split, s.Folder, s.Slug)
		}
		if !s.PerInstance() || len(s.Results) != 2 {
			t.Errorf("PerInstance = %v with %d results, want true with 2", s.PerInstance(), len(s.Results))
		}
		if s.Name != "Tiny Agent + Model X" || s.Model != "Model X" || s.Scaffold != "Tiny Agent" ||
			!s.OpenWeights || s.Attempts != 1 || s.Date.Format("2006-01-02") != "2026-01-15" {
			t.Errorf("metadata = %+v (attempts defaults to 1)", s.Metadata)
		}
		for _, c := range []struct {
			id       string
			present  bool
			resolved bool
			line     int
		}{
			{"alpha-1", true, true, 1},
			{"alpha-2", true, false, 2},
			{"alpha-3", false, false, 0}, // no prediction
			{"alpha-v2-1", false, false, 0},
		} {
			r := s.ResultFor(c.id)
			// By position, for an instance of the submission's dataset, the
			// same result.
			if in := s.Dataset.Instance(c.id); in != nil && s.ResultOf(in) != r {
				t.Errorf("ResultOf(%q) = %v, ResultFor gives %v", c.id, s.ResultOf(in), r)
			}
			if (r != nil) != c.present {
				t.Errorf("ResultFor(%q) = %v, want present=%v", c.id, r, c.present)
				continue
			}
			if r != nil && (r.InstanceID != c.id || r.Resolved != c.resolved || r.Line != c.line) {
				t.Errorf("ResultFor(%q) = id %q resolved %v line %d, want resolved %v line %d",
					c.id, r.InstanceID, r.Resolved, r.Line, c.resolved, c.line)
			}
		}
		if r := s.ResultFor("alpha-1"); r != nil {
			if r.TokensIn == nil || *r.TokensIn != 1000 || r.TokensOut == nil || *r.TokensOut != 200 || r.Cost == nil || *r.Cost != 0.5 {
				t.Errorf("alpha-1 tokens/cost = %v %v %v", r.TokensIn, r.TokensOut, r.Cost)
			}
		}
		if r := s.ResultFor("alpha-2"); r != nil && (r.TokensIn != nil || r.Cost != nil) {
			t.Errorf("alpha-2 reports no tokens or cost, got %v %v", r.TokensIn, r.Cost)
		}
		lite := data.SubmissionsFor(a1, "lite")
		if len(lite) != 1 || lite[0].Attempts != 3 || lite[0].ResultFor("alpha-1") == nil {
			t.Errorf("lite submissions = %v", lite)
		}
	})

	t.Run("reported submission", func(t *testing.T) {
		subs := data.SubmissionsFor(desc, "full")
		if len(subs) != 1 {
			t.Fatalf("SubmissionsFor(described, full) = %d, want 1", len(subs))
		}
		if n := len(data.SubmissionsFor(desc, "lite")); n != 0 {
			t.Errorf("SubmissionsFor(described, lite) = %d, want 0", n)
		}
		s := subs[0]
		if s.PerInstance() || s.Results != nil || s.ResultFor("anything") != nil {
			t.Errorf("reported submission: PerInstance=%v results=%v", s.PerInstance(), s.Results)
		}
		r := s.Reported
		if r.Source != "Paper, Table 3" {
			t.Errorf("reported source %q", r.Source)
		}
		if got := strings.Join(s.Organisations, ","); got != "Bigco,Uni" {
			t.Errorf("organisations %q", got)
		}
		checkFigures(t, "reported", []figCase{
			{"resolved", r.Resolved, "26.30", 26.3},
			{"passed", r.Passed, "43.49", 43.49},
			{"tokens_in", r.TokensIn, "2.6M", 2.6e6},
			{"tokens_out", r.TokensOut, "16k", 16e3},
			{"cost", r.Cost, "1.5", 1.5},
		})
		if len(r.Levels) != 2 || r.Levels["L1"] == nil || r.Levels["L2"] == nil {
			t.Fatalf("levels = %v, want L1 and L2", r.Levels)
		}
		checkFigures(t, "levels", []figCase{
			{"L1.resolved", r.Levels["L1"].Resolved, "30.1", 30.1},
			{"L1.passed", r.Levels["L1"].Passed, "50", 50},
			{"L2.resolved", r.Levels["L2"].Resolved, "5", 5},
		})
		if r.Levels["L2"].Passed.Set() {
			t.Error("L2 passed is not given but Set() is true")
		}
		rb := r.Repos["big/repo"]
		if len(r.Repos) != 1 || rb == nil {
			t.Fatalf("repos = %v, want big/repo", r.Repos)
		}
		if rb.Source != "Paper, Table 12" {
			t.Errorf("repos source %q", rb.Source)
		}
		checkFigures(t, "repos", []figCase{
			{"resolved", rb.Resolved, "12.5", 12.5},
			{"tokens_in", rb.TokensIn, "59k", 59e3},
		})
	})
}

type figCase struct {
	name  string
	f     bench.Figure
	text  string
	value float64
}

func checkFigures(t *testing.T, where string, cases []figCase) {
	t.Helper()
	for _, c := range cases {
		if c.f.Text != c.text || !approx(c.f.Value, c.value) {
			t.Errorf("%s %s = {%q %v}, want {%q %v}", where, c.name, c.f.Text, c.f.Value, c.text, c.value)
		}
	}
}

func approx(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-9*(1+abs(b))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestLoadMissingRoot(t *testing.T) {
	data, err := bench.Load(context.Background(), filepath.Join(t.TempDir(), "nope"))
	if err == nil || data != nil {
		t.Fatalf("Load(missing) = %v, %v; want an error and no data", data, err)
	}
	var ps bench.Problems
	if errors.As(err, &ps) {
		t.Errorf("a missing data folder is not a data problem: %v", err)
	}
}

func TestLoadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	data, err := bench.Load(ctx, goodRoot)
	if !errors.Is(err, context.Canceled) || data != nil {
		t.Fatalf("Load(cancelled) = %v, %v; want context.Canceled and no data", data, err)
	}
}

// TestLoadEmptyTree: an empty data folder is valid and holds nothing.
func TestLoadEmptyTree(t *testing.T) {
	data, err := bench.Load(context.Background(), t.TempDir())
	if err != nil || data == nil || len(data.Datasets) != 0 || len(data.Submissions) != 0 {
		t.Fatalf("Load(empty) = %+v, %v", data, err)
	}
}
