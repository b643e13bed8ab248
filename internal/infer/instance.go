package infer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/atomicfile"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/integrity"
	"github.com/featbench/featbench/internal/meter"
	"github.com/featbench/featbench/internal/relay"
)

// Paths and port inside an agent's container.
const (
	taskDir    = "/run/featbench"              // the instruction file
	baseGitDir = "/var/lib/featbench/base.git" // root's copy of the starting point, to diff against
	proxyPort  = 9100                          // where the relay listens
	// ProxyURL is the proxy as the agent reaches it: FEATBENCH_PROXY.
	ProxyURL = "http://127.0.0.1:9100"
)

// InstructionFile is the instruction as the agent finds it:
// FEATBENCH_INSTRUCTION.
const InstructionFile = taskDir + "/instruction.md"

// harnessGrace is the time the harness takes beyond the agent's own:
// the container, the starting point, the diff.
const harnessGrace = 10 * time.Minute

// runOne runs the agent on one instance in a new container and writes
// the instance's folder, the record last. An error is an interruption, an
// upstream that is down (a *meter.Down: the run stops, nothing recorded)
// or a failure to write the folder (an *evaluate.SaveError, with the
// record that was not saved: the instance is not done). A failure of the
// harness inside the instance is recorded (HarnessError) and tried again
// by the next run.
//
// Nothing of an instance is done until it is durably written: the
// trajectory and the harness's log are written as they go and synced,
// the agent's log and the prediction through atomicfile, and the record,
// which marks the instance done, last, only when every other file is
// whole.
func runOne(ctx context.Context, cfg Config, in *bench.Instance, dir string, ls *executor.Lease) (*Record, error) {
	start := time.Now()
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("clearing %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	rec := &Record{InstanceID: in.InstanceID, Agent: cfg.Agent.Name, Model: cfg.Agent.Model}
	hlog, err := atomicfile.CreateLog(filepath.Join(dir, HarnessLogFile))
	if err != nil {
		return unsaved(rec, err)
	}
	defer hlog.Close()
	traj, err := atomicfile.CreateLog(filepath.Join(dir, TrajectoryFile))
	if err != nil {
		return unsaved(rec, err)
	}
	defer traj.Close()
	run := infer
	if cfg.Prompt != nil {
		run = promptInfer
	}
	patch, err := run(ctx, cfg, in, ls, rec, hlog, traj, dir)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var down *meter.Down
	if errors.As(err, &down) {
		fmt.Fprintf(hlog, "stopped: %v\n", err)
		return nil, err
	}
	// A trajectory not written whole is no measure of the instance,
	// whatever else happened.
	var se *evaluate.SaveError
	werr := traj.Close()
	switch {
	case werr != nil:
	case errors.As(err, &se):
		werr = se.Err
	case err != nil:
		rec.FailureMode, rec.Error = HarnessError, err.Error()
		fmt.Fprintf(hlog, "harness error: %v\n", err)
	}
	if werr == nil {
		werr = atomicfile.Write(filepath.Join(dir, PatchFile), patch)
	}
	if cerr := hlog.Close(); werr == nil {
		werr = cerr
	}
	rec.Total = time.Since(start).Seconds()
	rec.Finished = time.Now().UTC()
	if werr == nil {
		werr = atomicfile.WriteJSON(filepath.Join(dir, RecordFile), rec)
	}
	if werr != nil {
		os.Remove(filepath.Join(dir, RecordFile))
		return unsaved(rec, werr)
	}
	return rec, nil
}

// unsaved is runOne's answer for an instance whose files could not all
// be written: the record, not saved, says so (for the progress line).
func unsaved(rec *Record, err error) (*Record, error) {
	rec.Unsaved = err.Error()
	return rec, &evaluate.SaveError{Err: err}
}

// upstreamDown says whether the upstream is down once the agent's
// model calls are over: it refused the key of one of them, or the last
// found no upstream to connect to and a check now finds none either (a
// moment's loss leaves the instance its outcome, an UpstreamError).
// found is what a check during the agent's run found, or nil.
func upstreamDown(ctx context.Context, m *meter.Meter, found *meter.Down, hlog io.Writer) *meter.Down {
	if found != nil {
		return found
	}
	if d := m.Down(); d != nil {
		return d
	}
	if !m.Totals().LastUnreachable {
		return nil
	}
	var d *meter.Down
	if err := meter.Check(ctx, m.Upstream()); errors.As(err, &d) {
		return d
	}
	fmt.Fprintf(hlog, "the upstream could not be reached by the last model call, but answers now\n")
	return nil
}

// watchUpstream stops the agent (stop) as soon as the upstream refuses
// the key, or a model call finds no upstream and a check finds none
// either, and returns what it found then; it returns when done is
// closed.
func watchUpstream(ctx context.Context, m *meter.Meter, stop func(), done <-chan struct{}) func() *meter.Down {
	var mu sync.Mutex
	var found *meter.Down
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		unreach := m.Unreachable()
		for {
			select {
			case <-done:
				return
			case <-m.Refused():
				mu.Lock()
				found = m.Down()
				mu.Unlock()
				stop()
				return
			case <-unreach:
				unreach = nil // checked once: a later loss is the instance's
				var d *meter.Down
				if err := meter.Check(ctx, m.Upstream()); errors.As(err, &d) {
					mu.Lock()
					found = d
					mu.Unlock()
					stop()
					return
				}
			}
		}
	}()
	return func() *meter.Down {
		<-ended
		mu.Lock()
		defer mu.Unlock()
		return found
	}
}

