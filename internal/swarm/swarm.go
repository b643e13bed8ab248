// Package swarm runs the harness's containers on a Docker Swarm: the
// executor behind `[eval] backend = "swarm"` (docs/executors.md).
//
// The flows (internal/evaluate, collection's verification, eval infer)
// start a container, run commands in it, copy files in and out, and
// remove it. Swarm cannot exec into a task through the manager, so Start
// creates a service of one replica, never restarted, whose task runs the keep-alive
// command a local container runs, with the same limits (as both limits
// and reservations, so that the scheduler places it where it fits), waits
// for the task to run, and adopts the task's container on its node's
// engine (internal/container's Adopt): commands and copies then go to
// that engine, exactly as for a local container. Remove removes the
// container and the service.
//
// Each node's engine address is the node label featbench.engine
// (scripts/provision-swarm.sh sets it). Images are built on the local
// engine and pushed to the registry under content-addressed tags (the
// image ID), once. A node found gone is not given another task by this
// executor; the run retries the attempt that was on it (internal/evaluate).
package swarm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/featbench/featbench/internal/container"
)

// EngineLabel is the node label holding the address of the node's engine,
// in the form of DOCKER_HOST.
const EngineLabel = "featbench.engine"

// Config is a swarm to run containers on.
type Config struct {
	// Manager is a manager node's engine, in the form of DOCKER_HOST.
	Manager string
	// Registry is the registry's host:port as the nodes reach it.
	Registry string
	// PushRegistry is the same registry as Local reaches it; Registry
	// when empty.
	PushRegistry string
	// Local is the engine the images are built on and pushed from.
	Local *container.Engine
	// Log, when not nil, hears of pushes and of nodes found lost.
	Log io.Writer
}

// Executor starts containers as swarm services. It is safe for concurrent
// use.
type Executor struct {
	cfg  Config
	cli  *client.Client
	http *http.Client

	mu      sync.Mutex
	engines map[string]*container.Engine // by node ID
	images  map[string]*pushed           // by local reference
	lost    map[string]string            // node ID -> why
	// nodeInfo is each node's host name and engine, for nodeName.
	nodeInfo map[string]string
	ours     map[string]bool // IDs of the services this executor made and has not removed
	pushes   int
	// offset is the manager's clock ahead of this machine's, measured at
	// offsetAt (lease.go).
	offset   time.Duration
	offsetAt time.Time
	// sweeping: admission's removal of dead runs' services is under
	// way (sweepSoon); sweeps counts them, for Close.
	sweeping bool
	sweeps   sync.WaitGroup

	adm admission
}

// pushed is an image's push to the registry, done once.
type pushed struct {
	mu  sync.Mutex
	ref string // the name the nodes pull it by, once pushed
}

// pingTimeout bounds the check that the manager answers.
const pingTimeout = 15 * time.Second

// Connect connects to the swarm's manager and checks that it manages a
// swarm.
func Connect(ctx context.Context, cfg Config) (*Executor, error) {
	if cfg.Local == nil {
		return nil, errors.New("swarm: no local engine to push images from")
	}
	if cfg.Registry == "" {
		return nil, errors.New("swarm: no registry")
	}
	if cfg.PushRegistry == "" {
		cfg.PushRegistry = cfg.Registry
	}
	cli, err := client.New(client.WithHost(cfg.Manager))
	if err != nil {
		return nil, fmt.Errorf("swarm manager %s: %w", cfg.Manager, err)
	}
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if _, err := cli.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		cli.Close()
		return nil, fmt.Errorf("cannot reach the swarm manager at %s (scripts/provision-swarm.sh starts a swarm): %w", cfg.Manager, err)
	}
	x := &Executor{
		cfg: cfg, cli: cli, http: &http.Client{Timeout: time.Minute},
		engines: map[string]*container.Engine{}, images: map[string]*pushed{}, lost: map[string]string{}, ours: map[string]bool{}, nodeInfo: map[string]string{},
	}
	x.adm.x = x
	if _, err := x.nodes(ctx); err != nil {
		x.Close()
		return nil, err
	}
	return x, nil
}

