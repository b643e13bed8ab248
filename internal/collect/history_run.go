package collect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/components"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/history"
	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/integrity"
	"github.com/featbench/featbench/internal/newcomp"
	"github.com/featbench/featbench/internal/pydefs"
)

// The stages of the history-based methods (see historyMethod), besides
// StageEnv (here: the base image), StageVerify, StageStatements and
// StageDataset, which they share with the test-driven method.
const (
	StageHistory = "history" // releases, notes and pull requests read from git
	StageSelect  = "select"  // the method's candidate pull requests
	StageFilter  = "filter"  // the shared and the method's filters
)

// HistoryStages lists the history-based methods' stages in order.
var HistoryStages = []string{StageEnv, StageHistory, StageSelect, StageFilter, StageVerify, StageStatements, StageDataset}

// historyRecipe is the version of the history-based pipeline: bump it when
// a change makes stored outputs wrong.
// 2: a squash commit's default list of commits is no description; 3: an
// entry is matched by the names it refers to before its literals.
const historyRecipe = 3

// The versions of the verification and of the statements of pull
// requests, apart from historyRecipe: their digests name every input they
// read, so reading the history differently does not make them again.
const (
	prVerifyRecipe    = 3 // 2: the gold runs derive canaries and the gold patch's audit; 3: files that tamper with pytest's machinery give no fail-to-pass or pass-to-pass test
	prStatementRecipe = 2 // 2: a dunder name keeps its underscores
)

// testCode is the rule a pull request's diff is split by: a path is test
// code when the test-driven method takes it for test code (isTestPath:
// never extracted) or the evaluation harness does (integrity.IsTestPath:
// its guard puts such files back as the base has them, so a code patch
// changing one would be undone when graded).
func testCode(p string) bool {
	return isTestPath(p) || integrity.IsTestPath(p)
}

// historyRun is the collection from one repository by a history-based
// method.
type historyRun struct {
	o    Options
	rc   config.Repo
	m    historyMethod
	w    work
	lim  container.Limits
	tout config.RepoTimeouts
	res  *repoResult
	git  history.Git

	cur        string
	needStored bool
	reused     bool

	base   string // the repository's base image: its Python and packages
	hist   *history.History
	histD  string // the digest of hist, for the stages reading it
	cands  []*prCandidate
	funnel []bench.CollectionStep
	mu     sync.Mutex
	// unstored: the select stage's output is not to be stored (an LLM
	// failed and the rules stood in): the next run asks again.
	unstored bool
}

func newHistoryRun(o Options, rc config.Repo) (*historyRun, error) {
	mk, ok := historyMethods[rc.Method]
	if !ok {
		return nil, fmt.Errorf("method %q has no implementation here", rc.Method)
	}
	r := newRepoRun(o, rc)
	h := &historyRun{o: o, rc: rc, m: mk(rc), w: r.w, lim: r.lim, tout: r.tout, res: r.res}
	h.res.report.Method = rc.Method
	return h, nil
}

func (r *historyRun) logf(format string, args ...any) {
	fmt.Fprintf(r.o.Log, "%s: "+format+"\n", append([]any{r.rc.Repository}, args...)...)
}

// step adds a funnel step's count.
func (r *historyRun) step(name string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.funnel = append(r.funnel, bench.CollectionStep{Step: name, Count: n})
}

// dropSubject records a drop of something that is not a pull request (a
// release, an entry of its notes), by a subject a person reads.
func (r *historyRun) dropSubject(stage, subject, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res.report.Drops = append(r.res.report.Drops, Drop{File: subject, Stage: stage, Reason: r.w.reason(stage, subject+" dropped", text, r.logf)})
}

// dropPull records why a candidate stopped at a stage.
func (r *historyRun) dropPull(pc *prCandidate, stage, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	pc.dead = true
	r.res.report.Drops = append(r.res.report.Drops, Drop{Pull: pc.Number, Stage: stage, Reason: r.w.reason(stage, fmt.Sprintf("pull request #%d dropped", pc.Number), text, r.logf)})
}

func (r *historyRun) alive() []*prCandidate {
	var out []*prCandidate
	for _, pc := range r.cands {
		if !pc.dead {
			out = append(out, pc)
		}
	}
	return out
}

