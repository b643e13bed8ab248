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
	if len(argv) == 0 {
		return ExecResult{}, errors.New("exec: empty command")
	}
	max := opts.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	start := time.Now()
	cmd := argv
	if opts.Timeout > 0 {
		cmd = append([]string{"timeout", "-k", seconds(killAfter), seconds(opts.Timeout)}, argv...)
	}
	token := randomHex(12)
	env := append(slices.Clone(opts.Env), execMarker+"="+token)

	created, err := c.eng.cli.ExecCreate(ctx, c.ID, client.ExecCreateOptions{
		Cmd:          cmd,
		Env:          env,
		WorkingDir:   opts.WorkDir,
		AttachStdin:  opts.Stdin != nil,
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return ExecResult{}, fmt.Errorf("exec %s in %s: %w", argv[0], c.Name, err)
	}
	att, err := c.eng.cli.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		// The process may have started before the attach failed.
		_ = c.stopExec(created.ID, token)
		return ExecResult{}, fmt.Errorf("exec %s in %s: %w", argv[0], c.Name, err)
	}
	defer att.Close()

	stdout, stderr := newTail(max), newTail(max)
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
	var streamErr, stopErr error
	select {
	case streamErr = <-copied:
	case <-ctx.Done():
		stopErr = c.stopExec(created.ID, token)
		att.Close()
		<-copied
	case <-deadline:
		res.TimedOut = true
		stopErr = c.stopExec(created.ID, token)
		att.Close()
		<-copied
	}

	code, waitErr := c.waitExec(created.ID)
	res.ExitCode = code
	res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
	res.Truncated = stdout.cut > 0 || stderr.cut > 0
	res.Duration = time.Since(start)
	if opts.Timeout > 0 && (code == 124 || code == 137) && res.Duration >= opts.Timeout {
		res.TimedOut = true
	}
	switch {
	case ctx.Err() != nil && stopErr == nil && waitErr == nil && streamErr == nil && !finishedBefore(copied):
		return res, fmt.Errorf("exec %s in %s: %w", argv[0], c.Name, ctx.Err())
	case ctx.Err() != nil:
		return res, fmt.Errorf("exec %s in %s: %w", argv[0], c.Name, errors.Join(ctx.Err(), stopErr, waitErr))
	case stopErr != nil || waitErr != nil:
		return res, fmt.Errorf("exec %s in %s: %w", argv[0], c.Name, errors.Join(stopErr, waitErr))
	case streamErr != nil:
		return res, fmt.Errorf("exec %s in %s: reading output: %w", argv[0], c.Name, streamErr)
	}
	return res, nil
}