// Close releases the connections to the manager and the nodes. Services
// are left as they are.
func (x *Executor) Close() error {
	x.sweeps.Wait()
	x.mu.Lock()
	defer x.mu.Unlock()
	var errs []error
	for _, e := range x.engines {
		errs = append(errs, e.Close())
	}
	x.engines = map[string]*container.Engine{}
	errs = append(errs, x.cli.Close())
	return errors.Join(errs...)
}

// Manager is the manager's address.
func (x *Executor) Manager() string { return x.cfg.Manager }

// Pushes is how many images this executor pushed to the registry.
func (x *Executor) Pushes() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.pushes
}

func (x *Executor) logf(format string, args ...any) {
	if x.cfg.Log != nil {
		fmt.Fprintf(x.cfg.Log, "swarm: "+format+"\n", args...)
	}
}

// node is a node the executor may place tasks on.
type node struct {
	ID, Engine string
	NanoCPUs   int64
	Memory     int64
}

// nodes lists the nodes that are ready, active and not found lost, with
// their resources. A swarm without one is an error.
func (x *Executor) nodes(ctx context.Context) ([]node, error) {
	res, err := x.cli.NodeList(ctx, client.NodeListOptions{})
	if err != nil {
		if strings.Contains(err.Error(), "not a swarm manager") || strings.Contains(err.Error(), "swarm mode") {
			return nil, fmt.Errorf("the engine at %s is not a swarm manager: %w", x.cfg.Manager, err)
		}
		return nil, fmt.Errorf("listing the swarm's nodes: %w", err)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []node
	for _, n := range res.Items {
		if n.Status.State != swarm.NodeStateReady || n.Spec.Availability != swarm.NodeAvailabilityActive || x.lost[n.ID] != "" {
			continue
		}
		out = append(out, node{
			ID: n.ID, Engine: n.Spec.Labels[EngineLabel],
			NanoCPUs: n.Description.Resources.NanoCPUs, Memory: n.Description.Resources.MemoryBytes,
		})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the swarm at %s has no ready node", x.cfg.Manager)
	}
	return out, nil
}

// markLost records that a node is gone: no task of this executor goes
// there again.
func (x *Executor) markLost(nodeID string, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.lost[nodeID] == "" {
		x.lost[nodeID] = err.Error()
		x.logf("node %s lost: %v", nodeID, err)
	}
}

// Lost lists the nodes found lost, by ID, with why.
func (x *Executor) Lost() map[string]string {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := map[string]string{}
	for k, v := range x.lost {
		out[k] = v
	}
	return out
}

// engine is the connection to a node's engine, made once.
func (x *Executor) engine(ctx context.Context, nodeID string) (*container.Engine, error) {
	x.mu.Lock()
	e := x.engines[nodeID]
	x.mu.Unlock()
	if e != nil {
		return e, nil
	}
	res, err := x.cli.NodeInspect(ctx, nodeID, client.NodeInspectOptions{})
	if err != nil {
		return nil, fmt.Errorf("inspect node %s: %w", nodeID, err)
	}
	host := res.Node.Spec.Labels[EngineLabel]
	x.mu.Lock()
	x.nodeInfo[nodeID] = res.Node.Description.Hostname + ", " + host
	x.mu.Unlock()
	if host == "" {
		return nil, fmt.Errorf("node %s (%s) has no %s label naming its engine: docker node update --label-add %s=ADDRESS %s",
			nodeID, res.Node.Description.Hostname, EngineLabel, EngineLabel, nodeID)
	}
	e, err = container.Connect(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", nodeID, err)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if old := x.engines[nodeID]; old != nil {
		e.Close()
		return old, nil
	}
	x.engines[nodeID] = e
	return e, nil
}

// errNotSwarm is returned for specs the swarm cannot run as the local
// engine would.
var errNotSwarm = errors.New("not possible on a swarm")

// Start starts a container for spec as a service of one replica, never
// restarted, and returns it once it runs, adopted on its node's engine. It
// waits, as long as ctx allows, while no node has room for it. If Start
// fails after the service was made, the service is removed.
func (x *Executor) Start(ctx context.Context, spec container.Spec) (*container.Container, error) {
	switch {
	case spec.Image == "":
		return nil, errors.New("start container: no image")
	case spec.Network:
		return nil, fmt.Errorf("start container from %s: a network is %w (the nodes run without one)", spec.Image, errNotSwarm)
	}
	ref, err := x.push(ctx, spec.Image)
	if err != nil {
		return nil, err
	}
	svc := x.serviceSpec(spec, ref)
	created, err := x.cli.ServiceCreate(ctx, client.ServiceCreateOptions{Spec: svc})
	if err != nil {
		return nil, fmt.Errorf("create service from %s: %w", ref, err)
	}
	x.mu.Lock()
	x.ours[created.ID] = true
	x.mu.Unlock()
	remove := func() error { return x.removeService(created.ID, svc.Name) }
	// Before its container is adopted, a failed Start removes the task's
	// container too, not only the service: while the executor made
	// replicated jobs, removing the service alone left a running task
	// behind on Docker 20.10, holding its reservation; removing the
	// container first does not depend on how the swarm removes a task.
	discard := func() error { return x.discard(created.ID, svc.Name) }
	task, err := x.waitRunning(ctx, created.ID, svc.Name)
	if err != nil {
		return nil, errors.Join(err, discard())
	}
	eng, err := x.engine(ctx, task.NodeID)
	if err != nil {
		err = fmt.Errorf("node %s was lost (its engine cannot be reached): %w: service %s: %w", x.nodeName(task.NodeID), container.ErrLost, svc.Name, err)
		x.markLost(task.NodeID, err)
		return nil, errors.Join(err, discard())
	}
	c, err := eng.Adopt(ctx, task.Status.ContainerStatus.ContainerID, container.AdoptOptions{
		AfterRemove: remove,
		OnLost:      func(err error) error { return x.lostOn(task.NodeID, err) },
	})
	if err != nil {
		if errors.Is(err, container.ErrLost) {
			err = x.lostOn(task.NodeID, err)
		}
		return nil, errors.Join(fmt.Errorf("service %s: %w", svc.Name, err), discard())
	}
	return c, nil
}

// nodeSettle is how long a node whose container went away is watched
// for going away itself, and nodeSettlePoll how often: an engine that
// shuts down stops its containers, and may answer a moment longer, and
// the manager sees a node down only after missed heartbeats. Variables
// for the tests.
var (
	nodeSettle     = 15 * time.Second
	nodeSettlePoll = 500 * time.Millisecond
)

// lostOn hears that a container on the node was lost (err) and returns
// the error saying where. The node is watched for up to nodeSettle: if
// it is gone too (nodeGone), it is marked lost, so that no task of this
// executor goes there again (the attempt's retry included), and the
// error says that node was lost; a container that alone went away, on a
// node that still works, leaves the node in use.
func (x *Executor) lostOn(nodeID string, err error) error {
	deadline := time.Now().Add(nodeSettle)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), nodeCheckTimeout)
		why := x.nodeGone(ctx, nodeID)
		cancel()
		if why != "" {
			err = fmt.Errorf("node %s was lost (%s): %w", x.nodeName(nodeID), why, err)
			x.markLost(nodeID, err)
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("on node %s, which still works: %w", x.nodeName(nodeID), err)
		}
		time.Sleep(nodeSettlePoll)
	}
}

