package evaluate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/atomicfile"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/runlock"
)

// Files of a run folder, runs/<run-id>/.
const (
	RunReportFile = "report.json"   // the run's report, SWE-bench's fields and more
	RunMetaFile   = "run.json"      // what the run evaluated, for resuming and submitting
	ResultsFile   = "results.jsonl" // one result per instance, as data/ holds them
	ReportFile    = "report.json"   // an instance attempt's report; written last
	PredFile      = "prediction.diff"
	// TrajectoryFile is a measured prediction's trajectory, copied from
	// eval infer's run; its SHA-256 is the report's trajectory.
	TrajectoryFile = "trajectory.jsonl"
	LogFile        = "container.log"
	TestsDir       = "tests"
)

// Labels on every container a run starts, to find leftovers of a killed
// run; the run's lease (lease.Label) is on them too.
const (
	LabelProject = "featbench.project"
	LabelKind    = "featbench.kind"
	LabelRun     = "featbench.run"
	LabelTask    = "featbench.instance"
)

// Meta is run.json: what a run evaluates.
type Meta struct {
	RunID       string    `json:"run_id"`
	Dataset     string    `json:"dataset"` // name/version
	Split       string    `json:"split"`
	Predictions string    `json:"predictions"` // the file, "gold" or "empty"
	Model       string    `json:"model,omitempty"`
	Attempts    int       `json:"attempts"`
	Instances   []string  `json:"instances"` // the instances evaluated
	Images      []string  `json:"images"`
	Created     time.Time `json:"created"`
}

// Config is one run: which instances, which predictions, where.
type Config struct {
	Meta    Meta
	Dataset *bench.Dataset
	// Predictions gives the prediction of an instance's attempt (1-based),
	// false when there is none: no prediction counts as unresolved.
	Predictions func(instanceID string, attempt int) (Prediction, bool)
	Gold        bool              // the predictions are the gold patches
	Images      map[string]string // ImageKey -> environment image
	Dir         string            // runs/<run-id>
	Workers     int
	Force       bool // evaluate again what a previous run of this id finished
	Limits      Limits
	// Engine runs the containers: the local engine or a swarm
	// (internal/executor).
	Engine   executor.Executor
	Progress Progress // nil: no progress display
	// Log, when not nil, hears of the run's lease (renewals failing, the
	// leftovers of killed runs removed).
	Log io.Writer
}

// Progress hears about a run as it goes: a terminal bar, or lines in a log.
type Progress interface {
	Start(total int)
	Done(rep *Report, skipped bool)
	Finish()
}

// task is one instance and attempt of a run.
type task struct {
	in      *bench.Instance
	attempt int
	pred    Prediction
}

