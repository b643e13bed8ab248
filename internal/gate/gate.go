// Package gate gives an image build's install steps a way to a package
// index, and to nothing else.
//
// The engine builds without network (and here runs with no default
// bridge at all). A gate is a container without network that runs relay.py
// (internal/relay) on its loopback; the build's RUN steps join that
// container's network namespace (network mode "container:ID"), so the
// only address they can reach is the relay's port, and every connection
// made there travels over the engine's exec stream to this process, which
// serves it as a proxy:
//
//   - /index/N/PROJECT/ is index N's project page (pip's index URL): the
//     gate fetches the page from the index, drops the files uploaded after
//     Options.Before when the index says when (PEP 700), points every
//     file's URL at the gate, and serves it in the form pip asked for;
//   - /file/TOKEN/FILENAME is a file such a page named: the gate fetches it
//     whole, checks its sha256 against the page's and the lock's, and only
//     then serves it; it records what it served (Downloads), which is where
//     the environment's lock gets its hashes;
//   - an absolute http:// URL, or CONNECT, is forwarded when its host is
//     one of Options.Forward (apt's mirror, which apt reaches through
//     http_proxy), and refused otherwise.
//
// So a build reaches what it is given and nothing else, from any engine
// (the gate needs neither a bridge nor iptables), and this process reaches
// the index with whatever network the user has: a local index over
// loopback here, PyPI over HTTPS elsewhere. Everything the gate refuses,
// every index that failed or did not answer in time and every file whose
// hash differed is recorded (Problems), for the build's error to say.
package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/pylock"
	"github.com/featbench/featbench/internal/relay"
)

// Port is where the gate listens in its container, and so in the build's
// steps.
const Port = 3128

// DefaultTimeout is how long the gate waits for an index to answer (and
// between two reads of a file) when Options.Timeout is zero.
const DefaultTimeout = 60 * time.Second

// Options configure a gate.
type Options struct {
	// Image is the gate container's image: one with python3 for relay.py
	// (the base image the build starts from).
	Image  string
	Name   string            // the container's name prefix
	Labels map[string]string // the container's labels, for cleaning up
	// Indexes are the simple API URLs of the package indexes (PEP 503),
	// index i served at IndexURL(i).
	Indexes []string
	// Forward are the host:port pairs a client may reach through the gate
	// as an HTTP proxy (a Debian mirror for apt).
	Forward []string
	// Before, when not zero, hides the files an index says were uploaded
	// after it (exclude_newer).
	Before time.Time
	// Lock, when not nil, pins the files: a file of a locked name and
	// version whose sha256 is not among the lock's is refused.
	Lock []pylock.Package
	// Timeout bounds the wait for an index's answer, and between two reads
	// of a file; DefaultTimeout when zero.
	Timeout time.Duration
	// Log receives a line per request the gate serves or refuses (may be
	// nil).
	Log io.Writer
}

// Starter starts containers: *container.Engine.
type Starter interface {
	Start(ctx context.Context, spec container.Spec) (*container.Container, error)
}

// Gate is an open gate. Close it when the build is done.
type Gate struct {
	box   *container.Container
	relay *relay.Relay
	srv   *http.Server
	done  chan error
	*Proxy
}

// Open starts a gate container from o.Image and the proxy serving it.
func Open(ctx context.Context, eng Starter, o Options) (*Gate, error) {
	p, err := NewProxy(o)
	if err != nil {
		return nil, err
	}
	name := o.Name
	if name == "" {
		name = "featbench-gate"
	}
	box, err := eng.Start(ctx, container.Spec{
		Image: o.Image, Name: name + "-gate", Labels: o.Labels, WorkDir: "/",
		Limits: container.Limits{Memory: 256 << 20, NanoCPUs: 1e9, Pids: 64},
	})
	if err != nil {
		return nil, fmt.Errorf("build gate: %w", err)
	}
	fail := func(err error) (*Gate, error) {
		if rerr := box.Remove(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, fmt.Errorf("build gate: %w", err)
	}
	if err := box.CopyIn(ctx, "/opt/featbench/bin", []container.File{{Path: "relay.py", Mode: 0o644, Data: relay.Source()}}); err != nil {
		return fail(err)
	}
	rl, err := relay.Start(ctx, box, Port, "the build gate")
	if err != nil {
		return fail(err)
	}
	g := &Gate{box: box, relay: rl, Proxy: p, done: make(chan error, 1),
		srv: &http.Server{Handler: p, ReadHeaderTimeout: time.Minute}}
	go func() { g.done <- g.srv.Serve(rl) }()
	return g, nil
}

// NetworkMode is the engine's network mode that puts a build's steps
// behind the gate.
func (g *Gate) NetworkMode() string { return "container:" + g.box.ID }

// Failure says why the gate stopped serving, nil while it serves.
func (g *Gate) Failure() error {
	if g.relay.Err() != nil {
		return g.relay.Failure()
	}
	return nil
}

// Close stops the proxy and removes the gate's container.
func (g *Gate) Close() error {
	_ = g.srv.Close()
	_ = g.relay.Close()
	<-g.done
	return g.box.Remove()
}

// Addr is the gate's address as a build step reaches it.
const Addr = "127.0.0.1:3128"

// ProxyURL is the gate as an HTTP proxy, for http_proxy.
func ProxyURL() string { return "http://" + Addr }

// IndexURL is index i as pip reaches it through the gate.
func IndexURL(i int) string { return "http://" + Addr + "/index/" + strconv.Itoa(i) + "/" }

// checkIndexURL says what is wrong with an index URL, "" when nothing.
func checkIndexURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return err.Error()
	case u.Scheme != "http" && u.Scheme != "https":
		return "not an http(s) URL"
	case u.Host == "":
		return "no host"
	case u.User != nil:
		return "it holds credentials, which would be written into the dataset and the image's history"
	case u.RawQuery != "" || u.Fragment != "":
		return "a query or fragment"
	}
	return ""
}

// CheckIndexURL says what is wrong with a package index URL as a
// configuration gives it, "" when nothing.
func CheckIndexURL(s string) string { return checkIndexURL(s) }

// record is a list of lines kept under a lock, at most maxRecords.
type record struct {
	mu    sync.Mutex
	lines []string
	seen  map[string]bool
}

const maxRecords = 50

func (r *record) add(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if r.seen[line] || len(r.lines) >= maxRecords {
		return
	}
	r.seen[line] = true
	r.lines = append(r.lines, line)
}

func (r *record) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// Explain is err with the gate's problems appended, for a build that
// failed behind it.
func Explain(err error, problems []string) error {
	if len(problems) == 0 {
		return err
	}
	return fmt.Errorf("%w\nthe build gate saw:\n  %s", err, strings.Join(problems, "\n  "))
}
