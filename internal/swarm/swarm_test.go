package swarm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	swarmtypes "github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/swarm"
	"github.com/featbench/featbench/internal/testenv"
)

// These tests run on a real swarm (testenv.Swarm: the three nodes of
// scripts/provision-swarm.sh, each its own engine in its own network
// namespace, and Debian's registry), with the images built on the test's
// Docker engine (testenv.DockerHost) and pushed from it.

// connect connects an executor to the test's swarm, pushing from eng,
// once the swarm is settled (every node ready, no task holding resources):
// a node that just came back may still carry the tasks it ran before it
// stopped in the manager's books, and the manager then shuts down newer
// tasks on it ("assigned node no longer meets constraints"), which the
// executor retries but a test comparing reports would see.
func connect(t *testing.T, eng *container.Engine) *swarm.Executor {
	t.Helper()
	settled(t, manager(t))
	manager, registry, push := testenv.Swarm(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	x, err := swarm.Connect(ctx, swarm.Config{Manager: manager, Registry: registry, PushRegistry: push, Local: eng, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// manager is a client of the swarm's manager, to look at what the
// executor did.
func manager(t *testing.T) *client.Client {
	t.Helper()
	host, _, _ := testenv.Swarm(t)
	cli, err := client.New(client.WithHost(host))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// services lists the swarm's services with the label.
func services(t *testing.T, cli *client.Client, label string) []string {
	t.Helper()
	res, err := cli.ServiceList(context.Background(), client.ServiceListOptions{Filters: make(client.Filters).Add("label", label)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range res.Items {
		names = append(names, s.Spec.Name)
	}
	return names
}

// TestStartLikeLocal: a container started on the swarm has what a local
// one has (the limits, no network, the capabilities, the tmpfs folders,
// the labels, an init process), runs commands and copies files as a
// local one does, and is gone, service and all, once removed.
func TestStartLikeLocal(t *testing.T) {
	eng, base := imagestest.Base(t)
	x := connect(t, eng)
	cli := manager(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := "test-" + fmt.Sprint(time.Now().UnixNano())
	lim := container.Limits{Memory: 512 << 20, NanoCPUs: 5e8, Pids: 128, Tmp: 64 << 20}
	c, err := x.Start(ctx, container.Spec{
		Image: base, Name: "featbench-test", Labels: map[string]string{"featbench.test": run}, WorkDir: "/tmp", Env: []string{"FB_TEST=yes"}, Limits: lim,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Remove()
	if got := services(t, cli, "featbench.test="+run); len(got) != 1 {
		t.Fatalf("services labelled %s: %v, want one", run, got)
	}
	ins, err := c.Inspect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hc := ins.HostConfig
	if hc.Memory != lim.Memory || hc.NanoCPUs != lim.NanoCPUs || hc.PidsLimit == nil || *hc.PidsLimit != lim.Pids {
		t.Errorf("limits: memory %d, CPUs %d, pids %v; want %+v", hc.Memory, hc.NanoCPUs, hc.PidsLimit, lim)
	}
	if hc.Init == nil || !*hc.Init {
		t.Errorf("no init process")
	}
	if ins.Config.Labels["featbench.test"] != run {
		t.Errorf("labels %v lack featbench.test=%s", ins.Config.Labels, run)
	}
	capDrop := strings.Join(hc.CapDrop, ",")
	if !strings.Contains(strings.ToUpper(capDrop), "ALL") || len(hc.CapAdd) != len(container.KeptCapabilities()) {
		t.Errorf("capabilities: drop %v, add %v; want ALL dropped and %v kept", hc.CapDrop, hc.CapAdd, container.KeptCapabilities())
	}

	res, err := c.Exec(ctx, []string{"sh", "-c", "cat /proc/net/dev; echo; id -u; pwd; echo $FB_TEST; df -k /tmp | tail -1; cat /proc/1/cmdline | tr '\\0' ' '"}, container.ExecOptions{Timeout: time.Minute})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %v, exit %d: %s", err, res.ExitCode, res.Stderr)
	}
	out := string(res.Stdout)
	t.Logf("in the container:\n%s", out)
	for _, want := range []string{"lo:", "\n0\n/tmp\nyes\n", " 65536 ", "init"} {
		if !strings.Contains(out, want) {
			t.Errorf("the container's output lacks %q", want)
		}
	}
	for _, iface := range []string{"eth0", "eth1"} {
		if strings.Contains(out, iface+":") {
			t.Errorf("the container has a network interface %s", iface)
		}
	}
	if err := c.CopyIn(ctx, "/fb/in", []container.File{{Path: "a/b.txt", Data: []byte("hello")}}); err != nil {
		t.Fatal(err)
	}
	files, err := c.CopyOut(ctx, "/fb/in", 0)
	if err != nil || len(files) != 1 || files[0].Path != "a/b.txt" || !bytes.Equal(files[0].Data, []byte("hello")) {
		t.Fatalf("copy out: %v, %+v", err, files)
	}
	// A failing command is the command's, not a lost container.
	res, err = c.Exec(ctx, []string{"false"}, container.ExecOptions{})
	if err != nil || res.ExitCode != 1 {
		t.Errorf("false: exit %d, %v; want exit 1 and no error", res.ExitCode, err)
	}
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	if got := services(t, cli, "featbench.test="+run); len(got) != 0 {
		t.Errorf("services left after Remove: %v", got)
	}
	if _, err := c.Inspect(ctx); err == nil {
		t.Errorf("the container is still on its node after Remove")
	}
}

// TestImagePushedOnce: an image goes to the registry once, under a tag
// made of its ID; another executor (another run) finds it there and
// TestRemovedServiceLeavesNoTask: once a container is removed, its
// service's task is gone from the manager's store. Docker 20.10 keeps a
// removed replicated job's tasks, and its constraint enforcer counts their
// reservations against their nodes at every node update, rejecting live
// tasks: the executor makes one-replica services, whose tasks go with them.
func TestRemovedServiceLeavesNoTask(t *testing.T) {
	eng, base := imagestest.Base(t)
	x := connect(t, eng)
	cli := manager(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := "test-" + fmt.Sprint(time.Now().UnixNano())
	c, err := x.Start(ctx, container.Spec{
		Image: base, Name: "featbench-test", Labels: map[string]string{"featbench.test": run},
		Limits: container.Limits{Memory: 256 << 20, NanoCPUs: 5e8, Pids: 64},
	})
	if err != nil {
		t.Fatal(err)
	}
	ins, err := c.Inspect(ctx)
	if err != nil {
		c.Remove()
		t.Fatal(err)
	}
	service := ins.Config.Labels["com.docker.swarm.service.id"]
	if service == "" {
		c.Remove()
		t.Fatalf("the container's labels name no service: %v", ins.Config.Labels)
	}
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	var left []string
	for deadline := time.Now().Add(30 * time.Second); ; {
		res, err := cli.TaskList(ctx, client.TaskListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		left = left[:0]
		for _, task := range res.Items {
			if task.ServiceID == service {
				left = append(left, task.ID+" "+string(task.Status.State)+", desired "+string(task.DesiredState))
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("30 s after its container and service were removed, the store still holds the service's tasks: %v", left)
	}
}

// pushes nothing.
func TestImagePushedOnce(t *testing.T) {
	eng, base := imagestest.Base(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	id, err := eng.ImageID(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	// A fresh name for the same content, so that this test pushes it
	// whatever ran before: the tag is content's, the path the name's.
	local := "featbench-swarmtest/pushonce-" + fmt.Sprint(time.Now().UnixNano()) + ":t"
	if err := eng.Tag(ctx, base, local); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.RemoveImage(context.Background(), local) })
	ref, err := swarm.RegistryRef("r:1", local, id)
	if err != nil || !strings.HasSuffix(ref, ":"+strings.ReplaceAll(id, ":", "-")) {
		t.Fatalf("RegistryRef = %s, %v; want a tag made of %s", ref, err, id)
	}
	x := connect(t, eng)
	for i := range 3 {
		c, err := x.Start(ctx, container.Spec{Image: local, Name: "featbench-test", Labels: map[string]string{"featbench.test": "push"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Remove(); err != nil {
			t.Fatal(err)
		}
		if x.Pushes() != 1 {
			t.Fatalf("after %d starts: %d pushes, want 1", i+1, x.Pushes())
		}
	}
	y := connect(t, eng)
	c, err := y.Start(ctx, container.Spec{Image: local, Name: "featbench-test", Labels: map[string]string{"featbench.test": "push"}})
	if err != nil {
		t.Fatal(err)
	}
	c.Remove()
	if y.Pushes() != 0 {
		t.Errorf("a second executor pushed %d images the registry had", y.Pushes())
	}
}

// TestAdmitBoundsByFreeResources: admission gives as many containers as
// the nodes' free CPUs allow, and no more until one is released.
func TestAdmitBoundsByFreeResources(t *testing.T) {
	eng := imagestest.Engine(t)
	x := connect(t, eng)
	cli := manager(t)
	settled(t, cli)
	nodes, err := cli.NodeList(context.Background(), client.NodeListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for _, n := range nodes.Items {
		if n.Status.State == "ready" && n.Spec.Availability == "active" {
			want += n.Description.Resources.NanoCPUs / 1e9
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lim := container.Limits{NanoCPUs: 1e9, Memory: 64 << 20}
	var releases []func()
	for range want {
		r, err := x.Admit(ctx, lim)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	t.Logf("%d admitted: %s", want, x.Status())
	short, cancelShort := context.WithTimeout(ctx, 2500*time.Millisecond)
	_, err = x.Admit(short, lim)
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("admitted beyond %d CPUs: %v", want, err)
	}
	releases[0]()
	if r, err := x.Admit(ctx, lim); err != nil {
		t.Fatalf("no room after a release: %v", err)
	} else {
		r()
	}
	// A container no node could hold is an error, not a wait.
	y := connect(t, eng)
	if _, err := y.Admit(ctx, container.Limits{NanoCPUs: 1000e9, Memory: 1 << 20}); err == nil || !strings.Contains(err.Error(), "no node") {
		t.Errorf("admitting 1000 CPUs: %v, want an error saying no node has them", err)
	}
}

// stopNode stops node n of scripts/provision-swarm.sh's swarm. When the
// test ends, the node is started again and the test waits for every node
// to be ready, so that a later test (or run) does not find one down,
// whether this test passed or not.
func stopNode(t *testing.T, n int) {
	t.Helper()
	t.Cleanup(func() {
		out, err := exec.Command("bash", "../../scripts/provision-swarm.sh").CombinedOutput()
		if err != nil {
			t.Errorf("starting the swarm again: %v\n%s", err, out)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := waitReady(ctx, manager(t)); err != nil {
			t.Errorf("after node %d was started again: %v", n, err)
		}
	})
	out, err := exec.Command("bash", "../../scripts/provision-swarm.sh", "--stop-node", fmt.Sprint(n)).CombinedOutput()
	if err != nil {
		t.Fatalf("stopping node %d: %v\n%s", n, err, out)
	}
}

// waitReady waits until every node of the swarm is ready and active.
func waitReady(ctx context.Context, cli *client.Client) error {
	for {
		res, err := cli.NodeList(ctx, client.NodeListOptions{})
		var notReady []string
		if err == nil {
			for _, n := range res.Items {
				if n.Status.State != "ready" || n.Spec.Availability != "active" {
					notReady = append(notReady, fmt.Sprintf("%s (%s) %s/%s", n.ID, n.Spec.Labels["featbench.engine"], n.Status.State, n.Spec.Availability))
				}
			}
			if len(notReady) == 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the swarm's nodes to be ready: %w (listing: %v; not ready: %v)", ctx.Err(), err, notReady)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// settled waits until every node is ready and no task holds resources,
// removing the services that tests of this package left (a failed test's,
// labelled featbench.test or the run swarm-test): a test that counts the
// swarm's free resources starts from an idle swarm.
func settled(t *testing.T, cli *client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := waitReady(ctx, cli); err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"featbench.test", evaluate.LabelRun + "=swarm-test"} {
		res, err := cli.ServiceList(ctx, client.ServiceListOptions{Filters: make(client.Filters).Add("label", label)})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range res.Items {
			t.Logf("removing service %s, left by an earlier test", s.Spec.Name)
			if _, err := cli.ServiceRemove(ctx, s.ID, client.ServiceRemoveOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for {
		tasks, alive := liveTasks(ctx, t, cli)
		var busy []string
		for _, task := range tasks {
			if r := task.Spec.Resources; r != nil && r.Reservations != nil && (r.Reservations.NanoCPUs > 0 || r.Reservations.MemoryBytes > 0) {
				busy = append(busy, task.ID+" "+string(task.Status.State))
				if !alive[task.ServiceID] {
					removeOrphan(ctx, t, cli, task)
				}
			}
		}
		if len(busy) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("tasks still hold resources: %v", busy)
		case <-time.After(time.Second):
		}
	}
}

// liveTasks are the swarm's live tasks (on their way to run, or running),
// and the services that exist: a live task whose service does not is an
// orphan. The tasks are listed first, so that a task of a service made
// between the two lists is not taken for one.
func liveTasks(ctx context.Context, t *testing.T, cli *client.Client) (tasks []swarmtypes.Task, alive map[string]bool) {
	t.Helper()
	res, err := cli.TaskList(ctx, client.TaskListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := cli.ServiceList(ctx, client.ServiceListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	alive = map[string]bool{}
	for _, s := range svcs.Items {
		alive[s.ID] = true
	}
	for _, task := range res.Items {
		switch task.Status.State {
		case "new", "allocated", "pending", "assigned", "accepted", "preparing", "ready", "starting", "running":
			tasks = append(tasks, task)
		}
	}
	return tasks, alive
}

// removeOrphan force-removes, on its node, the container of a task whose
// service is gone: Docker 20.10 leaves a running job task behind when its
// service is removed, holding its reservation.
func removeOrphan(ctx context.Context, t *testing.T, cli *client.Client, task swarmtypes.Task) {
	t.Helper()
	if task.Status.ContainerStatus == nil || task.Status.ContainerStatus.ContainerID == "" {
		return
	}
	n, err := cli.NodeInspect(ctx, task.NodeID, client.NodeInspectOptions{})
	if err != nil {
		return
	}
	node, err := client.New(client.WithHost(n.Node.Spec.Labels["featbench.engine"]))
	if err != nil {
		return
	}
	defer node.Close()
	t.Logf("removing the container of task %s, whose service is gone", task.ID)
	node.ContainerRemove(ctx, task.Status.ContainerStatus.ContainerID, client.ContainerRemoveOptions{Force: true})
}