// cached and store are repoRun's, for this run's work folder.
func (r *historyRun) cached(d string, v any, item ...string) (bool, error) {
	if r.o.Force && !r.needStored {
		return false, nil
	}
	if r.w.load(d, v, r.cur, item...) {
		r.reused = true
		return true, nil
	}
	if r.needStored {
		what := r.cur
		if len(item) > 0 {
			what += " (" + strings.Join(item, ", ") + ")"
		}
		return false, fmt.Errorf("stage %s has no stored output for the current inputs: run the stages before %s first (without --stage)", what, r.o.Stage)
	}
	return false, nil
}

func (r *historyRun) store(d string, v any, item ...string) error {
	return r.w.save(d, v, r.cur, item...)
}

// llmKey is what of the LLM's configuration changes its answers.
func (r *historyRun) llmKey() string {
	if r.o.LLM == nil {
		return ""
	}
	l := r.o.Config.LLM
	return digest(l.Endpoint, l.Model, l.Temperature, l.MaxTokens, l.Seed)
}

// run runs the stages in order, as repoRun.run does.
func (r *historyRun) run(ctx context.Context) (*repoResult, error) {
	if err := os.MkdirAll(r.w.dir, 0o755); err != nil {
		err = fmt.Errorf("work folder: %w", err)
		r.fail(StageEnv, err)
		return r.res, err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, r.tout.Repo)
	defer cancel()
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{StageEnv, r.stageBase}, {StageHistory, r.stageHistory}, {StageSelect, r.stageSelect},
		{StageFilter, r.stageFilter}, {StageVerify, r.stageVerify}, {StageStatements, r.stageStatements},
	}
	last := len(steps) - 1
	if r.o.Stage != "" && r.o.Stage != StageDataset {
		last = slices.Index(HistoryStages, r.o.Stage)
		if last < 0 || last >= len(steps) {
			err := fmt.Errorf("stage %s is not a stage of method %s (its stages: %s)", r.o.Stage, r.rc.Method, strings.Join(HistoryStages, ", "))
			r.fail(r.o.Stage, err)
			return r.res, err
		}
	}
	for i, s := range steps[:last+1] {
		start := time.Now()
		r.cur = s.name
		r.needStored = i < last && r.o.Stage != "" && r.o.Stage != StageDataset
		err := s.fn(ctx)
		r.o.report.addStage(stagesKey(r.rc.Repository, r.rc.Method), s.name, time.Since(start), r.reused)
		r.reused = false
		if err != nil {
			if ctx.Err() != nil && parent.Err() == nil {
				err = fmt.Errorf("repo_timeout (%s) passed: %w", r.rc.RepoTimeout, err)
			}
			r.fail(s.name, err)
			return r.res, fmt.Errorf("stage %s: %w", s.name, err)
		}
	}
	if last == len(steps)-1 {
		r.gather()
	}
	r.finish()
	return r.res, nil
}

func (r *historyRun) fail(stage string, err error) {
	r.res.report.Failure = &Failure{Stage: stage, Reason: r.w.reason(stage, r.rc.Repository+" failed", err.Error(), r.logf)}
	r.res.report.Funnel = r.funnel
}

// finish puts the funnel so far into the report (a stage run alone ends
// there).
func (r *historyRun) finish() {
	r.res.report.Funnel = r.funnel
}

// gitDir is the git source on this machine: history is read offline.
func (r *historyRun) gitDir() (string, error) {
	src := r.rc.Source
	if strings.Contains(src, "://") {
		return "", fmt.Errorf("source %q: method %s reads the history of a git repository on this machine; clone it and give its path", src, r.rc.Method)
	}
	if !filepath.IsAbs(src) {
		src = filepath.Join(r.o.Root, filepath.FromSlash(src))
	}
	if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("source %q is not a git repository on this machine", r.rc.Source)
	}
	return src, nil
}

// stageBase builds (or finds) the base image of the repository's Python
// and packages: the pull requests' environments are built on it, and
// the Python definitions are read in it.
func (r *historyRun) stageBase(ctx context.Context) error {
	dir, err := r.gitDir()
	if err != nil {
		return err
	}
	r.git = history.Git{Dir: dir}
	log, err := os.OpenFile(r.w.file("env.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening env.log: %w", err)
	}
	defer log.Close()
	base, err := images.EnsureBase(ctx, r.o.Engine, images.BaseSpec{Python: r.rc.Python, Packages: r.rc.Packages, Prefix: r.o.Config.Eval.ImagePrefix}, log)
	if err != nil {
		return fmt.Errorf("base image (log: %s): %w", r.w.file("env.log"), err)
	}
	r.base = base
	return nil
}

