package swarm

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/testenv"
)

// BenchmarkPlacement measures what the manager of a real swarm
// (testenv.Swarm) costs per attempt: the "dispatch" of
// scripts/eval-bench/simulate.py, which until now was assumed.
//
// Each iteration creates a burst of services at once, from as many
// goroutines, each the executor's one-replica service
// (serviceSpec, with the command `sleep 60` instead of `sleep infinity`
// so that a task left behind ends by itself), and one goroutine polls the
// burst's tasks (TaskList, label filter) every pollGap until all run. Of
// each task it keeps:
//
//   - start: this client's clock just before its ServiceCreate call;
//   - assigned: the task's status timestamp, set by the manager's
//     scheduler, when a poll finds it "assigned" (exact); when the task
//     is already past that state, the earlier of that poll's time and the
//     later state's timestamp (an upper bound, within a poll interval);
//   - running: its status timestamp in state "running", set by its node.
//
// Manager, nodes and this client share the machine's clock. The figures,
// medians over the iterations:
//
//   - mgr-s/svc: (last assigned - first start) / burst size, the
//     manager's serial seconds per service when many are created at once
//     (orchestrator, allocator, scheduler, and the creates' raft writes):
//     simulate.py's --dispatch;
//   - assign-s: the median of assigned - start, one service's latency;
//   - node-s: the median of running - assigned, the node's part
//     (the dispatcher's hand-over, the agent, the registry check, the
//     container's start);
//   - create-s: the median ServiceCreate call;
//   - remove-s/svc: removing the burst's services at once, per service;
//   - task-s: the median time from start to the task's creation (by the
//     orchestrator), the first step of assign-s;
//   - exact-%: the share of assignments caught exactly, the rest being
//     bounds; poll-ms: the median interval between polls;
//   - load1: the machine's load average (one minute) after the burst.
//
// Sub-benchmarks: without reservations (pure placement) and with them as
// the executor sets them (limits and reservations, which the scheduler
// filters nodes by; the least Docker accepts: reserved), each with a
// small and a large burst (FEATBENCH_PLACEMENT_BURSTS: sizes separated by
// commas, "8,32" when unset). Every service is labelled
// featbench.bench=placement and removed when the benchmark ends, also on
// SIGINT or SIGTERM; one left by a killed benchmark is removed by the
// next once its featbench.expires label has passed. Their tasks stay in
// the manager's store, as every removed job's do on Docker 20.10. Run:
//
//	FEATBENCH_REQUIRE_SWARM=1 go test -run '^$' -bench Placement -benchtime 3x ./internal/swarm
func BenchmarkPlacement(b *testing.B) {
	manager, registry, push := testenv.Swarm(b)
	eng, base := imagestest.Base(b)
	// An interrupt cancels ctx: the bursts stop and the cleanups below
	// remove what they made, instead of the process dying with them.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	b.Cleanup(stop)
	ctx, cancel := context.WithTimeout(ctx, benchTimeout)
	b.Cleanup(cancel)
	x, err := Connect(ctx, Config{Manager: manager, Registry: registry, PushRegistry: push, Local: eng})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { x.Close() })
	p := &placement{x: x, made: map[string]string{}}
	// Registered after x.Close, so run before it.
	b.Cleanup(func() {
		if err := p.removeAll(); err != nil {
			b.Error(err)
		}
	})
	bursts, err := burstSizes(os.Getenv("FEATBENCH_PLACEMENT_BURSTS"))
	if err != nil {
		b.Fatal(err)
	}
	if err := p.sweep(ctx); err != nil {
		b.Fatal(err)
	}
	p.ref, err = x.push(ctx, base)
	if err != nil {
		b.Fatal(err)
	}
	// Every node pulls the image now, not within a measured burst.
	if err := p.warmUp(ctx); err != nil {
		b.Fatal(err)
	}
	nodes, err := x.nodes(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, reserve := range []bool{false, true} {
		for _, n := range bursts {
			name := fmt.Sprintf("reservations=none/services=%d", n)
			var lim *container.Limits // nil: no resources at all
			if reserve {
				name = fmt.Sprintf("reservations=executor/services=%d", n)
				lim = reserved(nodes, n)
			}
			ok := b.Run(name, func(b *testing.B) {
				var ms []burstResult
				for range b.N {
					r, err := p.burst(ctx, n, lim)
					if err != nil {
						b.Fatal(err)
					}
					b.Logf("%s", r)
					ms = append(ms, r)
				}
				report(b, ms)
			})
			if !ok || ctx.Err() != nil {
				return
			}
		}
	}
}

