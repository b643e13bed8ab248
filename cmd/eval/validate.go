package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
)

// maxLogsUnpacked bounds what a submission's logs may unpack to.
const maxLogsUnpacked = 2 << 30

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate", "DIR [--rerun] [flags]",
		"Re-grades a submission folder (DIR, under data/submissions/) from its logs: every test file's raw\n"+
			"output is parsed and graded again, and every line of results.jsonl must agree with what the logs\n"+
			"show. --rerun also evaluates its predictions.jsonl again in containers and compares. A submission\n"+
			"without logs is accepted only as figures reported, not recomputed (a [reported] block).", stderr)
	var pf projectFlags
	pf.register(fs)
	rerun := fs.Bool("rerun", false, "evaluate the predictions again in containers and compare with results.jsonl")
	rest, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageErr("give the submission folder: eval validate data/submissions/<name>/<version>/<split>/<folder>")
	}
	pr, err := pf.open(ctx, allData)
	if err != nil {
		return err
	}
	sub, err := findSubmission(pr, rest[0])
	if err != nil {
		return err
	}
	if sub.Reported != nil {
		fmt.Fprintf(stdout, "%s: reported figures, not recomputed: nothing to re-grade\n", sub.ID())
		return nil
	}
	logs := sub.File(bench.LogsFile)
	if logs == nil {
		return fmt.Errorf("%s: %s has per-instance results but no %s: results are accepted with the logs that show them "+
			"(eval submit writes them), or else as a [reported] block of figures, not recomputed", sub.ID(), bench.ResultsFile, bench.LogsFile)
	}
	raw, err := bench.ReadFile(logs.Path, logs.Size)
	if err != nil {
		return err
	}
	attempts, err := evaluate.UnpackLogs(raw, maxLogsUnpacked)
	if err != nil {
		return fmt.Errorf("%s: %w", logs.Path, err)
	}
	meta := evaluate.Meta{Attempts: max(sub.Attempts, 1)}
	var problems []string
	bad := func(line int, id, field, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s:%d: instance %s: field %q: %s", filepath.Join(sub.Dir, bench.ResultsFile), line, id, field, fmt.Sprintf(format, args...)))
	}
	checked := 0
	for i := range sub.Results {
		res := &sub.Results[i]
		in := sub.Dataset.Instance(res.InstanceID)
		byAttempt := attempts[res.InstanceID]
		var reps []*evaluate.Report
		for a := 1; a <= meta.Attempts; a++ {
			al := byAttempt[a]
			if al == nil || al.Report == nil {
				bad(res.Line, res.InstanceID, "instance_id", "the logs have no report of attempt %d", a)
				continue
			}
			if al.Report.InstanceID != res.InstanceID || al.Report.Attempt != a {
				bad(res.Line, res.InstanceID, "instance_id", "the log of attempt %d reports %s attempt %d", a, al.Report.InstanceID, al.Report.Attempt)
				continue
			}
			rep, err := evaluate.Regrade(in, *al.Report, al.Files)
			if err != nil {
				bad(res.Line, res.InstanceID, "instance_id", "attempt %d: %v", a, err)
				continue
			}
			reps = append(reps, rep)
		}
		if len(reps) != meta.Attempts {
			continue
		}
		want, ok := evaluate.Result(sub.Dataset, meta, reps)
		if !ok {
			bad(res.Line, res.InstanceID, "instance_id", "the logs show no complete evaluation")
			continue
		}
		compare(res, &want, func(field, format string, args ...any) { bad(res.Line, res.InstanceID, field, format, args...) })
		checked++
	}
	// Instances the logs show that results.jsonl leaves out.
	var extra []string
	for id := range attempts {
		if sub.ResultFor(id) == nil {
			extra = append(extra, id)
		}
	}
	sort.Strings(extra)
	for _, id := range extra {
		problems = append(problems, fmt.Sprintf("%s: instance %s: the logs evaluate it but results.jsonl has no line for it", sub.Dir, id))
	}
	if *rerun {
		ps, err := rerunSubmission(ctx, pr, sub, stderr)
		if err != nil {
			return err
		}
		problems = append(problems, ps...)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %d problems:\n  %s", sub.ID(), len(problems), strings.Join(problems, "\n  "))
	}
	fmt.Fprintf(stdout, "%s: %d results agree with the logs%s\n", sub.ID(), checked, map[bool]string{true: " and with a new evaluation"}[*rerun])
	return nil
}

