package container

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
)

// ExecOptions tune one Exec.
type ExecOptions struct {
	// Timeout bounds the command's run time; zero means no bound other than
	// the context. The command gets SIGTERM at Timeout and SIGKILL 5 s
	// later (coreutils timeout inside the container); should that fail, the
	// host kills the command's processes a few seconds after that.
	Timeout time.Duration
	// Stdin, when set, is copied to the command's standard input, which is
	// closed at EOF. Without it the command's standard input is empty.
	Stdin io.Reader
	// Env adds KEY=value pairs to the container's environment.
	Env []string
	// WorkDir is the working directory; the container's when empty.
	WorkDir string
	// MaxOutput caps the bytes kept of each of stdout and stderr
	// (DefaultMaxOutput when zero). The end of the output is kept.
	MaxOutput int
}

// DefaultMaxOutput is the default cap on each captured output stream.
const DefaultMaxOutput = 4 << 20

// ExecResult is what a finished command left.
type ExecResult struct {
	// ExitCode is the command's exit status; 124 or 137 after a timeout.
	ExitCode int
	// Stdout and Stderr are the captured output, at most MaxOutput bytes
	// each; when more was written, the start is cut and replaced by a line
	// saying how much was cut.
	Stdout, Stderr []byte
	// Truncated says that Stdout or Stderr was cut.
	Truncated bool
	// TimedOut says that the command ran past ExecOptions.Timeout and was
	// killed.
	TimedOut bool
	// Duration is the wall time from creating the exec to knowing its exit
	// status.
	Duration time.Duration
}

const (
	// killAfter is how long the command has to exit after SIGTERM before
	// coreutils timeout sends SIGKILL.
	killAfter = 5 * time.Second
	// hostGrace is how long after killAfter the host waits before killing
	// the command's processes itself.
	hostGrace = 5 * time.Second
	// execMarker names the environment variable that tags every process of
	// one exec, so that they can all be found and killed (see killScript).
	execMarker = "FEATBENCH_EXEC"
)

// Exec runs argv in the container and waits for it to end.
//
// The error is nil when the command ran, whatever its exit status. It is
// not nil when the command could not be run, or when ctx was cancelled, in
// which case the command's processes are killed before Exec returns and the
// result holds the output captured so far.
func (c *Container) Exec(ctx context.Context, argv []string, opts ExecOptions) (ExecResult, error) {
	res, err := c.exec(ctx, argv, opts)
	return res, c.checkLost(ctx, res, err)
}

// checkLost passes a command's failure (err, or a non-zero exit status)
// through an adopted container's check for a container or engine gone;
// anything else is returned as it is. ctx is the command's.
func (c *Container) checkLost(ctx context.Context, res ExecResult, err error) error {
	if c.lost == nil || err == nil && res.ExitCode == 0 {
		return err
	}
	// A command killed with its container looks like one that failed.
	return c.lost(ctx, err, err == nil && (res.ExitCode == 128+9 || res.ExitCode == 128+15))
}

// startExec creates the exec of argv (under coreutils timeout when
// opts.Timeout is set, with its marker token in the environment) and
// attaches to it, its standard input too when stdin is set.
func (c *Container) startExec(ctx context.Context, argv []string, opts ExecOptions, stdin bool) (id, token string, att client.HijackedResponse, err error) {
	cmd := argv
	if opts.Timeout > 0 {
		cmd = append([]string{"timeout", "-k", seconds(killAfter), seconds(opts.Timeout)}, argv...)
	}
	token = randomHex(12)
	created, err := c.eng.cli.ExecCreate(ctx, c.ID, client.ExecCreateOptions{
		Cmd:          cmd,
		Env:          append(slices.Clone(opts.Env), execMarker+"="+token),
		WorkingDir:   opts.WorkDir,
		AttachStdin:  stdin,
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return "", "", client.HijackedResponse{}, fmt.Errorf("exec %s in %s: %w", argv[0], c.Name, err)
	}
	res, err := c.eng.cli.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		// The process may have started before the attach failed.
		_ = c.stopExec(created.ID, token)
		return "", "", client.HijackedResponse{}, fmt.Errorf("exec %s in %s: %w", argv[0], c.Name, err)
	}
	return created.ID, token, res.HijackedResponse, nil
}