// historyOut is the history stage's output.
type historyOut struct {
	History *history.History `json:"history"`
}

// window is the configured since/until (checked by config).
func (r *historyRun) window() history.Window {
	var w history.Window
	w.Since, _ = time.Parse(time.DateOnly, r.rc.Since)
	w.Until, _ = time.Parse(time.DateOnly, r.rc.Until)
	return w
}

// stageHistory reads the releases, their notes and the pull requests.
func (r *historyRun) stageHistory(ctx context.Context) error {
	export, exportSum := "", ""
	if r.rc.Pulls != "" {
		export = r.rc.Pulls
		if !filepath.IsAbs(export) {
			export = filepath.Join(r.o.Root, filepath.FromSlash(export))
		}
		raw, err := os.ReadFile(export)
		if err != nil {
			return fmt.Errorf("pulls: %w", err)
		}
		sum := sha256.Sum256(raw)
		exportSum = hex.EncodeToString(sum[:])
	}
	tip, err := r.git.Resolve(ctx, r.rc.Commit)
	if err != nil {
		return fmt.Errorf("commit %s: %w", r.rc.Commit, err)
	}
	d := digest("history", recipe, historyRecipe, tip, r.rc.Since, r.rc.Until, r.rc.Changelog, exportSum)
	var out historyOut
	ok, err := r.cached(d, &out)
	if err != nil {
		return err
	}
	if !ok {
		out.History, err = history.Read(ctx, r.git, history.Options{Tip: tip, Window: r.window(), Changelog: r.rc.Changelog, Export: export, IsTest: testCode})
		if err != nil {
			return err
		}
		if err := r.store(d, out); err != nil {
			return err
		}
	}
	r.hist, r.histD = out.History, d
	r.logf("history up to %s: %d releases, %d pull requests (changelog %q)", short(tip), len(r.hist.Releases), len(r.hist.Pulls), r.hist.Changelog)
	return nil
}

func short(h string) string { return h[:min(12, len(h))] }

// selectOut is the select stage's output: the candidates, the funnel's
// first steps and the drops on the way.
type selectOut struct {
	Candidates []*prCandidate         `json:"candidates"`
	Funnel     []bench.CollectionStep `json:"funnel"`
	Drops      []Drop                 `json:"drops"`
}

// stageSelect asks the method for its candidates.
func (r *historyRun) stageSelect(ctx context.Context) error {
	d := digest("select", recipe, historyRecipe, r.histD, r.m.Name(), r.rc.ReleaseKinds, r.llmKey())
	var out selectOut
	ok, err := r.cached(d, &out)
	if err != nil {
		return err
	}
	if !ok {
		before := len(r.res.report.Drops)
		r.funnel = nil
		cands, err := r.m.Select(ctx, r)
		if err != nil {
			return err
		}
		out = selectOut{Candidates: cands, Funnel: r.funnel, Drops: slices.Clone(r.res.report.Drops[before:])}
		r.res.report.Drops = r.res.report.Drops[:before]
		if !r.unstored {
			if err := r.store(d, out); err != nil {
				return err
			}
		}
	}
	r.cands, r.funnel = out.Candidates, out.Funnel
	r.res.report.Drops = append(r.res.report.Drops, out.Drops...)
	r.logf("selected %d pull requests", len(r.cands))
	return nil
}

// filterOut is the filter stage's output: per candidate (by number) the
// drop's step and reason ("" when it passed) and its definitions.
type filterOut struct {
	Results []filterResult `json:"results"`
}

type filterResult struct {
	Number     int                      `json:"number"`
	Step       string                   `json:"step,omitempty"`
	Reason     string                   `json:"reason,omitempty"`
	Defs       map[string]fileDefs      `json:"defs,omitempty"`
	Components *components.ChangeResult `json:"components,omitempty"`
	Intent     *newcomp.Intent          `json:"intent,omitempty"`
}