// infer does the work of runOne: the proxy, the container, the agent,
// the diff. rec gets what was measured.
func infer(ctx context.Context, cfg Config, in *bench.Instance, ls *executor.Lease, rec *Record, hlog, traj io.Writer, dir string) ([]byte, error) {
	a := cfg.Agent
	image := a.Image[evaluate.ImageKey(cfg.Dataset, in)]
	if image == "" {
		return nil, fmt.Errorf("no image of %s for %s", a.Name, evaluate.ImageKey(cfg.Dataset, in))
	}
	m, err := meter.New(meter.Upstream{URL: a.upstream(), API: a.API, Key: a.Key},
		cfg.Prices, meter.Limits{Turns: a.MaxTurns, Tokens: a.MaxTokens, Cost: a.MaxCost}, traj)
	if err != nil {
		return nil, err
	}
	defer func() { measured(rec, m.Totals()) }()

	timeout := a.TimeoutDuration()
	lim := agentLimits(cfg.Container)
	box, err := ls.Start(ctx, container.Spec{ // under the run's lease
		Image: image, Name: "featbench-infer", WorkDir: "/", Limits: lim,
		Labels: map[string]string{
			evaluate.LabelProject: "1", evaluate.LabelKind: "infer", evaluate.LabelRun: cfg.Meta.RunID, evaluate.LabelTask: in.InstanceID,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("starting a container from %s: %w", image, err)
	}
	defer box.Remove()
	hctx, cancel := context.WithTimeout(ctx, timeout+harnessGrace)
	defer cancel()
	work, err := evaluate.StartingPoint(hctx, box, cfg.Dataset, in, hlog)
	if err != nil {
		return nil, fmt.Errorf("reaching the starting point: %w", err)
	}
	if err := box.CopyIn(hctx, taskDir, []container.File{{Path: filepath.Base(InstructionFile), Mode: 0o644, Data: []byte(in.ProblemStatement)}}); err != nil {
		return nil, err
	}
	// Root keeps a copy of the starting point the agent cannot reach, to
	// diff against whatever the agent does to its own git folder; then the
	// folder is the agent's.
	setup := "set -e\nmkdir -p " + filepath.Dir(baseGitDir) + " && chmod 700 " + filepath.Dir(baseGitDir) +
		"\ngit clone -q --bare --no-hardlinks " + work + " " + baseGitDir + "\nchown -R " + agentUser + " " + work + "\n"
	if err := step(hctx, box, hlog, "/", "taking the starting point's copy and handing the folder to the agent", "sh", "-c", setup); err != nil {
		return nil, err
	}

	// The proxy, served through the relay (as root): the agent's only
	// way out.
	rl, err := relay.Start(ctx, box, proxyPort, "the metering proxy")
	if err != nil {
		return nil, err
	}
	defer rl.Close()
	sctx, cancelServe := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() { served <- m.Serve(sctx, rl) }()
	var stopOnce sync.Once
	stopServe := func() { // its requests answered and recorded
		stopOnce.Do(func() {
			cancelServe()
			<-served
		})
	}
	defer stopServe()

	// The agent, as its user; stopped when a limit is reached, or when
	// the relay fails (it has no way out then).
	actx, stopAgent := context.WithCancel(hctx)
	defer stopAgent()
	go func() {
		select {
		case <-m.LimitHit():
			stopAgent()
		case <-rl.Done():
			stopAgent()
		case <-actx.Done():
		}
	}()
	env := append([]string{
		"FEATBENCH_COMMAND=" + a.Command,
		"FEATBENCH_INSTRUCTION=" + InstructionFile,
		"FEATBENCH_MODEL=" + a.Model,
		"FEATBENCH_PROXY=" + ProxyURL,
		"FEATBENCH_WORKDIR=" + work,
		"FEATBENCH_MAX_TURNS=" + strconv.Itoa(a.MaxTurns),
	}, a.Env...)
	agentDone := make(chan struct{})
	downFound := watchUpstream(ctx, m, stopAgent, agentDone)
	started := time.Now()
	if cfg.Progress != nil && cfg.ProgressEvery > 0 {
		go working(cfg, in.InstanceID, m, started, agentDone)
	}
	script := `exec setpriv --reuid=` + agentUID + ` --regid=` + agentUID + ` --clear-groups --no-new-privs env HOME=/home/agent USER=agent LOGNAME=agent bash -c "$FEATBENCH_COMMAND"`
	fmt.Fprintf(hlog, "$ (cd %s && agent %s: %s)\n", work, a.Name, a.Command)
	res, err := box.Exec(actx, []string{"bash", "-c", script}, container.ExecOptions{Timeout: timeout, WorkDir: work, Env: env, MaxOutput: 8 << 20})
	rec.Seconds = time.Since(started).Seconds()
	rec.ExitCode = res.ExitCode
	close(agentDone)
	stopServe()
	if d := upstreamDown(ctx, m, downFound(), hlog); d != nil && ctx.Err() == nil {
		return nil, d // not the instance's outcome: the run stops
	}
	var alog bytes.Buffer
	alog.Write(res.Stdout)
	if len(res.Stderr) > 0 {
		alog.WriteString("\n--- stderr ---\n")
		alog.Write(res.Stderr)
	}
	if werr := atomicfile.Write(filepath.Join(dir, AgentLogFile), alog.Bytes()); werr != nil {
		return nil, &evaluate.SaveError{Err: werr}
	}
	fmt.Fprintf(hlog, "exit %d in %.2f s%s\n\n", res.ExitCode, rec.Seconds, map[bool]string{true: " (timed out)"}[res.TimedOut])
	tot := m.Totals()
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case rl.Err() != nil:
		return nil, rl.Failure()
	case tot.Limit != "":
		rec.FailureMode = tot.Limit
	case err != nil && hctx.Err() == nil && !errors.Is(err, context.Canceled):
		return nil, fmt.Errorf("running the agent: %w", err)
	case res.TimedOut || hctx.Err() != nil:
		rec.FailureMode = AgentTimeout
	case tot.LastFailed:
		rec.FailureMode, rec.Error = UpstreamError, tot.LastError
	case res.ExitCode != 0:
		rec.FailureMode = AgentError
		rec.Error = fmt.Sprintf("the agent exited %d: %s", res.ExitCode, lastLines(string(res.Stderr)+string(res.Stdout), 3))
	}
	// The agent's work, whatever stopped it: the diff against the base.
	dctx, cancelDiff := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancelDiff()
	patch, files, dropped, err := diff(dctx, box, hlog, work, in)
	if err != nil {
		return nil, err
	}
	rec.FilesChanged, rec.Dropped = files, dropped
	return patch, m.Err()
}

// working tells cfg.Progress what the agent on instance id did so far,
// every cfg.ProgressEvery, until done is closed.
func working(cfg Config, id string, m *meter.Meter, started time.Time, done <-chan struct{}) {
	tick := time.NewTicker(cfg.ProgressEvery)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			cfg.Progress.Working(id, m.Totals(), time.Since(started))
		}
	}
}

