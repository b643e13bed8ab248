// Package relay carries TCP connections out of a container that has no
// network: relay.py listens on a port of the container's loopback, and
// each connection made there travels in frames over the relay's standard
// input and output, which the harness holds through the engine's exec
// connection. On the harness's side the relay is a net.Listener, for an
// HTTP server (eval infer's metering proxy, the build gate of
// internal/gate) to serve. No folder of this machine is mounted into the
// container and the container needs no network, so the container may run
// on any engine, a swarm node's included.
package relay

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/featbench/featbench/internal/container"
)

// Everything the relay writes is treated as hostile: the container may be
// an agent's, or run a stranger's install commands. A frame over
// MaxFrame, a connection id the relay never announced, more than MaxConns
// connections at once or a stream that ends inside a frame ends the relay
// with an error saying so (wrapping ErrProtocol); the harness then stops
// what runs in the container.

//go:embed relay.py
var source []byte

// Source is relay.py, for an image or a container to hold at Path.
func Source() []byte { return source }

const (
	// Path is where images and containers hold relay.py.
	Path = "/opt/featbench/bin/relay.py"
	// Greeting starts the relay's output, written once it listens.
	Greeting = "FBRELAY1"
	// MaxFrame bounds a frame's payload, both ways (relay.py's MAX_FRAME).
	MaxFrame = 64 << 10
	// MaxConns bounds the connections open at once; the relay closes
	// the ones over it as they come.
	MaxConns = 64
	// startTimeout bounds the wait for the greeting.
	startTimeout = time.Minute
	frameHeader  = 8 // id, length: big-endian uint32s
)

// ErrProtocol says that the relay wrote what its protocol does not
// allow.
var ErrProtocol = errors.New("the relay broke its protocol")

// errRelayClosed is the error of a relay the harness closed.
var errRelayClosed = errors.New("the relay was closed")

// Relay is the harness's end of the relay: a net.Listener whose
// connections are the ones opened in the container, for a proxy to serve.
type Relay struct {
	name   string             // what the relay serves, for errors: "the metering proxy"
	port   string             // where it listens in the container
	s      io.ReadWriteCloser // the relay's standard output (Read) and input (Write)
	stderr func() []byte      // the relay's standard error so far, for errors; may be nil
	wmu    sync.Mutex         // frames to the relay, whole

	mu    sync.Mutex
	conns map[uint32]*relayConn // open, until the harness's side closes
	last  uint32                // the highest id announced
	// endedGone are the connections the relay had ended before the
	// harness's side closed them: a frame for one is a breach still,
	// where one for a connection the harness closed first may have been
	// on its way.
	endedGone map[uint32]bool

	accept chan net.Conn
	once   sync.Once
	done   chan struct{}
	err    error // why it ended; set before done is closed
}

// relayConn is one connection: the harness's side is one end of a socket
// pair (local), whose other end the proxy serves.
type relayConn struct {
	id    uint32
	local *net.UnixConn
	ended bool // the relay sent its end of file; under the relay's mu
}

// Execer starts a command with its standard input and output as a
// stream: a container of any executor (internal/executor's Box).
type Execer interface {
	ExecStream(ctx context.Context, argv []string, opts container.ExecOptions) (container.Stream, error)
}

// Start starts relay.py (at Path in box) as root, listening on port of
// the container's loopback, and returns the harness's end once the relay
// listens. name says what it serves, for errors ("the metering proxy").
// Close it when done.
func Start(ctx context.Context, box Execer, port int, name string) (*Relay, error) {
	s, err := box.ExecStream(ctx, []string{"python3", "-I", Path, strconv.Itoa(port), strconv.Itoa(MaxConns)},
		container.ExecOptions{WorkDir: "/", MaxOutput: 64 << 10})
	if err != nil {
		return nil, fmt.Errorf("starting %s's relay: %w", name, err)
	}
	r := New(s, name, port)
	r.stderr = s.Stderr
	if err := r.Greet(ctx, startTimeout); err != nil {
		res, _ := s.Wait()
		return nil, fmt.Errorf("%s's relay did not start: %w (exit %d): %s", name, err, res.ExitCode, lastLines(string(res.Stderr), 5))
	}
	go r.Run()
	return r, nil
}

// Failure is Err as an error for the work the relay served, with the
// relay's last words.
func (r *Relay) Failure() error {
	err := r.Err()
	if r.stderr != nil {
		if e := lastLines(string(r.stderr()), 5); e != "" {
			return fmt.Errorf("%s's relay failed: %w; its standard error: %s", r.name, err, e)
		}
	}
	return fmt.Errorf("%s's relay failed: %w", r.name, err)
}

