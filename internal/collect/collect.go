// Package collect turns a Python repository with a pytest suite into
// verified feature-level task instances, following FeatureBench's
// test-driven method (paper 000, section 3.2 and appendix A): run the
// tests, trace the passing ones into an object dependency graph, pick the
// objects a test file is about, remove them and what only they use, verify
// the result in fresh containers, and describe the task.
//
// Every stage stores its output in the repository's work folder with a
// digest of its inputs; a stage whose output is there and whose inputs are
// unchanged is skipped, so an interrupted run resumes where it stopped.
package collect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/llm"
)

// Stages, in order. Each can run alone (Options.Stage) once the ones
// before it have stored their output.
const (
	StageEnv        = "env"        // the repository's image
	StageDiscover   = "discover"   // test files, by pytest's collection
	StageRun        = "run"        // each test file run; fully passing ones are candidates
	StageTrace      = "trace"      // candidates and the pass-to-pass pool traced
	StageClassify   = "classify"   // the tested top-level objects of each candidate
	StageP2P        = "p2p"        // pass-to-pass files of each candidate
	StageWalk       = "walk"       // what each candidate's task removes
	StageMask       = "mask"       // the masked codebase and the patches
	StageVerify     = "verify"     // post-verification in fresh containers
	StageStatements = "statements" // problem statements
	StageDataset    = "dataset"    // filters, splits, the dataset written
)

// Stages lists the stages in order.
var Stages = []string{StageEnv, StageDiscover, StageRun, StageTrace, StageClassify, StageP2P, StageWalk,
	StageMask, StageVerify, StageStatements, StageDataset}

// Chatter is what collection needs of an LLM: llm.Client.
type Chatter interface {
	Chat(ctx context.Context, msgs []llm.Message) (llm.Reply, error)
}

// Engine is what collection needs of the local Docker engine:
// *container.Engine. It builds the images, and runs the containers too
// unless Options.Executor is set.
type Engine interface {
	imageEngine
}

// Options are one collection run.
type Options struct {
	Root    string // the project root: featbench.toml's folder
	Config  config.Config
	Dataset string // name/version to write
	Repos   []string
	// Stage, when set, runs that stage alone (on every selected
	// repository); the dataset stage then runs only if it is the one.
	Stage  string
	Seed   uint64
	Force  bool // make again the outputs of the stages that run, even when stored
	Engine Engine
	// Executor, when not nil, starts every container collection runs
	// commands in (discovery, the runs, traces, masking, verification,
	// the statements' sources) instead of Engine: a swarm. The images
	// are built on Engine whatever runs them.
	Executor executor.Executor
	LLM      Chatter // nil: the deterministic classifier, statements without LLM text
	// Credentials give a repository's base_image's registry the user's
	// credentials; nil reads the user's docker configuration
	// (registry.Keychain).
	Credentials images.Credentials
	Log         io.Writer
	Now         func() time.Time
	Verbose     bool

	report *Report // the run's, filled as it goes
	// lease is the run's on Executor: every container starts through it
	// (without an executor, a Starter that says so: a run whose
	// repositories fail before any container is needed still reports).
	lease executor.Starter
}

// stageIndex is a stage's place in Stages, or -1.
func stageIndex(s string) int {
	for i, x := range Stages {
		if x == s {
			return i
		}
	}
	return -1
}