const (
	// defaultBursts are the burst sizes: a small one, and one four times
	// as large, whose difference is the manager's cost per service beyond
	// its fixed latency.
	defaultBursts = "8,32"
	// pollGap is the pause between two polls of a burst's tasks: short,
	// for the resolution, but not a busy loop on the manager it measures.
	pollGap = 10 * time.Millisecond
	// benchTimeout bounds the whole benchmark; leftovers expire after it.
	benchTimeout = 20 * time.Minute
	// burstTimeout bounds one burst's wait for its tasks to run.
	burstTimeout = 3 * time.Minute
	// cpuLimit is the CPU limit of a burst with reservations: one CPU, as
	// featbench.toml's eval.cpus.
	cpuLimit     = 1e9
	labelBench   = "featbench.bench"
	labelBurst   = "featbench.bench.burst"
	labelIndex   = "featbench.bench.index"
	labelExpires = "featbench.expires"
)

// burstSizes parses FEATBENCH_PLACEMENT_BURSTS, burst sizes separated by
// commas (defaultBursts when empty): "8,32,128" adds a burst of 128
// services, which the nodes of one machine start in about a minute.
func burstSizes(s string) ([]int, error) {
	if s == "" {
		s = defaultBursts
	}
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("FEATBENCH_PLACEMENT_BURSTS=%q: want burst sizes separated by commas, such as %q", s, defaultBursts)
		}
		out = append(out, n)
	}
	return out, nil
}

// reserved is the limits (and so reservations) of a burst of n
// containers: the least Docker accepts, 0.01 CPU and 16 MiB each (less
// when n of them would take more than half of the nodes' CPUs or memory,
// so that the burst never waits for room). The scheduler's work does not
// depend on the amounts, and small ones matter: Docker 20.10 keeps a
// removed job's tasks, and its constraint enforcer counts their
// reservations against their node for ever (docs/executors.md). The
// burst's CPU limit is then raised to cpuLimit.
func reserved(nodes []node, n int) *container.Limits {
	var cpus, mem int64
	for _, nd := range nodes {
		cpus += nd.NanoCPUs
		mem += nd.Memory
	}
	return &container.Limits{
		NanoCPUs: min(1e7, cpus/2/int64(n)), Memory: min(16<<20, mem/2/int64(n)),
		Pids: 64, Tmp: 4 << 20,
	}
}

// placement is the benchmark's state: the executor, the image's
// registry name, and the services it made and has not yet removed.
type placement struct {
	x   *Executor
	ref string

	mu   sync.Mutex
	made map[string]string // service ID -> name
}

func (p *placement) labels(burst string) map[string]string {
	return map[string]string{
		labelBench: "placement", labelBurst: burst,
		labelExpires: strconv.FormatInt(time.Now().Add(benchTimeout+time.Minute).Unix(), 10),
	}
}

// create creates a service and records it, to be removed whatever
// happens next.
func (p *placement) create(ctx context.Context, spec swarm.ServiceSpec) (string, error) {
	res, err := p.x.cli.ServiceCreate(ctx, client.ServiceCreateOptions{Spec: spec})
	if err != nil {
		return "", fmt.Errorf("create service %s: %w", spec.Name, err)
	}
	p.mu.Lock()
	p.made[res.ID] = spec.Name
	p.mu.Unlock()
	return res.ID, nil
}

// removeAll removes every service the benchmark made and still has,
// with their containers (a job's running task outlives its service on
// Docker 20.10), with a fresh context: it runs once ctx is cancelled.
func (p *placement) removeAll() error {
	p.mu.Lock()
	made := p.made
	p.made = map[string]string{}
	p.mu.Unlock()
	var errs []error
	for id, name := range made {
		errs = append(errs, p.x.discard(id, name))
	}
	return errors.Join(errs...)
}