// Shared filter steps, in order.
const (
	stepReadable = "with a readable diff"
	stepPython   = "changing Python code"
	stepTests    = "with a test patch"
)

// pydefsRecipe is the version of the definitions' reading.
var pydefsRecipe = digest(string(pydefs.Script()))

// stageFilter applies the shared filters, reads the Python definitions of
// the code patches' files before and after, and applies the method's
// filters; each filter is a step of the funnel.
func (r *historyRun) stageFilter(ctx context.Context) error {
	var steps []string
	steps = append(steps, stepReadable, stepPython, stepTests)
	for _, f := range r.m.Filters() {
		steps = append(steps, f.Step)
	}
	d := digest("filter", recipe, historyRecipe, r.candsDigest(), r.base, pydefsRecipe, steps, methodKey(r.m), r.llmKey())
	var out filterOut
	ok, err := r.cached(d, &out)
	if err != nil {
		return err
	}
	if !ok {
		out, err = r.filter(ctx)
		if err != nil {
			return err
		}
		if !r.unstored {
			if err := r.store(d, out); err != nil {
				return err
			}
		}
	}
	byNum := map[int]filterResult{}
	for _, fr := range out.Results {
		byNum[fr.Number] = fr
	}
	counts := map[string]int{}
	for _, pc := range r.cands {
		fr := byNum[pc.Number]
		pc.Defs, pc.Components, pc.Intent = fr.Defs, fr.Components, fr.Intent
		if fr.Reason != "" {
			r.dropPull(pc, StageFilter, fr.Reason)
		}
		for _, s := range steps {
			if fr.Step == s {
				break
			}
			counts[s]++
		}
	}
	for _, s := range steps {
		r.step(s, counts[s])
	}
	r.logf("filtered: %d pull requests left", len(r.alive()))
	return nil
}

func (r *historyRun) candsDigest() string {
	var parts []any
	for _, pc := range r.cands {
		parts = append(parts, pc.Number, pc.Base, pc.Merge, pc.Patches, pc.Release, pc.Entry, pc.Kind)
	}
	return digest(parts...)
}

// filter runs the filters on every candidate.
func (r *historyRun) filter(ctx context.Context) (filterOut, error) {
	var out filterOut
	res := map[int]*filterResult{}
	var needDefs []*prCandidate
	for _, pc := range r.cands {
		fr := &filterResult{Number: pc.Number}
		res[pc.Number] = fr
		out.Results = append(out.Results, filterResult{})
		p := pc.Patches
		switch {
		case pc.Problem != "":
			fr.Step, fr.Reason = stepReadable, pc.Problem
		case len(history.PythonFiles(p.CodeFiles)) == 0:
			fr.Step, fr.Reason = stepPython, "the code patch changes no Python file"+omittedNote(p)
		case len(p.TestFiles) == 0:
			fr.Step, fr.Reason = stepTests, "no test patch: the pull request changes no test file"
		case p.TestAdded == 0 && len(p.Deleted) > 0:
			fr.Step, fr.Reason = stepTests, fmt.Sprintf("the test patch only deletes tests (%s)", strings.Join(p.Deleted, ", "))
		case p.TestAdded == 0:
			fr.Step, fr.Reason = stepTests, "the test patch adds no line to a Python test file"
		default:
			needDefs = append(needDefs, pc)
		}
	}
	if len(needDefs) > 0 {
		defs, err := r.readDefs(ctx, needDefs)
		if err != nil {
			return out, err
		}
		for _, pc := range needDefs {
			pc.Defs = defs[pc.Number]
			res[pc.Number].Defs = pc.Defs
		}
		// Each filter on the candidates the ones before it left, its
		// preparation (a container, the LLM) on all of them at once.
		left := needDefs
		for _, f := range r.m.Filters() {
			if f.Prepare != nil && len(left) > 0 {
				if err := f.Prepare(ctx, r, left); err != nil {
					return out, fmt.Errorf("%s: %w", f.Step, err)
				}
			}
			var next []*prCandidate
			for _, pc := range left {
				if why := f.Drop(pc); why != "" {
					res[pc.Number].Step, res[pc.Number].Reason = f.Step, why
					continue
				}
				next = append(next, pc)
			}
			left = next
		}
		for _, pc := range needDefs {
			res[pc.Number].Components, res[pc.Number].Intent = pc.Components, pc.Intent
		}
	}
	for i, pc := range r.cands {
		out.Results[i] = *res[pc.Number]
	}
	return out, nil
}