// Run evaluates every instance and attempt of the configuration that has
// not been evaluated before (unless Force), writes each one's folder, and
// then the run's results and report. Killing it loses only the instances
// in flight; running it again resumes.
func Run(ctx context.Context, cfg Config) (*RunReport, error) {
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the run folder: %w", err)
	}
	// One process evaluates a run folder at a time: two would evaluate
	// the same attempts into the same files.
	release, err := runlock.Acquire(cfg.Dir, "eval run "+cfg.Meta.RunID)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := writeMeta(cfg.Dir, cfg.Meta); err != nil {
		return nil, err
	}
	var tasks []task
	for _, id := range cfg.Meta.Instances {
		in := cfg.Dataset.Instance(id)
		if in == nil {
			return nil, fmt.Errorf("instance %s is not in %s", id, cfg.Dataset.DisplayName())
		}
		for a := 1; a <= cfg.Meta.Attempts; a++ {
			p, ok := cfg.Predictions(id, a)
			if !ok {
				continue
			}
			tasks = append(tasks, task{in: in, attempt: a, pred: p})
		}
	}
	// The run's lease, on every container it starts; taking it removes
	// what killed runs left. Released last, once every container is gone.
	ls, err := executor.Hold(ctx, cfg.Engine, "eval run "+cfg.Meta.RunID, cfg.Log)
	if err != nil {
		return nil, err
	}
	defer ls.Release()
	if cfg.Progress != nil {
		cfg.Progress.Start(len(tasks))
		defer cfg.Progress.Finish()
	}
	pool := executor.NewPool(cfg.Engine, cfg.Workers, containerLimits(cfg.Limits))
	var (
		unsaved   []string // attempts whose files could not all be written
		unsavedMu sync.Mutex
	)
	rm := newRemover(max(cfg.Workers, 1))
	defer rm.wait() // every container gone before Run returns, whatever happened
	todo := tasks[:0:0]
	for _, tk := range tasks {
		if !cfg.Force {
			if rep, err := ReadReport(attemptDir(cfg.Dir, tk.in.InstanceID, tk.attempt)); err == nil && rep.Error == "" {
				if cfg.Progress != nil {
					cfg.Progress.Done(rep, true)
				}
				continue
			}
		}
		todo = append(todo, tk)
	}
	// While a task runs, the next one's container is started and taken
	// through the harness's own set-up (staged): its turn starts with
	// the prediction's tests. Only where workers bound the run, not where
	// the executor admits by room: staging holds a container before its
	// turn.
	var (
		mu     sync.Mutex
		staged = map[int]*ahead{}
	)
	defer func() {
		for _, a := range staged {
			a.discard() // staged, never run: no report, a later run does it
		}
	}()
	var started func(ctx context.Context, i int)
	if !pool.Admits() {
		started = func(ctx context.Context, i int) {
			if i+1 < len(todo) {
				nt := todo[i+1]
				a := stageAhead(ctx, cfg, nt, attemptDir(cfg.Dir, nt.in.InstanceID, nt.attempt), ls)
				mu.Lock()
				staged[i+1] = a
				mu.Unlock()
			}
		}
	}
	err = pool.Each(ctx, len(todo), func(ctx context.Context, i int, lost error) error {
		tk := todo[i]
		dir := attemptDir(cfg.Dir, tk.in.InstanceID, tk.attempt)
		mu.Lock()
		cur := staged[i]
		delete(staged, i)
		mu.Unlock()
		if cur == nil || lost != nil {
			// lost: its container or node went away, not the
			// prediction's doing. Once more from the start, recorded;
			// the executor places it elsewhere.
			retried := ""
			if lost != nil {
				retried = lost.Error()
			}
			cur = stageOne(ctx, cfg, tk, dir, ls, retried)
		}
		rep, err := cur.evaluate(ctx, rm)
		if errors.Is(err, container.ErrLost) && lost == nil && ctx.Err() == nil {
			return err // the pool does it once more
		}
		var se *SaveError
		if errors.As(err, &se) && ctx.Err() == nil {
			unsavedMu.Lock()
			unsaved = append(unsaved, fmt.Sprintf("%s attempt %d: %v", tk.in.InstanceID, tk.attempt, se.Err))
			unsavedMu.Unlock()
			if rep == nil {
				rep = &Report{InstanceID: tk.in.InstanceID, Attempt: tk.attempt, Error: "not saved: " + se.Err.Error()}
			}
		}
		if cfg.Progress != nil && rep != nil {
			cfg.Progress.Done(rep, false)
		}
		if err != nil && ctx.Err() != nil {
			return ctx.Err() // interrupted: stop, keep what is done
		}
		// An infrastructure failure is the attempt's report (its
		// Error); the run goes on, and a later run evaluates it again.
		return nil
	}, started)
	if err != nil {
		// What finished is kept; running the command again resumes.
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rr, err := Finish(cfg.Dir, cfg.Dataset, cfg.Meta)
	if err != nil {
		return nil, err
	}
	if len(unsaved) > 0 {
		sort.Strings(unsaved)
		return rr, fmt.Errorf("%d attempts could not be saved whole and are not counted (a later run evaluates them again):\n  %s",
			len(unsaved), strings.Join(unsaved, "\n  "))
	}
	return rr, nil
}

