package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/infer"
	"github.com/featbench/featbench/internal/meter"
)

func cmdInfer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("infer", "--dataset NAME/VERSION --split SPLIT (--agent NAME | --mode prompt) --run-id ID [flags]",
		"Runs an agent of featbench.toml's [[agents]] on a split's instances, each in a container of its\n"+
			"environment image at the starting point grading uses, with the metering proxy as its only way\n"+
			"out, into runs/<run-id>/: predictions.jsonl (for eval run: the diffs, and the tokens, cost, turns\n"+
			"and duration measured by the proxy and the harness), and per instance under infer/ the trajectory,\n"+
			"the agent's output and a record. A finished instance is skipped when the same command runs again.\n"+
			"--mode prompt runs no agent: one request per instance through the same proxy, with the statement and\n"+
			"code as context (--context oracle|bm25, --budget TOKENS), whose answer (a diff, or whole files) is\n"+
			"applied at the starting point and diffed into the prediction (FEA-Bench's setting).", stderr)
	var pf projectFlags
	pf.register(fs)
	dataset := fs.String("dataset", "", "the dataset `NAME/VERSION`, e.g. example/v3")
	split := fs.String("split", "", "the `SPLIT` (default: site.default_split, else the dataset's first)")
	agentName := fs.String("agent", "", "the agent: the `NAME` of an [[agents]] table of featbench.toml")
	model := fs.String("model", "", "the `MODEL` the agent asks for (default: the agent's model)")
	upstream := fs.String("upstream", "", "the model API's base `URL` the proxy forwards to (default: the agent's upstream)")
	id := fs.String("run-id", "", "the run's `ID`: its folder under runs/")
	var only multi
	fs.Var(&only, "instance", "run only on this instance `ID` (repeatable)")
	workers := fs.Int("workers", 0, "instances run at once on the local engine (default: eval.workers; a swarm admits by its room)")
	force := fs.Bool("force", false, "run again on instances an earlier run of this id finished")
	mode := fs.String("mode", "agent", "`agent` runs the agent; prompt sends the model one request with the statement and code as context (FEA-Bench's setting) and makes its answer the prediction")
	contextKind := fs.String("context", infer.ContextBM25, "prompt mode's code context: `oracle` (the files the gold patch changes) or bm25 (files ranked by BM25 against the statement)")
	budget := fs.Int("budget", 27000, "prompt mode: the most `TOKENS` the prompt may take (estimated); files are added while they fit")
	answer := fs.String("answer", infer.AnswerDiff, "prompt mode: what the model answers with, `diff` or files (whole files)")
	maxOutput := fs.Int("max-output", 4096, "prompt mode: the answer's token limit (max_tokens)")
	promptTimeout := fs.Duration("timeout", 10*time.Minute, "prompt mode: the model's time for one answer")
	keyEnv := fs.String("api-key-env", "", "prompt mode without --agent: the `VAR` holding the upstream's key")
	every := fs.Duration("progress-every", 30*time.Second, "how often a line says what each agent at work (and npm fetching an agent's packages) did so far; 0 for never")
	rest, err := parse(fs, args, stdout)
	if err != nil {
		return err
	}
	prompt := *mode == "prompt"
	switch {
	case len(rest) > 0:
		return usageErr("unexpected arguments %q", rest)
	case *mode != "agent" && *mode != "prompt":
		return usageErr("--mode %q: give agent or prompt", *mode)
	case *dataset == "":
		return usageErr("--dataset is required (e.g. --dataset example/v3)")
	case *agentName == "" && !prompt:
		return usageErr("--agent is required: the name of an [[agents]] table of featbench.toml")
	case !runID.MatchString(*id):
		return usageErr("--run-id %q: give an id of letters, digits, '.', '_' and '-', e.g. --run-id claude-code-lite", *id)
	case prompt && *contextKind != infer.ContextOracle && *contextKind != infer.ContextBM25:
		return usageErr("--context %q: give %s or %s", *contextKind, infer.ContextOracle, infer.ContextBM25)
	case prompt && *answer != infer.AnswerDiff && *answer != infer.AnswerFiles:
		return usageErr("--answer %q: give %s or %s", *answer, infer.AnswerDiff, infer.AnswerFiles)
	case prompt && (*budget < 0 || *maxOutput < 0 || *promptTimeout <= 0):
		return usageErr("--budget and --max-output cannot be negative, and --timeout must be positive")
	case *every < 0:
		return usageErr("--progress-every %s: want a duration of 0 (never) or more, e.g. 30s", *every)
	}
	if err := checkWorkers(fs, *workers); err != nil {
		return err
	}
	if *upstream != "" {
		if u, err := url.Parse(*upstream); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageErr("--upstream %q: want an http(s) URL, the model API's base (e.g. https://api.openai.com/v1)", *upstream)
		}
	}
	pr, err := pf.open(ctx, datasetsOnly)
	if err != nil {
		return err
	}
	if prompt {
		return cmdInferPrompt(ctx, pr, promptRun{dataset: *dataset, split: *split, agent: *agentName, model: *model, upstream: *upstream,
			keyEnv: *keyEnv, id: *id, only: only, workers: *workers, force: *force, every: *every,
			p: infer.Prompt{Context: *contextKind, Budget: *budget, MaxOutput: *maxOutput, Answer: *answer, Timeout: *promptTimeout}}, stdout, stderr)
	}
	ac := pr.cfg.Agent(*agentName)
	if ac == nil {
		return agentErr(pr, *agentName)
	}
	ds, sp, ins, err := pr.pick(*dataset, *split, only)
	if err != nil {
		return err
	}
	a := infer.Agent{Agent: *ac, Model: ac.Model, Upstream: *upstream, Image: map[string]string{}}
	if *model != "" {
		a.Model = *model
	}
	if a.Model == "" {
		return usageErr("--model is required: the agent %s names no model", ac.Name)
	}
	if a.Upstream == "" && ac.Upstream == "" {
		return usageErr("--upstream is required: the agent %s names no upstream", ac.Name)
	}
	if ac.APIKeyEnv != "" {
		a.Key = os.Getenv(ac.APIKeyEnv)
		if a.Key == "" {
			fmt.Fprintf(stderr, "warning: %s is not set: the proxy sends the upstream no key\n", ac.APIKeyEnv)
		}
	}
	for _, name := range ac.Env {
		if v, ok := os.LookupEnv(name); ok {
			a.Env = append(a.Env, name+"="+v)
		}
	}
	// Before anything costs time or money: an upstream that refuses the
	// key or cannot be reached would fail every instance.
	if err := checkUpstream(ctx, a); err != nil {
		return err
	}
	lim, err := evaluate.ConfigLimits(pr.cfg.Eval)
	if err != nil {
		return err
	}
	eng, err := pr.engine(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	envs, err := pr.buildImages(ctx, eng, ds, ins, stderr)
	if err != nil {
		return err
	}
	install := ""
	if ac.Install != "" {
		install = filepath.Join(pr.root, ac.Install)
	}
	for repo, env := range envs {
		ref, err := infer.EnsureImage(ctx, eng, infer.ImageSpec{Agent: ac.Name, Install: install, Env: env,
			Prefix: pr.cfg.Eval.ImagePrefix, Cache: filepath.Join(pr.root, ".cache", "agents"), ProgressEvery: *every}, stderr)
		if err != nil {
			return err
		}
		a.Image[repo] = ref
	}
	meta := infer.Meta{RunID: *id, Dataset: ds.Key(), Split: sp, Agent: ac.Name, Model: a.Model, Created: time.Now().UTC()}
	for _, in := range ins {
		meta.Instances = append(meta.Instances, in.InstanceID)
	}
	w := pr.cfg.Eval.Workers
	if *workers > 0 {
		w = *workers
	}
	// The agents' containers run where eval run's do: the images are
	// built here, and a swarm pushes them to its registry.
	b, err := executor.Open(ctx, pr.cfg.Eval, eng, stderr)
	if err != nil {
		return err
	}
	defer b.Close()
	at := fmt.Sprintf(", %d at a time", w)
	if executor.Admits(b.Executor) {
		at = " on " + b.Where + ", as many at a time as it has room for"
	}
	dir := filepath.Join(pr.runsDir(), *id)
	fmt.Fprintf(stderr, "running %s (%s) on %d instances of %s %s%s, into %s\n",
		ac.Name, a.Model, len(ins), ds.DisplayName(), sp, at, dir)
	recs, err := infer.Run(ctx, infer.Config{
		Meta: meta, Dataset: ds, Agent: a, Prices: pr.cfg.Prices, Dir: dir, Workers: w, Force: *force,
		Container: lim.Container, Engine: b.Executor, Progress: newInferProgress(stderr, b.Status), ProgressEvery: *every, Log: stderr,
	})
	return inferEnded(pr, ds, sp, dir, *id, ins, recs, err, a, stdout)
}

