package infer

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
	"sync"
	"syscall"
	"time"

	"github.com/featbench/featbench/internal/container"
)

// The agent reaches the metering proxy through a relay (relay.py), which
// runs in its container as root and listens on the container's loopback:
// each connection the agent opens there travels in frames over the
// relay's standard input and output, which the harness holds through the
// engine's exec connection. No folder of this machine is mounted into the
// container and the container needs no network, so the container may run
// on any engine, a swarm node's included.
//
// Everything the relay writes is treated as hostile: the container is the
// agent's. A frame over maxFrame, a connection id the relay never
// announced, more than maxRelayConns connections at once or a stream that
// ends inside a frame ends the relay with an error saying so (wrapping
// errRelayProtocol); the harness then stops the agent and records the
// instance as the harness's failure.

//go:embed relay.py
var relaySource []byte

const (
	relayPath = "/opt/featbench/bin/relay.py"
	// relayGreeting starts the relay's output, written once it listens.
	relayGreeting = "FBRELAY1"
	// maxFrame bounds a frame's payload, both ways (relay.py's MAX_FRAME).
	maxFrame = 64 << 10
	// maxRelayConns bounds the connections open at once; the relay closes
	// the ones over it as they come.
	maxRelayConns = 64
	// relayStartTimeout bounds the wait for the greeting.
	relayStartTimeout = time.Minute
	frameHeader       = 8 // id, length: big-endian uint32s
)

// errRelayProtocol says that the relay wrote what its protocol does not
// allow.
var errRelayProtocol = errors.New("the relay broke its protocol")

// errRelayClosed is the error of a relay the harness closed.
var errRelayClosed = errors.New("the relay was closed")

// relay is the harness's end of the relay: a net.Listener whose
// connections are the ones the agent opens in its container, for the
// metering proxy to serve.
type relay struct {
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

// startRelay starts relay.py in box, as root, and returns the harness's
// end once the relay listens. Close it when done.
func startRelay(ctx context.Context, box *container.Container) (*relay, error) {
	s, err := box.ExecStream(ctx, []string{"python3", "-I", relayPath, proxyPort, strconv.Itoa(maxRelayConns)},
		container.ExecOptions{WorkDir: "/", MaxOutput: 64 << 10})
	if err != nil {
		return nil, fmt.Errorf("starting the proxy's relay: %w", err)
	}
	r := newRelay(s)
	r.stderr = s.Stderr
	if err := r.greet(ctx, relayStartTimeout); err != nil {
		res, _ := s.Wait()
		return nil, fmt.Errorf("the proxy's relay did not start: %w (exit %d): %s", err, res.ExitCode, lastLines(string(res.Stderr), 5))
	}
	go r.run()
	return r, nil
}

// failure is Err as the instance's error, with the relay's last words.
func (r *relay) failure() error {
	err := r.Err()
	if r.stderr != nil {
		if e := lastLines(string(r.stderr()), 5); e != "" {
			return fmt.Errorf("the metering proxy's relay failed: %w; its standard error: %s", err, e)
		}
	}
	return fmt.Errorf("the metering proxy's relay failed: %w", err)
}

func newRelay(s io.ReadWriteCloser) *relay {
	return &relay{s: s, conns: map[uint32]*relayConn{}, endedGone: map[uint32]bool{}, accept: make(chan net.Conn), done: make(chan struct{})}
}

// greet waits for the relay's greeting, for timeout at most.
func (r *relay) greet(ctx context.Context, timeout time.Duration) error {
	got := make(chan error, 1)
	go func() {
		b := make([]byte, len(relayGreeting))
		n, err := io.ReadFull(r.s, b)
		switch {
		case err != nil && n == 0:
			err = fmt.Errorf("it ended without a word (%w)", err)
		case err != nil || string(b) != relayGreeting:
			err = fmt.Errorf("%w: it began with %q, not its greeting", errRelayProtocol, b[:n])
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

// run relays until the relay's output ends, breaks the protocol or the
// relay is closed. Start it after greet.
func (r *relay) run() {
	r.fail(r.demux())
}

// demux reads the relay's frames and hands each one's bytes to its
// connection.
func (r *relay) demux() error {
	var hdr [frameHeader]byte
	for {
		if n, err := io.ReadFull(r.s, hdr[:]); err != nil {
			if n == 0 && errors.Is(err, io.EOF) {
				return errors.New("the relay ended")
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("%w: its output ended inside a frame's header", errRelayProtocol)
			}
			return fmt.Errorf("reading the relay: %w", err)
		}
		id, n := binary.BigEndian.Uint32(hdr[:4]), binary.BigEndian.Uint32(hdr[4:])
		if n > maxFrame {
			return fmt.Errorf("%w: a frame of %d bytes for connection %d, over the %d a frame may have", errRelayProtocol, n, id, maxFrame)
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r.s, payload); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return fmt.Errorf("%w: its output ended inside a frame of %d bytes for connection %d", errRelayProtocol, n, id)
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
func (r *relay) deliver(id uint32, payload []byte) error {
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
		return fmt.Errorf("%w: connection %d ended twice", errRelayProtocol, id)
	case ended:
		return fmt.Errorf("%w: %d bytes for connection %d after its end", errRelayProtocol, len(payload), id)
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
func (r *relay) conn(id uint32) (*relayConn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.conns[id]; c != nil {
		return c, nil
	}
	switch {
	case id == 0 || id > r.last+1:
		// Ids are announced in order: 1, 2, ...
		return nil, fmt.Errorf("%w: a frame for connection %d, which it never opened (the last it opened is %d)", errRelayProtocol, id, r.last)
	case id <= r.last:
		return nil, nil
	case len(r.conns) >= maxRelayConns:
		return nil, fmt.Errorf("%w: it opened connection %d while %d were open, the most it may have", errRelayProtocol, id, len(r.conns))
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
func (r *relay) upstream(c *relayConn) {
	buf := make([]byte, maxFrame)
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
func (r *relay) send(id uint32, payload []byte) error {
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
func (r *relay) fail(err error) {
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
func (r *relay) Err() error {
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
func (r *relay) Done() <-chan struct{} { return r.done }

// Accept returns the next connection the agent opened.
func (r *relay) Accept() (net.Conn, error) {
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
func (r *relay) Close() error {
	r.fail(errRelayClosed)
	return nil
}

// Addr is the proxy's address as the agent reaches it.
func (r *relay) Addr() net.Addr { return relayAddr{} }

type relayAddr struct{}

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

func (relayAddr) Network() string { return "featbench-relay" }
func (relayAddr) String() string  { return "container 127.0.0.1:" + proxyPort }

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