// ahead is a task being staged (or staged) in its folder, ahead of its
// turn or at it.
type ahead struct {
	done       chan struct{}
	dir        string
	logf       *atomicfile.Log
	trajectory string
	s          *staged
	err        error // the folder could not be made
	// retried, when not empty, says why this is the attempt's second
	// evaluation: it heads the log and is the report's retried.
	retried string
}

// stageAhead stages tk in the background while the current task runs.
func stageAhead(ctx context.Context, cfg Config, tk task, dir string, ls *executor.Lease) *ahead {
	a := &ahead{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.stage(ctx, cfg, tk, dir, ls)
	}()
	return a
}

// stageOne stages tk now, at its turn; retried: see ahead.
func stageOne(ctx context.Context, cfg Config, tk task, dir string, ls *executor.Lease, retried string) *ahead {
	a := &ahead{done: make(chan struct{}), retried: retried}
	a.stage(ctx, cfg, tk, dir, ls)
	close(a.done)
	return a
}

// stage makes tk's folder (the prediction and the log as it goes) and
// stages it, in a container under the run's lease.
func (a *ahead) stage(ctx context.Context, cfg Config, tk task, dir string, ls *executor.Lease) {
	a.dir = dir
	if err := os.RemoveAll(dir); err != nil {
		a.err = fmt.Errorf("clearing %s: %w", dir, err)
		return
	}
	if err := os.MkdirAll(filepath.Join(dir, TestsDir), 0o755); err != nil {
		a.err = fmt.Errorf("creating %s: %w", dir, err)
		return
	}
	if err := atomicfile.Write(filepath.Join(dir, PredFile), tk.pred.Patch); err != nil {
		a.err = &SaveError{Err: err}
		return
	}
	if tk.pred.TrajectoryFile != "" {
		raw, err := os.ReadFile(tk.pred.TrajectoryFile)
		if err != nil {
			a.err = fmt.Errorf("the trajectory of %s: %w", tk.in.InstanceID, err)
			return
		}
		if err := atomicfile.Write(filepath.Join(dir, TrajectoryFile), raw); err != nil {
			a.err = &SaveError{Err: err}
			return
		}
		a.trajectory = Sum(raw)
	}
	logf, err := atomicfile.CreateLog(filepath.Join(dir, LogFile))
	if err != nil {
		a.err = &SaveError{Err: err}
		return
	}
	a.logf = logf
	if a.retried != "" {
		fmt.Fprintf(logf, "retried: the first evaluation of this attempt lost its container: %s\n\n", a.retried)
	}
	image := cfg.Images[ImageKey(cfg.Dataset, tk.in)]
	if image == "" {
		a.err = fmt.Errorf("no environment image for %s", ImageKey(cfg.Dataset, tk.in))
		return
	}
	t := Task{
		Dataset: cfg.Dataset, Instance: tk.in, Attempt: tk.attempt, Prediction: tk.pred, Gold: cfg.Gold, Image: image,
		Labels: map[string]string{
			LabelProject: "1", LabelKind: "eval", LabelRun: cfg.Meta.RunID,
			LabelTask: tk.in.InstanceID + "#" + strconv.Itoa(tk.attempt),
		},
	}
	a.s = prepare(ctx, ls, t, cfg.Limits, a.logf) // its container under the run's lease
}

// discard removes the container staging started, the task not run, and
// closes its log: its folder holds no report, so a later run evaluates it.
func (a *ahead) discard() {
	<-a.done
	if a.s != nil {
		a.s.discard()
	}
	if a.logf != nil {
		a.logf.Close()
	}
}

