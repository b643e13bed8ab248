package swarm

import (
	"context"
	"fmt"
	"strconv"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/lease"
)

// A swarm keeps each lease (internal/lease) as a swarm config object,
// featbench-lease-<id>: the smallest object the manager stores in its
// replicated store, which any run that talks to any manager sees, and
// the only one besides a service whose labels change in place (a
// config's data cannot, its labels can). A renewal updates a label, and
// the manager stamps the config's UpdatedAt with its own clock, which is
// what a lease's age is judged by.

var _ lease.Store = (*Executor)(nil)

// labelRenewal counts a lease's renewals: each update changes it, so
// that the manager records an update.
const labelRenewal = "featbench.renewal"

func leaseConfigName(id string) string { return "featbench-lease-" + id }

// CreateLease makes the lease id, held by holder.
func (x *Executor) CreateLease(ctx context.Context, id, holder string) error {
	spec := swarm.ConfigSpec{
		Annotations: swarm.Annotations{Name: leaseConfigName(id), Labels: map[string]string{
			lease.LabelProject: "1", lease.LabelKind: lease.Kind, lease.Label: id, lease.LabelHolder: holder, labelRenewal: "0",
		}},
		Data: []byte(holder + "\n"),
	}
	if _, err := x.cli.ConfigCreate(ctx, client.ConfigCreateOptions{Spec: spec}); err != nil {
		return fmt.Errorf("creating the run's lease on the swarm at %s: %w", x.cfg.Manager, err)
	}
	return nil
}

// RenewLease renews the lease id: ErrNoLease when it is gone.
func (x *Executor) RenewLease(ctx context.Context, id string) error {
	res, err := x.cli.ConfigInspect(ctx, leaseConfigName(id), client.ConfigInspectOptions{})
	if cerrdefs.IsNotFound(err) {
		return fmt.Errorf("renew lease %s: %w", id, lease.ErrNoLease)
	}
	if err != nil {
		return fmt.Errorf("renew lease %s on the swarm at %s: %w", id, x.cfg.Manager, err)
	}
	c := res.Config
	spec := swarm.ConfigSpec{Annotations: c.Spec.Annotations}
	labels := map[string]string{}
	for k, v := range c.Spec.Labels {
		labels[k] = v
	}
	n, _ := strconv.Atoi(labels[labelRenewal])
	labels[labelRenewal] = strconv.Itoa(n + 1)
	spec.Labels = labels
	_, err = x.cli.ConfigUpdate(ctx, c.ID, client.ConfigUpdateOptions{Version: c.Version, Spec: spec})
	switch {
	case cerrdefs.IsNotFound(err):
		return fmt.Errorf("renew lease %s: %w", id, lease.ErrNoLease)
	case err != nil:
		return fmt.Errorf("renew lease %s on the swarm at %s: %w", id, x.cfg.Manager, err)
	}
	return nil
}

// DeleteLease removes the lease id; one already gone is no error.
func (x *Executor) DeleteLease(ctx context.Context, id string) error {
	_, err := x.cli.ConfigRemove(ctx, leaseConfigName(id), client.ConfigRemoveOptions{})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("delete lease %s on the swarm at %s: %w", id, x.cfg.Manager, err)
	}
	return nil
}

// Leases lists the swarm's leases, with the manager's clock now.
func (x *Executor) Leases(ctx context.Context) (lease.Table, error) {
	res, err := x.cli.ConfigList(ctx, client.ConfigListOptions{Filters: make(client.Filters).Add("label", lease.LabelKind+"="+lease.Kind)})
	if err != nil {
		return lease.Table{}, fmt.Errorf("listing the leases on the swarm at %s: %w", x.cfg.Manager, err)
	}
	now, err := x.now(ctx)
	if err != nil {
		return lease.Table{}, err
	}
	t := lease.Table{Leases: map[string]lease.Record{}, Now: now}
	for _, c := range res.Items {
		id := c.Spec.Labels[lease.Label]
		if id == "" || c.Spec.Name != leaseConfigName(id) {
			continue
		}
		t.Leases[id] = lease.Record{ID: id, Holder: c.Spec.Labels[lease.LabelHolder], Renewed: c.UpdatedAt}
	}
	return t, nil
}

// now is the manager's clock: this machine's, corrected by the offset
// measured against the manager's system time (at most every 10 minutes).
func (x *Executor) now(ctx context.Context) (time.Time, error) {
	x.mu.Lock()
	off, at := x.offset, x.offsetAt
	x.mu.Unlock()
	if at.IsZero() || time.Since(at) > 10*time.Minute {
		o, err := container.EngineOffset(ctx, x.cli)
		switch {
		case err != nil && at.IsZero():
			return time.Time{}, fmt.Errorf("reading the clock of the swarm's manager at %s: %w", x.cfg.Manager, err)
		case err == nil:
			off = o
			x.mu.Lock()
			x.offset, x.offsetAt = off, time.Now()
			x.mu.Unlock()
		}
	}
	return time.Now().Add(off), nil
}