// New is the harness's end of a relay whose output and input are s
// (Start makes one from a container); call Greet, then Run.
func New(s io.ReadWriteCloser, name string, port int) *Relay {
	return &Relay{name: name, port: strconv.Itoa(port), s: s, conns: map[uint32]*relayConn{}, endedGone: map[uint32]bool{}, accept: make(chan net.Conn), done: make(chan struct{})}
}

// SetStderr gives the relay's standard error so far, for its errors.
func (r *Relay) SetStderr(f func() []byte) { r.stderr = f }

// lastLines returns the last n lines of s, trimmed.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Greet waits for the relay's greeting, for timeout at most.
func (r *Relay) Greet(ctx context.Context, timeout time.Duration) error {
	got := make(chan error, 1)
	go func() {
		b := make([]byte, len(Greeting))
		n, err := io.ReadFull(r.s, b)
		switch {
		case err != nil && n == 0:
			err = fmt.Errorf("it ended without a word (%w)", err)
		case err != nil || string(b) != Greeting:
			err = fmt.Errorf("%w: it began with %q, not its greeting", ErrProtocol, b[:n])
		}
		got <- err
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var err error
	select {
	case err = <-got:
	case <-t.C:
		err = fmt.Errorf("no greeting in %s", timeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		r.fail(err)
	}
	return err
}

// Run relays until the relay's output ends, breaks the protocol or the
// relay is closed. Start it after Greet.
func (r *Relay) Run() {
	r.fail(r.demux())
}

// demux reads the relay's frames and hands each one's bytes to its
// connection.
func (r *Relay) demux() error {
	var hdr [frameHeader]byte
	for {
		if n, err := io.ReadFull(r.s, hdr[:]); err != nil {
			if n == 0 && errors.Is(err, io.EOF) {
				return errors.New("the relay ended")
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("%w: its output ended inside a frame's header", ErrProtocol)
			}
			return fmt.Errorf("reading the relay: %w", err)
		}
		id, n := binary.BigEndian.Uint32(hdr[:4]), binary.BigEndian.Uint32(hdr[4:])
		if n > MaxFrame {
			return fmt.Errorf("%w: a frame of %d bytes for connection %d, over the %d a frame may have", ErrProtocol, n, id, MaxFrame)
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r.s, payload); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("%w: its output ended inside a frame of %d bytes for connection %d", ErrProtocol, n, id)
			}
			return fmt.Errorf("reading the relay: %w", err)
		}
		if err := r.deliver(id, payload); err != nil {
			return err
		}
	}
}

// deliver gives a frame of the relay to its connection, opening it if
// the frame is its first.
func (r *Relay) deliver(id uint32, payload []byte) error {
	c, err := r.conn(id)
	if err != nil {
		return err
	}
	r.mu.Lock()
	var ended bool
	if c == nil {
		ended = r.endedGone[id]
	} else {
		ended = c.ended
		c.ended = c.ended || len(payload) == 0
	}
	r.mu.Unlock()
	switch {
	case ended && len(payload) == 0:
		return fmt.Errorf("%w: connection %d ended twice", ErrProtocol, id)
	case ended:
		return fmt.Errorf("%w: %d bytes for connection %d after its end", ErrProtocol, len(payload), id)
	case c == nil:
		return nil // the harness's side closed it while the frame was on its way
	case len(payload) == 0:
		_ = c.local.CloseWrite() // fails only when the proxy closed it: nothing to tell
		return nil
	}
	// Blocks while the proxy has not read what came before: the relay
	// then waits too, and memory stays bounded. A write to a connection
	// the proxy closed fails: its bytes are nobody's.
	_, _ = c.local.Write(payload)
	return nil
}

// conn is the open connection id, opened if id is the next one; nil
// when the harness's side closed it while the relay's frame was on its
// way.
func (r *Relay) conn(id uint32) (*relayConn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.conns[id]; c != nil {
		return c, nil
	}
	switch {
	case id == 0 || id > r.last+1:
		// Ids are announced in order: 1, 2, ...
		return nil, fmt.Errorf("%w: a frame for connection %d, which it never opened (the last it opened is %d)", ErrProtocol, id, r.last)
	case id <= r.last:
		return nil, nil
	case len(r.conns) >= MaxConns:
		return nil, fmt.Errorf("%w: it opened connection %d while %d were open, the most it may have", ErrProtocol, id, len(r.conns))
	}
	local, remote, err := socketPair()
	if err != nil {
		return nil, fmt.Errorf("connection %d: %w", id, err)
	}
	c := &relayConn{id: id, local: local}
	r.conns[id], r.last = c, id
	// The proxy's Accept takes it; after fail, no one will.
	go func() {
		select {
		case r.accept <- relayServerConn{remote, id}:
		case <-r.done:
			remote.Close()
		}
	}()
	go r.upstream(c)
	return c, nil
}

