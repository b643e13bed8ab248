package submission_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/integrity"
	"github.com/featbench/featbench/internal/submission"
)

// These tests need no Docker engine: a run folder is rebuilt from the
// shipped gold logs of the example dataset (the reports and test outputs a
// real run wrote), finished with evaluate.Finish as `eval run` finishes,
// packed with Pack and checked with Validate; then tampered with as a
// submitter could.

const root = "../.."

const lv1 = "featbench__textkit.test_case.3f4c65e3.lv1" // a level 1 instance of both splits

// project is a data folder with the example dataset, and a finished run.
type project struct {
	data, run string
	ds        *bench.Dataset
	meta      evaluate.Meta
}

// newProject makes the run, with the integrity flags of its predictions
// in its reports unless noFlags.
func newProject(t *testing.T, predictions string, noFlags bool) *project {
	t.Helper()
	tmp := t.TempDir()
	p := &project{data: filepath.Join(tmp, "data"), run: filepath.Join(tmp, "runs", "fake")}
	if err := os.CopyFS(filepath.Join(p.data, "datasets", "example"), os.DirFS(filepath.Join(root, "data", "datasets", "example"))); err != nil {
		t.Fatal(err)
	}
	data, err := bench.LoadDatasets(context.Background(), p.data)
	if err != nil {
		t.Fatal(err)
	}
	p.ds = data.Dataset("example/v2")
	shipped := filepath.Join(root, "data", "submissions", "example", "v2", "full", "20261123_gold")
	logs, err := evaluate.UnpackLogs(context.Background(), filepath.Join(shipped, bench.LogsFile), evaluate.DefaultLogLimits())
	if err != nil {
		t.Fatal(err)
	}
	patches := map[string]string{}
	raw, err := os.ReadFile(filepath.Join(shipped, bench.PredictionsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var l struct {
			ID    string `json:"instance_id"`
			Patch string `json:"model_patch"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		patches[l.ID] = l.Patch
	}
	p.meta = evaluate.Meta{RunID: "fake", Dataset: "example/v2", Split: "full", Attempts: 1, Predictions: predictions, Model: "gold",
		Created: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	for _, in := range p.ds.SplitInstances("full") {
		id := in.InstanceID
		p.meta.Instances = append(p.meta.Instances, id)
		al := logs.Attempts[id][1]
		if al == nil || al.Report == nil {
			t.Fatalf("the shipped gold logs lack %s", id)
		}
		adir := filepath.Join(p.run, id, "attempt-1")
		// Graded again as this version of eval grades, so that the run's
		// results are what Validate will find in its logs.
		graded, err := evaluate.Regrade(p.ds, in, *al.Report, al.Files)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if !noFlags {
			graded.Flags = integrity.Flags(p.ds, in, []byte(patches[id]), predictions == "gold")
		}
		rep, _ := json.Marshal(graded)
		files := map[string][]byte{evaluate.ReportFile: rep, evaluate.PredFile: []byte(patches[id]), evaluate.LogFile: []byte("log of " + id)}
		for name, data := range al.Files {
			files[evaluate.TestsDir+"/"+name] = data
		}
		for name, data := range files {
			path := filepath.Join(adir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if raw, err := json.Marshal(p.meta); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(filepath.Join(p.run, evaluate.RunMetaFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := evaluate.Finish(p.run, p.ds, p.meta); err != nil {
		t.Fatal(err)
	}
	return p
}

// pack submits the run as slug, for the full and lite splits.
func (p *project) pack(t *testing.T, slug string, reference bool) (full, lite string) {
	t.Helper()
	m := submission.Metadata{Name: "Agent " + slug, Scaffold: "S", Model: "M", Reference: reference}
	m.Date.Time = p.meta.Created
	written, _, err := submission.Pack(context.Background(), submission.PackOptions{
		DataDir: p.data, Dataset: p.ds, RunDir: p.run, Run: p.meta, Metadata: m, Slug: slug,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 2 {
		t.Fatalf("Pack wrote %v; want the full and lite folders", written)
	}
	for _, dir := range written {
		// Committed and published: readable by all, as data/ is.
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: mode %v (%v), want 0755", dir, fi.Mode().Perm(), err)
		}
	}
	return written[0], written[1]
}

// load finds the submission in dir.
func (p *project) load(t *testing.T, dir string) *bench.Submission {
	t.Helper()
	data, err := bench.Load(context.Background(), p.data)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range data.Submissions {
		if s.Dir == dir {
			return s
		}
	}
	t.Fatalf("no submission in %s", dir)
	return nil
}

func (p *project) validate(t *testing.T, dir string, o submission.Options) *submission.Report {
	t.Helper()
	rep, err := submission.Validate(context.Background(), p.load(t, dir), o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// rewriteLogs rewrites a submission's logs.tar.gz through edit, which
// returns a file's new content (nil drops it); with forge, the manifest is
// made to agree with the result, as a forger would.
func rewriteLogs(t *testing.T, dir string, forge bool, edit func(name string, data []byte) []byte) {
	t.Helper()
	path := filepath.Join(dir, bench.LogsFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	files := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		if data = edit(hdr.Name, data); data != nil {
			names = append(names, hdr.Name)
			files[hdr.Name] = data
		}
	}
	if forge {
		var m evaluate.Manifest
		if err := json.Unmarshal(files[evaluate.ManifestFile], &m); err != nil {
			t.Fatal(err)
		}
		m.Files = map[string]string{}
		for name, data := range files {
			if name != evaluate.ManifestFile {
				m.Files[name] = evaluate.Sum(data)
			}
		}
		pred, err := os.ReadFile(filepath.Join(dir, bench.PredictionsFile))
		if err != nil {
			t.Fatal(err)
		}
		m.SubmissionPredictions = evaluate.Sum(pred)
		files[evaluate.ManifestFile], _ = json.Marshal(m)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range names {
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[name]))}); err != nil {
			t.Fatal(err)
		}
		tw.Write(files[name])
	}
	tw.Close()
	zw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editLines rewrites a JSONL file of the submission through edit, line by
// line, as JSON objects.
func editLines(t *testing.T, path string, edit func(m map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, _ := json.Marshal(m)
		lines[i] = string(b)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func wantProblem(t *testing.T, rep *submission.Report, parts ...string) {
	t.Helper()
	for _, p := range rep.Problems {
		ok := true
		for _, part := range parts {
			ok = ok && strings.Contains(p, part)
		}
		if ok {
			return
		}
	}
	t.Errorf("no problem names all of %q; the problems:\n  %s", parts, strings.Join(rep.Problems, "\n  "))
}

// TestPackAndValidate: a run packed for its split and the smaller one
// validates; its logs hold the run's manifest, restricted to the split.
func TestPackAndValidate(t *testing.T) {
	p := newProject(t, "gold", false)
	full, lite := p.pack(t, "gold", true)
	for _, dir := range []string{full, lite} {
		rep := p.validate(t, dir, submission.Options{})
		n := len(p.load(t, dir).Results)
		if len(rep.Problems) > 0 || rep.Checked != n || n == 0 {
			t.Errorf("%s: %d of %d results checked, problems:\n  %s", dir, rep.Checked, n, strings.Join(rep.Problems, "\n  "))
		}
	}
	logs, err := evaluate.UnpackLogs(context.Background(), filepath.Join(lite, bench.LogsFile), evaluate.DefaultLogLimits())
	if err != nil {
		t.Fatal(err)
	}
	if logs.Manifest == nil || len(logs.Manifest.Files) != len(logs.Sums) || logs.Manifest.Predictions != "gold" {
		t.Errorf("the lite logs' manifest: %+v; want the lite instances' files alone", logs.Manifest)
	}
	// A run edited after it finished is not packed.
	if err := os.WriteFile(filepath.Join(p.run, lv1, "attempt-1", evaluate.ReportFile), []byte(`{"instance_id": "x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	m := submission.Metadata{Name: "Agent gold", Scaffold: "S", Model: "M", Reference: true}
	m.Date.Time = p.meta.Created
	_, _, err = submission.Pack(context.Background(), submission.PackOptions{DataDir: p.data, Dataset: p.ds, RunDir: p.run, Run: p.meta, Metadata: m, Slug: "gold", Force: true})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(lv1, "attempt-1", evaluate.ReportFile)) {
		t.Errorf("packing an edited run: %v; want an error naming the report", err)
	}
}

// TestValidateCatches tampers with a packed submission, one way per case,
// and checks that Validate names the file, the instance and what is wrong.
func TestValidateCatches(t *testing.T) {
	const agent = "/preds.jsonl sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, c := range []struct {
		name   string
		preds  string // the run's predictions
		ref    bool
		tamper func(t *testing.T, dir string)
		want   []string
	}{
		{"tokens in results.jsonl", agent, true, func(t *testing.T, dir string) {
			editLines(t, filepath.Join(dir, bench.ResultsFile), func(m map[string]any) {
				if m["instance_id"] == lv1 {
					m["tokens_in"] = 1000
				}
			})
		}, []string{bench.ResultsFile + ":", "instance " + lv1, `field "tokens_in"`, "is 1000 but the logs show null"}},
		{"duration in results.jsonl", agent, true, func(t *testing.T, dir string) {
			editLines(t, filepath.Join(dir, bench.ResultsFile), func(m map[string]any) {
				if m["instance_id"] == lv1 {
					m["duration"] = 0.5
				}
			})
		}, []string{"instance " + lv1, `field "duration"`, "is 0.5"}},
		{"a report edited", agent, true, func(t *testing.T, dir string) {
			rewriteLogs(t, dir, false, func(name string, data []byte) []byte {
				if name == lv1+"/attempt-1/report.json" {
					return bytes.Replace(data, []byte(`"seconds":`), []byte(`"seconds":1`), 1)
				}
				return data
			})
		}, []string{bench.LogsFile + ": " + lv1 + "/attempt-1/report.json: instance " + lv1, "SHA-256 is not the one in the run's manifest.json"}},
		{"a test output copied in", agent, true, func(t *testing.T, dir string) {
			rewriteLogs(t, dir, false, func(name string, data []byte) []byte {
				if strings.HasPrefix(name, lv1+"/attempt-1/tests/") && strings.HasSuffix(name, ".stdout") {
					return []byte("============ 1 passed in 0.01s ============\n")
				}
				return data
			})
		}, []string{lv1 + "/attempt-1/tests/", "instance " + lv1, "edited, or copied in"}},
		{"a file added", agent, true, func(t *testing.T, dir string) {
			rewriteLogs(t, dir, false, func(name string, data []byte) []byte {
				if name == lv1+"/attempt-1/tests/01-all.stderr" {
					return []byte("warning")
				}
				return data
			})
		}, []string{lv1 + "/attempt-1/tests/01-all.stderr", "instance " + lv1}},
		{"no manifest", agent, true, func(t *testing.T, dir string) {
			rewriteLogs(t, dir, false, func(name string, data []byte) []byte {
				if name == evaluate.ManifestFile {
					return nil
				}
				return data
			})
		}, []string{bench.LogsFile + ": has no manifest.json"}},
		{"another predictions.jsonl", agent, true, func(t *testing.T, dir string) {
			editLines(t, filepath.Join(dir, bench.PredictionsFile), func(m map[string]any) {
				if m["instance_id"] == lv1 {
					m["model_patch"] = m["model_patch"].(string) + "\n"
				}
			})
		}, []string{bench.PredictionsFile + ": is not the predictions.jsonl eval submit packed"}},
		{"a model_patch that is not the one graded", agent, true, func(t *testing.T, dir string) {
			editLines(t, filepath.Join(dir, bench.PredictionsFile), func(m map[string]any) {
				if m["instance_id"] == lv1 {
					m["model_patch"] = "diff --git a/x b/x\n"
				}
			})
			rewriteLogs(t, dir, true, func(_ string, data []byte) []byte { return data })
		}, []string{bench.PredictionsFile + ":1: instance " + lv1, `field "model_patch"`, "prediction.diff the run applied"}},
		{"tokens in predictions.jsonl", agent, true, func(t *testing.T, dir string) {
			editLines(t, filepath.Join(dir, bench.PredictionsFile), func(m map[string]any) {
				if m["instance_id"] == lv1 {
					m["tokens_out"] = 7
				}
			})
			rewriteLogs(t, dir, true, func(_ string, data []byte) []byte { return data })
		}, []string{bench.PredictionsFile + ":1: instance " + lv1, `field "tokens_out"`, "the logs' report says null"}},
		{"a report claiming agent_code", agent, true, func(t *testing.T, dir string) {
			// The forger edits the manifest too: only the dataset says
			// which flow grades the instance.
			rewriteLogs(t, dir, true, func(name string, data []byte) []byte {
				if name == lv1+"/attempt-1/report.json" {
					return bytes.Replace(data, []byte(`"flow":"repo"`), []byte(`"flow":"agent_code"`), 1)
				}
				return data
			})
		}, []string{"instance " + lv1, `claims the "agent_code" flow`}},
		{"integrity flags dropped", agent, true, func(t *testing.T, dir string) {
			// From results.jsonl and the report, the manifest forged:
			// the flags are computed again from prediction.diff.
			editLines(t, filepath.Join(dir, bench.ResultsFile), func(m map[string]any) {
				if m["instance_id"] == lv1 {
					delete(m, "flags")
				}
			})
			rewriteLogs(t, dir, true, func(name string, data []byte) []byte {
				if name == lv1+"/attempt-1/report.json" {
					return bytes.Replace(data, []byte(`"flags":["gold-identical"],`), nil, 1)
				}
				return data
			})
		}, []string{bench.ResultsFile + ":1: instance " + lv1, `field "flags"`, `is null but the logs show ["gold-identical"]`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t, c.preds, !c.ref)
			full, _ := p.pack(t, "agent", c.ref)
			if c.preds == agent {
				// Untouched, it validates: what fails is the tampering.
				if rep := p.validate(t, full, submission.Options{}); len(rep.Problems) > 0 {
					t.Fatalf("the untouched submission: %s", strings.Join(rep.Problems, "\n  "))
				}
			}
			c.tamper(t, full)
			wantProblem(t, p.validate(t, full, submission.Options{}), append([]string{full}, c.want...)...)
		})
	}
}

// TestSample: the same seed picks the same instances, in their order; a
// larger sample holds a smaller one; 0 or more than there are is all.
func TestSample(t *testing.T) {
	var ids []string
	for i := range 40 {
		ids = append(ids, "inst-"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	a, b := submission.Sample(ids, 10, 7), submission.Sample(ids, 10, 7)
	if len(a) != 10 || !slices.Equal(a, b) {
		t.Fatalf("Sample(10, seed 7) = %v then %v", a, b)
	}
	if !slices.IsSortedFunc(a, func(x, y string) int { return slices.Index(ids, x) - slices.Index(ids, y) }) {
		t.Errorf("Sample %v is not in the ids' order", a)
	}
	for _, id := range a {
		if !slices.Contains(submission.Sample(ids, 20, 7), id) {
			t.Errorf("%s is in the sample of 10 but not of 20", id)
		}
	}
	if c := submission.Sample(ids, 10, 8); slices.Equal(a, c) {
		t.Errorf("seeds 7 and 8 pick the same sample %v", a)
	}
	for _, n := range []int{0, 40, 100} {
		if got := submission.Sample(ids, n, 7); !slices.Equal(got, ids) {
			t.Errorf("Sample(%d) = %d ids; want all %d", n, len(got), len(ids))
		}
	}
	// The gate's seed is drawn, not derived from anything a submitter
	// chose: two draws differ (2^-64 odds of a false alarm).
	first, err := submission.RandomSeed()
	if err != nil {
		t.Fatal(err)
	}
	if again, err := submission.RandomSeed(); err != nil || again == first {
		t.Errorf("two random seeds: %d, %d (%v)", first, again, err)
	}
	// The sample size's key: 10 unless featbench.toml says otherwise.
	if n := config.Default().Eval.RerunSample; n != 10 {
		t.Errorf("eval.rerun_sample defaults to %d, want 10", n)
	}
	path := filepath.Join(t.TempDir(), "featbench.toml")
	for _, c := range []struct {
		toml string
		want int
		err  string
	}{{"[eval]\nrerun_sample = 0\n", 0, ""}, {"[eval]\nrerun_sample = 3\n", 3, ""}, {"[eval]\nrerun_sample = -1\n", 0, "eval.rerun_sample"}} {
		if err := os.WriteFile(path, []byte(c.toml), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(path)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v; want an error naming %s", c.toml, err, c.err)
		case c.err == "" && (err != nil || cfg.Eval.RerunSample != c.want):
			t.Errorf("%q: %d, %v; want %d", c.toml, cfg.Eval.RerunSample, err, c.want)
		}
	}
}

// TestRerun: --rerun evaluates the seeded sample (through the caller's
// evaluator, here a fake one that gives back the submission's own lines,
// one of them changed) and names the line that differs.
func TestRerun(t *testing.T) {
	p := newProject(t, "gold", false)
	full, _ := p.pack(t, "gold", true)
	sub := p.load(t, full)
	var ids []string
	for _, r := range sub.Results {
		ids = append(ids, r.InstanceID)
	}
	const seed = 20261127
	want := submission.Sample(ids, 5, seed)
	runs := t.TempDir()
	var evaluated []string
	rerun := &submission.Rerun{RunsDir: runs, Sample: 5, Seed: seed,
		Evaluate: func(ctx context.Context, cfg evaluate.Config) (*evaluate.RunReport, error) {
			evaluated = cfg.Meta.Instances
			if filepath.Dir(cfg.Dir) != runs {
				t.Errorf("the new run's folder %s is not under %s", cfg.Dir, runs)
			}
			var out bytes.Buffer
			for _, id := range cfg.Meta.Instances {
				pred, ok := cfg.Predictions(id, 1)
				if !ok || pred.Model != "gold" || string(pred.Patch) != p.ds.Instance(id).Patch {
					t.Errorf("%s: the prediction given to the new run is %v, %v; want the gold patch", id, pred, ok)
				}
				r := *sub.ResultFor(id)
				if id == cfg.Meta.Instances[0] {
					r.Resolved = !r.Resolved
				}
				raw, _ := json.Marshal(r)
				out.Write(append(raw, '\n'))
			}
			if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
				return nil, err
			}
			return nil, os.WriteFile(filepath.Join(cfg.Dir, evaluate.ResultsFile), out.Bytes(), 0o644)
		}}
	rep := p.validate(t, full, submission.Options{Rerun: rerun})
	if !slices.Equal(evaluated, want) || !slices.Equal(rep.Rerun.Instances, want) || len(want) != 5 {
		t.Fatalf("re-ran %v; want the seeded sample %v", evaluated, want)
	}
	if len(rep.Problems) != 1 {
		t.Fatalf("problems %q; want one, of the changed line", rep.Problems)
	}
	wantProblem(t, rep, full, "instance "+want[0], `field "resolved"`, "in a new evaluation")
	// Sample 0: every instance.
	rerun.Sample = 0
	rep = p.validate(t, full, submission.Options{Rerun: rerun})
	if len(evaluated) != len(ids) || rep.Rerun.Of != len(ids) {
		t.Errorf("sample 0 re-ran %d of %d instances", len(evaluated), len(ids))
	}
	// A small dataset: a ranked row is re-run whole, whatever the sample
	// size; a reference row (this one: the gold patches) keeps its sample,
	// and so does a ranked row of a dataset larger than WholeMax.
	if !sub.Reference {
		t.Fatal("the gold submission is not a reference row")
	}
	n := len(sub.Dataset.Instances)
	for _, c := range []struct {
		reference bool
		wholeMax  int
		whole     bool
	}{{false, n, true}, {false, n - 1, false}, {true, n, false}, {false, 0, false}} {
		rerun.Sample, rerun.WholeMax = 2, c.wholeMax
		// The same row taken as ranked (its gold-identical flags then
		// make a problem of their own, which does not matter here).
		s := p.load(t, full)
		s.Reference = c.reference
		rep, err := submission.Validate(context.Background(), s, submission.Options{Rerun: rerun})
		if err != nil {
			t.Fatal(err)
		}
		want := submission.Sample(ids, 2, seed)
		if c.whole {
			want = ids
		}
		if rep.Rerun.Whole != c.whole || !slices.Equal(evaluated, want) {
			t.Errorf("reference %v, dataset of %d, WholeMax %d: re-ran %v (whole %v); want %v", c.reference, n, c.wholeMax, evaluated, rep.Rerun.Whole, want)
		}
	}
}