// nodeName names a node for people: its ID's start, its host name and
// its engine's address, as far as they are known.
func (x *Executor) nodeName(id string) string {
	short := id
	if len(short) > 12 {
		short = short[:12]
	}
	x.mu.Lock()
	info := x.nodeInfo[id]
	x.mu.Unlock()
	if info == "" {
		ctx, cancel := context.WithTimeout(context.Background(), nodeCheckTimeout)
		defer cancel()
		if res, err := x.cli.NodeInspect(ctx, id, client.NodeInspectOptions{}); err == nil {
			info = res.Node.Description.Hostname
			if e := res.Node.Spec.Labels[EngineLabel]; e != "" {
				info += ", " + e
			}
			x.mu.Lock()
			x.nodeInfo[id] = info
			x.mu.Unlock()
		}
	}
	if info == "" {
		return short
	}
	return short + " (" + info + ")"
}

// serviceSpec is the service that runs spec's container from the
// registry's image ref: what Start (internal/container) gives a local
// container, as a swarm service says it.
func (x *Executor) serviceSpec(spec container.Spec, ref string) swarm.ServiceSpec {
	one := uint64(1)
	yes := true
	lim := spec.Limits
	var mounts []mount.Mount
	for _, m := range container.TmpMounts(lim) {
		mounts = append(mounts, mount.Mount{Type: mount.TypeTmpfs, Target: m.Path, TmpfsOptions: &mount.TmpfsOptions{SizeBytes: m.Size, Mode: 0o1777}})
	}
	x.mu.Lock()
	var constraints []string
	for id := range x.lost {
		constraints = append(constraints, "node.id!="+id)
	}
	x.mu.Unlock()
	name := serviceName(spec.Name)
	return swarm.ServiceSpec{
		Annotations: swarm.Annotations{Name: name, Labels: spec.Labels},
		// One replica, not a replicated job: Docker 20.10 keeps a removed
		// job's tasks in the manager's store, and its constraint enforcer
		// counts their reservations against their nodes at every node
		// update, rejecting live tasks (docs/performance.md). A removed
		// service's tasks go with it; RestartPolicy none below keeps the
		// swarm from replacing the one task when it ends.
		Mode: swarm.ServiceMode{Replicated: &swarm.ReplicatedService{Replicas: &one}},
		TaskTemplate: swarm.TaskSpec{
			ContainerSpec: &swarm.ContainerSpec{
				Image: ref, Labels: spec.Labels, Command: []string{"sleep", "infinity"}, User: "0:0", Dir: spec.WorkDir, Env: spec.Env,
				Init: &yes, CapabilityDrop: []string{"ALL"}, CapabilityAdd: container.KeptCapabilities(), Mounts: mounts,
				// Engines before API 1.46 ignore this; docs/executors.md.
				Privileges: &swarm.Privileges{NoNewPrivileges: true},
			},
			Resources: &swarm.ResourceRequirements{
				Limits:       &swarm.Limit{NanoCPUs: lim.NanoCPUs, MemoryBytes: lim.Memory, Pids: lim.Pids},
				Reservations: &swarm.Resources{NanoCPUs: lim.NanoCPUs, MemoryBytes: lim.Memory},
			},
			// The task is the harness's: if it ends, the attempt failed,
			// and the run, not the swarm, decides what to do again.
			RestartPolicy: &swarm.RestartPolicy{Condition: swarm.RestartPolicyConditionNone},
			Placement:     &swarm.Placement{Constraints: constraints},
		},
	}
}