// checkUpstream checks the agent's upstream before the run (and before
// its images are built): a refused key or an unreachable upstream stops
// the command at once, with the cause.
func checkUpstream(ctx context.Context, a infer.Agent) error {
	err := infer.CheckUpstream(ctx, a)
	var d *meter.Down
	if errors.As(err, &d) {
		return fmt.Errorf("%w\n%s", err, downHint(a, d))
	}
	return err
}

// downHint says what to check when the upstream is down.
func downHint(a infer.Agent, d *meter.Down) string {
	if d.Status == 0 {
		return "no instance was run: check the upstream's URL (--upstream, or the agent's upstream in featbench.toml) and that this machine reaches it"
	}
	if a.APIKeyEnv == "" {
		return "no instance was run: the agent " + a.Name + " names no api_key_env, so the proxy sends no key"
	}
	state := "is set"
	if a.Key == "" {
		state = "is not set"
	}
	return "no instance was run: the key is read from $" + a.APIKeyEnv + " (api_key_env of " + a.Name + "), which " + state
}

// inferEnded reports the end of an infer run: an upstream found down
// during it (the run stopped; the instances in flight were not recorded),
// instances not saved, or the summary.
func inferEnded(pr *project, ds *bench.Dataset, sp, dir, id string, ins []*bench.Instance, recs []*infer.Record, err error, a infer.Agent, stdout io.Writer) error {
	var d *meter.Down
	if errors.As(err, &d) {
		return fmt.Errorf("stopped: %w\nthe instances in flight were not recorded; what finished before is kept: run the command again once the upstream answers (%s)",
			err, strings.TrimPrefix(downHint(a, d), "no instance was run: "))
	}
	var unsaved *infer.UnsavedError
	if err != nil && !errors.As(err, &unsaved) {
		return err
	}
	serr := inferSummary(pr, ds, sp, dir, id, ins, recs, stdout)
	if err != nil {
		// Not saved: said after the summary, which counts what was.
		return exitError{code: 1, err: errors.Join(err, serr)}
	}
	return serr
}

