package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/meter"
	"github.com/featbench/featbench/internal/predictions"
)

// runID is what a run id may look like: it names a folder.
var runID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", "--dataset NAME/VERSION --split SPLIT (--predictions FILE | --gold | --empty) --run-id ID [flags]",
		"Evaluates predictions on a split's instances in Docker containers, one per instance and attempt,\n"+
			"into runs/<run-id>/: per instance and attempt the applied patch, the container's log, each test\n"+
			"file's raw output and JUnit XML, and a report; then the run's results.jsonl and report.json.\n"+
			"A finished instance is skipped when the same command runs again (--force evaluates it again).", stderr)
	var pf projectFlags
	pf.register(fs)
	dataset := fs.String("dataset", "", "the dataset `NAME/VERSION`, e.g. example/v2")
	split := fs.String("split", "", "the `SPLIT` to evaluate (default: site.default_split, else the dataset's first)")
	predFile := fs.String("predictions", "", "predictions `FILE`: SWE-bench's JSONL or JSON (instance_id, model_name_or_path, model_patch), or FeatureBench's output.jsonl")
	gold := fs.Bool("gold", false, "evaluate each instance's own patch (the reference solution)")
	empty := fs.Bool("empty", false, "evaluate an empty prediction for each instance (the empty baseline)")
	id := fs.String("run-id", "", "the run's `ID`: its folder under runs/")
	var only multi
	fs.Var(&only, "instance", "evaluate only this instance `ID` (repeatable)")
	workers := fs.Int("workers", 0, "instances evaluated at once (default: eval.workers)")
	attempts := fs.Int("attempts", 1, "attempts per instance: a prediction file may give several (attempt or n_attempt); pass@k over them")
	force := fs.Bool("force", false, "evaluate again what an earlier run of this id finished")
	timeout := fs.Duration("timeout", 0, "time one instance and attempt may take, everything included (default: eval.instance_timeout)")
	scan := fs.Bool("leak-scan", true, "with a dataset whose instances bring their images: scan each image for the instances' solutions first (into runs/<run-id>/"+LeakScanFile+")")
	rest, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	n := 0
	for _, b := range []bool{*predFile != "", *gold, *empty} {
		if b {
			n++
		}
	}
	switch {
	case len(rest) > 0:
		return usageErr("unexpected arguments %q", rest)
	case *dataset == "":
		return usageErr("--dataset is required (e.g. --dataset example/v2)")
	case n != 1:
		return usageErr("give exactly one of --predictions FILE, --gold and --empty")
	case !runID.MatchString(*id):
		return usageErr("--run-id %q: give an id of letters, digits, '.', '_' and '-', e.g. --run-id my-agent-full", *id)
	case *attempts < 1 || *attempts > 100:
		return usageErr("--attempts %d: want 1 to 100", *attempts)
	case given(fs)["timeout"] && *timeout <= 0:
		return usageErr("--timeout %s: want a positive duration, e.g. 30m (eval.instance_timeout's default)", *timeout)
	}
	if err := checkWorkers(fs, *workers); err != nil {
		return err
	}
	pr, err := pf.open(ctx, datasetsOnly)
	if err != nil {
		return err
	}
	ds, sp, ins, err := pr.pick(*dataset, *split, only)
	if err != nil {
		return err
	}
	meta := evaluate.Meta{RunID: *id, Dataset: ds.Key(), Split: sp, Attempts: *attempts, Created: time.Now().UTC()}
	for _, in := range ins {
		meta.Instances = append(meta.Instances, in.InstanceID)
	}
	var lookup func(string, int) (evaluate.Prediction, bool)
	switch {
	case *gold:
		meta.Predictions, meta.Model = "gold", "gold"
		lookup = func(id string, _ int) (evaluate.Prediction, bool) {
			return evaluate.Prediction{Model: "gold", Patch: []byte(ds.Instance(id).Patch)}, true
		}
	case *empty:
		meta.Predictions, meta.Model = "empty", "empty"
		lookup = func(string, int) (evaluate.Prediction, bool) { return evaluate.Prediction{Model: "empty"}, true }
	default:
		byKey, model, sum, err := readPredictions(*predFile, ds, meta.Instances, *attempts)
		if err != nil {
			return err
		}
		abs, _ := filepath.Abs(*predFile)
		meta.Predictions, meta.Model = abs+" sha256:"+sum, model
		lookup = func(id string, a int) (evaluate.Prediction, bool) {
			p, ok := byKey[key(id, a)]
			return p, ok
		}
	}
	lim, err := pr.limits(*timeout)
	if err != nil {
		return err
	}
	eng, err := pr.engine(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	imgs, err := pr.buildImages(ctx, eng, ds, ins, stderr)
	if err != nil {
		return err
	}
	for _, ref := range imgs {
		meta.Images = append(meta.Images, ref)
	}
	sort.Strings(meta.Images)
	w := pr.cfg.Eval.Workers
	if *workers > 0 {
		w = *workers
	}
	b, err := executor.Open(ctx, pr.cfg.Eval, eng, stderr)
	if err != nil {
		return err
	}
	defer b.Close()
	dir := filepath.Join(pr.runsDir(), *id)
	if *scan && ds.ImagesOrDefault() == bench.ImagesInstance {
		// A pulled image is not trusted more than one built here.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(dir, LeakScanFile)); err != nil || *force {
			if err := leakScanRun(ctx, eng, ds, ins, imgs, dir, stderr); err != nil {
				return err
			}
		}
	}
	at := fmt.Sprintf("%d at a time", w)
	if executor.Admits(b.Executor) {
		at = "as many at a time as " + b.Where + " has room for"
	}
	fmt.Fprintf(stderr, "evaluating %d instances of %s %s (%s), %d attempt(s) each, %s, into %s\n",
		len(ins), ds.DisplayName(), sp, meta.Predictions, *attempts, at, dir)
	rr, err := evaluate.Run(ctx, evaluate.Config{
		Meta: meta, Dataset: ds, Predictions: lookup, Gold: *gold, Images: imgs, Dir: dir,
		Workers: w, Force: *force, Limits: lim, Engine: b.Executor, Progress: newProgress(stderr, b.Status), Log: stderr,
	})
	if rr == nil {
		return err
	}
	// err, with a report: attempts that could not be saved, said below.
	fmt.Fprintf(stdout, "%d of %d instances resolved (%.1f%%), %.2f%% of fail-to-pass tests passed; %d not applied, %d errors\n",
		rr.ResolvedInstances, rr.TotalInstances, 100*rr.ResolvedRate, 100*rr.PassedRate, len(rr.NotAppliedIDs), rr.ErrorInstances)
	fmt.Fprintf(stdout, "report: %s\nresults: %s\n", filepath.Join(dir, evaluate.RunReportFile), filepath.Join(dir, evaluate.ResultsFile))
	if err != nil {
		return exitError{code: 1, err: err}
	}
	if rr.ErrorInstances > 0 {
		return exitError{code: 1, err: fmt.Errorf("%d instances could not be evaluated (%s): see their container.log; run the command again to retry them",
			rr.ErrorInstances, strings.Join(rr.ErrorIDs, ", "))}
	}
	return nil
}