// serviceName makes a unique service name from prefix: letters, digits
// and '-', at most 63 characters.
func serviceName(prefix string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(prefix) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 45 {
		name = name[:45]
	}
	if name == "" {
		name = "featbench"
	}
	return name + "-" + randomHex(6)
}

// waitRunning waits for the service's task to run and returns it. A task
// that ended (rejected, failed: an image that cannot be pulled, a limit
// the node cannot apply) is an error with the swarm's message, and
// ErrLost when its node is gone (nodeGone) or the manager took it back:
// a node stopped while it was given or prepared the task leaves it
// "rejected by constraint enforcer" or failed ("context canceled"), often
// before the manager sees the node down. A task waiting on a node that is
// gone is ErrLost too. A gone node is marked lost.
func (x *Executor) waitRunning(ctx context.Context, id, name string) (swarm.Task, error) {
	pause := 50 * time.Millisecond
	for {
		res, err := x.cli.TaskList(ctx, client.TaskListOptions{Filters: make(client.Filters).Add("service", id)})
		if err != nil {
			return swarm.Task{}, fmt.Errorf("service %s: listing its task: %w", name, err)
		}
		// A running task first: should the swarm ever have replaced an
		// ended one, the listing may hold both.
		for _, t := range res.Items {
			if t.Status.State == swarm.TaskStateRunning && t.Status.ContainerStatus != nil && t.Status.ContainerStatus.ContainerID != "" {
				return t, nil
			}
		}
		for _, t := range res.Items {
			if !live(t.Status.State) { // ended: it will never run
				err := fmt.Errorf("service %s: its task %s on node %s: %s %s", name, t.Status.State, x.nodeName(t.NodeID), t.Status.Message, t.Status.Err)
				if t.NodeID == "" {
					return swarm.Task{}, err
				}
				why := x.nodeGone(ctx, t.NodeID)
				gone := why != ""
				switch {
				case gone:
				case t.Status.State == swarm.TaskStateOrphaned:
					why, gone = "the manager lost touch with it", true
				case strings.Contains(t.Status.Err, "constraint enforcer"):
					// The manager took the task back from its node (whose
					// resources or state changed) before it ran: the
					// swarm's doing, not the container's.
					why = "the node no longer met the task's constraints"
				default:
					return swarm.Task{}, err
				}
				if gone {
					err = fmt.Errorf("node %s was lost (%s): %w: %w", x.nodeName(t.NodeID), why, container.ErrLost, err)
				} else {
					err = fmt.Errorf("%w: %w (node %s: %s)", container.ErrLost, err, x.nodeName(t.NodeID), why)
				}
				if gone {
					x.markLost(t.NodeID, err)
				}
				return swarm.Task{}, err
			}
			if t.NodeID != "" && t.Status.State != swarm.TaskStateRunning {
				if why := x.nodeGone(ctx, t.NodeID); why != "" {
					err := fmt.Errorf("node %s was lost (%s): %w: service %s: its task %s there", x.nodeName(t.NodeID), why, container.ErrLost, name, t.Status.State)
					x.markLost(t.NodeID, err)
					return swarm.Task{}, err
				}
			}
		}
		select {
		case <-ctx.Done():
			return swarm.Task{}, fmt.Errorf("service %s: waiting for its task to run: %w", name, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(pause*2, time.Second)
	}
}

// nodeCheckTimeout bounds the check that a node is gone.
const nodeCheckTimeout = 10 * time.Second

// nodeGone says why the node is gone, or "" when it is not: the manager
// reports it down or no longer knows it, or its engine does not answer
// (the manager learns that a node stopped only after missed heartbeats,
// seconds later; its engine stops answering at once). A manager that
// cannot be asked is not taken as a lost node.
func (x *Executor) nodeGone(parent context.Context, id string) string {
	ctx, cancel := context.WithTimeout(parent, nodeCheckTimeout)
	defer cancel()
	res, err := x.cli.NodeInspect(ctx, id, client.NodeInspectOptions{})
	switch {
	case cerrdefs.IsNotFound(err):
		return "the swarm no longer knows"
	case err != nil:
		return ""
	case res.Node.Status.State == swarm.NodeStateDown:
		return "the manager reports down"
	}
	eng, err := x.engine(ctx, id)
	if err == nil {
		err = eng.Ping(ctx)
	}
	if err != nil && parent.Err() == nil {
		// Only the caller's context says the check was merely cut short.
		return fmt.Sprintf("cannot be reached (%v)", err)
	}
	return ""
}

// discard removes a service whose container was not adopted: each of its
// tasks' containers on its node, where the node answers (a lost node's
// went with it), then the service. With a fresh context, bounded.
func (x *Executor) discard(id, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	if res, err := x.cli.TaskList(ctx, client.TaskListOptions{Filters: make(client.Filters).Add("service", id)}); err == nil {
		for _, t := range res.Items {
			if t.NodeID == "" || t.Status.ContainerStatus == nil || t.Status.ContainerStatus.ContainerID == "" {
				continue
			}
			x.mu.Lock()
			lost := x.lost[t.NodeID] != ""
			x.mu.Unlock()
			if lost {
				continue
			}
			if eng, err := x.engine(ctx, t.NodeID); err == nil {
				errs = append(errs, eng.ForceRemove(ctx, t.Status.ContainerStatus.ContainerID))
			}
		}
	}
	return errors.Join(append(errs, x.removeService(id, name))...)
}

// removeService removes a service of this executor, with a fresh
// context: it runs when the caller's may be cancelled.
func (x *Executor) removeService(id, name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := x.cli.ServiceRemove(ctx, id, client.ServiceRemoveOptions{})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove service %s: %w", name, err)
	}
	x.mu.Lock()
	delete(x.ours, id)
	x.mu.Unlock()
	return nil
}

// RemoveContainers removes the services that have every label of
// labelFilter, except those for which keep (if not nil) returns true, and
// the containers of live tasks with those labels whose service is gone
// (removeOrphans), and returns how many it removed: the swarm's side of a
// killed run's leftovers, as (*container.Engine).RemoveContainers is the
// local one's. An empty labelFilter is refused.
func (x *Executor) RemoveContainers(ctx context.Context, labelFilter map[string]string, keep func(labels map[string]string) bool) (int, error) {
	if len(labelFilter) == 0 {
		return 0, errors.New("remove services: no label filter")
	}
	ctx = context.WithoutCancel(ctx)
	f := make(client.Filters)
	for k, v := range labelFilter {
		if v == "" {
			f.Add("label", k)
		} else {
			f.Add("label", k+"="+v)
		}
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	res, err := x.cli.ServiceList(lctx, client.ServiceListOptions{Filters: f})
	cancel()
	if err != nil {
		return 0, fmt.Errorf("remove services: listing them: %w", err)
	}
	n := 0
	var errs []error
	for _, s := range res.Items {
		if keep != nil && keep(s.Spec.Labels) {
			continue
		}
		if err := x.removeService(s.ID, s.Spec.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	orphans, err := x.removeOrphans(ctx, labelFilter)
	return n + orphans, errors.Join(append(errs, err)...)
}

// removeOrphans force-removes, on their nodes, the containers of live
// tasks with every label of labelFilter whose service is gone. Docker
// 20.10 leaves such a task when its service was removed while its node
// was down: the node, back, runs it on and the manager counts its
// reservation. No run owns such a task any more, so none is kept. The
// tasks are listed before the services: a task of a service made
// between the two lists is not taken for an orphan. Nodes that do not
// answer are skipped (the next sweep finds their tasks again).
func (x *Executor) removeOrphans(ctx context.Context, labelFilter map[string]string) (int, error) {
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tasks, err := x.cli.TaskList(lctx, client.TaskListOptions{})
	if err != nil {
		return 0, fmt.Errorf("remove orphaned tasks: listing tasks: %w", err)
	}
	svcs, err := x.cli.ServiceList(lctx, client.ServiceListOptions{})
	if err != nil {
		return 0, fmt.Errorf("remove orphaned tasks: listing services: %w", err)
	}
	alive := map[string]bool{}
	for _, s := range svcs.Items {
		alive[s.ID] = true
	}
	n := 0
	var errs []error
	for _, t := range tasks.Items {
		if alive[t.ServiceID] || !live(t.Status.State) || t.Spec.ContainerSpec == nil || t.NodeID == "" ||
			t.Status.ContainerStatus == nil || t.Status.ContainerStatus.ContainerID == "" ||
			!hasLabels(t.Spec.ContainerSpec.Labels, labelFilter) {
			continue
		}
		eng, err := x.engine(lctx, t.NodeID)
		if err != nil {
			continue
		}
		if err := eng.ForceRemove(lctx, t.Status.ContainerStatus.ContainerID); err != nil {
			errs = append(errs, fmt.Errorf("remove orphaned task %s: %w", t.ID, err))
			continue
		}
		x.logf("removed the container of task %s on node %s, whose service is gone", t.ID, t.NodeID)
		n++
	}
	return n, errors.Join(errs...)
}

// hasLabels says whether labels has every label of filter (a label with
// an empty value: present with any value).
func hasLabels(labels, filter map[string]string) bool {
	for k, v := range filter {
		got, ok := labels[k]
		if !ok || v != "" && got != v {
			return false
		}
	}
	return true
}