// agentErr is the usage error of an --agent that featbench.toml lacks.
func agentErr(pr *project, name string) error {
	var names []string
	for _, a := range pr.cfg.Agents {
		names = append(names, a.Name)
	}
	return usageErr("--agent %s: featbench.toml has no such [[agents]] table (it has: %s)", name, strings.Join(names, ", "))
}

// inferSummary prints what a run measured and what to run next.
func inferSummary(pr *project, ds *bench.Dataset, sp, dir, id string, ins []*bench.Instance, recs []*infer.Record, stdout io.Writer) error {
	var tin, tout int64
	var cost float64
	priced := true
	modes := map[string]int{}
	harness := 0
	for _, r := range recs {
		tin, tout = tin+r.TokensIn, tout+r.TokensOut
		if r.Cost != nil {
			cost += *r.Cost
		} else {
			priced = false
		}
		if r.FailureMode != "" {
			modes[r.FailureMode]++
		}
	}
	// A harness failure is no prediction, so not in recs: its record
	// says it.
	for _, in := range ins {
		if r, err := infer.ReadRecord(filepath.Join(dir, infer.Folder, in.InstanceID)); err == nil && r.FailureMode == infer.HarnessError {
			harness++
		}
	}
	if harness > 0 {
		modes[infer.HarnessError] = harness
	}
	var ms []string
	for m, n := range modes {
		ms = append(ms, fmt.Sprintf("%s %d", m, n))
	}
	upstream := modes[infer.UpstreamError]
	sort.Strings(ms)
	costText := fmt.Sprintf("$%.4f", cost)
	if !priced {
		costText += " (some models have no price in [prices])"
	}
	fmt.Fprintf(stdout, "%d predictions; tokens in %d, out %d, cost %s; failures: %s\n", len(recs), tin, tout, costText, orNone(strings.Join(ms, ", ")))
	rel := filepath.Join(pr.cfg.Eval.Runs, id, infer.PredictionsFile)
	fmt.Fprintf(stdout, "predictions: %s\nnext: go run ./cmd/eval run --dataset %s --split %s --predictions %s --run-id %s\n", filepath.Join(dir, infer.PredictionsFile), ds.Key(), sp, rel, id)
	// Failures that say nothing of the agent: the next run retries them,
	// and until then the run is not whole.
	var why []string
	if upstream > 0 {
		why = append(why, fmt.Sprintf("the upstream failed or refused the agent's last request on %d instances (UpstreamError: see their infer/<instance>/record.json)", upstream))
	}
	if harness > 0 {
		why = append(why, fmt.Sprintf("the harness could not run the agent on %d instances (HarnessError: see their infer/<instance>/container.log)", harness))
	}
	if len(why) > 0 {
		return exitError{code: 1, err: fmt.Errorf("%s; run the command again to retry them", strings.Join(why, "; "))}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// promptRun is what `eval infer --mode prompt` was asked.
type promptRun struct {
	dataset, split, agent, model, upstream, keyEnv, id string
	only                                               []string
	workers                                            int
	force                                              bool
	every                                              time.Duration
	p                                                  infer.Prompt
}

// cmdInferPrompt runs prompt mode: one request per instance through the
// metering proxy, no agent. The model, its upstream and limits come from
// an [[agents]] table when --agent names one (its command is not run),
// else from --model, --upstream and --api-key-env. The client speaks
// OpenAI's chat completions.
func cmdInferPrompt(ctx context.Context, pr *project, q promptRun, stdout, stderr io.Writer) error {
	a := infer.Agent{Image: map[string]string{}, Upstream: q.upstream, Model: q.model}
	a.Name, a.API, a.APIKeyEnv = "prompt-"+q.p.Context, "openai", q.keyEnv
	if q.agent != "" {
		ac := pr.cfg.Agent(q.agent)
		if ac == nil {
			return agentErr(pr, q.agent)
		}
		a.Agent = *ac
		a.Name = ac.Name + "-prompt-" + q.p.Context
		if a.Model == "" {
			a.Model = ac.Model
		}
		if q.keyEnv != "" {
			a.APIKeyEnv = q.keyEnv
		}
	}
	switch {
	case a.Model == "":
		return usageErr("--model is required in prompt mode (or an --agent that names one)")
	case a.Upstream == "" && a.Agent.Upstream == "":
		return usageErr("--upstream is required in prompt mode (or an --agent that names one)")
	case a.API != "openai":
		return usageErr("prompt mode speaks OpenAI's chat completions; the agent %s's api is %s", q.agent, a.API)
	}
	if a.APIKeyEnv != "" {
		if a.Key = os.Getenv(a.APIKeyEnv); a.Key == "" {
			fmt.Fprintf(stderr, "warning: %s is not set: the proxy sends the upstream no key\n", a.APIKeyEnv)
		}
	}
	if err := checkUpstream(ctx, a); err != nil {
		return err
	}
	ds, sp, ins, err := pr.pick(q.dataset, q.split, q.only)
	if err != nil {
		return err
	}
	lim, err := evaluate.ConfigLimits(pr.cfg.Eval)
	if err != nil {
		return err
	}
	eng, err := pr.engine(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	if a.Image, err = pr.buildImages(ctx, eng, ds, ins, stderr); err != nil {
		return err
	}
	meta := infer.Meta{RunID: q.id, Dataset: ds.Key(), Split: sp, Agent: a.Name, Model: a.Model, Created: time.Now().UTC()}
	for _, in := range ins {
		meta.Instances = append(meta.Instances, in.InstanceID)
	}
	w := pr.cfg.Eval.Workers
	if q.workers > 0 {
		w = q.workers
	}
	b, err := executor.Open(ctx, pr.cfg.Eval, eng, stderr)
	if err != nil {
		return err
	}
	defer b.Close()
	dir := filepath.Join(pr.runsDir(), q.id)
	fmt.Fprintf(stderr, "asking %s once per instance (%s context, budget %d tokens, answer as %s) on %d instances of %s %s, into %s\n",
		a.Model, q.p.Context, q.p.Budget, q.p.Answer, len(ins), ds.DisplayName(), sp, dir)
	p := q.p
	recs, err := infer.Run(ctx, infer.Config{
		Meta: meta, Dataset: ds, Agent: a, Prices: pr.cfg.Prices, Dir: dir, Workers: w, Force: q.force,
		Container: lim.Container, Engine: b.Executor, Progress: newInferProgress(stderr, b.Status), ProgressEvery: q.every, Prompt: &p,
	})
	return inferEnded(pr, ds, sp, dir, q.id, ins, recs, err, a, stdout)
}
