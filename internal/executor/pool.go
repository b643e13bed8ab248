package executor

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/featbench/featbench/internal/container"
)

// Pool admits a run's containers, one way for every flow: on an
// executor that knows its room (an Admitter: a swarm), each waits for
// room for one more container with the pool's limits, in order; on any
// other, a number of workers bounds them. Either way a piece of work
// whose container was lost (container.ErrLost: its node went away) is
// done once more, from the start, which the executor places elsewhere.
type Pool struct {
	adm     Admitter // nil: workers bound the run
	workers int
	lim     container.Limits
}

// NewPool is x's pool for containers with limits lim; workers (at least
// 1) applies where x does not admit by room.
func NewPool(x Executor, workers int, lim container.Limits) *Pool {
	adm, _ := x.(Admitter) // nil for a nil x: workers bound it
	return &Pool{adm: adm, workers: max(workers, 1), lim: lim}
}

// Admits says whether the executor admits by its room, where workers do
// not apply (and work should not hold a container ahead of its turn).
func (p *Pool) Admits() bool { return p.adm != nil }

// admit waits for room for one more container.
func (p *Pool) admit(ctx context.Context) (func(), error) {
	release, err := p.adm.Admit(ctx, p.lim)
	if err != nil {
		return nil, fmt.Errorf("waiting for room on the executor: %w", err)
	}
	return release, nil
}

// once calls do, and once more with the loss when it failed with
// container.ErrLost while ctx is alive: its container or node went
// away, which is not the work's doing.
func once(ctx context.Context, do func(ctx context.Context, lost error) error) error {
	err := do(ctx, nil)
	if errors.Is(err, container.ErrLost) && ctx.Err() == nil {
		err = do(ctx, err)
	}
	return err
}

// Each calls do(ctx, i, nil) for i from 0 to n-1, in order, each in its
// own goroutine once the pool has room for its container, and returns
// when every call has returned. A call that fails with container.ErrLost
// is made once more with the loss (lost); whatever it returns then is
// its result.
//
// The first error a call returns cancels the others' ctx and is Each's
// error. When admission fails (no node left), no further call starts,
// the calls under way end as they would, and the admission's error is
// Each's. started, when not nil, is called (in Each's goroutine, in
// order) once item i has its goroutine, before item i+1 waits for room:
// where workers bound the run, the caller may prepare item i+1 meanwhile.
func (p *Pool) Each(ctx context.Context, n int, do func(ctx context.Context, i int, lost error) error, started func(ctx context.Context, i int)) error {
	g, gctx := errgroup.WithContext(ctx)
	if p.adm == nil {
		g.SetLimit(p.workers)
	}
	var admitErr error
	for i := 0; i < n && gctx.Err() == nil; i++ {
		release := func() {}
		if p.adm != nil {
			// In order, as room frees up.
			r, err := p.admit(gctx)
			if err != nil {
				admitErr = err
				break
			}
			release = r
		}
		g.Go(func() error {
			defer release()
			if err := gctx.Err(); err != nil {
				return err // its turn came after another failed: not started
			}
			return once(gctx, func(ctx context.Context, lost error) error { return do(ctx, i, lost) })
		})
		if started != nil {
			started(gctx, i)
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return admitErr
}

// Shared does n items on workers that each keep one container from item
// to item: worker makes a worker's do (which starts its container when
// it first needs one) and done (which removes it once the items run
// out). The pool's workers do the items where it has them; an executor
// that admits by room gets one more worker each time it admits one
// while items wait, each holding its room until the items run out.
//
// do(ctx, i, nil) does item i on the worker; one that fails with
// container.ErrLost is done once more with the loss (lost), on which do
// drops the worker's lost container for a fresh one. The first error
// cancels the others and is Shared's.
func (p *Pool) Shared(ctx context.Context, n int, worker func() (do func(ctx context.Context, i int, lost error) error, done func())) error {
	next := make(chan int)
	var handed atomic.Int64 // items a worker has taken
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(next)
		for i := range n {
			select {
			case next <- i:
				handed.Add(1)
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	run := func(release func()) func() error {
		return func() error {
			defer release()
			do, done := worker()
			defer done()
			for i := range next {
				if err := once(gctx, func(ctx context.Context, lost error) error { return do(ctx, i, lost) }); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if p.adm == nil {
		for range p.workers {
			g.Go(run(func() {}))
		}
		return g.Wait()
	}
	g.Go(func() error {
		for w := 0; w < n && handed.Load() < int64(n); w++ {
			release, err := p.admit(gctx)
			if err != nil {
				return err
			}
			g.Go(run(release))
		}
		return nil
	})
	return g.Wait()
}
