package swarm

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/lease"
)

// refreshEvery is how often, at most, admission asks the manager for the
// cluster's free resources while a task waits for room.
const refreshEvery = time.Second

// admission bounds how many containers of an executor run at once by the
// room the cluster has for them: per node, its CPUs and memory minus the
// reservations of the tasks running there that are not this executor's,
// divided by one container's reservation, summed over the nodes. The
// executor's own tasks are counted here, as they are admitted, rather
// than read back from the manager, which learns of them only later.
type admission struct {
	x        *Executor
	mu       sync.Mutex
	inFlight int
	capacity int
	nodes    int
	checked  time.Time
	freed    chan struct{} // closed and replaced when a container is released
}

// Admit waits until the cluster has room for one more container with
// limits lim (its CPUs and memory are its reservation) beside the ones
// this executor already runs, and takes it. Call release when the
// container is removed. The wait ends with ctx.
func (x *Executor) Admit(ctx context.Context, lim container.Limits) (release func(), err error) {
	a := &x.adm
	for {
		a.mu.Lock()
		if a.freed == nil {
			a.freed = make(chan struct{})
		}
		if time.Since(a.checked) >= refreshEvery {
			a.mu.Unlock()
			capacity, nodes, err := x.capacity(ctx, lim)
			a.mu.Lock()
			if err == nil && capacity == 0 && a.inFlight == 0 {
				err = x.fitsSomewhere(ctx, lim)
			}
			if err != nil {
				a.mu.Unlock()
				return nil, err
			}
			a.capacity, a.nodes, a.checked = capacity, nodes, time.Now()
		}
		if a.inFlight < a.capacity {
			a.inFlight++
			a.mu.Unlock()
			var once sync.Once
			return func() {
				once.Do(func() {
					a.mu.Lock()
					a.inFlight--
					close(a.freed)
					a.freed = make(chan struct{})
					a.mu.Unlock()
				})
			}, nil
		}
		freed := a.freed
		wait := refreshEvery - time.Since(a.checked)
		a.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for room on the swarm: %w", ctx.Err())
		case <-freed:
		case <-time.After(max(wait, 10*time.Millisecond)):
		}
	}
}

// Status says how many nodes are ready and how many containers this
// executor runs, of how many the cluster has room for: for the progress
// display.
func (x *Executor) Status() string {
	a := &x.adm
	a.mu.Lock()
	defer a.mu.Unlock()
	s := fmt.Sprintf("%d nodes, %d tasks in flight (room for %d)", a.nodes, a.inFlight, a.capacity)
	if n := len(x.Lost()); n > 0 {
		s += fmt.Sprintf(", %d node(s) lost", n)
	}
	return s
}

// capacity is how many containers with limits lim the cluster has room
// for beside the tasks that are not this executor's, and how many nodes
// it has: each ready, active node that is not lost gives
// min(free CPUs / lim's CPUs, free memory / lim's memory), where free is
// what the node has minus the reservations of the tasks meant to run on
// it. Without reservations (lim sets neither), a node's CPU count bounds
// it.
func (x *Executor) capacity(ctx context.Context, lim container.Limits) (int, int, error) {
	nodes, err := x.nodes(ctx)
	if err != nil {
		return 0, 0, err
	}
	// Every task, whatever its desired state: whether it holds its
	// reservation is its state's to say.
	res, err := x.cli.TaskList(ctx, client.TaskListOptions{})
	if err != nil {
		return 0, 0, fmt.Errorf("listing the swarm's tasks: %w", err)
	}
	// The leases, read after the tasks (lease.Table.Leftover): a dead
	// run's task holds its reservation until it is removed, but its room
	// is counted free now, and its removal started.
	leases, lerr := x.Leases(ctx)
	x.mu.Lock()
	usedCPU, usedMem := map[string]int64{}, map[string]int64{}
	dead := 0
	for _, t := range res.Items {
		if x.ours[t.ServiceID] || t.NodeID == "" || !live(t.Status.State) {
			continue
		}
		if lerr == nil && t.Spec.ContainerSpec != nil && leases.Leftover(t.Spec.ContainerSpec.Labels) {
			dead++
			continue
		}
		if r := t.Spec.Resources; r != nil && r.Reservations != nil {
			usedCPU[t.NodeID] += r.Reservations.NanoCPUs
			usedMem[t.NodeID] += r.Reservations.MemoryBytes
		}
	}
	x.mu.Unlock()
	if dead > 0 {
		x.sweepSoon()
	}
	total := 0
	for _, n := range nodes {
		total += slots(n.NanoCPUs-usedCPU[n.ID], n.Memory-usedMem[n.ID], lim)
	}
	return total, len(nodes), nil
}

// fitsSomewhere fails when no node could ever run a container with
// limits lim, even idle: waiting for room would never end.
func (x *Executor) fitsSomewhere(ctx context.Context, lim container.Limits) error {
	nodes, err := x.nodes(ctx)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if slots(n.NanoCPUs, n.Memory, lim) > 0 {
			return nil
		}
	}
	return fmt.Errorf("no node of the swarm at %s has %.2f CPUs and %d MiB of memory for one container: lower [eval] cpus or memory",
		x.cfg.Manager, float64(lim.NanoCPUs)/1e9, lim.Memory>>20)
}

// sweepSoon removes, in the background, the services of dead runs that
// admission found (lease.Sweep), unless a sweep is under way already.
// Close waits for it.
func (x *Executor) sweepSoon() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.sweeping {
		return
	}
	x.sweeping = true
	x.sweeps.Add(1)
	go func() {
		defer x.sweeps.Done()
		n, err := lease.Sweep(context.Background(), x, x.RemoveContainers)
		switch {
		case err != nil:
			x.logf("removing the services of killed runs: %v", err)
		case n > 0:
			x.logf("removed %d services of killed runs", n)
		}
		x.mu.Lock()
		x.sweeping = false
		x.mu.Unlock()
	}()
}

// slots is how many containers with limits lim fit in cpu nano-CPUs and
// mem bytes.
func slots(cpu, mem int64, lim container.Limits) int {
	if cpu <= 0 || mem <= 0 {
		return 0
	}
	perCPU := lim.NanoCPUs
	if perCPU <= 0 && lim.Memory <= 0 {
		perCPU = 1e9
	}
	n := int64(1 << 30)
	if perCPU > 0 {
		n = min(n, cpu/perCPU)
	}
	if lim.Memory > 0 {
		n = min(n, mem/lim.Memory)
	}
	return int(n)
}

// live says whether a task in state s holds its reservation: it is on
// its way to run, or runs. Every other state is an end: it never will.
func live(s swarm.TaskState) bool {
	switch s {
	case swarm.TaskStateNew, swarm.TaskStateAllocated, swarm.TaskStatePending, swarm.TaskStateAssigned, swarm.TaskStateAccepted,
		swarm.TaskStatePreparing, swarm.TaskStateReady, swarm.TaskStateStarting, swarm.TaskStateRunning:
		return true
	}
	return false
}