// Run collects from every selected repository and writes the dataset.
// A repository that fails is reported (Report.Repos, with its Failure)
// and left out; the dataset is written from the others, and Run's error
// is nil when it was. The error joins every repository's failure when
// nothing was written, or when a stage run alone (Options.Stage) failed
// somewhere.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if e, ok := o.Engine.(*container.Engine); o.Executor == nil && ok && e != nil {
		o.Executor = executor.Local(e)
	}
	if o.Stage != "" && stageIndex(o.Stage) < 0 && !slices.Contains(HistoryStages, o.Stage) {
		return nil, fmt.Errorf("unknown stage %q; the stages are %s (test-driven) and %s (history-based methods)",
			o.Stage, strings.Join(Stages, ", "), strings.Join(HistoryStages, ", "))
	}
	name, version, ok := strings.Cut(o.Dataset, "/")
	if !ok || !validName(name) || !validName(version) {
		return nil, fmt.Errorf("dataset %q is not NAME/VERSION (letters, digits, '.', '-', '_')", o.Dataset)
	}
	repos, err := selectRepos(o.Config.Collect.Repos, o.Repos)
	if err != nil {
		return nil, err
	}
	dataDir := o.Config.Site.Data
	if !filepath.IsAbs(dataDir) {
		dataDir = filepath.Join(o.Root, dataDir)
	}
	out := filepath.Join(dataDir, "datasets", name, version)
	writing := o.Stage == "" || o.Stage == StageDataset
	if writing {
		if err := preflight(o, out, o.Dataset, repos); err != nil {
			return nil, err
		}
	}
	// The run's lease, on every container it starts; taking it removes
	// what killed runs left. Released last, once every container is gone.
	o.lease = noExecutor{}
	if o.Executor != nil {
		ls, err := executor.Hold(ctx, o.Executor, "collect "+o.Dataset, o.Log)
		if err != nil {
			return nil, err
		}
		defer ls.Release()
		o.lease = ls
	}
	rep := &Report{Collection: bench.Collection{Dataset: o.Dataset, Seed: o.Seed}}
	o.report = rep
	var results []*repoResult
	var failed []error
	for _, rc := range repos {
		res, err := runRepo(ctx, o, rc)
		rep.Repos = append(rep.Repos, res.report)
		if err != nil {
			err = fmt.Errorf("%s: %w", rc.Repository, err)
			if ctx.Err() != nil {
				return rep, err // interrupted: nothing more is done
			}
			// One repository's failure stops it alone: the others are
			// collected, and the report says where this one stopped.
			fmt.Fprintf(o.Log, "%s: failed at stage %s: %s\n", rc.Repository, res.report.Failure.Stage, res.report.Failure.Reason)
			failed = append(failed, err)
			continue
		}
		results = append(results, res)
	}
	if !writing {
		return rep, errors.Join(failed...)
	}
	if len(results) == 0 {
		// Nothing to write, for the reasons above: not for want of a
		// release date, which the failed repositories never got to give.
		return rep, errors.Join(append(failed, fmt.Errorf("no repository was collected (%d failed): nothing to write", len(failed)))...)
	}
	if err := writeDataset(ctx, o, out, name, version, results, rep); err != nil {
		return rep, errors.Join(append(failed, err)...)
	}
	return rep, nil
}

// runRepo collects from one repository by its method.
func runRepo(ctx context.Context, o Options, rc config.Repo) (*repoResult, error) {
	if !rc.History() {
		if o.Stage != "" && o.Stage != StageDataset && stageIndex(o.Stage) < 0 {
			r := newRepoRun(o, rc)
			err := fmt.Errorf("stage %s is not a stage of the test-driven method (its stages: %s)", o.Stage, strings.Join(Stages, ", "))
			r.fail(o.Stage, err)
			return r.res, err
		}
		return newRepoRun(o, rc).run(ctx)
	}
	h, err := newHistoryRun(o, rc)
	if err != nil {
		r := newRepoRun(o, rc)
		r.fail(StageEnv, err)
		return r.res, err
	}
	return h.run(ctx)
}

func validName(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// selectRepos picks the configured repositories to collect from: all of
// them, or those named.
func selectRepos(all []config.Repo, names []string) ([]config.Repo, error) {
	if len(all) == 0 {
		return nil, errors.New("featbench.toml has no [[collect.repo]] table: nothing to collect from")
	}
	if len(names) == 0 {
		return all, nil
	}
	var out []config.Repo
	for _, n := range names {
		found := false
		for _, r := range all {
			if r.Repository == n {
				out = append(out, r)
				found = true
			}
		}
		if !found {
			var known []string
			for _, r := range all {
				known = append(known, r.Repository)
			}
			return nil, fmt.Errorf("repository %q has no [[collect.repo]] table (configured: %s)", n, strings.Join(known, ", "))
		}
	}
	return out, nil
}

// itemRand is the random source of one item (a candidate test file): its
// own, seeded from the run's seed and the item's identity, so that draws do
// not depend on the order items are handled in.
func itemRand(seed uint64, parts ...string) *rand.Rand {
	d := digest(append([]string{fmt.Sprint(seed)}, parts...))
	var a, b uint64
	fmt.Sscanf(d[:16], "%x", &a)
	fmt.Sscanf(d[16:24], "%x", &b)
	return rand.New(rand.NewPCG(a, b))
}

var _ Engine = (*container.Engine)(nil)

// noExecutor is the Starter of a run given no executor: any container
// it is asked for is an error.
type noExecutor struct{}

func (noExecutor) Start(context.Context, container.Spec) (executor.Box, error) {
	return nil, errors.New("collect: no executor to run the containers on")
}