// upstream sends what the proxy writes on c to the relay, and ends the
// connection when the proxy closes it.
func (r *Relay) upstream(c *relayConn) {
	buf := make([]byte, MaxFrame)
	for {
		n, err := c.local.Read(buf)
		if n > 0 {
			if werr := r.send(c.id, buf[:n]); werr != nil {
				r.fail(fmt.Errorf("writing to the relay: %w", werr))
				break
			}
		}
		if err != nil {
			break
		}
	}
	r.mu.Lock()
	delete(r.conns, c.id)
	if c.ended {
		r.endedGone[c.id] = true
	}
	r.mu.Unlock()
	c.local.Close()
	if err := r.send(c.id, nil); err != nil {
		r.fail(fmt.Errorf("writing to the relay: %w", err))
	}
}

// send writes one frame to the relay; a nil payload ends the connection.
func (r *Relay) send(id uint32, payload []byte) error {
	frame := make([]byte, frameHeader+len(payload))
	binary.BigEndian.PutUint32(frame, id)
	binary.BigEndian.PutUint32(frame[4:], uint32(len(payload)))
	copy(frame[frameHeader:], payload)
	r.wmu.Lock()
	defer r.wmu.Unlock()
	select {
	case <-r.done:
		return nil // ended: every connection goes with it
	default:
	}
	_, err := r.s.Write(frame)
	return err
}

// fail ends the relay for the reason err, once: the stream is closed,
// and every connection with it.
func (r *Relay) fail(err error) {
	r.once.Do(func() {
		r.err = err
		close(r.done)
		r.s.Close()
		r.mu.Lock()
		for _, c := range r.conns {
			c.local.Close()
		}
		r.mu.Unlock()
	})
}

// Err says why the relay ended, nil while it runs or when the harness
// closed it.
func (r *Relay) Err() error {
	select {
	case <-r.done:
		if errors.Is(r.err, errRelayClosed) {
			return nil
		}
		return r.err
	default:
		return nil
	}
}

// Done is closed when the relay has ended.
func (r *Relay) Done() <-chan struct{} { return r.done }

// Accept returns the next connection opened in the container.
func (r *Relay) Accept() (net.Conn, error) {
	select {
	case c := <-r.accept:
		return c, nil
	case <-r.done:
		if errors.Is(r.err, errRelayClosed) {
			return nil, net.ErrClosed
		}
		return nil, r.err
	}
}

// Close ends the relay and its connections.
func (r *Relay) Close() error {
	r.fail(errRelayClosed)
	return nil
}

// Addr is the proxy's address as the container reaches it.
func (r *Relay) Addr() net.Addr { return relayAddr(r.port) }

type relayAddr string

// relayServerConn is a connection as the proxy serves it: its remote
// address names it.
type relayServerConn struct {
	*net.UnixConn
	id uint32
}

func (c relayServerConn) RemoteAddr() net.Addr { return relayConnAddr(c.id) }

type relayConnAddr uint32

func (relayConnAddr) Network() string  { return "featbench-relay" }
func (a relayConnAddr) String() string { return fmt.Sprintf("relay connection %d", uint32(a)) }

func (relayAddr) Network() string  { return "featbench-relay" }
func (a relayAddr) String() string { return "container 127.0.0.1:" + string(a) }

// socketPair is a connected pair of unix stream sockets: kernel buffers,
// deadlines and half-closing, which the proxy's HTTP server needs.
func socketPair() (*net.UnixConn, *net.UnixConn, error) {
	// As the standard library does: no exec may inherit the descriptors
	// between their making and close-on-exec.
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	a, err := fileConn(fds[0])
	if err != nil {
		syscall.Close(fds[1])
		return nil, nil, err
	}
	b, err := fileConn(fds[1])
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, b, nil
}

func fileConn(fd int) (*net.UnixConn, error) {
	f := os.NewFile(uintptr(fd), "relay")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("socketpair: %w", err)
	}
	return c.(*net.UnixConn), nil
}