func (c *Container) exec(ctx context.Context, argv []string, opts ExecOptions) (ExecResult, error) {
	if len(argv) == 0 {
		return ExecResult{}, errors.New("exec: empty command")
	}
	limit := opts.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	start := time.Now()
	id, token, att, err := c.startExec(ctx, argv, opts, opts.Stdin != nil)
	if err != nil {
		return ExecResult{}, err
	}
	defer att.Close()

	stdout, stderr := newTail(limit), newTail(limit)
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, stderr, att.Reader)
		copied <- err
	}()
	if opts.Stdin != nil {
		go func() {
			// Errors here mean the command stopped reading; its exit
			// status tells what happened.
			_, _ = io.Copy(att.Conn, opts.Stdin)
			_ = att.CloseWrite()
		}()
	}

	var deadline <-chan time.Time
	if opts.Timeout > 0 {
		t := time.NewTimer(opts.Timeout + killAfter + hostGrace)
		defer t.Stop()
		deadline = t.C
	}
	var res ExecResult
	var cancelled bool
	var streamErr, stopErr error
	select {
	case streamErr = <-copied:
	case <-ctx.Done():
		cancelled = true
		stopErr = c.stopExec(id, token)
		att.Close()
		<-copied
	case <-deadline:
		res.TimedOut = true
		stopErr = c.stopExec(id, token)
		att.Close()
		<-copied
	}

	code, running, waitErr := c.waitExec(id, exitWait)
	if running && stopErr == nil {
		// The output ended but the command did not (it closed its
		// output and went on): it must not outlive Exec.
		stopErr = c.stopExec(id, token)
		code, _, waitErr = c.waitExec(id, exitWait)
	}
	res.ExitCode = code
	res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
	res.Truncated = stdout.truncated() || stderr.truncated()
	res.Duration = time.Since(start)
	if !res.TimedOut && !cancelled && opts.Timeout > 0 && (code == 124 || code == 137) && res.Duration >= opts.Timeout {
		res.TimedOut = true
		// coreutils timeout killed its process group; this also gets the
		// processes that left it (setsid, daemons).
		stopErr = c.stopExec(id, token)
	}
	if cancelled {
		return res, fmt.Errorf("exec %s in %s: %w", argv[0], c.Name, errors.Join(ctx.Err(), stopErr))
	}
	if err := errors.Join(stopErr, waitErr); err != nil {
		return res, fmt.Errorf("exec %s in %s: %w", argv[0], c.Name, err)
	}
	if streamErr != nil {
		return res, fmt.Errorf("exec %s in %s: reading output: %w", argv[0], c.Name, streamErr)
	}
	return res, nil
}

// exitWait bounds the wait for an exec's exit status once its output has
// ended, which normally takes milliseconds.
const exitWait = 10 * time.Second

// waitExec polls the exec until it is not running and returns its exit
// status; running is true if it still ran after wait. It uses its own
// context: the status is wanted even when the caller's was cancelled.
func (c *Container) waitExec(id string, wait time.Duration) (code int, running bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	pause := time.Millisecond
	for {
		ins, err := c.eng.cli.ExecInspect(ctx, id, client.ExecInspectOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return -1, true, nil
			}
			return -1, false, fmt.Errorf("inspect exec: %w", err)
		}
		if !ins.Running {
			return ins.ExitCode, false, nil
		}
		select {
		case <-ctx.Done():
			return -1, true, nil
		case <-time.After(pause):
		}
		pause = min(pause*2, 50*time.Millisecond)
	}
}

