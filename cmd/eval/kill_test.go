package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/lease"
	"github.com/featbench/featbench/internal/llmdouble"
	"github.com/featbench/featbench/internal/testenv"
)

// These tests SIGKILL a run (eval run, eval infer) while its containers
// work, on the local engine and on the swarm, and start another run: the
// new run starts at once, not stalled by the dead run's reservations, and
// once it ends nothing of the dead run is left (its lease is no longer
// renewed: any later run removes its containers and services).

// where finds a run's containers: on the local engine, or the swarm's
// services.
type where interface {
	// running lists the containers with labels that run: a swarm's
	// services whose task runs.
	running(t *testing.T, labels map[string]string) []string
	// present lists the containers with labels, running or not: a
	// swarm's services, and live tasks whose service is gone.
	present(t *testing.T, labels map[string]string) []string
}

type onLocal struct{ eng *container.Engine }

func (w onLocal) list(t *testing.T, labels map[string]string, running bool) []string {
	t.Helper()
	list, err := w.eng.Containers(context.Background(), labels)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range list {
		if !running || c.State == "running" {
			out = append(out, c.Name+" (lease "+c.Labels[lease.Label]+")")
		}
	}
	return out
}

func (w onLocal) running(t *testing.T, labels map[string]string) []string { return w.list(t, labels, true) }
func (w onLocal) present(t *testing.T, labels map[string]string) []string { return w.list(t, labels, false) }

type onSwarm struct{ cli *client.Client }

