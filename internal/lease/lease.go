// Package lease tells a live run's containers from a dead run's.
//
// A run (eval run, validate --rerun, eval infer, collect) holds a lease:
// a small record on the executor it runs on (the local engine, or the
// swarm's manager) that it renews every few seconds (Every), and puts its
// ID on every container it starts (the Label). A container whose lease
// was not renewed for Grace, or whose lease is gone, belongs to a run
// that was killed (or that ended and failed to remove it): any later run,
// and `eval clean`, removes it, and a swarm's admission does not count
// its reservation. How each executor stores leases is its own
// (docs/executors.md); this package holds what they share: the labels,
// the timing, and the one rule that judges a container.
package lease

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Labels a run's containers (and services) carry.
const (
	// Label is the ID of the lease of the run that started the container.
	Label = "featbench.lease"
	// LabelExpires is when (Unix seconds) a container of an older
	// version, which had no lease, became a leftover at the latest. It is
	// no longer written, only read, so that those leftovers still go.
	LabelExpires = "featbench.expires"
)

// Labels a lease record carries where the executor keeps labels.
const (
	// LabelProject is on everything of the project (value "1"), and on
	// lease records too.
	LabelProject = "featbench.project"
	// LabelKind says what a container is; a lease record's is Kind, so
	// that a sweep of containers never takes one for a container.
	LabelKind = "featbench.kind"
	Kind      = "lease"
	// LabelHolder says who holds it, for people: "eval run my-run".
	LabelHolder = "featbench.holder"
)

// Timing. A run renews its lease every Every; a lease not renewed for
// Grace is stale. Grace is several renewals, so that a slow engine or a
// loaded machine does not make a live run's lease look dead.
const (
	Every = 5 * time.Second
	Grace = 30 * time.Second
)

// ErrNoLease is returned by a store's Renew when the lease is gone: a
// run that found it stale removed it (and the holder's containers).
var ErrNoLease = errors.New("the lease is gone")

// Record is one lease as a store lists it.
type Record struct {
	ID      string
	Holder  string
	Renewed time.Time // the executor's clock
}

// Table is the leases of an executor at a moment: by ID, and the
// executor's clock then (Now), against which Renewed is judged, so that
// the clocks of the machines running the runs do not matter.
type Table struct {
	Leases map[string]Record
	Now    time.Time
}

// Stale says whether the record is past its grace.
func (t Table) Stale(r Record) bool { return t.Now.Sub(r.Renewed) > Grace }

// Leftover says whether a container with these labels belongs to no live
// run, and may be removed by anyone:
//   - with a lease (Label): its lease is gone or stale;
//   - without one, with an older version's expiry (LabelExpires): it has
//     expired;
//   - with neither: not known to be a leftover (an older version's
//     container without an expiry), so never.
//
// The table must be read after the containers were listed: a container
// is started only under a lease that already exists, so a lease missing
// from a table read later was released or removed, never not yet made.
func (t Table) Leftover(labels map[string]string) bool {
	if id := labels[Label]; id != "" {
		r, ok := t.Leases[id]
		return !ok || t.Stale(r)
	}
	if exp, err := strconv.ParseInt(labels[LabelExpires], 10, 64); err == nil {
		return t.Now.Unix() > exp
	}
	return false
}

// Store keeps an executor's leases: the local engine and the swarm each
// have one (docs/executors.md says how and why).
type Store interface {
	// CreateLease makes the lease id, renewed now; holder says who holds
	// it, for people ("eval run my-run").
	CreateLease(ctx context.Context, id, holder string) error
	// RenewLease renews a lease this store made; ErrNoLease when it is
	// gone.
	RenewLease(ctx context.Context, id string) error
	// DeleteLease removes a lease, whoever made it; one already gone is
	// no error.
	DeleteLease(ctx context.Context, id string) error
	// Leases lists the leases, with the executor's clock now.
	Leases(ctx context.Context) (Table, error)
}

// Remover removes an executor's containers that have every label of
// labelFilter, but those keep keeps, and says how many it removed: the
// executors' RemoveContainers.
type Remover func(ctx context.Context, labelFilter map[string]string, keep func(labels map[string]string) bool) (int, error)

// Sweep removes every leftover (Leftover) of the project's runs from an
// executor, whoever started it, then the stale leases themselves, and
// says how many containers it removed. The leases are read after the
// containers are listed (the first time keep is asked), as Leftover
// requires.
func Sweep(ctx context.Context, s Store, remove Remover) (int, error) {
	var (
		once  sync.Once
		table Table
		terr  error
	)
	n, err := remove(ctx, map[string]string{LabelProject: "1"}, func(labels map[string]string) bool {
		if labels[LabelKind] == Kind {
			return true // a lease record kept as a container (the local engine's)
		}
		once.Do(func() { table, terr = s.Leases(ctx) })
		return terr != nil || !table.Leftover(labels)
	})
	if err == nil {
		err = terr
	}
	if err != nil {
		return n, err
	}
	// The stale leases, read again: their containers are gone (or will be
	// found leaseless by the next sweep).
	t, err := s.Leases(ctx)
	if err != nil {
		return n, err
	}
	var errs []error
	for id, r := range t.Leases {
		if t.Stale(r) {
			errs = append(errs, s.DeleteLease(ctx, id))
		}
	}
	return n, errors.Join(errs...)
}

// Clean removes every container of the project with the labels of
// labelFilter (nil: all of them) that no live lease holds (a dead run's,
// one without a lease, an older version's whatever its expiry), then the
// stale leases, and says how many containers it removed and which live
// leases it kept containers of (by holder). It is `eval clean`: unlike
// Sweep it takes what it cannot tell is live.
func Clean(ctx context.Context, s Store, remove Remover, labelFilter map[string]string) (int, []string, error) {
	filter := maps.Clone(labelFilter)
	if filter == nil {
		filter = map[string]string{}
	}
	filter[LabelProject] = "1"
	var (
		once  sync.Once
		table Table
		terr  error
		mu    sync.Mutex
		kept  = map[string]bool{}
	)
	n, err := remove(ctx, filter, func(labels map[string]string) bool {
		once.Do(func() { table, terr = s.Leases(ctx) })
		if terr != nil {
			return true
		}
		r, ok := table.Leases[labels[Label]]
		live := ok && !table.Stale(r)
		if live && labels[LabelKind] != Kind {
			mu.Lock()
			kept[r.Holder] = true
			mu.Unlock()
		}
		return live
	})
	if err == nil {
		err = terr
	}
	var holders []string
	for h := range kept {
		holders = append(holders, h)
	}
	slices.Sort(holders)
	if err != nil {
		return n, holders, err
	}
	t, err := s.Leases(ctx)
	if err != nil {
		return n, holders, err
	}
	var errs []error
	for id, r := range t.Leases {
		if t.Stale(r) {
			errs = append(errs, s.DeleteLease(ctx, id))
		}
	}
	return n, holders, errors.Join(errs...)
}
