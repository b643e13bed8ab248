package container

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/featbench/featbench/internal/lease"
)

// The local engine keeps each lease (internal/lease) as a container that
// is created and never started, from an empty image: it runs nothing and
// holds no resources. A container's labels cannot change once it is
// made, but its name can, in one cheap call: the lease is renewed by
// renaming it to featbench-lease.<id>.<engine time in ms>, and one
// listing reads every lease with its last renewal. Times are the
// engine's clock (Engine.clock), so that runs on machines whose clocks
// differ judge a lease alike.

// leaseImage is the empty image lease containers are made from, imported
// once per engine.
const leaseImage = "featbench/lease:1"

// leasePrefix starts a lease container's name.
const leasePrefix = "featbench-lease."

var _ lease.Store = (*Engine)(nil)

// CreateLease makes the lease id, held by holder (for people: "eval run
// my-run"), renewed now.
func (e *Engine) CreateLease(ctx context.Context, id, holder string) error {
	now, err := e.Now(ctx)
	if err != nil {
		return err
	}
	cfg := &container.Config{
		Image: leaseImage, Cmd: []string{"featbench-lease"}, NetworkDisabled: true,
		Labels: map[string]string{lease.LabelProject: "1", lease.LabelKind: lease.Kind, lease.Label: id, lease.LabelHolder: holder},
	}
	opts := client.ContainerCreateOptions{Name: leaseName(id, now), Config: cfg, HostConfig: &container.HostConfig{NetworkMode: "none"}}
	created, err := e.cli.ContainerCreate(ctx, opts)
	if cerrdefs.IsNotFound(err) {
		if err = e.importLeaseImage(ctx); err == nil {
			created, err = e.cli.ContainerCreate(ctx, opts)
		}
	}
	if err != nil {
		return fmt.Errorf("creating the run's lease on %s: %w", e.host, err)
	}
	e.mu.Lock()
	if e.leases == nil {
		e.leases = map[string]string{}
	}
	e.leases[id] = created.ID
	e.mu.Unlock()
	return nil
}

// importLeaseImage imports the empty image lease containers are made of.
func (e *Engine) importLeaseImage(ctx context.Context) error {
	var empty bytes.Buffer
	if err := tar.NewWriter(&empty).Close(); err != nil {
		return err
	}
	res, err := e.cli.ImageImport(ctx, client.ImageImportSource{Source: &empty, SourceName: "-"}, leaseImage,
		client.ImageImportOptions{Changes: []string{`LABEL ` + lease.LabelKind + `=` + lease.Kind}})
	if err != nil {
		return fmt.Errorf("importing %s: %w", leaseImage, err)
	}
	defer res.Close()
	if _, err := readStream(res, nil); err != nil {
		return fmt.Errorf("importing %s: %w", leaseImage, err)
	}
	return nil
}

// RenewLease renews the lease id, which this engine made: ErrNoLease when
// it is gone.
func (e *Engine) RenewLease(ctx context.Context, id string) error {
	e.mu.Lock()
	cid := e.leases[id]
	e.mu.Unlock()
	if cid == "" {
		return fmt.Errorf("renew lease %s: %w", id, lease.ErrNoLease)
	}
	now, err := e.Now(ctx)
	if err != nil {
		return err
	}
	_, err = e.cli.ContainerRename(ctx, cid, client.ContainerRenameOptions{NewName: leaseName(id, now)})
	switch {
	case cerrdefs.IsNotFound(err):
		return fmt.Errorf("renew lease %s: %w", id, lease.ErrNoLease)
	case err != nil && strings.Contains(err.Error(), "same name"):
		return nil // renewed twice in one millisecond
	case err != nil:
		return fmt.Errorf("renew lease %s on %s: %w", id, e.host, err)
	}
	return nil
}

// DeleteLease removes the lease id, whoever made it; a lease already gone
// is no error.
func (e *Engine) DeleteLease(ctx context.Context, id string) error {
	e.mu.Lock()
	cid := e.leases[id]
	delete(e.leases, id)
	e.mu.Unlock()
	if cid == "" {
		list, err := e.Containers(ctx, map[string]string{lease.LabelKind: lease.Kind, lease.Label: id})
		if err != nil {
			return fmt.Errorf("delete lease %s: %w", id, err)
		}
		for _, c := range list {
			if err := e.ForceRemove(ctx, c.ID); err != nil {
				return fmt.Errorf("delete lease %s: %w", id, err)
			}
		}
		return nil
	}
	if err := e.ForceRemove(ctx, cid); err != nil {
		return fmt.Errorf("delete lease %s: %w", id, err)
	}
	return nil
}

// Leases lists the engine's leases, with its clock now.
func (e *Engine) Leases(ctx context.Context) (lease.Table, error) {
	list, err := e.Containers(ctx, map[string]string{lease.LabelProject: "1", lease.LabelKind: lease.Kind})
	if err != nil {
		return lease.Table{}, fmt.Errorf("listing the leases: %w", err)
	}
	now, err := e.Now(ctx)
	if err != nil {
		return lease.Table{}, err
	}
	t := lease.Table{Leases: map[string]lease.Record{}, Now: now}
	for _, c := range list {
		id, renewed, ok := parseLeaseName(c.Name)
		if !ok || id != c.Labels[lease.Label] {
			continue // not ours to judge: a container named so by someone else
		}
		t.Leases[id] = lease.Record{ID: id, Holder: c.Labels[lease.LabelHolder], Renewed: renewed}
	}
	return t, nil
}

func leaseName(id string, at time.Time) string {
	return leasePrefix + id + "." + strconv.FormatInt(at.UnixMilli(), 10)
}

func parseLeaseName(name string) (id string, renewed time.Time, ok bool) {
	rest, ok := strings.CutPrefix(name, leasePrefix)
	if !ok {
		return "", time.Time{}, false
	}
	i := strings.LastIndexByte(rest, '.')
	if i <= 0 {
		return "", time.Time{}, false
	}
	ms, err := strconv.ParseInt(rest[i+1:], 10, 64)
	if err != nil {
		return "", time.Time{}, false
	}
	return rest[:i], time.UnixMilli(ms), true
}

// clockCheck is how often the engine's clock is read again.
const clockCheck = 10 * time.Minute

// Now is the engine's clock now: this machine's, corrected by the
// offset measured against the engine's (its system time, read at most
// every clockCheck).
func (e *Engine) Now(ctx context.Context) (time.Time, error) {
	e.mu.Lock()
	off, at := e.offset, e.offsetAt
	e.mu.Unlock()
	if at.IsZero() || time.Since(at) > clockCheck {
		var err error
		if off, err = EngineOffset(ctx, e.cli); err != nil {
			if at.IsZero() {
				return time.Time{}, fmt.Errorf("reading the clock of the engine at %s: %w", e.host, err)
			}
			off = e.offset // the last one is still good enough
		}
		e.mu.Lock()
		e.offset, e.offsetAt = off, time.Now()
		e.mu.Unlock()
	}
	return time.Now().Add(off), nil
}

// EngineOffset is how far the clock of cli's engine is ahead of this
// machine's: its system time against the middle of the request.
func EngineOffset(ctx context.Context, cli *client.Client) (time.Duration, error) {
	before := time.Now()
	res, err := cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return 0, err
	}
	after := time.Now()
	at, err := time.Parse(time.RFC3339Nano, res.Info.SystemTime)
	if err != nil {
		return 0, fmt.Errorf("the engine's system time %q: %w", res.Info.SystemTime, err)
	}
	return at.Sub(before.Add(after.Sub(before) / 2)), nil
}