// measured puts the meter's totals into the record.
func measured(rec *Record, tot meter.Totals) {
	rec.Meter = tot
	rec.Turns, rec.TokensIn, rec.TokensOut, rec.Usage, rec.Unpriced = tot.Turns, tot.TokensIn, tot.TokensOut, tot.Usage, tot.Unpriced
	if len(tot.Unpriced) == 0 {
		c := tot.Cost
		rec.Cost = &c
	}
}

// step runs a harness command that must succeed, logged.
func step(ctx context.Context, box executor.Box, log io.Writer, dir, what string, argv ...string) error {
	res, err := box.Exec(ctx, argv, container.ExecOptions{Timeout: 5 * time.Minute, WorkDir: dir})
	fmt.Fprintf(log, "$ (cd %s && %s)\nexit %d in %.2f s\n%s%s\n", dir, strings.Join(argv, " "), res.ExitCode, res.Duration.Seconds(), res.Stdout, res.Stderr)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("%s: exited %d: %s", what, res.ExitCode, lastLines(string(res.Stderr), 5))
	}
	return nil
}

// diff is the agent's work in the folder against the starting point, as
// a unified diff git applies, without test files (the instance's, and any
// by its path), binary files and caches; it returns the patch, how many
// files it changes and the paths left out.
func diff(ctx context.Context, box executor.Box, log io.Writer, work string, in *bench.Instance) ([]byte, int, []string, error) {
	git := []string{"git", "-c", "core.bare=false", "-c", "core.quotepath=false", "--git-dir=" + baseGitDir, "--work-tree=" + work}
	if err := step(ctx, box, log, work, "staging the agent's work", append(git, "add", "-A", ".")...); err != nil {
		return nil, 0, nil, err
	}
	res, err := box.Exec(ctx, append(git, "diff", "--cached", "--no-renames", "--numstat", "-z", "HEAD"), container.ExecOptions{Timeout: 5 * time.Minute, WorkDir: work, MaxOutput: 16 << 20})
	if err != nil || res.ExitCode != 0 {
		return nil, 0, nil, fmt.Errorf("listing the agent's changes: %v %s", err, res.Stderr)
	}
	keep, dropped := changes(res.Stdout, in)
	if len(keep) == 0 {
		return []byte{}, 0, dropped, nil
	}
	args := append(git, "diff", "--cached", "--no-renames", "--no-color", "--no-ext-diff", "--full-index", "HEAD", "--")
	for _, p := range keep {
		args = append(args, ":(literal)"+p)
	}
	res, err = box.Exec(ctx, args, container.ExecOptions{Timeout: 5 * time.Minute, WorkDir: work, MaxOutput: 64 << 20})
	if err != nil || res.ExitCode != 0 || res.Truncated {
		return nil, 0, nil, fmt.Errorf("diffing the agent's work: %v %s", err, lastLines(string(res.Stderr), 5))
	}
	fmt.Fprintf(log, "the agent's diff: %d files, %d bytes; left out: %s\n", len(keep), len(res.Stdout), strings.Join(dropped, ", "))
	return res.Stdout, len(keep), dropped, nil
}

