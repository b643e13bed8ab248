package container

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"
)

// Stream is a command started by ExecStream that runs alongside the
// caller: its standard input and output are a byte stream between the
// caller and the command (a relay's channel, say), over the engine's
// exec connection. Its standard error is kept apart, as Exec keeps it:
// nothing the command writes there reaches Read.
//
// Read and Write may be used from different goroutines at once; Write
// is serialized, so that one Write's bytes are never interleaved with
// another's. An interface, so that another engine's exec (a Kubernetes
// Pod's) can stand behind it.
type Stream interface {
	// Read reads the command's standard output; io.EOF once it closed it.
	Read(p []byte) (int, error)
	// Write writes to its standard input.
	Write(p []byte) (int, error)
	// CloseWrite closes its standard input: it reads end of file.
	CloseWrite() error
	// Stderr is what it wrote to its standard error so far (the last
	// MaxOutput bytes).
	Stderr() []byte
	// Close kills the command if it still runs and releases the stream;
	// safe to call more than once, and with Wait.
	Close() error
	// Wait waits for the output to end and returns the exit status and
	// standard error (Stdout stays empty: it was the stream).
	Wait() (ExecResult, error)
}

// stream is the Docker engine's Stream: a hijacked exec connection.
type stream struct {
	c      *Container
	ctx    context.Context
	argv0  string
	id     string
	token  string
	att    client.HijackedResponse
	out    *io.PipeReader
	stderr *lockedTail
	start  time.Time
	// timeout is ExecOptions.Timeout, which coreutils timeout enforces.
	timeout time.Duration

	wmu sync.Mutex // Write

	copied  chan struct{} // the output ended (StdCopy returned)
	copyErr error         // StdCopy's error, set before copied is closed

	timedOut atomic.Bool // the host's deadline stopped the command

	stopOnce sync.Once
	stopErr  error
	stopped  chan struct{} // stop has run

	waitOnce sync.Once
	res      ExecResult
	err      error
}

// ExecStream starts argv in the container with its standard input and
// output attached to the returned Stream, and returns once the command
// has started. opts.Stdin must be nil (the Stream's Write is the
// standard input); opts.MaxOutput caps the standard error kept; the
// timeout and the rest are as for Exec.
//
// When ctx is done the command's processes are killed and the stream
// closed: Read and Write then fail, and Wait returns ctx's error. Close
// does the same at any time. Call Close when done with the Stream.
func (c *Container) ExecStream(ctx context.Context, argv []string, opts ExecOptions) (Stream, error) {
	if len(argv) == 0 {
		return nil, errors.New("exec stream: empty command")
	}
	if opts.Stdin != nil {
		return nil, errors.New("exec stream: Stdin is the stream's Write")
	}
	limit := opts.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	id, token, att, err := c.startExec(ctx, argv, opts, true)
	if err != nil {
		return nil, c.checkLost(ctx, ExecResult{}, err)
	}
	pr, pw := io.Pipe()
	s := &stream{
		c: c, ctx: ctx, argv0: argv[0], id: id, token: token, att: att, out: pr, timeout: opts.Timeout,
		stderr: &lockedTail{t: newTail(limit)}, start: time.Now(),
		copied: make(chan struct{}), stopped: make(chan struct{}),
	}
	go func() {
		// The engine multiplexes stdout and stderr on the connection:
		// only stdout is the stream.
		_, err := stdcopy.StdCopy(pw, s.stderr, att.Reader)
		s.copyErr = err
		if err == nil {
			err = io.EOF
		}
		pw.CloseWithError(err)
		close(s.copied)
	}()
	var deadline <-chan time.Time
	var timer *time.Timer
	if opts.Timeout > 0 {
		timer = time.NewTimer(opts.Timeout + killAfter + hostGrace)
		deadline = timer.C
	}
	go func() {
		if timer != nil {
			defer timer.Stop()
		}
		select {
		case <-ctx.Done():
			s.stop()
		case <-deadline:
			s.timedOut.Store(true)
			s.stop()
		case <-s.copied:
		case <-s.stopped:
		}
	}()
	return s, nil
}

// Read reads the command's standard output. It returns io.EOF once the
// command closed it (or ended).
func (s *stream) Read(p []byte) (int, error) { return s.out.Read(p) }

// Write writes to the command's standard input.
func (s *stream) Write(p []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.att.Conn.Write(p)
}

// CloseWrite closes the command's standard input: it reads end of file.
func (s *stream) CloseWrite() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.att.CloseWrite()
}

// Stderr is what the command wrote to its standard error so far (the
// last MaxOutput bytes).
func (s *stream) Stderr() []byte { return s.stderr.Bytes() }

// stop kills the command's processes and closes the connection, once.
func (s *stream) stop() {
	s.stopOnce.Do(func() {
		s.stopErr = s.c.stopExec(s.id, s.token)
		s.att.Close()
		s.out.CloseWithError(errStreamClosed)
		close(s.stopped)
	})
}

// errStreamClosed is what Read returns after Close.
var errStreamClosed = errors.New("exec stream closed")

// Close kills the command if it still runs and releases the stream. It
// is safe to call more than once, and with Wait.
func (s *stream) Close() error {
	s.stop()
	<-s.copied
	return nil
}

// Wait waits for the command's output to end and returns its exit status
// and standard error (Stdout stays empty: it was the stream). The error
// is ctx's when ctx ended the command, and wraps ErrLost when an adopted
// container went away; a command that Close stopped has no error of its
// own. Wait may be called more than once.
func (s *stream) Wait() (ExecResult, error) {
	s.waitOnce.Do(func() { s.res, s.err = s.wait() })
	return s.res, s.err
}

func (s *stream) wait() (ExecResult, error) {
	<-s.copied
	var closed bool // stopped by Close, ctx or the timeout, not ended by itself
	select {
	case <-s.stopped:
		closed = true
	default:
	}
	code, running, waitErr := s.c.waitExec(s.id, exitWait)
	if running {
		// The output ended but the command did not: it must not
		// outlive the stream.
		s.stop()
		code, _, waitErr = s.c.waitExec(s.id, exitWait)
	}
	s.att.Close()
	res := ExecResult{ExitCode: code, Stderr: s.stderr.Bytes(), Truncated: s.stderr.truncated(), Duration: time.Since(s.start), TimedOut: s.timedOut.Load()}
	if !closed && s.timeout > 0 && (code == 124 || code == 137) && res.Duration >= s.timeout {
		res.TimedOut = true
	}
	var err error
	switch {
	case s.ctx.Err() != nil:
		err = errors.Join(s.ctx.Err(), s.stopErr)
	case closed:
		err = s.stopErr
	default:
		err = errors.Join(waitErr, s.stopErr)
		if err == nil && s.copyErr != nil {
			err = fmt.Errorf("reading output: %w", s.copyErr)
		}
	}
	if err != nil {
		err = fmt.Errorf("exec %s in %s: %w", s.argv0, s.c.Name, err)
	}
	if !closed {
		err = s.c.checkLost(s.ctx, res, err)
	}
	return res, err
}

// lockedTail is a tail written by one goroutine while others read it.
type lockedTail struct {
	mu sync.Mutex
	t  *tail
}

func (l *lockedTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.Write(p)
}

func (l *lockedTail) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.Bytes()
}

func (l *lockedTail) truncated() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.truncated()
}