func omittedNote(p history.Patches) string {
	if len(p.Omitted) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s left out: %s)", p.Omitted[0].Path, p.Omitted[0].Reason)
}

// readDefs reads the definitions of every Python file of the candidates'
// code patches, before and after, in one container of the base image.
func (r *historyRun) readDefs(ctx context.Context, cands []*prCandidate) (map[int]map[string]fileDefs, error) {
	var req pydefs.Request
	type where struct {
		pr     int
		file   string
		before bool
	}
	var keys []where
	for _, pc := range cands {
		for _, f := range history.PythonFiles(pc.Patches.CodeFiles) {
			for _, side := range []struct {
				commit string
				before bool
			}{{pc.Base, true}, {pc.Merge, false}} {
				data, ok, err := r.git.ReadFile(ctx, side.commit, f)
				if err != nil {
					return nil, err
				}
				if !ok {
					continue // added or deleted: no version on this side
				}
				keys = append(keys, where{pc.Number, f, side.before})
				req.Files = append(req.Files, pydefs.Source{Key: fmt.Sprintf("%d %t %s", pc.Number, side.before, f), Source: string(data)})
			}
		}
	}
	out := map[int]map[string]fileDefs{}
	for _, pc := range cands {
		out[pc.Number] = map[string]fileDefs{}
		for _, f := range history.PythonFiles(pc.Patches.CodeFiles) {
			out[pc.Number][f] = fileDefs{}
		}
	}
	if len(req.Files) > 0 {
		res, err := r.runPydefs(ctx, req)
		if err != nil {
			return nil, err
		}
		for i, k := range keys {
			fd := out[k.pr][k.file]
			f := res.Files[i]
			if f.Error != "" {
				fd.Error = fmt.Sprintf("%s cannot be read by Python %s (%s): %s", k.file, r.pythonVersion(), map[bool]string{true: "before", false: "after"}[k.before], f.Error)
			}
			if k.before {
				fd.Before = f.Defs
			} else {
				fd.After = f.Defs
			}
			out[k.pr][k.file] = fd
		}
	}
	for _, files := range out {
		for f, fd := range files {
			fd.Changes = pydefs.Compare(fd.Before, fd.After)
			files[f] = fd
		}
	}
	return out, nil
}

func (r *historyRun) pythonVersion() string {
	if r.rc.Python == "" {
		return "(default)"
	}
	return r.rc.Python
}

// runPydefs runs the definitions script in a container of the base image.
func (r *historyRun) runPydefs(ctx context.Context, req pydefs.Request) (*pydefs.Result, error) {
	b, err := openBox(ctx, r.o.lease, r.base, r.rc.Repository, r.lim, r.w.file("filter.log"))
	if err != nil {
		return nil, err
	}
	defer b.close()
	raw, err := encodeJSON(req)
	if err != nil {
		return nil, err
	}
	if err := b.c.CopyIn(ctx, fbDir, []container.File{
		{Path: pydefs.ScriptName, Mode: 0o644, Data: pydefs.Script()},
		{Path: "defs-request.json", Mode: 0o644, Data: raw},
		{Path: "out/.keep", Mode: 0o644},
	}); err != nil {
		return nil, fmt.Errorf("copying the definitions script in: %w", err)
	}
	if _, err := b.must(ctx, "reading the Python definitions", "/", 10*time.Minute, "sh", "-c",
		"python3 -I "+fbDir+"/"+pydefs.ScriptName+" "+fbDir+"/defs-request.json > "+outDir+"/defs.json"); err != nil {
		return nil, err
	}
	files, err := b.c.CopyOut(ctx, outDir+"/defs.json", 256<<20)
	if err != nil || len(files) != 1 {
		return nil, fmt.Errorf("reading the definitions: %v", err)
	}
	return pydefs.ParseResult(files[0].Data, req)
}