// changes splits the paths of git's `diff --numstat -z` into those the
// prediction keeps and those it leaves out: binaries (numstat's "-"),
// test files (the instance's, and any by its path) and junk.
func changes(numstat []byte, in *bench.Instance) (keep, dropped []string) {
	for _, entry := range strings.Split(strings.TrimRight(string(numstat), "\x00"), "\x00") {
		f := strings.SplitN(entry, "\t", 3)
		if len(f) != 3 {
			continue
		}
		p := f[2]
		switch {
		case f[0] == "-" && f[1] == "-", integrity.IsTest(in, p), junk(p):
			dropped = append(dropped, p)
		default:
			keep = append(keep, p)
		}
	}
	return keep, dropped
}

// junk is what running code leaves that is no one's work.
func junk(p string) bool {
	for _, part := range strings.Split(p, "/") {
		if part == "__pycache__" || part == ".pytest_cache" || part == ".mypy_cache" || strings.HasSuffix(part, ".egg-info") || part == "node_modules" {
			return true
		}
	}
	return strings.HasSuffix(p, ".pyc") || strings.HasSuffix(p, ".pyo")
}

// agentLimits are the agent's container's limits: the configured ones,
// with what the agent writes to /tmp (caches, scratch) bounded and
// counted in its memory, as the tests' is when grading.
func agentLimits(lim container.Limits) container.Limits {
	if lim.Tmp == 0 && lim.Memory > 0 {
		lim.Tmp = lim.Memory / 2
	}
	return lim
}
