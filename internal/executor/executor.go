// Package executor makes the executor featbench.toml's [eval] backend
// names: what starts the containers of evaluation (cmd/eval run,
// validate --rerun) and of collection (cmd/collect), so that both read
// the setting the same way (docs/executors.md).
package executor

import (
	"context"
	"fmt"
	"io"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/swarm"
)

// Executor starts containers and removes the ones a killed run left, by
// label: *container.Engine or *swarm.Executor.
type Executor interface {
	Start(ctx context.Context, spec container.Spec) (*container.Container, error)
	RemoveContainers(ctx context.Context, labelFilter map[string]string, keep func(labels map[string]string) bool) (int, error)
}

var (
	_ Executor = (*container.Engine)(nil)
	_ Executor = (*swarm.Executor)(nil)
)

// Backend is the executor of a configuration.
type Backend struct {
	// Executor is the local engine itself, or the swarm: the concrete
	// value, so that what it has beyond Executor (a swarm's Admit) is
	// found by those who look for it.
	Executor Executor
	// Status says how a swarm is doing, for a progress display; nil for
	// the local engine.
	Status func() string
	// Close releases the swarm's connections. It never closes the local
	// engine, which is the caller's.
	Close func() error
}

// Open is the executor of [eval] backend: local itself for "local" (or
// ""), a swarm for "swarm", whose images are still built on local and
// pushed from it. log, when not nil, hears of the swarm's pushes and
// lost nodes.
func Open(ctx context.Context, cfg config.Eval, local *container.Engine, log io.Writer) (*Backend, error) {
	switch cfg.Backend {
	case "", "local":
		return &Backend{Executor: local, Close: func() error { return nil }}, nil
	case "swarm":
		s := cfg.Swarm
		sw, err := swarm.Connect(ctx, swarm.Config{Manager: s.Manager, Registry: s.Registry, PushRegistry: s.PushRegistry, Local: local, Log: log})
		if err != nil {
			return nil, err
		}
		return &Backend{Executor: sw, Status: sw.Status, Close: sw.Close}, nil
	}
	return nil, fmt.Errorf("[eval] backend %q: want one of %v", cfg.Backend, config.Backends)
}
