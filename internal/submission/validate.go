package submission

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/integrity"
	"github.com/featbench/featbench/internal/predictions"
)

// Options say how far Validate goes.
type Options struct {
	Limits evaluate.LogLimits // reading logs.tar.gz; zero: evaluate.DefaultLogLimits
	Rerun  *Rerun             // evaluate a sample again in containers; nil: only the logs
}

// Report is what Validate found.
type Report struct {
	Reported bool     // figures reported, not recomputed: nothing to check
	Checked  int      // results.jsonl lines that agree with the logs
	Problems []string // each naming file, line or entry, instance and field
	Rerun    *RerunReport
}

// Validate checks a submission folder against its logs and its dataset:
//
//   - logs.tar.gz is read within limits, and every file in it has the
//     SHA-256 the run's manifest records (a log or report edited, or
//     copied in from another submission, after the run does not), and
//     predictions.jsonl is the one submit packed with them;
//   - each attempt's prediction.diff is byte for byte the model_patch of
//     predictions.jsonl, and its tokens and cost are the report's;
//   - each attempt is graded again from its test outputs, with the level,
//     flow and test lists of the dataset (never of the submitted report),
//     its integrity flags are computed again from its prediction.diff, and
//     every field of results.jsonl, tokens, cost, duration and flags
//     included, must be what the logs give.
//
// A problem with the submission is listed in the Report; an error is a
// failure to check (a missing file, an engine that does not answer).
func Validate(ctx context.Context, sub *bench.Submission, o Options) (*Report, error) {
	if sub.Reported != nil {
		return &Report{Reported: true}, nil
	}
	lf := sub.File(bench.LogsFile)
	if lf == nil {
		return nil, fmt.Errorf("%s: %s has per-instance results but no %s: results are accepted with the logs that show them "+
			"(eval submit writes them), or else as a [reported] block of figures, not recomputed", sub.ID(), bench.ResultsFile, bench.LogsFile)
	}
	pf := sub.File(bench.PredictionsFile)
	if pf == nil {
		return nil, fmt.Errorf("%s: has %s but no %s: the logs are checked against the predictions they graded (eval submit writes both)",
			sub.ID(), bench.LogsFile, bench.PredictionsFile)
	}
	lim := o.Limits
	if lim == (evaluate.LogLimits{}) {
		lim = evaluate.DefaultLogLimits()
	}
	logs, err := evaluate.UnpackLogs(ctx, lf.Path, lim)
	if err != nil {
		return nil, err
	}
	predRaw, err := bench.ReadFile(pf.Path, pf.Size)
	if err != nil {
		return nil, err
	}
	v := &validator{sub: sub, logs: logs, logsPath: lf.Path, predPath: pf.Path, attempts: max(sub.Attempts, 1)}
	v.manifest(predRaw)
	preds := v.predictions(predRaw)
	v.results()
	if err := v.trajectories(ctx, lim); err != nil {
		return nil, err
	}
	rep := &Report{Checked: v.checked, Problems: v.problems}
	if o.Rerun != nil {
		if preds == nil {
			return nil, fmt.Errorf("%s: --rerun needs a readable %s:\n  %s", sub.ID(), bench.PredictionsFile, strings.Join(v.problems, "\n  "))
		}
		rr, err := o.Rerun.run(ctx, sub, preds, evaluate.Sum(predRaw))
		if err != nil {
			return nil, err
		}
		rep.Rerun = rr
		rep.Problems = append(rep.Problems, rr.Problems...)
	}
	return rep, nil
}

// validator collects the problems of one submission.
type validator struct {
	sub      *bench.Submission
	logs     *evaluate.Logs
	logsPath string
	predPath string
	attempts int
	checked  int
	problems []string
}

// entry is a problem with a file of logs.tar.gz.
func (v *validator) entry(name, format string, args ...any) {
	id, _, _ := strings.Cut(name, "/")
	v.problems = append(v.problems, fmt.Sprintf("%s: %s: instance %s: %s", v.logsPath, name, id, fmt.Sprintf(format, args...)))
}