func key(id string, attempt int) string { return fmt.Sprintf("%s#%d", id, attempt) }

// readPredictions reads a predictions file and checks it against the run:
// every prediction is for an instance of the dataset (a prediction for
// another dataset is a mistake worth stopping for), within the attempts.
func readPredictions(path string, ds *bench.Dataset, ids []string, attempts int) (map[string]evaluate.Prediction, string, string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, "", "", fmt.Errorf("reading the predictions: %w", err)
	}
	sum := sha256.Sum256(raw)
	preds, err := predictions.Parse(path, raw)
	if err != nil {
		return nil, "", "", err
	}
	wanted := map[string]bool{}
	for _, id := range ids {
		wanted[id] = true
	}
	out := map[string]evaluate.Prediction{}
	models := map[string]bool{}
	var unknown, over []string
	for _, p := range preds {
		if ds.Instance(p.InstanceID) == nil {
			unknown = append(unknown, p.InstanceID)
			continue
		}
		a := max(p.Attempt, 1)
		if a > attempts {
			// Not silently left out: a file of several attempts is graded
			// with --attempts as many.
			over = append(over, fmt.Sprintf("%s:%d: field \"attempt\": is %d, but --attempts is %d", path, p.Line, a, attempts))
			continue
		}
		if !wanted[p.InstanceID] {
			continue
		}
		models[p.Model] = true
		pred := evaluate.Prediction{
			Model: p.Model, Patch: []byte(p.Patch), TokensIn: p.TokensIn, TokensOut: p.TokensOut, Cost: p.Cost, Trajectory: p.Trajectory,
			FailureMode: p.FailureMode,
		}
		if p.Measured {
			file, err := checkMeasured(path, p)
			if err != nil {
				return nil, "", "", err
			}
			pred.Measured, pred.Turns, pred.TrajectoryFile = true, p.Turns, file
		}
		out[key(p.InstanceID, a)] = pred
	}
	if n := len(over); n > 0 {
		if n > 5 {
			over = append(over[:5], fmt.Sprintf("and %d more", n-5))
		}
		return nil, "", "", fmt.Errorf("%d predictions are for attempts beyond --attempts (give --attempts N to grade N attempts):\n  %s", n, strings.Join(over, "\n  "))
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		if len(unknown) > 5 {
			unknown = append(unknown[:5], "…")
		}
		return nil, "", "", fmt.Errorf("%s: %d predictions are for instances %s does not have (%s): predictions for another dataset?",
			path, len(unknown), ds.DisplayName(), strings.Join(unknown, ", "))
	}
	var names []string
	for m := range models {
		if m != "" {
			names = append(names, m)
		}
	}
	sort.Strings(names)
	return out, strings.Join(names, ", "), hex.EncodeToString(sum[:]), nil
}