func has(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func (w onSwarm) tasks(t *testing.T, labels map[string]string) ([]swarm.Task, map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := w.cli.TaskList(ctx, client.TaskListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := w.cli.ServiceList(ctx, client.ServiceListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, s := range svcs.Items {
		if has(s.Spec.Labels, labels) {
			names[s.ID] = s.Spec.Name
		}
	}
	var out []swarm.Task
	for _, task := range res.Items {
		if task.Spec.ContainerSpec != nil && has(task.Spec.ContainerSpec.Labels, labels) {
			out = append(out, task)
		}
	}
	return out, names
}

func (w onSwarm) running(t *testing.T, labels map[string]string) []string {
	tasks, names := w.tasks(t, labels)
	var out []string
	for _, task := range tasks {
		if task.Status.State == swarm.TaskStateRunning && names[task.ServiceID] != "" {
			out = append(out, names[task.ServiceID])
		}
	}
	return out
}

func (w onSwarm) present(t *testing.T, labels map[string]string) []string {
	tasks, names := w.tasks(t, labels)
	var out []string
	for _, n := range names {
		out = append(out, "service "+n)
	}
	for _, task := range tasks {
		switch task.Status.State {
		case swarm.TaskStateComplete, swarm.TaskStateShutdown, swarm.TaskStateFailed, swarm.TaskStateRejected, swarm.TaskStateRemove, swarm.TaskStateOrphaned:
			continue
		}
		if names[task.ServiceID] == "" {
			out = append(out, "task "+task.ID+" ("+string(task.Status.State)+") of a removed service")
		}
	}
	return out
}

// kill is one SIGKILL test: the commands of the killed run and of the
// next one (by run id), where their containers run, and how many of the
// killed run's must be at work when it is killed.
type kill struct {
	w        where
	cmd      func(id string) *exec.Cmd
	inFlight int
	// swarm: the next run starts at once, while the dead run's tasks
	// still hold the swarm's room; elsewhere it starts once the dead
	// run's lease is stale, so that its start removes the leftovers.
	swarm bool
	// killed hears that the killed run is dead (the LLM test double
	// stops holding its requests).
	killed func()
}

func (k kill) run(t *testing.T) {
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	dead, next := "killed-"+suffix, "next-"+suffix
	deadRun := map[string]string{evaluate.LabelRun: dead}
	nextRun := map[string]string{evaluate.LabelRun: next}

	var log bytes.Buffer
	c := k.cmd(dead)
	c.Stdout, c.Stderr = &log, &log
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	for deadline := time.Now().Add(15 * time.Minute); len(k.w.running(t, deadRun)) < k.inFlight; {
		select {
		case err := <-exited:
			t.Fatalf("the run ended (%v) before %d of its containers ran:\n%s", err, k.inFlight, log.String())
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatalf("%d of the run's containers did not run within 15 minutes:\n%s", k.inFlight, log.String())
		}
	}
	if err := c.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	<-exited
	killedAt := time.Now()
	if k.killed != nil {
		k.killed()
	}
	left := k.w.present(t, deadRun)
	t.Logf("killed with %d containers: %s", len(left), strings.Join(left, ", "))
	if len(left) < k.inFlight {
		t.Fatalf("the killed run's containers went with it: the test proves nothing")
	}

	if !k.swarm {
		time.Sleep(time.Until(killedAt.Add(lease.Grace + 5*time.Second)))
	}
	var nlog bytes.Buffer
	n := k.cmd(next)
	n.Stdout, n.Stderr = &nlog, &nlog
	startedAt := time.Now()
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	nexited := make(chan error, 1)
	go func() { nexited <- n.Wait() }()
	defer func() {
		n.Process.Kill()
	}()
	// The next run's first container runs at once: within the dead
	// lease's grace of the kill on a swarm the dead run filled, within
	// seconds of its start otherwise.
	firstBy := startedAt.Add(90 * time.Second)
	if k.swarm {
		firstBy = killedAt.Add(lease.Grace + 60*time.Second)
	}
	var first time.Time
	for first.IsZero() {
		if len(k.w.running(t, nextRun)) > 0 {
			first = time.Now()
			break
		}
		select {
		case err := <-nexited:
			t.Fatalf("the next run ended (%v) before a container of its ran:\n%s", err, nlog.String())
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(firstBy) {
			t.Fatalf("the next run started no container in %s (%s after the kill): stalled by the killed run's leftovers? they are: %s\n%s",
				time.Since(startedAt).Round(time.Second), time.Since(killedAt).Round(time.Second), strings.Join(k.w.present(t, deadRun), ", "), nlog.String())
		}
	}
	t.Logf("the next run started %s after the kill; its first container ran %s after its start",
		startedAt.Sub(killedAt).Round(time.Second), first.Sub(startedAt).Round(time.Second))
	select {
	case err := <-nexited:
		if err != nil {
			t.Fatalf("the next run: %v\n%s", err, nlog.String())
		}
	case <-time.After(20 * time.Minute):
		t.Fatalf("the next run did not end in 20 minutes:\n%s", nlog.String())
	}
	// The swarm removes a removed service's task a moment later.
	var still []string
	for deadline := time.Now().Add(30 * time.Second); ; {
		still = k.w.present(t, deadRun)
		if len(still) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if len(still) > 0 {
		t.Errorf("%s after the kill, after a run that took %s, the killed run's containers are left: %s",
			time.Since(killedAt).Round(time.Second), time.Since(startedAt).Round(time.Second), strings.Join(still, ", "))
	}
	if left := k.w.present(t, nextRun); len(left) > 0 {
		t.Errorf("the next run left containers: %s", strings.Join(left, ", "))
	}
}

// killOn is where a SIGKILL test's containers run: the local engine, or
// the swarm with a project whose containers reserve so much memory that
// one fits on a node (the dead run fills the swarm).
func killOn(t *testing.T, backend, root string) (where, int) {
	t.Helper()
	if backend == "local" {
		eng := imagestest.Engine(t)
		return onLocal{eng}, 2
	}
	manager, registry, push := testenv.Swarm(t)
	useSwarm(t, root, manager, registry, push)
	path := filepath.Join(root, "featbench.toml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := client.New(client.WithHost(manager))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	nodes, err := cli.NodeList(context.Background(), client.NodeListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Just over half a node's memory: one container a node.
	var mem int64
	for _, n := range nodes.Items {
		mem = max(mem, n.Description.Resources.MemoryBytes)
	}
	mib := mem/2>>20 + 64
	text := strings.Replace(string(raw), "\nmemory = ", "\nmemory = \""+strconv.FormatInt(mib, 10)+"m\"\n# was: memory = ", 1)
	if text == string(raw) {
		t.Fatal("featbench.toml sets no [eval] memory")
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return onSwarm{cli}, len(nodes.Items)
}

// TestKilledRunLeavesNothing: eval run SIGKILLed with its containers at
// work; the next run starts at once and leaves none of them.
func TestKilledRunLeavesNothing(t *testing.T) {
	for _, backend := range []string{"local", "swarm"} {
		t.Run(backend, func(t *testing.T) {
			host := testenv.DockerHost(t)
			imagestest.Base(t)
			root := copyProject(t)
			w, inFlight := killOn(t, backend, root)
			bin := evalBinary(t)
			kill{w: w, inFlight: inFlight, swarm: backend == "swarm", cmd: func(id string) *exec.Cmd {
				c := exec.Command(bin, "run", "--root", root, "--dataset", "example/v3", "--split", "full", "--gold",
					"--workers", strconv.Itoa(inFlight), "--run-id", id)
				if strings.HasPrefix(id, "next-") {
					c.Args = append(c.Args, "--instance", "featbench__textkit.test_roman.0e26fade.lv1")
				}
				c.Env = append(os.Environ(), "DOCKER_HOST="+host)
				return c
			}}.run(t)
		})
	}
}

// TestKilledInferLeavesNothingWithLLMTestDouble: eval infer SIGKILLed
// while its agents wait on the model (the LLM test double holds their
// requests); the next run starts at once and leaves none of them.
func TestKilledInferLeavesNothingWithLLMTestDouble(t *testing.T) {
	for _, backend := range []string{"local", "swarm"} {
		t.Run(backend, func(t *testing.T) {
			host := testenv.DockerHost(t)
			imagestest.Base(t)
			root := inferProject(t)
			w, inFlight := killOn(t, backend, root)
			bin := evalBinary(t)
			// Until the kill, every request waits; after it (the next
			// run's), the model says it is done.
			var once sync.Once
			dead := make(chan struct{})
			dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
				<-dead
				return llmdouble.Reply{Text: "Nothing to do."}
			})
			if err != nil {
				t.Fatal(err)
			}
			release := func() { once.Do(func() { close(dead) }) }
			defer dbl.Close()
			defer release()
			kill{w: w, inFlight: inFlight, swarm: backend == "swarm", killed: release, cmd: func(id string) *exec.Cmd {
				c := exec.Command(bin, "infer", "--root", root, "--dataset", "example/v3", "--split", "lite", "--agent", "shell-loop",
					"--model", doubleModel, "--upstream", dbl.URL, "--workers", strconv.Itoa(inFlight), "--run-id", id)
				if strings.HasPrefix(id, "next-") {
					c.Args = append(c.Args, "--instance", inferL1)
				}
				c.Env = append(os.Environ(), "DOCKER_HOST="+host)
				return c
			}}.run(t)
		})
	}
}
