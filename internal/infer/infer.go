// Package infer runs coding agents on task instances: `eval infer`. Each
// instance gets a container of its environment image with the agent's
// layer on it, taken to the starting point grading uses (the masked
// codebase as the only commit; level 2: an empty folder), with no network.
// The agent's only way out is the harness's metering proxy (package
// meter), reached through a relay on the container's loopback that
// carries each connection over the engine's exec stream (relay.go), so
// that the container may run on any engine: the local one or a swarm
// node (the executor of eval run). The proxy counts the tokens and
// prices them, enforces the instance's limits and records the trajectory;
// the harness takes the agent's diff against the base, without test
// files, as the prediction. A run writes runs/<run-id>/predictions.jsonl,
// which `eval run` grades, and resumes when started again.
package infer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/atomicfile"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/meter"
	"github.com/featbench/featbench/internal/runlock"
)

// Files of a run folder that infer writes: runs/<run-id>/.
const (
	MetaFile        = "infer.json"        // what the run infers
	PredictionsFile = "predictions.jsonl" // for eval run
	Folder          = "infer"             // infer/<instance>/ holds each instance's files
	RecordFile      = "record.json"       // an instance's outcome, written last
	TrajectoryFile  = "trajectory.jsonl"  // every exchange with the model, whole
	AgentLogFile    = "agent.log"         // the agent's output
	HarnessLogFile  = "container.log"     // the harness's commands
	PatchFile       = "prediction.diff"
)

// Failure modes of an instance (Record.FailureMode), besides the
// meter's limits (TurnLimit, TokenLimit, CostLimit).
const (
	AgentTimeout  = "AgentTimeout"  // the agent ran out of wall time
	AgentError    = "AgentError"    // the agent exited with an error
	UpstreamError = "UpstreamError" // the model's API failed the agent's last request
	HarnessError  = "HarnessError"  // the harness could not run the agent (the engine failed): tried again by the next run
)

// retried are the failure modes a run tries again when it resumes: they
// say nothing about the agent.
var retried = map[string]bool{HarnessError: true, UpstreamError: true}

// Agent is an agent as a run uses it.
type Agent struct {
	config.Agent
	Model string            // what FEATBENCH_MODEL says
	Key   string            // the upstream's key, read on this machine; never in the container
	Env   []string          // KEY=value passed through to the agent
	Image map[string]string // evaluate.ImageKey -> the agent's image on that environment
	// Upstream overrides the agent's upstream URL (a test double's).
	Upstream string
}

// Meta is infer.json.
type Meta struct {
	RunID     string    `json:"run_id"`
	Dataset   string    `json:"dataset"`
	Split     string    `json:"split"`
	Agent     string    `json:"agent"`
	Model     string    `json:"model"`
	Instances []string  `json:"instances"`
	Created   time.Time `json:"created"`
}

// Record is an instance's outcome: infer/<instance>/record.json.
type Record struct {
	InstanceID  string `json:"instance_id"`
	Agent       string `json:"agent"`
	Model       string `json:"model"`
	FailureMode string `json:"failure_mode,omitempty"` // "" when the agent finished
	Error       string `json:"error,omitempty"`
	ExitCode    int    `json:"exit_code"`
	// What the proxy measured.
	Turns     int          `json:"turns"`
	TokensIn  int64        `json:"tokens_in"`
	TokensOut int64        `json:"tokens_out"`
	Usage     meter.Usage  `json:"usage"`
	Cost      *float64     `json:"cost,omitempty"` // nil when a model had no price
	Unpriced  []string     `json:"unpriced,omitempty"`
	Meter     meter.Totals `json:"meter"`
	// Seconds is the agent's wall time; Total the whole instance's.
	Seconds      float64   `json:"seconds"`
	Total        float64   `json:"total_seconds"`
	FilesChanged int       `json:"files_changed"`
	Dropped      []string  `json:"dropped,omitempty"` // files of the agent's diff left out: tests, binaries, caches
	Finished     time.Time `json:"finished"`
	// Unsaved, never written, says why the record could not be saved
	// (the instance is not done): for the progress line.
	Unsaved string `json:"-"`
}

// Progress hears about a run as it goes: each instance done (or not
// saved: rec.Unsaved), and every Config.ProgressEvery what each agent at
// work did so far.
type Progress interface {
	Start(total int)
	Done(rec *Record, skipped bool)
	Working(id string, so meter.Totals, elapsed time.Duration)
	Finish()
}

