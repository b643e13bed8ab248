package collect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/executor"
)

// Paths inside a collection container.
const (
	repoDir = "/testbed" // the repository, as the environment image holds it
	fbDir   = "/fb"      // what collection brings: scripts, requests
	outDir  = "/fb/out"  // what the scripts and pytest write
)

// Labels on collection containers, so that leftovers can be found.
const (
	labelProject = "featbench.project"
	labelKind    = "featbench.kind"
	labelRepo    = "featbench.repo"
)

// box is a container of the repository's environment image with a log of
// every command run in it.
type box struct {
	c        executor.Box
	mu       sync.Mutex
	log      io.Writer
	closeLog func() error
}

// openBox starts a container from image under the run's lease; logPath
// (may be "") receives the commands and their output, appended.
func openBox(ctx context.Context, eng executor.Starter, image, repo string, lim container.Limits, logPath string) (*box, error) {
	var log io.Writer = io.Discard
	var f *os.File
	if logPath != "" {
		var err error
		f, err = os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("opening the log: %w", err)
		}
		log = f
	}
	spec := container.Spec{
		Image: image, Name: "featbench-collect", WorkDir: repoDir, Limits: lim,
		Labels: map[string]string{labelProject: "1", labelKind: "collect", labelRepo: repo},
	}
	c, err := eng.Start(ctx, spec)
	if errors.Is(err, container.ErrLost) && ctx.Err() == nil {
		// A swarm's task lost with its node before anything ran in it:
		// once more, which the swarm places elsewhere.
		fmt.Fprintf(log, "retried: %v\n\n", err)
		c, err = eng.Start(ctx, spec)
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, fmt.Errorf("starting a container from %s: %w", image, err)
	}
	b := &box{c: c, log: log}
	if f != nil {
		b.closeLog = f.Close // closed with the container
	}
	return b, nil
}

// close removes the container and closes the log.
func (b *box) close() {
	b.c.Remove()
	if b.closeLog != nil {
		b.closeLog()
	}
}

// logf writes a line to the box's log.
func (b *box) logf(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintf(b.log, format+"\n\n", args...)
}

// exec runs argv in dir and logs it. A non-zero exit is not an error.
func (b *box) exec(ctx context.Context, dir string, timeout time.Duration, env []string, argv ...string) (container.ExecResult, error) {
	if timeout == 0 {
		timeout = 10 * time.Minute
	}
	res, err := b.c.Exec(ctx, argv, container.ExecOptions{Timeout: timeout, WorkDir: dir, Env: env})
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintf(b.log, "$ (cd %s && %s)\n", dir, strings.Join(argv, " "))
	if err != nil {
		fmt.Fprintf(b.log, "error: %v\n\n", err)
		return res, err
	}
	fmt.Fprintf(b.log, "exit %d in %.2f s%s\n", res.ExitCode, res.Duration.Seconds(), map[bool]string{true: " (timed out)"}[res.TimedOut])
	for _, out := range [][]byte{res.Stdout, res.Stderr} {
		if len(out) > 0 {
			b.log.Write(out)
			if out[len(out)-1] != '\n' {
				io.WriteString(b.log, "\n")
			}
		}
	}
	io.WriteString(b.log, "\n")
	return res, nil
}

// must runs a command that has to succeed; its failure names what was
// being done and shows the end of the output.
func (b *box) must(ctx context.Context, what, dir string, timeout time.Duration, argv ...string) (container.ExecResult, error) {
	res, err := b.exec(ctx, dir, timeout, nil, argv...)
	if err != nil {
		return res, fmt.Errorf("%s: %w", what, err)
	}
	if res.ExitCode != 0 {
		return res, fmt.Errorf("%s: %s exited %d%s: %s", what, argv[0], res.ExitCode,
			map[bool]string{true: " (timed out)"}[res.TimedOut], tail(res.Stdout, res.Stderr, 15))
	}
	return res, nil
}

// reset puts /testbed back as the image has it.
func (b *box) reset(ctx context.Context) error {
	_, err := b.must(ctx, "resetting the repository", repoDir, time.Minute, "sh", "-c", "git reset -q --hard && git clean -q -fdx && rm -rf "+outDir+" && mkdir -p "+outDir)
	return err
}

// tail is the last n lines of a command's output, for error messages.
func tail(stdout, stderr []byte, n int) string {
	s := strings.TrimRight(string(stdout), "\n")
	if e := strings.TrimRight(string(stderr), "\n"); e != "" {
		if s != "" {
			s += "\n"
		}
		s += e
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