// result is a problem with a line of results.jsonl.
func (v *validator) result(line int, id, field, format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf("%s:%d: instance %s: field %q: %s",
		filepath.Join(v.sub.Dir, bench.ResultsFile), line, id, field, fmt.Sprintf(format, args...)))
}

// prediction is a problem with a line of predictions.jsonl.
func (v *validator) prediction(line int, id string, attempt int, field, format string, args ...any) {
	at := ""
	if v.attempts > 1 {
		at = fmt.Sprintf(" attempt %d", attempt)
	}
	v.problems = append(v.problems, fmt.Sprintf("%s:%d: instance %s%s: field %q: %s", v.predPath, line, id, at, field, fmt.Sprintf(format, args...)))
}

// manifest checks every file of the logs, and predictions.jsonl, against
// the run's manifest.
func (v *validator) manifest(predRaw []byte) {
	m := v.logs.Manifest
	if m == nil {
		v.problems = append(v.problems, fmt.Sprintf("%s: has no %s, the run's hashes of its logs: make the submission with eval submit "+
			"from a run of this version of eval", v.logsPath, evaluate.ManifestFile))
		return
	}
	where := v.logsPath + ": " + evaluate.ManifestFile
	if m.Dataset != v.sub.Dataset.Key() {
		v.problems = append(v.problems, fmt.Sprintf("%s: field \"dataset\": the run evaluated %s, not %s", where, m.Dataset, v.sub.Dataset.Key()))
	}
	if m.Attempts != v.attempts {
		v.problems = append(v.problems, fmt.Sprintf("%s: field \"attempts\": the run made %d attempts; metadata.toml says %d", where, m.Attempts, v.attempts))
	}
	if (m.Predictions == "gold" || m.Predictions == "empty") && !v.sub.Reference {
		v.problems = append(v.problems, fmt.Sprintf("%s: field \"predictions\": the run graded the %s baseline, which can only be "+
			"a reference row (reference = true in metadata.toml)", where, m.Predictions))
	}
	if got := evaluate.Sum(predRaw); m.SubmissionPredictions != got {
		v.problems = append(v.problems, fmt.Sprintf("%s: is not the %s eval submit packed with these logs "+
			"(its SHA-256 is %s; the manifest's field \"submission_predictions\" is %q)", v.predPath, bench.PredictionsFile, got, m.SubmissionPredictions))
	}
	names := make([]string, 0, len(v.logs.Sums))
	for name := range v.logs.Sums {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		switch want, ok := m.Files[name]; {
		case !ok:
			v.entry(name, "is not in the run's %s: it was added after the run, or copied in from another", evaluate.ManifestFile)
		case want != v.logs.Sums[name]:
			v.entry(name, "its SHA-256 is not the one in the run's %s: it was edited, or copied in from another submission, after the run", evaluate.ManifestFile)
		}
	}
	var missing []string
	for name := range m.Files {
		if _, ok := v.logs.Sums[name]; !ok {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		v.entry(name, "the run's %s lists it but the archive does not hold it", evaluate.ManifestFile)
	}
}

type predKey struct {
	id      string
	attempt int
}

// predictions checks predictions.jsonl against the logs: one line per
// attempt the logs hold, with the very patch the run applied, and the
// model, tokens and cost its report gives. It returns the predictions,
// or nil when the file cannot be read.
func (v *validator) predictions(raw []byte) map[predKey]predictions.Prediction {
	preds, err := predictions.Parse(v.predPath, raw)
	if err != nil {
		v.problems = append(v.problems, err.Error())
		return nil
	}
	out := map[predKey]predictions.Prediction{}
	for _, p := range preds {
		k := predKey{p.InstanceID, max(p.Attempt, 1)}
		out[k] = p
		if k.attempt > v.attempts {
			v.prediction(p.Line, p.InstanceID, k.attempt, "attempt", "is %d; metadata.toml gives %d attempts", k.attempt, v.attempts)
			continue
		}
		al := v.logs.Attempts[p.InstanceID][k.attempt]
		if al == nil || al.Report == nil {
			v.prediction(p.Line, p.InstanceID, k.attempt, "instance_id", "the logs hold no evaluation of this prediction")
			continue
		}
		if al.Prediction == nil {
			v.prediction(p.Line, p.InstanceID, k.attempt, "model_patch", "the logs hold no %s, the patch the run applied", evaluate.PredFile)
		} else if string(al.Prediction) != p.Patch {
			v.prediction(p.Line, p.InstanceID, k.attempt, "model_patch", "is not byte for byte the %s the run applied (%s in the logs)",
				evaluate.PredFile, fmt.Sprintf("%s/attempt-%d/%s", p.InstanceID, k.attempt, evaluate.PredFile))
		}
		rep := al.Report
		for _, f := range []struct {
			name      string
			got, want any
		}{
			{"model_name_or_path", p.Model, rep.Model},
			{"tokens_in", p.TokensIn, rep.TokensIn},
			{"tokens_out", p.TokensOut, rep.TokensOut},
			{"cost", p.Cost, rep.Cost},
			{"measured", p.Measured, rep.Measured},
			{"turns", p.Turns, rep.Turns},
			{"failure_mode", p.FailureMode, rep.AgentFailure},
		} {
			if !reflect.DeepEqual(f.got, f.want) {
				v.prediction(p.Line, p.InstanceID, k.attempt, f.name, "is %s but the logs' report says %s", show(f.got), show(f.want))
			}
		}
	}
	for _, id := range sortedKeys(v.logs.Attempts) {
		for a := 1; a <= 100; a++ {
			al := v.logs.Attempts[id][a]
			if _, ok := out[predKey{id, a}]; !ok && al != nil && al.Report != nil {
				v.problems = append(v.problems, fmt.Sprintf("%s: instance %s attempt %d: the logs evaluate a prediction that %s does not hold",
					v.predPath, id, a, bench.PredictionsFile))
			}
		}
	}
	return out
}

// results regrades every attempt of every results.jsonl line from its test
// outputs and compares.
func (v *validator) results() {
	sub := v.sub
	meta := evaluate.Meta{Attempts: v.attempts}
	gold := v.logs.Manifest != nil && v.logs.Manifest.Predictions == "gold"
	for i := range sub.Results {
		res := &sub.Results[i]
		in := sub.Dataset.Instance(res.InstanceID)
		byAttempt := v.logs.Attempts[res.InstanceID]
		var reps []*evaluate.Report
		for a := 1; a <= meta.Attempts; a++ {
			al := byAttempt[a]
			if al == nil || al.Report == nil {
				v.result(res.Line, res.InstanceID, "instance_id", "the logs have no report of attempt %d", a)
				continue
			}
			if al.Report.InstanceID != res.InstanceID || al.Report.Attempt != a {
				v.result(res.Line, res.InstanceID, "instance_id", "the log of attempt %d reports %s attempt %d", a, al.Report.InstanceID, al.Report.Attempt)
				continue
			}
			rep, err := evaluate.Regrade(sub.Dataset, in, *al.Report, al.Files)
			if err != nil {
				v.result(res.Line, res.InstanceID, "instance_id", "attempt %d: %v", a, err)
				continue
			}
			// The integrity flags, from the patch the run applied, not
			// from the report: a flag cannot be dropped by editing both.
			rep.Flags = integrity.Flags(sub.Dataset, in, al.Prediction, gold)
			reps = append(reps, rep)
		}
		if len(reps) != meta.Attempts {
			continue
		}
		want, ok := evaluate.Result(sub.Dataset, meta, reps)
		if !ok {
			v.result(res.Line, res.InstanceID, "instance_id", "the logs show no complete evaluation")
			continue
		}
		n := len(v.problems)
		compare(res, &want, true, func(field, format string, args ...any) { v.result(res.Line, res.InstanceID, field, format, args...) })
		if len(v.problems) == n {
			v.checked++
		}
	}
	// Instances the logs show that results.jsonl leaves out.
	for _, id := range sortedKeys(v.logs.Attempts) {
		if sub.ResultFor(id) == nil {
			v.problems = append(v.problems, fmt.Sprintf("%s: instance %s: the logs evaluate it but results.jsonl has no line for it", sub.Dir, id))
		}
	}
}

// compare reports every field of a results.jsonl line that differs from
// what the logs (or a new evaluation) give; duration only when asked, as
// a new evaluation takes its own time.
func compare(got, want *bench.Result, duration bool, bad func(field, format string, args ...any)) {
	fields := []struct {
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
		{"flags", got.Flags, want.Flags},
		{"audit", got.Audit, want.Audit},
		{"apply_method", got.ApplyMethod, want.ApplyMethod},
		{"file_recall", got.FileRecall, want.FileRecall},
		{"attempts", got.Attempts, want.Attempts},
		{"attempts_resolved", got.AttemptsResolved, want.AttemptsResolved},
		{"attempts_passed", got.AttemptsPassed, want.AttemptsPassed},
		{"tokens_in", got.TokensIn, want.TokensIn},
		{"tokens_out", got.TokensOut, want.TokensOut},
		{"cost", got.Cost, want.Cost},
		{"measured", got.Measured, want.Measured},
		{"turns", got.Turns, want.Turns},
	}
	if duration {
		fields = append(fields, struct {
			name      string
			got, want any
		}{"duration", got.Duration, want.Duration})
	}
	for _, f := range fields {
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

// show writes a value as JSON, a pointer as what it points to.
func show(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// trajectories checks the measured attempts against trajectories.tar.gz:
// each report that says its figures were measured names a trajectory by
// its SHA-256 (the report is in the manifest); the archive must hold it,
// and it must replay to the report's turns, tokens and cost.
func (v *validator) trajectories(ctx context.Context, lim evaluate.LogLimits) error {
	var checks map[string]evaluate.TrajectoryCheck
	tf := v.sub.File(bench.TrajectoriesFile)
	if tf != nil {
		var err error
		if checks, err = evaluate.CheckTrajectories(ctx, tf.Path, lim); err != nil {
			return err
		}
	}
	where := filepath.Join(v.sub.Dir, bench.TrajectoriesFile)
	for _, id := range sortedKeys(v.logs.Attempts) {
		for a := 1; a <= 100; a++ {
			al := v.logs.Attempts[id][a]
			if al == nil || al.Report == nil {
				continue
			}
			rep := al.Report
			if rep.Measured != (rep.Trajectory != "") {
				v.problems = append(v.problems, fmt.Sprintf("%s: instance %s attempt %d: the report says measured %v with trajectory %q: "+
					"measured figures come with their trajectory", v.logsPath, id, a, rep.Measured, rep.Trajectory))
				continue
			}
			if !rep.Measured {
				continue
			}
			name := fmt.Sprintf("%s/attempt-%d/%s", id, a, evaluate.TrajectoryFile)
			c, ok := checks[name]
			switch {
			case !ok:
				v.problems = append(v.problems, fmt.Sprintf("%s: %s: missing: the report's figures are measured, from this trajectory", where, name))
				continue
			case c.Sum != rep.Trajectory:
				v.problems = append(v.problems, fmt.Sprintf("%s: %s: its SHA-256 is not the one the report records: it was edited after the run", where, name))
				continue
			case c.Err != nil:
				v.problems = append(v.problems, fmt.Sprintf("%s: %s: does not replay: %v", where, name, c.Err))
				continue
			}
			t := c.Totals
			var cost *float64
			if len(t.Unpriced) == 0 {
				cost = &t.Cost
			}
			turns := int64(t.Turns)
			if !reflect.DeepEqual(rep.TokensIn, &t.TokensIn) || !reflect.DeepEqual(rep.TokensOut, &t.TokensOut) || !reflect.DeepEqual(rep.Turns, &turns) ||
				(cost == nil) != (rep.Cost == nil) || cost != nil && math.Abs(*cost-*rep.Cost) > 1e-9 {
				v.problems = append(v.problems, fmt.Sprintf("%s: %s: replays to %d tokens in, %d out, %d turns, cost %s; the report says %s, %s, %s, %s",
					where, name, t.TokensIn, t.TokensOut, t.Turns, show(cost), show(rep.TokensIn), show(rep.TokensOut), show(rep.Turns), show(rep.Cost)))
			}
		}
	}
	return nil
}