// checkMeasured checks a measured prediction against its trajectory: the
// file it names (relative to the predictions file's folder, inside it)
// replays to its turns, tokens and cost, as the proxy counted them. It
// returns the trajectory's path.
func checkMeasured(predPath string, p predictions.Prediction) (string, error) {
	where := fmt.Sprintf("%s:%d: instance %s: field %%q", predPath, p.Line, p.InstanceID)
	var rel string
	if err := json.Unmarshal(p.Trajectory, &rel); err != nil || !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", fmt.Errorf(where+": %s is not a file under the predictions' folder", "trajectory", p.Trajectory)
	}
	file := filepath.Join(filepath.Dir(predPath), filepath.FromSlash(rel))
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf(where+": %w", "trajectory", err)
	}
	defer f.Close()
	tot, err := meter.Replay(f, nil)
	if err != nil {
		return "", fmt.Errorf(where+": %s does not replay: %w", "trajectory", file, err)
	}
	cost := &tot.Cost
	if len(tot.Unpriced) > 0 {
		cost = nil
	}
	for _, c := range []struct {
		field     string
		got, want any
	}{
		{"turns", p.Turns, int64(tot.Turns)}, {"tokens_in", p.TokensIn, tot.TokensIn}, {"tokens_out", p.TokensOut, tot.TokensOut},
	} {
		if c.got == nil || reflect.ValueOf(c.got).Elem().Interface() != c.want {
			return "", fmt.Errorf(where+": is %s but its trajectory %s counts %v", c.field, show(c.got), file, c.want)
		}
	}
	if (cost == nil) != (p.Cost == nil) || cost != nil && math.Abs(*cost-*p.Cost) > 1e-9 {
		return "", fmt.Errorf(where+": is %s but its trajectory %s costs %s", "cost", show(p.Cost), file, show(cost))
	}
	return file, nil
}

// show writes a value as JSON, a pointer as what it points to.
func show(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}
