package executor_test

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/lease"
	"github.com/featbench/featbench/internal/testenv"
)

// ageLocalLease renames the local engine's lease container of id as a
// renewal ago would have: what a run killed ago leaves.
func ageLocalLease(t *testing.T, eng *container.Engine, id string, ago time.Duration) {
	t.Helper()
	list, err := eng.Containers(context.Background(), map[string]string{lease.LabelKind: lease.Kind, lease.Label: id})
	if err != nil || len(list) != 1 {
		t.Fatalf("the lease container of %s: %v, %v", id, list, err)
	}
	name := "featbench-lease." + id + "." + strconv.FormatInt(time.Now().Add(-ago).UnixMilli(), 10)
	if out, err := exec.Command("docker", "-H", eng.Host(), "rename", list[0].ID, name).CombinedOutput(); err != nil {
		t.Fatalf("docker rename: %v: %s", err, out)
	}
}

// TestSweepLocal: on the local engine, a sweep removes the containers of
// a dead run (its lease not renewed for longer than the grace, or gone)
// and an older version's expired ones, and the stale lease; it keeps a
// live run's, an older version's that has not expired, and any without
// a lease or an expiry. Released, a lease's leftover containers go with
// the next sweep. eval clean's rule (Clean) takes every container no live
// lease holds.
func TestSweepLocal(t *testing.T) {
	testenv.DockerHost(t)
	eng, img := imagestest.Base(t)
	x := executor.Local(eng)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := "sweep-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	start := func(name string, labels map[string]string) string {
		t.Helper()
		l := map[string]string{lease.LabelProject: "1", lease.LabelKind: "test", "featbench.run": run, "test.name": name}
		for k, v := range labels {
			l[k] = v
		}
		box, err := x.Start(ctx, container.Spec{Image: img, Name: "featbench-sweep-" + name, Labels: l})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { box.Remove() })
		return name
	}
	present := func() map[string]bool {
		t.Helper()
		list, err := eng.Containers(ctx, map[string]string{"featbench.run": run})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, c := range list {
			out[c.Labels["test.name"]] = true
		}
		return out
	}

	live, err := executor.Hold(ctx, x, "test live", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Release()
	if box, err := live.Start(ctx, container.Spec{Image: img, Name: "featbench-sweep-live",
		Labels: map[string]string{lease.LabelProject: "1", lease.LabelKind: "test", "featbench.run": run, "test.name": "live"}}); err != nil {
		t.Fatal(err)
	} else {
		t.Cleanup(func() { box.Remove() })
	}
	dead := "dead" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := x.CreateLease(ctx, dead, "test dead"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.DeleteLease(context.Background(), dead) })
	start("dead", map[string]string{lease.Label: dead})
	ageLocalLease(t, eng, dead, lease.Grace+10*time.Second)
	start("gone", map[string]string{lease.Label: "no-such-lease"})
	start("expired", map[string]string{lease.LabelExpires: strconv.FormatInt(time.Now().Add(-time.Minute).Unix(), 10)})
	start("unexpired", map[string]string{lease.LabelExpires: strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)})
	start("plain", nil)

	if _, err := executor.Sweep(ctx, x); err != nil {
		t.Fatal(err)
	}
	got := present()
	for name, want := range map[string]bool{"live": true, "dead": false, "gone": false, "expired": false, "unexpired": true, "plain": true} {
		if got[name] != want {
			t.Errorf("after the sweep, %s's container present: %v, want %v", name, got[name], want)
		}
	}
	table, err := x.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := table.Leases[dead]; ok {
		t.Errorf("the dead run's lease is still there")
	}
	r, ok := table.Leases[live.ID()]
	if !ok || r.Holder != "test live" || table.Stale(r) {
		t.Errorf("the live run's lease: %+v, %v (now %s)", r, ok, table.Now)
	}

	// Clean, on this test's containers alone (other runs share the
	// engine): all but the live run's.
	n, holders, err := executor.Clean(ctx, x, map[string]string{"featbench.run": run})
	if err != nil {
		t.Fatal(err)
	}
	got = present()
	if n != 2 || !got["live"] || got["unexpired"] || got["plain"] || strings.Join(holders, ",") != "test live" {
		t.Errorf("clean removed %d, kept %v for %v", n, got, holders)
	}

	// Released: the lease is gone, and its container is a leftover.
	if err := live.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := executor.Sweep(ctx, x); err != nil {
		t.Fatal(err)
	}
	if got := present(); got["live"] {
		t.Errorf("the container of a released lease was kept")
	}
}

// TestLeaseRenewedLocal: a held lease is renewed while the run lives,
// on the engine's clock; one removed by another run (taken for dead) is
// made again.
func TestLeaseRenewedLocal(t *testing.T) {
	testenv.DockerHost(t)
	eng := imagestest.Engine(t)
	x := executor.Local(eng)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := executor.Hold(ctx, x, "test renewed", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	renewed := func() time.Time {
		t.Helper()
		table, err := x.Leases(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := table.Leases[l.ID()]
		if !ok {
			return time.Time{}
		}
		if d := table.Now.Sub(r.Renewed); d < -time.Second || d > lease.Every+5*time.Second {
			t.Errorf("renewed %s before the engine's now", d)
		}
		return r.Renewed
	}
	first := renewed()
	time.Sleep(lease.Every + 2*time.Second)
	if second := renewed(); !second.After(first) {
		t.Errorf("not renewed: %s, then %s", first, second)
	}
	if err := x.DeleteLease(ctx, l.ID()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(lease.Every + 2*time.Second)
	if renewed().IsZero() {
		t.Errorf("a lease removed under a live run was not made again")
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if !renewed().IsZero() {
		t.Errorf("released, the lease is still there")
	}
}

// BenchmarkLeaseLocal: what a lease costs a run on the local engine, per
// operation, measured apart from any run (eval-bench.sh's end-to-end
// figures on a shared machine swing more than these add up to): taking
// one (made, and a sweep of the engine) and releasing it, once per run;
// a renewal, every lease.Every; a sweep, every sweepEvery renewals. A
// container started through the lease costs nothing more than its label.
func BenchmarkLeaseLocal(b *testing.B) {
	testenv.DockerHost(b)
	eng := imagestest.Engine(b)
	x := executor.Local(eng)
	ctx := context.Background()
	b.Run("hold+release", func(b *testing.B) {
		for b.Loop() {
			l, err := executor.Hold(ctx, x, "bench", nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(); err != nil {
				b.Fatal(err)
			}
		}
	})
	id := "bench" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := x.CreateLease(ctx, id, "bench"); err != nil {
		b.Fatal(err)
	}
	defer x.DeleteLease(ctx, id)
	b.Run("renew", func(b *testing.B) {
		for b.Loop() {
			if err := x.RenewLease(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sweep", func(b *testing.B) {
		for b.Loop() {
			if _, err := executor.Sweep(ctx, x); err != nil {
				b.Fatal(err)
			}
		}
	})
}