// stageVerify builds each candidate's environment, runs its tests before
// and after its patch, lets the method judge the runs, and checks the
// instance with the evaluation harness.
func (r *historyRun) stageVerify(ctx context.Context) error {
	lim, err := evaluate.ConfigLimits(r.o.Config.Eval)
	if err != nil {
		return err
	}
	cands := r.alive()
	var mu sync.Mutex
	verified := 0
	err = r.each(ctx, cands, func(ctx context.Context, pc *prCandidate) error {
		d := digest("verify", recipe, prVerifyRecipe, r.base, pc.Number, pc.Base, pc.Patches.Code, pc.Patches.Test,
			r.rc.PreInstall, r.rc.Install, r.rc.MaxP2PFiles, r.rc.TestFileTimeout, r.rc.F2PPassRateMax, lim, r.o.Seed)
		var out prVerify
		ok, err := r.cached(d, &out, prItem(pc))
		if err != nil {
			return err
		}
		if !ok {
			out, err = r.verifyPull(ctx, pc, lim)
			if err != nil {
				return err
			}
			// An environment that did not build may have met a passing
			// trouble of the engine: not stored, tried again next run.
			if out.Image != "" {
				if err := r.store(d, out, prItem(pc)); err != nil {
					return err
				}
			}
		}
		pc.verify = out
		if out.Reason != "" {
			r.dropPull(pc, StageVerify, out.Reason)
			return nil
		}
		mu.Lock()
		verified++
		mu.Unlock()
		return nil
	})
	if err != nil {
		return err
	}
	r.step("verified", verified)
	r.logf("verified: %d pull requests", verified)
	return nil
}

func prItem(pc *prCandidate) string { return fmt.Sprintf("pr-%d", pc.Number) }

// each runs fn on each candidate with the configured number of workers;
// an executor that admits containers (a swarm) admits each
// (executor.Pool). A candidate whose container was lost is done once more.
func (r *historyRun) each(ctx context.Context, cands []*prCandidate, fn func(context.Context, *prCandidate) error) error {
	pool := executor.NewPool(r.o.Executor, r.o.Config.Collect.Workers, r.lim)
	return pool.Each(ctx, len(cands), func(ctx context.Context, i int, _ error) error {
		pc := cands[i]
		if err := fn(ctx, pc); err != nil {
			return fmt.Errorf("pull request #%d: %w", pc.Number, err)
		}
		return nil
	}, nil)
}

// envSpec is a candidate's environment: its base commit with its test
// patch and its patch applied, installed as the repository's is. cmd/eval
// builds the same from the instance (evaluate.HistoryEnv).
func (r *historyRun) envSpec(pc *prCandidate) images.EnvSpec {
	return evaluate.HistoryEnv(images.EnvSpec{Name: r.rc.Repository, Source: images.Source{GitURL: r.git.Dir},
		PreInstall: r.rc.PreInstall, Install: r.rc.Install, Base: r.base, Prefix: r.o.Config.Eval.ImagePrefix},
		r.instanceOf(pc, nil))
}