// compare reports every field of a results.jsonl line that differs from
// what the logs give.
func compare(got, want *bench.Result, bad func(field, format string, args ...any)) {
	for _, f := range []struct {
		name      string
		got, want any
	}{
		{"resolved", got.Resolved, want.Resolved},
		{"patch_applied", got.PatchApplied, want.PatchApplied},
		{"f2p_passed", sorted(got.F2PPassed), sorted(want.F2PPassed)},
		{"f2p_failed", sorted(got.F2PFailed), sorted(want.F2PFailed)},
		{"p2p_passed", sorted(got.P2PPassed), sorted(want.P2PPassed)},
		{"p2p_failed", sorted(got.P2PFailed), sorted(want.P2PFailed)},
		{"failure_modes", sorted(got.FailureModes), sorted(want.FailureModes)},
		{"files_changed", got.FilesChanged, want.FilesChanged},
		{"apply_method", got.ApplyMethod, want.ApplyMethod},
		{"attempts_resolved", got.AttemptsResolved, want.AttemptsResolved},
	} {
		if !reflect.DeepEqual(f.got, f.want) {
			bad(f.name, "is %s but the logs show %s", show(f.got), show(f.want))
		}
	}
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

func show(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

// findSubmission finds the submission whose folder dir is.
func findSubmission(pr *project, dir string) (*bench.Submission, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for _, s := range pr.data.Submissions {
		if d, err := filepath.Abs(s.Dir); err == nil && d == abs {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%s is not a submission folder under %s (data/submissions/<name>/<version>/<split>/<YYYYMMDD>_<slug>/)", dir, pr.dataDir())
}

// rerunSubmission evaluates a submission's predictions again, in a run of
// its own, and lists where the new results differ from results.jsonl.
func rerunSubmission(ctx context.Context, pr *project, sub *bench.Submission, stderr io.Writer) ([]string, error) {
	pf := sub.File(bench.PredictionsFile)
	if pf == nil {
		return nil, fmt.Errorf("%s: --rerun needs %s", sub.ID(), bench.PredictionsFile)
	}
	var ids []string
	for _, in := range sub.Dataset.SplitInstances(sub.Split) {
		ids = append(ids, in.InstanceID)
	}
	byKey, model, sum, err := readPredictions(pf.Path, sub.Dataset, ids, max(sub.Attempts, 1))
	if err != nil {
		return nil, err
	}
	runID := "validate-" + sub.Folder + "-" + sum[:12]
	dir := filepath.Join(pr.runsDir(), runID)
	meta := evaluate.Meta{RunID: runID, Dataset: sub.Dataset.Key(), Split: sub.Split, Attempts: max(sub.Attempts, 1),
		Predictions: pf.Path + " sha256:" + sum, Model: model, Instances: ids, Created: time.Now().UTC()}
	lim, err := pr.limits(0)
	if err != nil {
		return nil, err
	}
	eng, err := pr.engine(ctx)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	imgs, err := pr.buildImages(ctx, eng, sub.Dataset, sub.Dataset.SplitInstances(sub.Split), stderr)
	if err != nil {
		return nil, err
	}
	_, err = evaluate.Run(ctx, evaluate.Config{
		Meta: meta, Dataset: sub.Dataset, Images: imgs, Dir: dir, Workers: pr.cfg.Eval.Workers, Limits: lim, Engine: eng,
		Progress: newProgress(stderr),
		Predictions: func(id string, a int) (evaluate.Prediction, bool) {
			p, ok := byKey[key(id, a)]
			return p, ok
		},
	})
	if err != nil {
		return nil, err
	}
	fresh, err := readRunResults(dir)
	if err != nil {
		return nil, err
	}
	var problems []string
	for i := range sub.Results {
		res := &sub.Results[i]
		line, ok := fresh[res.InstanceID]
		if !ok {
			problems = append(problems, fmt.Sprintf("instance %s: the new evaluation gave no result", res.InstanceID))
			continue
		}
		var want bench.Result
		if err := json.Unmarshal(line, &want); err != nil {
			return nil, err
		}
		compare(res, &want, func(field, format string, args ...any) {
			problems = append(problems, fmt.Sprintf("%s:%d: instance %s: field %q: %s (in a new evaluation, %s)",
				filepath.Join(sub.Dir, bench.ResultsFile), res.Line, res.InstanceID, field, fmt.Sprintf(format, args...), dir))
		})
	}
	return problems, nil
}