// sweep removes what a killed benchmark left: its services whose expiry
// has passed (a live benchmark's have not).
func (p *placement) sweep(ctx context.Context) error {
	res, err := p.x.cli.ServiceList(ctx, client.ServiceListOptions{Filters: make(client.Filters).Add("label", labelBench+"=placement")})
	if err != nil {
		return fmt.Errorf("listing the services of earlier benchmarks: %w", err)
	}
	var errs []error
	for _, s := range res.Items {
		exp, err := strconv.ParseInt(s.Spec.Labels[labelExpires], 10, 64)
		if err == nil && time.Now().Unix() <= exp {
			continue
		}
		errs = append(errs, p.x.discard(s.ID, s.Spec.Name))
	}
	return errors.Join(errs...)
}

// warmUp runs `true` once on every node (a global job) from the image and
// waits for each to complete: the nodes pull the image here.
func (p *placement) warmUp(ctx context.Context) error {
	spec := p.x.serviceSpec(container.Spec{Image: p.ref, Name: "featbench-placement-warmup", Labels: p.labels("warm-up")}, p.ref)
	spec.Mode = swarm.ServiceMode{GlobalJob: &swarm.GlobalJob{}}
	spec.TaskTemplate.ContainerSpec.Command = []string{"true"}
	spec.TaskTemplate.Resources = nil
	nodes, err := p.x.nodes(ctx)
	if err != nil {
		return err
	}
	id, err := p.create(ctx, spec)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	for {
		res, err := p.x.cli.TaskList(ctx, client.TaskListOptions{Filters: make(client.Filters).Add("service", id)})
		if err != nil {
			return fmt.Errorf("warm-up: listing its tasks: %w", err)
		}
		done := 0
		for _, t := range res.Items {
			switch t.Status.State {
			case swarm.TaskStateComplete:
				done++
			case swarm.TaskStateFailed, swarm.TaskStateRejected:
				return fmt.Errorf("warm-up: task on node %s %s: %s %s", t.NodeID, t.Status.State, t.Status.Message, t.Status.Err)
			}
		}
		if done >= len(nodes) {
			return p.removeAll()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("warm-up: %d of %d nodes ran the image: %w", done, len(nodes), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// seen is what the polls learnt of one task.
type seen struct {
	start, created     time.Time // before the ServiceCreate call; after it
	task               time.Time // the task's creation (by the orchestrator)
	assigned, running  time.Time
	exact              bool // assigned is the scheduler's timestamp
	node, containerID  string
	serviceID, svcName string
}

// burstResult is one burst's figures, in seconds.
type burstResult struct {
	n                                          int
	mgrPerSvc, task, assign, node, create, rem float64
	exact, pollMS, load1                       float64
	nodes                                      map[string]int
}

func (r burstResult) String() string {
	return fmt.Sprintf("%d services: manager %.4f s/service; p50: task made after %.3f s, assigned after %.3f s, running %.3f s later; create call %.3f s, removal %.4f s/service; %.0f%% of assignments exact, polls every %.1f ms; tasks per node %v; load average %.2f",
		r.n, r.mgrPerSvc, r.task, r.assign, r.node, r.create, r.rem, r.exact, r.pollMS, r.nodes, r.load1)
}

// burst creates n services at once (limits lim, none if nil), waits for
// all their tasks to run, removes them, and returns the figures.
func (p *placement) burst(ctx context.Context, n int, lim *container.Limits) (burstResult, error) {
	ctx, cancel := context.WithTimeout(ctx, burstTimeout)
	defer cancel()
	if lim != nil {
		// Room first: with reservations, a task waiting for room would
		// count the wait as the manager's.
		if err := p.waitRoom(ctx, n, *lim); err != nil {
			return burstResult{}, err
		}
	}
	burst := randomHex(6)
	cs := container.Spec{Image: p.ref, Name: "featbench-placement", Labels: p.labels(burst)}
	if lim != nil {
		cs.Limits = *lim
	}
	tasks := make([]*seen, n)
	specs := make([]swarm.ServiceSpec, n)
	for i := range n {
		spec := p.x.serviceSpec(cs, p.ref)
		spec.TaskTemplate.ContainerSpec.Command = []string{"sleep", "60"}
		// The task's own copy of the labels says which it is, before its
		// service's ID is known.
		spec.TaskTemplate.ContainerSpec.Labels = maps.Clone(cs.Labels)
		spec.TaskTemplate.ContainerSpec.Labels[labelIndex] = strconv.Itoa(i)
		if lim == nil {
			spec.TaskTemplate.Resources = nil
		} else {
			// A CPU limit as small as the reservation would slow the
			// container's start (the node's part), not the placement.
			spec.TaskTemplate.Resources.Limits.NanoCPUs = cpuLimit
		}
		specs[i], tasks[i] = spec, &seen{svcName: spec.Name}
	}
	// The poller runs from before the first create, so that an early task
	// is not seen only past its assignment.
	pctx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	type polled struct {
		times []time.Time
		err   error
	}
	done := make(chan polled, 1)
	go func() {
		times, err := p.poll(pctx, burst, tasks)
		done <- polled{times, err}
	}()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			tasks[i].start = time.Now()
			id, err := p.create(ctx, specs[i])
			tasks[i].created = time.Now()
			tasks[i].serviceID, errs[i] = id, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		stopPoll()
		<-done
		return burstResult{}, err
	}
	res := <-done
	if res.err != nil {
		return burstResult{}, res.err
	}
	rem, err := p.remove(ctx, tasks)
	if err != nil {
		return burstResult{}, err
	}
	return figures(tasks, res.times, rem), nil
}

// waitRoom waits until the swarm has room for n containers with limits
// lim: other tests' tasks may hold reservations for a while.
func (p *placement) waitRoom(ctx context.Context, n int, lim container.Limits) error {
	for {
		room, _, err := p.x.capacity(ctx, lim)
		if err != nil {
			return err
		}
		if room >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the swarm has room for %d of the %d containers the burst needs (other tasks hold reservations): %w", room, n, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// poll lists the burst's tasks every pollGap until all run, recording
// when each was assigned and ran, and returns the times of the polls.
// Only poll writes tasks' assigned, running, node and containerID.
func (p *placement) poll(ctx context.Context, burst string, tasks []*seen) ([]time.Time, error) {
	f := make(client.Filters).Add("label", labelBurst+"="+burst)
	var polls []time.Time
	for {
		res, err := p.x.cli.TaskList(ctx, client.TaskListOptions{Filters: f})
		now := time.Now()
		if err != nil {
			return polls, fmt.Errorf("listing the burst's tasks: %w", err)
		}
		polls = append(polls, now)
		for _, t := range res.Items {
			var s *seen
			if t.Spec.ContainerSpec != nil {
				if i, err := strconv.Atoi(t.Spec.ContainerSpec.Labels[labelIndex]); err == nil && i >= 0 && i < len(tasks) {
					s = tasks[i]
				}
			}
			if s == nil {
				continue
			}
			st := t.Status
			if !live(st.State) {
				return polls, fmt.Errorf("service %s: its task %s on node %s: %s %s", s.svcName, st.State, t.NodeID, st.Message, st.Err)
			}
			if s.task.IsZero() {
				s.task = t.Meta.CreatedAt
			}
			if t.NodeID != "" && s.assigned.IsZero() {
				s.node = t.NodeID
				if st.State == swarm.TaskStateAssigned {
					s.assigned, s.exact = st.Timestamp, true
				} else {
					// Past "assigned" already: it happened before this
					// poll and before the state it is in now began.
					s.assigned = now
					if !st.Timestamp.IsZero() && st.Timestamp.Before(now) {
						s.assigned = st.Timestamp
					}
				}
			}
			if st.State == swarm.TaskStateRunning && s.running.IsZero() {
				s.running = st.Timestamp
				if st.ContainerStatus != nil {
					s.containerID = st.ContainerStatus.ContainerID
				}
			}
		}
		running := 0
		for _, s := range tasks {
			if !s.running.IsZero() {
				running++
			}
		}
		if running == len(tasks) {
			return polls, nil
		}
		select {
		case <-ctx.Done():
			return polls, fmt.Errorf("%d of %d tasks running: %w", running, len(tasks), ctx.Err())
		case <-time.After(pollGap):
		}
	}
}

// remove removes the burst's containers on their nodes, then its
// services, all at once, and returns how long the services' removal
// took: the manager's part, as the executor's Remove does it (container
// first, then service).
func (p *placement) remove(ctx context.Context, tasks []*seen) (time.Duration, error) {
	ctx = context.WithoutCancel(ctx)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	errs := make([]error, len(tasks))
	var wg sync.WaitGroup
	for i, s := range tasks {
		wg.Go(func() {
			eng, err := p.x.engine(ctx, s.node)
			if err == nil {
				err = eng.ForceRemove(ctx, s.containerID)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	start := time.Now()
	for i, s := range tasks {
		wg.Go(func() {
			_, err := p.x.cli.ServiceRemove(ctx, s.serviceID, client.ServiceRemoveOptions{})
			if err != nil && !cerrdefs.IsNotFound(err) {
				errs[i] = fmt.Errorf("remove service %s: %w", s.svcName, err)
				return
			}
			p.mu.Lock()
			delete(p.made, s.serviceID)
			p.mu.Unlock()
		})
	}
	wg.Wait()
	return time.Since(start), errors.Join(errs...)
}

// figures reduces a burst's observations.
func figures(tasks []*seen, polls []time.Time, rem time.Duration) burstResult {
	r := burstResult{n: len(tasks), rem: rem.Seconds() / float64(len(tasks)), nodes: map[string]int{}}
	first, last := tasks[0].start, tasks[0].assigned
	var task, assign, node, create []float64
	exact := 0
	for _, s := range tasks {
		if s.start.Before(first) {
			first = s.start
		}
		if s.assigned.After(last) {
			last = s.assigned
		}
		task = append(task, s.task.Sub(s.start).Seconds())
		assign = append(assign, s.assigned.Sub(s.start).Seconds())
		node = append(node, s.running.Sub(s.assigned).Seconds())
		create = append(create, s.created.Sub(s.start).Seconds())
		if s.exact {
			exact++
		}
		r.nodes[shortID(s.node)]++
	}
	r.mgrPerSvc = last.Sub(first).Seconds() / float64(len(tasks))
	r.task, r.assign, r.node, r.create = median(task), median(assign), median(node), median(create)
	r.load1 = loadAverage1()
	r.exact = 100 * float64(exact) / float64(len(tasks))
	var gaps []float64
	for i := 1; i < len(polls); i++ {
		gaps = append(gaps, float64(polls[i].Sub(polls[i-1]).Microseconds())/1000)
	}
	r.pollMS = median(gaps)
	return r
}

// report gives the medians of the bursts' figures as the benchmark's
// metrics.
func report(b *testing.B, rs []burstResult) {
	pick := func(f func(burstResult) float64) float64 {
		var xs []float64
		for _, r := range rs {
			xs = append(xs, f(r))
		}
		return median(xs)
	}
	b.ReportMetric(0, "ns/op") // a burst's wall time says nothing by itself
	b.ReportMetric(pick(func(r burstResult) float64 { return r.mgrPerSvc }), "mgr-s/svc")
	b.ReportMetric(pick(func(r burstResult) float64 { return r.task }), "task-s")
	b.ReportMetric(pick(func(r burstResult) float64 { return r.assign }), "assign-s")
	b.ReportMetric(pick(func(r burstResult) float64 { return r.node }), "node-s")
	b.ReportMetric(pick(func(r burstResult) float64 { return r.create }), "create-s")
	b.ReportMetric(pick(func(r burstResult) float64 { return r.rem }), "remove-s/svc")
	b.ReportMetric(pick(func(r burstResult) float64 { return r.exact }), "exact-%")
	b.ReportMetric(pick(func(r burstResult) float64 { return r.pollMS }), "poll-ms")
	b.ReportMetric(pick(func(r burstResult) float64 { return r.load1 }), "load1")
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func shortID(id string) string {
	if len(id) > 6 {
		return id[:6]
	}
	return id
}

// loadAverage1 is the load average over the last minute, 0 when
// unknown: the machine is shared, and the figures mean little without it.
func loadAverage1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var one float64
	if _, err := fmt.Sscan(string(b), &one); err != nil {
		return 0
	}
	return one
}