// verifyPull verifies one candidate. A candidate that fails verification
// gets Reason; an error is the machinery's.
func (r *historyRun) verifyPull(ctx context.Context, pc *prCandidate, lim evaluate.Limits) (prVerify, error) {
	out := prVerify{Before: map[string]runOut{}, After: map[string]runOut{}}
	logPath := r.w.file("verify", prItem(pc)+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return out, err
	}
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return out, err
	}
	defer log.Close()
	image, err := images.EnsureEnv(ctx, r.o.Engine, r.envSpec(pc), log)
	if err != nil {
		if ctx.Err() != nil {
			return out, err
		}
		out.Reason = "its environment (the base commit with the test patch and the patch) does not build: " + err.Error()
		return out, nil
	}
	out.Image = image
	out.Files, err = r.testFilesToRun(ctx, pc)
	if err != nil {
		return out, err
	}
	if len(out.Files) == 0 {
		out.Reason = "the test patch changes no test file pytest runs (test_*.py or *_test.py)"
		return out, nil
	}
	b, err := openBox(ctx, r.o.lease, image, r.rc.Repository, r.lim, logPath)
	if err != nil {
		return out, err
	}
	defer b.close()
	files := append(scripts(), container.File{Path: "code.diff", Mode: 0o644, Data: []byte(pc.Patches.Code)})
	if err := b.c.CopyIn(ctx, fbDir, files); err != nil {
		return out, fmt.Errorf("copying the scripts into the container: %w", err)
	}
	// The tests, as pytest collects them from the complete project.
	if err := b.reset(ctx); err != nil {
		return out, err
	}
	res, err := b.exec(ctx, repoDir, r.tout.Discovery, []string{"PYTHONDONTWRITEBYTECODE=1"}, append(slices.Clone(discoverArgs), out.Files...)...)
	if err != nil {
		return out, fmt.Errorf("collecting the tests: %w", err)
	}
	collected, _ := parseCollection(string(res.Stdout))
	// After: the complete project, as the image holds it.
	for _, f := range out.Files {
		if len(collected[f]) == 0 {
			continue // nothing to run: no test of it passes
		}
		if err := b.reset(ctx); err != nil {
			return out, err
		}
		ro, err := runFile(ctx, b, f, collected[f], r.tout.TestFile)
		if err != nil {
			return out, err
		}
		out.After[f] = ro
	}
	// Before: the code patch reversed, the test patch in place; the
	// tests the after run found are expected, so that a file that does
	// not import (the feature's module or name is missing) counts each
	// of them as failing.
	for _, f := range out.Files {
		if len(collected[f]) == 0 {
			continue
		}
		if err := b.reset(ctx); err != nil {
			return out, err
		}
		res, err := b.exec(ctx, repoDir, time.Minute, nil, "git", "apply", "-R", fbDir+"/code.diff")
		if err != nil {
			return out, fmt.Errorf("reversing the code patch: %w", err)
		}
		if res.ExitCode != 0 {
			out.Reason = "the code patch does not reverse on its environment: " + tail(res.Stdout, res.Stderr, 3)
			return out, nil
		}
		ro, err := runFile(ctx, b, f, collected[f], r.tout.TestFile)
		if err != nil {
			return out, err
		}
		out.Before[f] = ro
	}
	touched := map[string]bool{}
	for _, f := range pc.Patches.TestFiles {
		touched[f] = true
	}
	for _, f := range out.Files {
		after, before := out.After[f], out.Before[f]
		if len(after.Tampering) > 0 || len(before.Tampering) > 0 {
			// A file that changes pytest's machinery (boltons' test_tbutils
			// sets sys.excepthook) makes grading believe none of a run's
			// outcomes: its tests are neither fail-to-pass nor
			// pass-to-pass, as in the test-driven method.
			continue
		}
		passedBefore := map[string]bool{}
		for _, id := range before.Passed {
			passedBefore[id] = true
		}
		for _, id := range after.Passed {
			switch {
			case passedBefore[id]:
				out.PassToPass = append(out.PassToPass, id)
			case touched[f]:
				out.FailToPass = append(out.FailToPass, id)
			}
		}
	}
	sort.Strings(out.FailToPass)
	sort.Strings(out.PassToPass)
	pc.verify = out
	if why := r.m.Accept(pc); why != "" {
		out.Reason = why
		return out, nil
	}
	in := r.instanceOf(pc, &out)
	h := harness{exec: r.o.lease, image: image, repo: r.rc.Repository, lim: lim, ceiling: r.rc.F2PPassRateMax,
		logDir: r.w.file("verify", prItem(pc))}
	chk, err := h.check(ctx, in)
	if err != nil {
		return out, err
	}
	out.Check = chk
	out.Reason = chk.Reason
	return out, nil
}