// Config is one run.
type Config struct {
	Meta      Meta
	Dataset   *bench.Dataset
	Agent     Agent
	Prices    map[string]config.Price
	Dir       string // runs/<run-id>
	Workers   int    // agents at once on the local engine; a swarm admits by its room instead
	Force     bool   // run again what a previous run of this id finished
	Container container.Limits
	// Engine runs the containers: the local engine or a swarm
	// (internal/executor), as for eval run.
	Engine   executor.Executor
	Progress Progress
	// ProgressEvery is how often Progress hears what each agent at work
	// did so far (0: never).
	ProgressEvery time.Duration
	// Log, when not nil, hears of the run's lease (renewals failing, the
	// leftovers of killed runs removed).
	Log io.Writer
	// Prompt, when set, runs prompt mode instead of the agent: one
	// request with the statement and code as context (prompt.go).
	// Agent.Image then names the environment images, Agent.Command is
	// not used.
	Prompt *Prompt
}

// Run runs the agent on every instance of the configuration that has no
// record yet (or whose record is a failure that is retried: the harness's
// or the upstream's), writing each one's folder and, after each,
// predictions.jsonl. Killing it loses only the instances in flight.
//
// The caller checks the upstream first (CheckUpstream). An upstream found
// down during the run (a *meter.Down: the key refused, or no upstream to
// connect to) stops it at once: the instances in flight are not recorded,
// and Run returns that error. An instance whose files could not all be
// written is not done; the run goes on, and returns with its records an
// error naming the files.
func Run(ctx context.Context, cfg Config) ([]*Record, error) {
	if err := os.MkdirAll(filepath.Join(cfg.Dir, Folder), 0o755); err != nil {
		return nil, fmt.Errorf("creating the run folder: %w", err)
	}
	release, err := runlock.Acquire(cfg.Dir, "eval infer "+cfg.Meta.RunID)
	if err != nil {
		return nil, err
	}
	defer release()
	all, err := writeMeta(cfg.Dir, cfg.Meta)
	if err != nil {
		return nil, err
	}
	var ins []*bench.Instance
	for _, id := range cfg.Meta.Instances {
		in := cfg.Dataset.Instance(id)
		if in == nil {
			return nil, fmt.Errorf("instance %s is not in %s", id, cfg.Dataset.DisplayName())
		}
		ins = append(ins, in)
	}
	// The run's lease, on every agent's container; taking it removes what
	// killed runs left. Released last, once every container is gone.
	ls, err := executor.Hold(ctx, cfg.Engine, "eval infer "+cfg.Meta.RunID, cfg.Log)
	if err != nil {
		return nil, err
	}
	defer ls.Release()
	if cfg.Progress != nil {
		cfg.Progress.Start(len(ins))
		defer cfg.Progress.Finish()
	}
	var todo []*bench.Instance
	for _, in := range ins {
		if !cfg.Force {
			if rec, err := ReadRecord(filepath.Join(cfg.Dir, Folder, in.InstanceID)); err == nil && !retried[rec.FailureMode] {
				if cfg.Progress != nil {
					cfg.Progress.Done(rec, true)
				}
				continue
			}
		}
		todo = append(todo, in)
	}
	var mu sync.Mutex // predictions.jsonl, unsaved
	var unsavedIDs []string
	var predErr error // the last failure to write predictions.jsonl; the last write is the one that counts
	// A swarm admits the agents' containers by its room, in order, as for
	// eval run; elsewhere the workers bound them. An agent's run is not
	// done again within the run when its container is lost: the loss is
	// recorded (HarnessError), and the next run tries it again.
	pool := executor.NewPool(cfg.Engine, cfg.Workers, agentLimits(cfg.Container))
	err = pool.Each(ctx, len(todo), func(ctx context.Context, i int, _ error) error {
		in := todo[i]
		rec, err := runOne(ctx, cfg, in, filepath.Join(cfg.Dir, Folder, in.InstanceID), ls)
		var se *evaluate.SaveError
		switch {
		case errors.As(err, &se) && ctx.Err() == nil:
			mu.Lock()
			unsavedIDs = append(unsavedIDs, fmt.Sprintf("%s: %v", in.InstanceID, se.Err))
			mu.Unlock()
			if cfg.Progress != nil {
				cfg.Progress.Done(rec, false)
			}
			return nil // the next run does it again
		case err != nil:
			if ctx.Err() != nil {
				return ctx.Err() // interrupted: no record, the next run does it again
			}
			return err
		}
		if cfg.Progress != nil {
			cfg.Progress.Done(rec, false)
		}
		mu.Lock()
		defer mu.Unlock()
		_, predErr = WritePredictions(cfg.Dir, all)
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	recs, err := WritePredictions(cfg.Dir, all)
	if err != nil {
		if predErr != nil {
			err = errors.Join(err, predErr)
		}
		return nil, err
	}
	if len(unsavedIDs) > 0 {
		sort.Strings(unsavedIDs)
		return recs, &UnsavedError{Instances: unsavedIDs}
	}
	return recs, nil
}

// UnsavedError is Run's error, with its records, when instances could not
// be saved whole: each line names the instance, the file and the error.
type UnsavedError struct{ Instances []string }

func (e *UnsavedError) Error() string {
	return fmt.Sprintf("%d instances could not be saved whole and are not done (the next run of the command runs them again):\n  %s",
		len(e.Instances), strings.Join(e.Instances, "\n  "))
}

// CheckUpstream asks the agent's upstream, with its key, the cheapest
// question that needs the key (meter.Check): a *meter.Down when the key
// is refused or the upstream cannot be reached, which no instance should
// pay for.
func CheckUpstream(ctx context.Context, a Agent) error {
	return meter.Check(ctx, meter.Upstream{URL: a.upstream(), API: a.API, Key: a.Key})
}

// upstream is the URL the agent's proxy forwards to.
func (a Agent) upstream() string {
	if a.Upstream != "" {
		return a.Upstream
	}
	return a.Agent.Upstream
}

// ReadRecord reads an instance's record from its folder.
func ReadRecord(dir string) (*Record, error) {
	raw, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if err != nil {
		return nil, err
	}
	var rec Record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, RecordFile), err)
	}
	return &rec, nil
}

