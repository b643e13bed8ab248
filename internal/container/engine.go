// Package container runs commands in Docker containers safely, for the
// evaluation harness and the image builder.
//
// It wraps github.com/moby/moby/client with the few operations featbench
// needs and the care each one takes to be safe: containers start with an
// init process, no network, resource limits and a reduced set of
// capabilities; an exec has a timeout enforced both inside the container
// and on the host, a bounded output and never outlives a cancelled context;
// copies go through in-memory tar archives that refuse paths escaping their
// folder; image builds and imports turn errors reported inside the
// engine's JSON stream into Go errors; and leftovers of a killed run are
// found and removed by label.
//
// Everything that waits takes a context.Context. Cleanup (removing a
// container, killing an exec) uses a fresh context instead of the caller's,
// which may be the cancelled one that made the cleanup necessary.
package container

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/moby/moby/client"
)

// Engine is a connection to a Docker engine. It is safe for concurrent use.
type Engine struct {
	cli  *client.Client
	host string

	mu       sync.Mutex
	leases   map[string]string // lease ID -> its container's ID, for the leases this engine made (lease.go)
	offset   time.Duration     // the engine's clock ahead of this machine's (Now)
	offsetAt time.Time         // when offset was measured; zero: never
}

// pingTimeout bounds the reachability check of Connect, so that a daemon
// that accepts connections but never answers is an error, not a hang.
const pingTimeout = 15 * time.Second

// cleanupTimeout bounds the cleanup calls made with a fresh context.
const cleanupTimeout = 30 * time.Second

// ProjectSocket is where scripts/provision-docker.sh's private engine
// listens.
const ProjectSocket = "/run/featbench-docker.sock"

// defaultHost is the engine an empty host means: $DOCKER_HOST when set,
// else the project's private engine when its socket is there (so the
// engine the README starts is found without setting anything), else ""
// (the platform's default socket).
func defaultHost(getenv func(string) string, isSocket func(string) bool) string {
	if getenv("DOCKER_HOST") != "" {
		return ""
	}
	if isSocket(ProjectSocket) {
		return "unix://" + ProjectSocket
	}
	return ""
}

func isSocket(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode()&os.ModeSocket != 0
}

// Connect connects to the Docker engine at host, in the form of DOCKER_HOST
// (for example "unix:///run/featbench-docker.sock"). An empty host means
// $DOCKER_HOST, else the project's private engine (ProjectSocket) when it
// runs, else the platform's default socket. The API version is negotiated
// with the engine, so older engines (Debian's 20.10, API 1.41) work.
//
// Connect pings the engine and fails with an error naming the host when it
// does not answer.
func Connect(ctx context.Context, host string) (*Engine, error) {
	if host == "" {
		host = defaultHost(os.Getenv, isSocket)
	}
	opts := []client.Opt{client.FromEnv}
	if host != "" {
		opts = append(opts, client.WithHost(host))
	}
	cli, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker client for %s: %w", describeHost(host), err)
	}
	e := &Engine{cli: cli, host: cli.DaemonHost()}
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connecting to the Docker engine at %s: %w", e.host, ctx.Err())
		}
		return nil, fmt.Errorf("cannot reach the Docker engine at %s: is it running? (scripts/provision-docker.sh starts one): %w", e.host, err)
	}
	return e, nil
}

func describeHost(host string) string {
	if host != "" {
		return host
	}
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		return h
	}
	return client.DefaultDockerHost
}

// Host returns the address of the engine, in the form of DOCKER_HOST.
func (e *Engine) Host() string { return e.host }

// APIVersion returns the API version negotiated with the engine.
func (e *Engine) APIVersion() string { return e.cli.ClientVersion() }

// Close releases the connection. Containers and images are left as they are.
func (e *Engine) Close() error { return e.cli.Close() }

// cleanupContext returns a context for cleanup that is independent of the
// caller's (which may be cancelled) but bounded in time.
func cleanupContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), cleanupTimeout)
}

// Ping checks that the engine answers, within pingTimeout at most.
func (e *Engine) Ping(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if _, err := e.cli.Ping(pctx, client.PingOptions{}); err != nil {
		return fmt.Errorf("the Docker engine at %s does not answer: %w", e.host, err)
	}
	return nil
}
