// Package killtest SIGKILLs a run (eval run, eval infer, collect) while
// its containers work, on the local engine or on a swarm, and starts the
// next run: the tests of cmd/eval and cmd/collect check with it that the
// next run starts at once, not stalled by the dead run's reservations,
// and that once it ends nothing of the dead run is left (the dead run's
// lease is no longer renewed: any later run removes what it left).
package killtest

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/lease"
)

// Match says whether a container's (or a service's) labels are one of
// the runs' under test.
type Match func(labels map[string]string) bool

// Where finds the runs' containers: on the local engine, or a swarm's
// services.
type Where interface {
	// Running names the matching containers that run: a swarm's
	// services whose task runs.
	Running(t testing.TB, m Match) []string
	// Present names the matching containers, running or not: a swarm's
	// services, and live tasks whose service is gone.
	Present(t testing.TB, m Match) []string
}

// Local is the local engine.
func Local(eng *container.Engine) Where { return local{eng} }

type local struct{ eng *container.Engine }

func (w local) list(t testing.TB, m Match, running bool) []string {
	t.Helper()
	list, err := w.eng.Containers(context.Background(), map[string]string{lease.LabelProject: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range list {
		if m(c.Labels) && (!running || c.State == "running") {
			out = append(out, c.Name)
		}
	}
	return out
}

func (w local) Running(t testing.TB, m Match) []string { return w.list(t, m, true) }
func (w local) Present(t testing.TB, m Match) []string { return w.list(t, m, false) }

// Swarm is the swarm whose manager cli talks to.
func Swarm(cli *client.Client) Where { return onSwarm{cli} }

type onSwarm struct{ cli *client.Client }

func (w onSwarm) tasks(t testing.TB, m Match) ([]swarm.Task, map[string]string) {
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
		if m(s.Spec.Labels) {
			names[s.ID] = s.Spec.Name
		}
	}
	var out []swarm.Task
	for _, task := range res.Items {
		if task.Spec.ContainerSpec != nil && m(task.Spec.ContainerSpec.Labels) {
			out = append(out, task)
		}
	}
	return out, names
}

func (w onSwarm) Running(t testing.TB, m Match) []string {
	tasks, names := w.tasks(t, m)
	var out []string
	for _, task := range tasks {
		if task.Status.State == swarm.TaskStateRunning && names[task.ServiceID] != "" {
			out = append(out, names[task.ServiceID])
		}
	}
	return out
}

func (w onSwarm) Present(t testing.TB, m Match) []string {
	tasks, names := w.tasks(t, m)
	var out []string
	for _, n := range names {
		out = append(out, n)
	}
	for _, task := range tasks {
		switch task.Status.State {
		case swarm.TaskStateComplete, swarm.TaskStateShutdown, swarm.TaskStateFailed, swarm.TaskStateRejected, swarm.TaskStateRemove, swarm.TaskStateOrphaned:
			continue
		}
		if names[task.ServiceID] == "" {
			out = append(out, "task "+task.ID+" of a removed service")
		}
	}
	return out
}

// FillSwarm rewrites the [eval] memory of the featbench.toml at path to
// just over half of a node's memory, so that the swarm has room for one
// container a node, and returns how many nodes it has: a run with that
// many containers at work fills it.
func FillSwarm(t testing.TB, cli *client.Client, path string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cli.NodeList(context.Background(), client.NodeListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var mem int64
	for _, n := range nodes.Items {
		mem = max(mem, n.Description.Resources.MemoryBytes)
	}
	mib := mem/2>>20 + 64
	lines := strings.Split(string(raw), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "memory = ") })
	if i < 0 {
		t.Fatalf("%s sets no [eval] memory", filepath.Base(path))
	}
	lines[i] = `memory = "` + strconv.FormatInt(mib, 10) + `m"`
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return len(nodes.Items)
}

// Kill is one SIGKILL test.
type Kill struct {
	Where Where
	// Cmd is the command of the run to kill (first) and of the next run.
	Cmd func(first bool) *exec.Cmd
	// Mine matches the containers of both runs, and no other's.
	Mine Match
	// InFlight is how many of the first run's containers must be at work
	// when it is killed.
	InFlight int
	// Stalls: the first run fills the executor's room (a swarm), and the
	// next one starts at once, while the dead run's containers still hold
	// it: its first container must run within the dead lease's grace of
	// the kill. Otherwise the next run starts once the dead lease is
	// stale, and its start must remove the leftovers.
	Stalls bool
	// Killed, when not nil, hears that the first run is dead.
	Killed func()
}