// prediction is one line of predictions.jsonl.
type prediction struct {
	InstanceID  string   `json:"instance_id"`
	Model       string   `json:"model_name_or_path"`
	Agent       string   `json:"agent"`
	Patch       string   `json:"model_patch"`
	TokensIn    *int64   `json:"tokens_in,omitempty"`
	TokensOut   *int64   `json:"tokens_out,omitempty"`
	Cost        *float64 `json:"cost,omitempty"`
	Turns       *int     `json:"turns,omitempty"`
	Duration    float64  `json:"duration"`
	Trajectory  string   `json:"trajectory"` // relative to predictions.jsonl's folder
	Measured    bool     `json:"measured"`
	FailureMode string   `json:"failure_mode,omitempty"`
}

// WritePredictions writes predictions.jsonl from the records of the
// run's instances that have one (in the run's order), and returns them.
func WritePredictions(dir string, meta Meta) ([]*Record, error) {
	var recs []*Record
	var out []byte
	for _, id := range meta.Instances {
		idir := filepath.Join(dir, Folder, id)
		rec, err := ReadRecord(idir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if rec.FailureMode == HarnessError {
			continue // no prediction: the harness failed, not the agent
		}
		patch, err := os.ReadFile(filepath.Join(idir, PatchFile))
		if err != nil {
			return nil, fmt.Errorf("the prediction of %s: %w", id, err)
		}
		p := prediction{
			InstanceID: id, Model: rec.Model, Agent: rec.Agent, Patch: string(patch), Duration: round(rec.Seconds),
			Trajectory: Folder + "/" + id + "/" + TrajectoryFile, FailureMode: rec.FailureMode,
		}
		if rec.Meter.NoUsage == 0 {
			// Measured only when every response reported its usage: a
			// count with holes is no figure to publish.
			p.TokensIn, p.TokensOut, p.Cost, p.Turns, p.Measured = &rec.TokensIn, &rec.TokensOut, rec.Cost, &rec.Turns, true
		}
		line, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		out = append(append(out, line...), '\n')
		recs = append(recs, rec)
	}
	if err := atomicfile.Write(filepath.Join(dir, PredictionsFile), out); err != nil {
		return nil, err
	}
	return recs, nil
}

func round(s float64) float64 { return float64(int64(s*1000+0.5)) / 1000 }

// writeMeta writes infer.json, and returns it with the instances of
// earlier runs of the id, whose predictions stay.
func writeMeta(dir string, m Meta) (Meta, error) {
	path := filepath.Join(dir, MetaFile)
	if raw, err := os.ReadFile(path); err == nil {
		var old Meta
		if json.Unmarshal(raw, &old) == nil && (old.Dataset != m.Dataset || old.Split != m.Split || old.Agent != m.Agent || old.Model != m.Model) {
			return m, fmt.Errorf("run %s ran %s with %s on %s %s; this run is %s with %s on %s %s: choose another --run-id",
				m.RunID, old.Agent, old.Model, old.Dataset, old.Split, m.Agent, m.Model, m.Dataset, m.Split)
		}
		if !old.Created.IsZero() {
			m.Created = old.Created
		}
		// Instances of an earlier run of this id stay in its predictions.
		seen := map[string]bool{}
		m.Instances = slices.Clone(m.Instances)
		for _, id := range m.Instances {
			seen[id] = true
		}
		for _, id := range old.Instances {
			if !seen[id] {
				m.Instances = append(m.Instances, id)
			}
		}
	}
	return m, atomicfile.WriteJSON(path, m)
}

// ReadMeta reads a run folder's infer.json.
func ReadMeta(dir string) (Meta, error) {
	var m Meta
	raw, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		return m, err
	}
	return m, json.Unmarshal(raw, &m)
}