// testFilesToRun are the test patch's test files that pytest runs and the
// pull request keeps, and the other test files of their folders (their
// package), at most max_p2p_files of those others, drawn with the seed.
func (r *historyRun) testFilesToRun(ctx context.Context, pc *prCandidate) ([]string, error) {
	runnable := func(p string) bool {
		base := path.Base(p)
		return strings.HasSuffix(base, ".py") && (strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py"))
	}
	var touched []string
	dirs := map[string]bool{}
	for _, f := range pc.Patches.TestFiles {
		if runnable(f) && !slices.Contains(pc.Patches.Deleted, f) {
			touched = append(touched, f)
			dirs[path.Dir(f)] = true
		}
	}
	if len(touched) == 0 {
		return nil, nil
	}
	all, err := r.git.Files(ctx, pc.Merge)
	if err != nil {
		return nil, err
	}
	var others []string
	for _, f := range all {
		if runnable(f) && dirs[path.Dir(f)] && testCode(f) && !slices.Contains(touched, f) {
			others = append(others, f)
		}
	}
	if n := r.rc.MaxP2PFiles; n > 0 && len(others) > n {
		others = sample(others, n, itemRand(r.o.Seed, r.rc.Repository, "p2p", fmt.Sprint(pc.Number)))
	}
	out := append(slices.Clone(touched), others...)
	sort.Strings(out)
	return out, nil
}

// instanceOf is a candidate's instance, without its statement; v gives its
// tests when verified.
func (r *historyRun) instanceOf(pc *prCandidate, v *prVerify) *bench.Instance {
	owner, name, _ := strings.Cut(r.rc.Repository, "/")
	in := &bench.Instance{
		InstanceID: fmt.Sprintf("%s__%s-%d.%s", owner, name, pc.Number, r.m.Name()),
		Repo:       r.rc.Repository, BaseCommit: pc.Base, Level: 1,
		Patch: pc.Patches.Code, TestPatch: pc.Patches.Test,
		CreatedAt: pc.Date.UTC().Format(time.RFC3339), TopObjects: []string{},
		Method: r.m.Name(), PullNumber: pc.Number, Release: pc.Release,
		FailToPass: []string{}, PassToPass: []string{},
	}
	if v != nil {
		in.ImageName = v.Image
		// Lists, never null: a pull request whose folder has no other
		// test file has no pass-to-pass test.
		in.FailToPass = append(in.FailToPass, v.FailToPass...)
		in.PassToPass = append(in.PassToPass, v.PassToPass...)
	}
	lines, files := patchStats(pc.Patches.Code)
	functions := 0
	for _, fd := range pc.Defs {
		functions += len(fd.Changes.Added) + len(fd.Changes.Modified)
	}
	f2p, p2p := len(in.FailToPass), len(in.PassToPass)
	in.Lines, in.Files, in.Functions, in.F2PTestPoints, in.P2PTestPoints = &lines, &files, &functions, &f2p, &p2p
	return in
}

// statementOut is a candidate's stored statement.
type statementOut struct {
	Text   string `json:"text,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// stageStatements has the method write each verified candidate's
// statement.
func (r *historyRun) stageStatements(ctx context.Context) error {
	n := 0
	for _, pc := range r.alive() {
		d := digest("statement", recipe, prStatementRecipe, r.m.Name(), pc.Number, pc.Title, pc.Body, pc.Entry, pc.Patches.Code, pc.Patches.Test,
			pc.verify.FailToPass, r.llmKey(), methodKey(r.m))
		var out statementOut
		ok, err := r.cached(d, &out, prItem(pc))
		if err != nil {
			return err
		}
		if !ok {
			text, reason, err := r.m.Statement(ctx, r, pc)
			if err != nil {
				return fmt.Errorf("pull request #%d: %w", pc.Number, err)
			}
			out = statementOut{Text: text, Reason: reason}
			if err := r.store(d, out, prItem(pc)); err != nil {
				return err
			}
		}
		if out.Reason != "" || out.Text == "" {
			r.dropPull(pc, StageStatements, firstNonEmpty(out.Reason, "no statement was written"))
			continue
		}
		// Whatever the method, the statement must give what the tests
		// compare verbatim that the feature's code makes.
		if why := verbatimGap(out.Text, pc.Patches.Test, pc.Patches.Code); why != "" {
			r.dropPull(pc, StageStatements, why)
			continue
		}
		pc.stmt = out.Text
		n++
	}
	r.step("with a statement", n)
	return nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// gather turns the candidates with statements into instances.
func (r *historyRun) gather() {
	for _, pc := range r.cands {
		if pc.dead {
			continue
		}
		in := r.instanceOf(pc, &pc.verify)
		in.ProblemStatement = pc.stmt
		if chk := pc.verify.Check; chk != nil {
			in.Canaries, in.GoldAudit = chk.Canaries, chk.GoldAudit
		}
		r.m.Extras(pc, in)
		r.res.instances = append(r.res.instances, &candidateInstance{in: in, pull: pc.Number})
	}
	r.res.report.Verified = len(r.res.instances)
	r.res.report.Funnel = r.funnel
}
