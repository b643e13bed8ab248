package collect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images"
)

// imageEngine builds images: *container.Engine.
type imageEngine = images.Engine

// recipe is the version of this package's method: bump it when a change
// makes stored outputs wrong, so that every stage runs again.
const recipe = 2

// repoRun is the collection from one repository.
type repoRun struct {
	o    Options
	rc   config.Repo
	w    work
	lim  container.Limits
	tout config.RepoTimeouts
	res  *repoResult

	cur        string // the stage running
	needStored bool   // the stage must come from the work folder (--stage runs a later one)
	reused     bool   // the stage (or an item of it) came from the work folder

	env    envOut
	disc   discoverOut
	runs   map[string]runOut   // by test file
	graphs map[string]traceOut // by test file
	cands  []*candidate        // fail-to-pass candidates, by test file
	src    sourceCache
}

// cached loads a stored output made from the inputs d into v, and reports
// whether it did. With Options.Force a stage that runs is made again.
func (r *repoRun) cached(d string, v any, item ...string) (bool, error) {
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

// store saves a stage's output made from the inputs d.
func (r *repoRun) store(d string, v any, item ...string) error {
	return r.w.save(d, v, r.cur, item...)
}

// memo is the stored output of item for the inputs' digest d, or, when
// there is none, what make gives in a container from get, then stored;
// made says which.
func memo[T any](r *repoRun, d, item string, get func() (*box, error), make func(*box) (T, error)) (out T, made bool, err error) {
	ok, err := r.cached(d, &out, item)
	if err != nil || ok {
		return out, false, err
	}
	b, err := get()
	if err != nil {
		return out, false, err
	}
	if out, err = make(b); err != nil {
		return out, false, err
	}
	return out, true, r.store(d, out, item)
}

// repoResult is what a repository gave: its report, and the instances
// that passed verification (before the full-set filters).
type repoResult struct {
	rc        config.Repo
	report    *RepoReport
	env       envOut
	instances []*candidateInstance
}

func newRepoRun(o Options, rc config.Repo) *repoRun {
	workDir := o.Config.Collect.Work
	if !filepath.IsAbs(workDir) {
		workDir = filepath.Join(o.Root, workDir)
	}
	mem, _ := config.ParseBytes(o.Config.Eval.Memory)
	dir := fileKey(rc.Repository)
	if rc.History() {
		// A repository may be collected with several methods: each has
		// its work of its own (the test-driven one's keeps its old name).
		dir += "." + rc.Method
	}
	return &repoRun{
		o: o, rc: rc,
		w:    work{dir: filepath.Join(workDir, dir)},
		lim:  container.Limits{Memory: mem, NanoCPUs: int64(o.Config.Eval.CPUs * 1e9), Pids: int64(o.Config.Eval.Pids)},
		tout: rc.Timeouts(),
		res:  &repoResult{rc: rc, report: &RepoReport{Repository: rc.Repository}},
	}
}

func (r *repoRun) logf(format string, args ...any) {
	fmt.Fprintf(r.o.Log, "%s: "+format+"\n", append([]any{r.rc.Repository}, args...)...)
}

// run runs the stages in order. With Options.Stage, the stages before it
// read their stored outputs (and fail if there are none), the stage runs,
// and the ones after it do not. A stage that fails stops the repository:
// its report then says at which stage and why (fail), and holds the
// counts as far as it got.
func (r *repoRun) run(ctx context.Context) (*repoResult, error) {
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
		{StageEnv, r.stageEnv}, {StageDiscover, r.stageDiscover}, {StageRun, r.stageRun}, {StageTrace, r.stageTrace},
		{StageClassify, r.stageClassify}, {StageP2P, r.stageP2P}, {StageWalk, r.stageWalk}, {StageMask, r.stageMask},
		{StageVerify, r.stageVerify}, {StageStatements, r.stageStatements},
	}
	last := len(steps) - 1
	if r.o.Stage != "" && r.o.Stage != StageDataset {
		last = stageIndex(r.o.Stage)
	}
	for i, s := range steps[:last+1] {
		start := time.Now()
		r.cur = s.name
		if i < last && r.o.Stage != "" && r.o.Stage != StageDataset {
			r.needStored = true
		} else {
			r.needStored = false
		}
		err := s.fn(ctx)
		r.o.report.addStage(r.rc.Repository, s.name, time.Since(start), r.reused)
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
	return r.res, nil
}
