// Package executor is where the flows' containers run: the executor
// featbench.toml's [eval] backend names (the local engine or a swarm),
// the Box it hands out, the lease a run holds on it, and the pool that
// admits a run's containers (docs/executors.md). eval run, validate
// --rerun, eval infer and collect all go through it, so that they read
// the setting, hold leases and admit containers the same way.
package executor

import (
	"context"
	"fmt"
	"io"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/lease"
	"github.com/featbench/featbench/internal/swarm"
)

// Box is a running container of any executor: what the flows do with
// one. Remove it when done; it is safe to call more than once.
type Box interface {
	Exec(ctx context.Context, argv []string, opts container.ExecOptions) (container.ExecResult, error)
	ExecStream(ctx context.Context, argv []string, opts container.ExecOptions) (container.Stream, error)
	CopyIn(ctx context.Context, dest string, files []container.File) error
	CopyOut(ctx context.Context, src string, maxBytes int64) ([]container.File, error)
	Remove() error
}

// Starter starts boxes: what a flow that only starts containers needs
// of an Executor.
type Starter interface {
	Start(ctx context.Context, spec container.Spec) (Box, error)
}

// Executor starts boxes, keeps the runs' leases, and removes the
// containers it is asked to by label (the leftovers of killed runs).
type Executor interface {
	Starter
	lease.Store
	RemoveContainers(ctx context.Context, labelFilter map[string]string, keep func(labels map[string]string) bool) (int, error)
}

// Optional capabilities of an Executor, declared once here: the pool
// (Pool) and the progress displays look for them.
type (
	// Admitter decides itself how many containers run at once (a swarm,
	// by its free resources): Admit waits for room for one more with
	// these limits, and release gives it back.
	Admitter interface {
		Admit(ctx context.Context, lim container.Limits) (release func(), err error)
	}
	// Statuser says how the executor is doing, for a progress line
	// ("3 nodes, 4 tasks in flight (room for 6)").
	Statuser interface {
		Status() string
	}
)

// Local is the local engine as an Executor: its containers as Boxes.
func Local(e *container.Engine) Executor { return local{e} }

type local struct{ *container.Engine }

func (l local) Start(ctx context.Context, spec container.Spec) (Box, error) {
	c, err := l.Engine.Start(ctx, spec)
	if err != nil {
		return nil, err // never a nil *Container in a non-nil Box
	}
	return c, nil
}

// onSwarm is a swarm as an Executor; its Admit, Status and Lost are the
// swarm's own.
type onSwarm struct{ *swarm.Executor }

func (s onSwarm) Start(ctx context.Context, spec container.Spec) (Box, error) {
	c, err := s.Executor.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	return c, nil
}

var (
	_ Executor = local{}
	_ Executor = onSwarm{}
	_ Admitter = onSwarm{}
	_ Statuser = onSwarm{}
	// *container.Container is the Box of both.
	_ Box = (*container.Container)(nil)
)

// Backend is the executor of a configuration.
type Backend struct {
	Executor Executor
	// Where names it for people: "the local engine at unix:///…", "the
	// swarm at unix:///…".
	Where string
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
		return &Backend{Executor: Local(local), Where: "the local engine at " + local.Host(), Close: func() error { return nil }}, nil
	case "swarm":
		s := cfg.Swarm
		sw, err := swarm.Connect(ctx, swarm.Config{Manager: s.Manager, Registry: s.Registry, PushRegistry: s.PushRegistry, Local: local, Log: log})
		if err != nil {
			return nil, err
		}
		x := onSwarm{sw}
		return &Backend{Executor: x, Where: "the swarm at " + s.Manager, Status: x.Status, Close: sw.Close}, nil
	}
	return nil, fmt.Errorf("[eval] backend %q: want one of %v", cfg.Backend, config.Backends)
}

// Admits says whether x decides itself how many containers run at once
// (an Admitter), where workers do not apply.
func Admits(x Executor) bool {
	_, ok := x.(Admitter)
	return ok
}

// Swarm is a swarm's executor as an Executor (for tests and tools that
// connect to one themselves).
func Swarm(x *swarm.Executor) Executor { return onSwarm{x} }
