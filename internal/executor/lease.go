package executor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"sync"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/lease"
)

// Lease is a run's lease on its executor (internal/lease): renewed in the
// background until Release, and on every container the run starts
// (Labels). While it holds one, the run also removes, every few renewals,
// what dead runs left on the executor (Sweep).
type Lease struct {
	x      Executor
	id     string
	holder string
	log    io.Writer

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// sweepEvery is how many renewals apart a live run sweeps the executor.
const sweepEvery = 3

// opTimeout bounds each renewal and sweep: a renewal that hangs must not
// hold the next one.
const opTimeout = 20 * time.Second

// Hold makes a lease for a run on x (holder says which, for people:
// "eval run my-run"), removes what dead runs left there, and keeps the
// lease renewed until Release. log, when not nil, hears of renewals that
// fail and of the leftovers removed.
func Hold(ctx context.Context, x Executor, holder string, log io.Writer) (*Lease, error) {
	l := &Lease{x: x, id: randomToken(), holder: holder, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	if err := x.CreateLease(ctx, l.id, holder); err != nil {
		return nil, err
	}
	if _, err := Sweep(ctx, x); err != nil {
		return nil, errors.Join(fmt.Errorf("removing the containers of killed runs: %w", err), l.delete())
	}
	go l.keep()
	return l, nil
}

// ID is the lease's ID, the value of lease.Label on the run's containers.
func (l *Lease) ID() string { return l.id }

// Labels is labels with the lease's label added: the labels of a
// container of the run.
func (l *Lease) Labels(labels map[string]string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	out[lease.Label] = l.id
	return out
}

// Start starts a box of the run on the lease's executor: spec's labels
// with the lease's. A run starts every container of its through its
// lease.
func (l *Lease) Start(ctx context.Context, spec container.Spec) (Box, error) {
	spec.Labels = l.Labels(spec.Labels)
	return l.x.Start(ctx, spec)
}

var _ Starter = (*Lease)(nil)

// Release stops renewing the lease and removes it. Call it once every
// container of the run is removed: one left after it is a leftover.
func (l *Lease) Release() error {
	var err error
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		err = l.delete()
	})
	return err
}

func (l *Lease) delete() error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return l.x.DeleteLease(ctx, l.id)
}

// keep renews the lease every lease.Every and sweeps every sweepEvery
// renewals, until Release. A lease found gone (a run that took this one
// for dead removed it, and with it this run's containers, after a stall
// longer than lease.Grace) is made again, so that the containers the run
// starts from then on are not taken for a dead run's.
func (l *Lease) keep() {
	defer close(l.done)
	tick := time.NewTicker(lease.Every)
	defer tick.Stop()
	failing := 0
	for n := 1; ; n++ {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		err := l.x.RenewLease(ctx, l.id)
		if errors.Is(err, lease.ErrNoLease) {
			l.logf("the lease of %s was found stale and removed by another run, with this run's containers: making it again", l.holder)
			err = l.x.CreateLease(ctx, l.id, l.holder)
		}
		switch {
		case err != nil:
			failing++
			if failing == 2 {
				l.logf("renewing the lease of %s fails (%v): if it goes on for %s, other runs remove this run's containers", l.holder, err, lease.Grace)
			}
		case failing >= 2:
			l.logf("the lease of %s is renewed again", l.holder)
			failing = 0
		default:
			failing = 0
		}
		cancel()
		if n%sweepEvery == 0 {
			ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
			if removed, err := Sweep(ctx, l.x); err != nil {
				l.logf("removing the containers of killed runs: %v", err)
			} else if removed > 0 {
				l.logf("removed %d containers of killed runs", removed)
			}
			cancel()
		}
	}
}

func (l *Lease) logf(format string, args ...any) {
	if l.log != nil {
		fmt.Fprintf(l.log, "lease: "+format+"\n", args...)
	}
}

// Sweep removes from x every container (or service) of a dead run, whose
// lease is stale or gone (or, from an older version, whose expiry label
// has passed), whoever started it, and the stale leases; it says how
// many containers it removed.
func Sweep(ctx context.Context, x Executor) (int, error) {
	return lease.Sweep(ctx, x, x.RemoveContainers)
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// Clean removes from x every container (or service) with the labels of
// labelFilter (nil: every one of the project) that no live run holds,
// whoever started it, and the stale leases: `eval clean`. It says how
// many it removed and who holds the containers it kept.
func Clean(ctx context.Context, x Executor, labelFilter map[string]string) (int, []string, error) {
	return lease.Clean(ctx, x, x.RemoveContainers, labelFilter)
}