// Run runs the test.
func (k Kill) Run(t *testing.T) {
	var log bytes.Buffer
	c := k.Cmd(true)
	c.Stdout, c.Stderr = &log, &log
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- c.Wait() }()
	for deadline := time.Now().Add(15 * time.Minute); len(k.Where.Running(t, k.Mine)) < k.InFlight; {
		select {
		case err := <-exited:
			t.Fatalf("the run ended (%v) before %d of its containers ran:\n%s", err, k.InFlight, log.String())
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.Process.Kill()
			t.Fatalf("%d of the run's containers did not run within 15 minutes:\n%s", k.InFlight, log.String())
		}
	}
	if err := c.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	<-exited
	killedAt := time.Now()
	if k.Killed != nil {
		k.Killed()
	}
	dead := map[string]bool{}
	for _, n := range k.Where.Present(t, k.Mine) {
		dead[n] = true
	}
	t.Logf("killed with %d containers: %s", len(dead), strings.Join(slices.Sorted(maps.Keys(dead)), ", "))
	if len(dead) < k.InFlight {
		t.Fatalf("the killed run's containers went with it: the test proves nothing")
	}
	isDead := func(names []string) []string {
		var out []string
		for _, n := range names {
			if dead[n] {
				out = append(out, n)
			}
		}
		return out
	}

	if !k.Stalls {
		time.Sleep(time.Until(killedAt.Add(lease.Grace + 5*time.Second)))
	}
	var nlog bytes.Buffer
	n := k.Cmd(false)
	n.Stdout, n.Stderr = &nlog, &nlog
	startedAt := time.Now()
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	nexited := make(chan error, 1)
	go func() { nexited <- n.Wait() }()
	defer n.Process.Kill()
	firstBy := startedAt.Add(90 * time.Second)
	if k.Stalls {
		firstBy = killedAt.Add(lease.Grace + 60*time.Second)
	}
	var first time.Time
	for first.IsZero() {
		for _, name := range k.Where.Running(t, k.Mine) {
			if !dead[name] {
				first = time.Now()
			}
		}
		if !first.IsZero() {
			break
		}
		select {
		case err := <-nexited:
			t.Fatalf("the next run ended (%v) before a container of its ran:\n%s", err, nlog.String())
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(firstBy) {
			t.Fatalf("the next run started no container in %s (%s after the kill): stalled by the killed run's leftovers? these are left: %s\n%s",
				time.Since(startedAt).Round(time.Second), time.Since(killedAt).Round(time.Second),
				strings.Join(isDead(k.Where.Present(t, k.Mine)), ", "), nlog.String())
		}
	}
	t.Logf("the next run started %s after the kill; its first container ran %s after its start (%s after the kill)",
		startedAt.Sub(killedAt).Round(time.Second), first.Sub(startedAt).Round(time.Second), first.Sub(killedAt).Round(time.Second))
	select {
	case err := <-nexited:
		if err != nil {
			t.Fatalf("the next run: %v\n%s", err, nlog.String())
		}
	case <-time.After(20 * time.Minute):
		t.Fatalf("the next run did not end in 20 minutes:\n%s", nlog.String())
	}
	// A swarm takes a removed service's task away a moment later (the
	// manager's record of it lags the container's removal): the killed
	// run's, and the next run's.
	var still, mine []string
	for deadline := time.Now().Add(30 * time.Second); ; {
		still, mine = nil, nil
		for _, name := range k.Where.Present(t, k.Mine) {
			if dead[name] {
				still = append(still, name)
			} else {
				mine = append(mine, name)
			}
		}
		if len(still)+len(mine) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if len(still) > 0 {
		t.Errorf("%s after the kill, after a run of %s, the killed run's containers are left: %s",
			time.Since(killedAt).Round(time.Second), time.Since(startedAt).Round(time.Second), strings.Join(still, ", "))
	}
	if len(mine) > 0 {
		t.Errorf("the next run left containers: %s", strings.Join(mine, ", "))
	}
}
