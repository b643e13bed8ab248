package bench_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/featbench/featbench/bench"
)

// The fuzz tests feed arbitrary bytes as one line of a results.jsonl or
// instances.jsonl file into a small valid tree. Load must not panic, must
// fail only with Problems, and whatever it accepts must keep every limit.
//
//	go test ./bench -run '^$' -fuzz FuzzLoadResults -fuzztime 60s
//	go test ./bench -run '^$' -fuzz FuzzLoadInstances -fuzztime 60s

func FuzzLoadResults(f *testing.F) {
	root := fuzzTree(f)
	base := readText(f, abspath(goodRoot, tinyResults))
	for _, seed := range []string{
		`{"instance_id": "alpha-3", "resolved": false, "patch_applied": true, "f2p_failed": ["tests/test_d.py::test_x"], "files_changed": 1, "tokens_in": 5, "cost": 0.25, "failure_modes": ["E"]}`,
		`{"instance_id": "alpha-3", "resolved": true, "patch_applied": true, "f2p_passed": ["tests/test_d.py::test_x"], "p2p_passed": [], "dataset": "alpha/v1"}`,
		`{"instance_id": "alpha-3", "resolved": false, "RESOLVED": true}`,
		`{"instance_id": "alpha-3", "cost": 1e400}`,
		`{"instance_id": "alpha-3", "tokens_in": -1}`,
		"null",
		"\xef\xbb\xbf{}",
		`{"instance_id": "alpha-3", "failure_modes": ["a\u0000b"]}`,
		`{"instance_id": "alpha-3", "resolved": false, "patch_applied": true, "f2p_failed": ["tests/test_d.py::test_x"], "flags": ["touches-tests", "reads-git"]}`,
		`{"instance_id": "alpha-3", "flags": ["gold-identical", "gold-identical"]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		writeText(t, abspath(root, tinyResults), base+string(line)+"\n")
		data := fuzzLoad(t, root)
		if data == nil {
			return
		}
		for _, s := range data.Submissions {
			for i := range s.Results {
				checkAcceptedResult(t, s, &s.Results[i])
			}
		}
	})
}

func FuzzLoadInstances(f *testing.F) {
	root := fuzzTree(f)
	lines := strings.Split(readText(f, abspath(goodRoot, a1Instances)), "\n")
	const at = 3 // alpha-3, on line 4
	for _, seed := range []string{
		lines[at],
		`{"instance_id": "alpha-3", "repo": "acme/widgets", "level": 2, "problem_statement": "x", "FAIL_TO_PASS": "[\"tests/test_d.py::test_x\"]", "PASS_TO_PASS": "[]", "extra": {"k": [1, "\u00e9"]}}`,
		`{"instance_id": "alpha-3", "repo": "acme/widgets", "level": 2, "problem_statement": "x", "FAIL_TO_PASS": ["tests/test_d.py::test_x"], "lines": 3, "top_objects": ["a.b"], "repo_settings": {"python": "3.12"}}`,
		`{"instance_id": "alpha-3", "instance_id": "alpha-3"}`,
		`{"instance_id": "alpha-3", "Level": 1}`,
		"[]",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		ls := append([]string(nil), lines...)
		ls[at] = string(line)
		writeText(t, abspath(root, a1Instances), strings.Join(ls, "\n"))
		data := fuzzLoad(t, root)
		if data == nil {
			return
		}
		for _, ds := range data.Datasets {
			for _, in := range ds.Instances {
				checkAcceptedInstance(t, ds, in)
			}
		}
		for _, s := range data.Submissions {
			for i := range s.Results {
				checkAcceptedResult(t, s, &s.Results[i])
			}
		}
	})
}

// fuzzTree copies the good tree once per fuzzing process.
func fuzzTree(f *testing.F) string {
	root := filepath.Join(f.TempDir(), "data")
	if err := os.CopyFS(root, os.DirFS(goodRoot)); err != nil {
		f.Fatal(err)
	}
	return root
}

// fuzzLoad loads root: the data when it is accepted, nil when Load lists
// problems, and a test failure for anything else.
func fuzzLoad(t *testing.T, root string) *bench.Data {
	data, err := bench.Load(context.Background(), root)
	if err == nil {
		return data
	}
	var ps bench.Problems
	if !errors.As(err, &ps) || len(ps) == 0 || data != nil {
		t.Fatalf("Load = %v, %v; want data or Problems", data, err)
	}
	for _, p := range ps {
		if !strings.HasPrefix(p.File, root) {
			t.Errorf("problem names a file outside data/: %v", p)
		}
		// Values are quoted cut short: a message stays readable.
		if len(p.Msg) > 4000 {
			t.Errorf("problem message of %d bytes: %.200s", len(p.Msg), p.Msg)
		}
	}
	return nil
}

func checkAcceptedResult(t *testing.T, s *bench.Submission, r *bench.Result) {
	t.Helper()
	in := s.Dataset.Instance(r.InstanceID)
	if in == nil {
		t.Fatalf("accepted a result for unknown instance %q", r.InstanceID)
	}
	member := false
	for _, m := range s.Dataset.SplitInstances(s.Split) {
		member = member || m == in
	}
	if !member {
		t.Errorf("accepted a result for %q, not in split %s", r.InstanceID, s.Split)
	}
	if r.Dataset != "" && r.Dataset != s.Dataset.Key() {
		t.Errorf("accepted dataset %q", r.Dataset)
	}
	subset := func(field string, ids, of []string) {
		for _, id := range ids {
			found := false
			for _, o := range of {
				found = found || o == id
			}
			if !found {
				t.Errorf("accepted %s test %q not in the instance", field, id)
			}
		}
	}
	subset("f2p_passed", r.F2PPassed, in.FailToPass)
	subset("f2p_failed", r.F2PFailed, in.FailToPass)
	subset("p2p_passed", r.P2PPassed, in.PassToPass)
	subset("p2p_failed", r.P2PFailed, in.PassToPass)
	allPassed := r.PatchApplied && len(r.F2PFailed) == 0 && len(r.P2PFailed) == 0 &&
		len(r.F2PPassed) == len(in.FailToPass) && len(r.P2PPassed) == len(in.PassToPass)
	if r.Resolved != allPassed {
		t.Errorf("accepted resolved = %v with tests that say %v", r.Resolved, allPassed)
	}
	if r.FilesChanged < 0 {
		t.Errorf("accepted files_changed %d", r.FilesChanged)
	}
	for _, p := range []*int64{r.TokensIn, r.TokensOut} {
		if p != nil && (*p < 0 || *p > 1e12) {
			t.Errorf("accepted tokens %d", *p)
		}
	}
	if r.Cost != nil && (math.IsNaN(*r.Cost) || *r.Cost < 0 || *r.Cost > 1e6) {
		t.Errorf("accepted cost %v", *r.Cost)
	}
	if len(r.FailureModes) > 50 {
		t.Errorf("accepted %d failure modes", len(r.FailureModes))
	}
	for _, fm := range r.FailureModes {
		checkLine(t, "failure mode", fm, 100)
	}
	prev := -1
	for _, f := range r.Flags {
		rank := slices.IndexFunc(bench.IntegrityFlags(), func(k bench.FlagInfo) bool { return k.Name == f })
		if rank <= prev {
			t.Errorf("accepted flags %q: unknown, repeated or out of order", r.Flags)
		}
		prev = rank
	}
}

func checkAcceptedInstance(t *testing.T, ds *bench.Dataset, in *bench.Instance) {
	t.Helper()
	if err := bench.CheckName(in.InstanceID); err != nil {
		t.Errorf("accepted instance id %q: %v", in.InstanceID, err)
	}
	if ds.Repository(in.Repo) == nil {
		t.Errorf("accepted repo %q", in.Repo)
	}
	if in.Level != 1 && in.Level != 2 {
		t.Errorf("accepted level %d", in.Level)
	}
	for _, f := range []struct {
		name string
		n    int
		max  int
	}{
		{"problem_statement", len(in.ProblemStatement), 1 << 20},
		{"patch", len(in.Patch), 8 << 20},
		{"test_patch", len(in.TestPatch), 8 << 20},
		{"repo_settings", len(in.RepoSettings), 64 << 10},
		{"base_commit", len(in.BaseCommit), 100},
		{"image_name", len(in.ImageName), 300},
		{"created_at", len(in.CreatedAt), 64},
		{"FAIL_TO_PASS", len(in.FailToPass), 50_000},
		{"PASS_TO_PASS", len(in.PassToPass), 50_000},
		{"top_objects", len(in.TopObjects), 1000},
	} {
		if f.n > f.max {
			t.Errorf("accepted %s of %d; at most %d", f.name, f.n, f.max)
		}
	}
	if in.ProblemStatement == "" || len(in.FailToPass) == 0 {
		t.Errorf("accepted an instance without a statement or fail-to-pass tests")
	}
	for _, id := range append(append([]string(nil), in.FailToPass...), in.PassToPass...) {
		if id == "" {
			t.Errorf("accepted an empty test id")
		}
		checkLine(t, "test id", id, 1024)
	}
	for _, o := range in.TopObjects {
		checkLine(t, "top object", o, 500)
	}
	for _, v := range []*int{in.Lines, in.Files, in.Functions, in.F2PTestPoints, in.P2PTestPoints} {
		if v != nil && *v < 0 {
			t.Errorf("accepted a negative gold statistic %d", *v)
		}
	}
	if _, err := in.Created(); err != nil {
		t.Errorf("accepted created_at %q", in.CreatedAt)
	}
	// What is published is one strict JSON object.
	j, err := in.JSON()
	if v := jsontext.Value(j); err != nil || !v.IsValid() || v.Kind() != '{' {
		t.Errorf("published line %q is not one strict JSON object (%v)", j, err)
	}
	for k := range in.Extra {
		for _, known := range []string{"instance_id", "repo", "problem_statement", "FAIL_TO_PASS", "PASS_TO_PASS", "level", "patch"} {
			if k != known && strings.EqualFold(k, known) {
				t.Errorf("accepted unknown field %q beside %q", k, known)
			}
		}
	}
}

// checkLine checks an accepted one-line value of at most max bytes.
func checkLine(t *testing.T, what, s string, max int) {
	t.Helper()
	if len(s) > max || !utf8.ValidString(s) {
		t.Errorf("accepted %s %q (%d bytes; at most %d)", what, s, len(s), max)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') {
			t.Errorf("accepted %s %q with %U", what, s, r)
		}
	}
}