// ErrContainerKilled is returned (wrapped) when the processes of an exec
// could not be stopped one by one and the whole container was killed
// instead; the container cannot run further commands.
var ErrContainerKilled = errors.New("processes could not be stopped; the container was killed")

// killScript kills every process whose environment holds the marker $1,
// that is every process an exec started and their descendants, however
// they changed process groups or sessions. It uses only bash builtins, so
// it still works when the pids limit forbids forking, and repeats until no
// tagged process is left (a fork bomb refills the process table between
// passes, and a killed process lingers until the kernel has torn it down,
// which on a loaded machine takes longer than a pass): for up to 5 s, timed
// by bash's own clock.
const killScript = `exec 2>/dev/null
t="$1"
end=$(( ${EPOCHREALTIME//[.,]/} + 5000000 ))
while :; do
	found=
	for d in /proc/[0-9]*; do
		p="${d#/proc/}"
		[ "$p" = "$$" ] && continue
		while IFS= read -r -d '' v; do
			if [ "$v" = "$t" ]; then kill -9 "$p"; found=1; break; fi
		done <"$d/environ"
	done
	[ -z "$found" ] && exit 0
	[ "${EPOCHREALTIME//[.,]/}" -gt "$end" ] && exit 1
done`

// stopExec kills the processes of an exec and waits until the engine sees
// it end. When that fails, it kills the container and returns
// ErrContainerKilled; an error otherwise means even that failed.
func (c *Container) stopExec(id, token string) error {
	reason := c.runKiller(token)
	if reason == nil {
		if _, running, err := c.waitExec(id, exitWait); err == nil && !running {
			return nil
		}
		reason = errors.New("still running after its processes were killed")
	}
	if err := c.kill(); err != nil {
		return errors.Join(reason, err)
	}
	return fmt.Errorf("%w (%v)", ErrContainerKilled, reason)
}

// runKiller runs killScript in a detached exec and waits for it.
func (c *Container) runKiller(token string) error {
	ctx, cancel := cleanupContext()
	defer cancel()
	created, err := c.eng.cli.ExecCreate(ctx, c.ID, client.ExecCreateOptions{
		Cmd: []string{"bash", "-c", killScript, "featbench-kill", execMarker + "=" + token},
	})
	if err != nil {
		return fmt.Errorf("create killer exec: %w", err)
	}
	if _, err := c.eng.cli.ExecStart(ctx, created.ID, client.ExecStartOptions{Detach: true}); err != nil {
		return fmt.Errorf("start killer exec: %w", err)
	}
	code, running, err := c.waitExec(created.ID, exitWait)
	switch {
	case err != nil:
		return err
	case running:
		return errors.New("killer exec did not finish")
	case code != 0:
		return fmt.Errorf("killer exec exited with status %d", code)
	}
	return nil
}

// seconds formats d for coreutils timeout.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(max(d.Seconds(), 0.001), 'f', 3, 64) + "s"
}

// tail keeps the last max bytes written to it and counts the rest.
type tail struct {
	buf []byte
	max int
	cut int64
}

func newTail(limit int) *tail { return &tail{max: limit} }

func (t *tail) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	// Trim only when twice over the cap, so that appending stays
	// amortised linear.
	if over := len(t.buf) - t.max; over > t.max {
		t.cut += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) truncated() bool { return t.cut > 0 || len(t.buf) > t.max }

// Bytes returns the kept output, preceded by a line saying how much was
// cut if anything was.
func (t *tail) Bytes() []byte {
	b, cut := t.buf, t.cut
	if over := len(b) - t.max; over > 0 {
		b, cut = b[over:], cut+int64(over)
	}
	if cut == 0 {
		return slices.Clone(b)
	}
	head := fmt.Sprintf("[featbench: the first %d bytes of this output were cut]\n", cut)
	return append([]byte(head), b...)
}