// evaluate evaluates a staged task into its folder: the test outputs, and
// the report last.
//
// Nothing of an attempt is done until it is durably written: every file
// goes through atomicfile (written whole and synced, or not at all), the
// log is synced, and report.json, which marks the attempt done, comes
// last, only when every other file is whole. An attempt that could not be
// saved gets no report (a later run evaluates it again) and a
// SaveError; its report's Error says so, for the progress line, which
// then shows no outcome.
func (a *ahead) evaluate(ctx context.Context, rm *remover) (*Report, error) {
	<-a.done
	if a.err != nil {
		if a.logf != nil {
			a.logf.Close()
		}
		return nil, a.err // set before anything was started
	}
	rep, files, err := a.s.finish(ctx, rm.remove)
	rep.Trajectory = a.trajectory
	rep.Retried = a.retried
	var unsaved error
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if werr := atomicfile.Write(filepath.Join(a.dir, TestsDir, name), files[name]); werr != nil {
			unsaved = werr
			break
		}
	}
	if cerr := a.logf.Close(); unsaved == nil {
		unsaved = cerr
	}
	if ctx.Err() != nil {
		// Interrupted: leave no report, so the next run does it again.
		return rep, ctx.Err()
	}
	if unsaved == nil {
		unsaved = atomicfile.WriteJSON(filepath.Join(a.dir, ReportFile), rep)
	}
	if unsaved != nil {
		os.Remove(filepath.Join(a.dir, ReportFile))
		rep.Error = "not saved: " + unsaved.Error()
		return rep, &SaveError{Err: unsaved}
	}
	return rep, err
}

// SaveError is an attempt whose files could not all be written: a full
// disk, a file size limit. The attempt is not done; the run goes on and
// ends with an error naming the files.
type SaveError struct{ Err error }

func (e *SaveError) Error() string { return e.Err.Error() }
func (e *SaveError) Unwrap() error { return e.Err }

// remover removes containers in the background, so that the next task
// need not wait for the engine to tear the last one down; at most a few at
// once (the next removal waits), and Run waits for all of them before it
// returns, so a run that ends or is interrupted leaves none. A removal
// that fails leaves the container to a later run's sweep, its lease
// released, as a killed run would.
type remover struct {
	wg  sync.WaitGroup
	sem chan struct{}
}

func newRemover(workers int) *remover {
	return &remover{sem: make(chan struct{}, 2*workers)}
}

func (r *remover) remove(box executor.Box) {
	r.sem <- struct{}{}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer func() { <-r.sem }()
		_ = box.Remove() // its own context; a failure is left to a later sweep
	}()
}

func (r *remover) wait() { r.wg.Wait() }

// attemptDir is runs/<run-id>/<instance>/attempt-<k>.
func attemptDir(run, id string, attempt int) string {
	return filepath.Join(run, id, "attempt-"+strconv.Itoa(attempt))
}

// ReadReport reads an instance attempt's report from its folder.
func ReadReport(dir string) (*Report, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		return nil, err
	}
	var rep Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ReportFile), err)
	}
	return &rep, nil
}

func writeMeta(dir string, m Meta) error {
	path := filepath.Join(dir, RunMetaFile)
	if raw, err := os.ReadFile(path); err == nil {
		var old Meta
		if json.Unmarshal(raw, &old) == nil && (old.Dataset != m.Dataset || old.Split != m.Split || old.Predictions != m.Predictions) {
			return fmt.Errorf("run %s evaluated %s %s with %s; this run is %s %s with %s: choose another --run-id",
				m.RunID, old.Dataset, old.Split, old.Predictions, m.Dataset, m.Split, m.Predictions)
		}
		if !old.Created.IsZero() {
			m.Created = old.Created
		}
	}
	return atomicfile.WriteJSON(path, m)
}

// ReadMeta reads a run folder's run.json.
func ReadMeta(dir string) (Meta, error) {
	var m Meta
	raw, err := os.ReadFile(filepath.Join(dir, RunMetaFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return m, fmt.Errorf("%s is not a run folder (no %s)", dir, RunMetaFile)
		}
		return m, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(dir, RunMetaFile), err)
	}
	return m, nil
}
