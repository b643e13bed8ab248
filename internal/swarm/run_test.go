package swarm_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/runlock"
)

// These tests grade the example dataset (data/, example/v3) with
// evaluate.Run, on the swarm and on the test's local engine, from the
// environment image of examples/textkit built on the local engine.

const root = "../.."

var runLimits = evaluate.Limits{
	TestFile: 2 * time.Minute, Instance: 5 * time.Minute,
	Container: container.Limits{Memory: 1 << 30, NanoCPUs: 1e9, Pids: 512},
}

func example(t *testing.T) *bench.Dataset {
	t.Helper()
	data, err := bench.Load(context.Background(), filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Dataset("example/v3")
	if ds == nil {
		t.Fatal("no example/v3 in data/")
	}
	return ds
}

// envImage builds (or finds) the environment image of examples/textkit.
func envImage(t *testing.T) (*container.Engine, string) {
	t.Helper()
	eng, base := imagestest.Base(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ref, err := images.EnsureEnv(ctx, eng, images.EnvSpec{
		Name: "featbench/textkit", Base: base,
		Source:  images.Source{Dir: filepath.Join(root, "examples", "textkit")},
		Install: []string{"pip install --no-index --no-deps --no-build-isolation -e ."},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return eng, ref
}

// evalRun evaluates ids of ds (gold or empty) with the executor into dir.
func evalRun(ctx context.Context, t *testing.T, x executor.Executor, img string, ds *bench.Dataset, ids []string, gold bool, dir string) (*evaluate.RunReport, error) {
	t.Helper()
	model := "empty"
	if gold {
		model = "gold"
	}
	return evaluate.Run(ctx, evaluate.Config{
		Meta:    evaluate.Meta{RunID: "swarm-test", Dataset: ds.Key(), Split: "full", Predictions: model, Model: model, Attempts: 1, Instances: ids},
		Dataset: ds, Gold: gold, Images: map[string]string{"featbench/textkit": img}, Dir: dir, Workers: 2, Limits: runLimits, Engine: x,
		Predictions: func(id string, _ int) (evaluate.Prediction, bool) {
			if gold {
				return evaluate.Prediction{Model: "gold", Patch: []byte(ds.Instance(id).Patch)}, true
			}
			return evaluate.Prediction{Model: "empty"}, true
		},
	})
}

// timing matches what differs between two runs of the same thing in
// text: pytest's "in 0.12s", JUnit's time=, timestamp= and hostname=.
var timing = []*regexp.Regexp{
	regexp.MustCompile(`(time|timestamp|hostname)="[^"]*"`),
	regexp.MustCompile(`[0-9]+\.[0-9]+ ?s\b`),
}

// timeKeys are the JSON fields that hold times; a test's duration is left
// out when it rounds to zero, so the fields are dropped, not blanked.
var timeKeys = map[string]bool{"seconds": true, "pytest_seconds": true, "overhead_seconds": true, "finished": true, "duration": true, "created": true}

// untimed is a run's file without its times: JSON (and JSON lines) with
// the time fields removed, other text with the times blanked.
func untimed(name string, b []byte) string {
	if strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".jsonl") {
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var v any
			if json.Unmarshal([]byte(line), &v) != nil {
				if json.Unmarshal(b, &v) != nil {
					break
				}
				line = ""
			}
			raw, _ := json.MarshalIndent(dropTimes(v), "", " ")
			out = append(out, string(raw))
			if line == "" {
				break
			}
		}
		if len(out) > 0 {
			return strings.Join(out, "\n")
		}
	}
	s := string(b)
	for _, re := range timing {
		s = re.ReplaceAllString(s, "<t>")
	}
	return s
}

func dropTimes(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if timeKeys[k] {
				delete(v, k)
			} else {
				v[k] = dropTimes(e)
			}
		}
	case []any:
		for i, e := range v {
			v[i] = dropTimes(e)
		}
	}
	return v
}

// runFiles reads a run folder's files that a submission packs (reports,
// predictions, test outputs; container.log aside, whose lines hold the
// times of every command), by path.
func runFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if filepath.Base(rel) == evaluate.LogFile || rel == evaluate.RunMetaFile || rel == "manifest.json" || rel == runlock.File {
			return nil
		}
		raw, err := os.ReadFile(p)
		out[rel] = raw
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGoldAndEmptyLikeLocal: --gold and --empty on the swarm give the
// reports, results and test outputs a local run gives, byte for byte but
// for the times, on instances of both levels.
func TestGoldAndEmptyLikeLocal(t *testing.T) {
	eng, img := envImage(t)
	x := connect(t, eng)
	ds := example(t)
	ids := []string{
		"featbench__textkit.test_case.3f4c65e3.lv1", "featbench__textkit.test_case.3f4c65e3.lv2",
		"featbench__textkit.test_roman.0e26fade.lv1", "featbench__textkit.test_roman.0e26fade.lv2",
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	for _, gold := range []bool{true, false} {
		name := map[bool]string{true: "gold", false: "empty"}[gold]
		t.Run(name, func(t *testing.T) {
			local, remote := t.TempDir(), t.TempDir()
			lr, err := evalRun(ctx, t, executor.Local(eng), img, ds, ids, gold, local)
			if err != nil {
				t.Fatal(err)
			}
			sr, err := evalRun(ctx, t, executor.Swarm(x), img, ds, ids, gold, remote)
			if err != nil {
				t.Fatal(err)
			}
			if gold && sr.ResolvedInstances != len(ids) || !gold && sr.ResolvedInstances != 0 || sr.ErrorInstances != 0 {
				t.Errorf("swarm: %d resolved, %d errors of %d", sr.ResolvedInstances, sr.ErrorInstances, len(ids))
			}
			lf, sf := runFiles(t, local), runFiles(t, remote)
			if len(lf) != len(sf) || len(lf) < 4*len(ids) {
				t.Errorf("local run wrote %d files, the swarm's %d", len(lf), len(sf))
			}
			same := 0
			for p, l := range lf {
				s, ok := sf[p]
				switch {
				case !ok:
					t.Errorf("%s: written by the local run, not by the swarm's", p)
				case untimed(p, l) != untimed(p, s):
					t.Errorf("%s differs:\nlocal: %s\nswarm: %s", p, untimed(p, l), untimed(p, s))
				case string(l) == string(s):
					same++
				}
			}
			t.Logf("%s: %d files alike, %d of them byte for byte; local resolved %d, swarm %d", name, len(lf), same, lr.ResolvedInstances, sr.ResolvedInstances)
		})
	}
}

// TestNodeLost: a worker node stopped while the run has a task on it
// loses no finished instance (their reports are as they were), the
// attempt it ran is retried on another node and says so, and the run
// completes with every instance graded.
func TestNodeLost(t *testing.T) {
	eng, img := envImage(t)
	x := connect(t, eng)
	cli := manager(t)
	settled(t, cli)
	ds := example(t)
	var ids []string
	for _, in := range ds.Instances {
		if in.Level == 1 {
			ids = append(ids, in.InstanceID)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	// The image on every node first, so that tasks run from the start.
	warm, err := evalRun(ctx, t, executor.Swarm(x), img, ds, ids[:1], true, t.TempDir())
	if err != nil || warm.ResolvedInstances != 1 {
		t.Fatalf("warming up: %v, %+v", err, warm)
	}
	dir := t.TempDir()
	type result struct {
		rr  *evaluate.RunReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		rr, err := evalRun(ctx, t, executor.Swarm(x), img, ds, ids, true, dir)
		done <- result{rr, err}
	}()
	// Every task of the run, with its node, as the manager lists them.
	placed := watchTasks(ctx, t, cli, "swarm-test")
	// Wait for finished instances and a task of the run running on a
	// worker, then stop that worker.
	victim, victimID, before := "", "", map[string][]byte{}
	for victim == "" || len(reportFiles(t, dir)) < 2 {
		victim = ""
		select {
		case r := <-done:
			t.Fatalf("the run ended (%v) before a task ran on a worker", r.err)
		case <-time.After(200 * time.Millisecond):
		}
		res, err := cli.TaskList(ctx, client.TaskListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range res.Items {
			if task.Status.State != "running" || task.Spec.ContainerSpec == nil || task.Spec.ContainerSpec.Labels[evaluate.LabelRun] != "swarm-test" {
				continue
			}
			n, err := cli.NodeInspect(ctx, task.NodeID, client.NodeInspectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if n.Node.Spec.Role == "worker" && time.Since(task.Status.Timestamp) > 300*time.Millisecond {
				victim, victimID = n.Node.Spec.Labels["featbench.engine"], n.Node.ID
				break
			}
		}
	}
	for _, p := range reportFiles(t, dir) {
		raw, _ := os.ReadFile(p)
		before[p] = raw
	}
	m := regexp.MustCompile(`node([0-9]+)\.sock$`).FindStringSubmatch(victim)
	if m == nil {
		t.Fatalf("the worker's engine %q is not one of provision-swarm.sh's", victim)
	}
	t.Logf("stopping node %s (%s) with %d reports written", m[1], victim, len(before))
	stopped := time.Now()
	stopNode(t, atoi(m[1]))
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.rr.ResolvedInstances != len(ids) || r.rr.ErrorInstances != 0 {
		t.Errorf("after a node was lost: %d of %d resolved, %d errors (%v)", r.rr.ResolvedInstances, len(ids), r.rr.ErrorInstances, r.rr.ErrorIDs)
		for _, p := range reportFiles(t, dir) {
			rep, err := evaluate.ReadReport(filepath.Dir(p))
			if err != nil || rep.Error == "" && rep.Resolved {
				continue
			}
			log, _ := os.ReadFile(filepath.Join(filepath.Dir(p), evaluate.LogFile))
			t.Errorf("%s: resolved %v, error %q, retried %q; its %s:\n%s", rep.InstanceID, rep.Resolved, rep.Error, rep.Retried, evaluate.LogFile, tail(string(log), 40))
		}
	}
	for p, raw := range before {
		now, err := os.ReadFile(p)
		if err != nil || string(now) != string(raw) {
			t.Errorf("%s, finished before the node was lost, changed: %v", p, err)
		}
	}
	var retried []string
	for _, p := range reportFiles(t, dir) {
		rep, err := evaluate.ReadReport(filepath.Dir(p))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Retried != "" {
			retried = append(retried, rep.InstanceID+": "+rep.Retried)
			// It says which node was lost, as its progress line does.
			if !strings.Contains(rep.Retried, "node "+victimID[:12]) || !strings.Contains(rep.Retried, victim) || !strings.Contains(rep.Retried, "was lost") {
				t.Errorf("%s: retried %q does not name the lost node %s (%s)", rep.InstanceID, rep.Retried, victimID, victim)
			}
			log, _ := os.ReadFile(filepath.Join(filepath.Dir(p), evaluate.LogFile))
			if !strings.HasPrefix(string(log), "retried: ") {
				t.Errorf("%s: the log of a retried attempt does not say so", rep.InstanceID)
			}
		}
	}
	sort.Strings(retried)
	if len(retried) == 0 {
		t.Errorf("no attempt says it was retried, yet a node with a task was stopped")
	}
	t.Logf("retried:\n%s\nlost: %v", strings.Join(retried, "\n"), x.Lost())
	if _, ok := x.Lost()[victimID]; !ok {
		t.Errorf("the stopped node %s is not recorded as lost: %v", victimID, x.Lost())
	}
	// Each attempt retried for the loss ran its retry (its last task) on
	// another node.
	last := map[string]placement{}
	for _, p := range placed() {
		if l, ok := last[p.task]; !ok || p.created.After(l.created) {
			last[p.task] = p
		}
	}
	for _, p := range reportFiles(t, dir) {
		rep, err := evaluate.ReadReport(filepath.Dir(p))
		if err != nil || rep.Retried == "" {
			continue
		}
		l, ok := last[rep.InstanceID+"#1"]
		switch {
		case !ok:
			t.Errorf("%s: no task of its seen", rep.InstanceID)
		case l.node == victimID:
			t.Errorf("%s: retried on the lost node %s (task %s, at %s; the node stopped at %s)", rep.InstanceID, victimID, l.id, l.created, stopped)
		}
	}
	// The stopped node, started again, can bring back the task it ran,
	// whose service the run removed meanwhile (Docker 20.10), holding its
	// reservation: the next run's sweep of leftovers removes it.
	if out, err := exec.Command("bash", "../../scripts/provision-swarm.sh").CombinedOutput(); err != nil {
		t.Fatalf("starting the swarm again: %v\n%s", err, out)
	}
	if err := waitReady(ctx, cli); err != nil {
		t.Fatal(err)
	}
	next := connect(t, eng)
	removed := 0
	for deadline := time.Now().Add(20 * time.Second); ; {
		n, err := next.RemoveContainers(ctx, map[string]string{evaluate.LabelRun: "swarm-test"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		removed += n
		orphans := liveOrphans(t, cli, "swarm-test")
		if time.Now().After(deadline) {
			if len(orphans) > 0 {
				t.Errorf("tasks of the run whose service is gone still live after the sweep: %v", orphans)
			}
			break
		}
		time.Sleep(time.Second)
	}
	t.Logf("the sweep removed %d orphaned task containers", removed)
}

// placement is a task of a run as the manager listed it.
type placement struct {
	id, task, node string
	created        time.Time
}

// watchTasks records, until the test ends, every task of run the
// manager lists with its node (polled every 200 ms: a task's node is
// set once and for all); placed returns what it saw.
func watchTasks(ctx context.Context, t *testing.T, cli *client.Client, run string) (placed func() []placement) {
	var mu sync.Mutex
	seen := map[string]placement{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if res, err := cli.TaskList(ctx, client.TaskListOptions{}); err == nil {
				mu.Lock()
				for _, task := range res.Items {
					if task.NodeID == "" || task.Spec.ContainerSpec == nil || task.Spec.ContainerSpec.Labels[evaluate.LabelRun] != run {
						continue
					}
					if _, ok := seen[task.ID]; !ok {
						seen[task.ID] = placement{id: task.ID, task: task.Spec.ContainerSpec.Labels[evaluate.LabelTask], node: task.NodeID, created: task.CreatedAt}
					}
				}
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
	})
	return func() []placement {
		mu.Lock()
		defer mu.Unlock()
		var out []placement
		for _, p := range seen {
			out = append(out, p)
		}
		return out
	}
}

// liveOrphans lists the live tasks of run whose service is gone.
func liveOrphans(t *testing.T, cli *client.Client, run string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tasks, alive := liveTasks(ctx, t, cli)
	var out []string
	for _, task := range tasks {
		if !alive[task.ServiceID] && task.Spec.ContainerSpec != nil && task.Spec.ContainerSpec.Labels[evaluate.LabelRun] == run {
			out = append(out, task.ID+" "+string(task.Status.State)+" on "+task.NodeID)
		}
	}
	return out
}

func reportFiles(t *testing.T, dir string) []string {
	t.Helper()
	ps, err := filepath.Glob(filepath.Join(dir, "*", "attempt-*", evaluate.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestNoWayToRootThroughSetuid: Docker 20.10 does not set
// no-new-privileges on a swarm task's container, so a setuid program in
// the image would give the prediction's code root (with the capabilities
// the container keeps, enough to rewrite the tests). The harness sets it
// on everything the prediction runs. The attack: a level 2 prediction
// whose build (setup.py, the prediction's first code to run) goes on only
// where the no-new-privileges bit is clear, that is where a setuid
// program would work; it must not install, on the swarm or locally.
func TestNoWayToRootThroughSetuid(t *testing.T) {
	eng, img := envImage(t)
	x := connect(t, eng)
	ds := example(t)
	id := "featbench__textkit.test_roman.0e26fade.lv2"
	setup := []string{
		"import re",
		"status = open('/proc/self/status').read()",
		"if not re.search(r'NoNewPrivs:\\s*0', status):",
		"    raise SystemExit('featbench-attack: no-new-privileges is set')",
		"print('featbench-attack: no-new-privileges is clear: a setuid program would run as its owner')",
		"from setuptools import setup",
		"setup()",
	}
	patch := ds.Instance(id).Patch + "diff --git a/setup.py b/setup.py\nnew file mode 100644\n--- /dev/null\n+++ b/setup.py\n@@ -0,0 +1," + strconv.Itoa(len(setup)) + " @@\n+" + strings.Join(setup, "\n+") + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for name, ex := range map[string]executor.Executor{"swarm": executor.Swarm(x), "local": executor.Local(eng)} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			rr, err := evaluate.Run(ctx, evaluate.Config{
				Meta:    evaluate.Meta{RunID: "swarm-test", Dataset: ds.Key(), Split: "full", Predictions: "attack", Model: "attack", Attempts: 1, Instances: []string{id}},
				Dataset: ds, Images: map[string]string{"featbench/textkit": img}, Dir: dir, Workers: 1, Limits: runLimits, Engine: ex,
				Predictions: func(string, int) (evaluate.Prediction, bool) {
					return evaluate.Prediction{Model: "attack", Patch: []byte(patch)}, true
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			log, err := os.ReadFile(filepath.Join(dir, id, "attempt-1", "container.log"))
			if err != nil {
				t.Fatal(err)
			}
			if rr.ResolvedInstances != 0 || rr.ErrorInstances != 0 || !strings.Contains(string(log), "featbench-attack: no-new-privileges is set") {
				t.Errorf("%d resolved, %d errors; the log:\n%s", rr.ResolvedInstances, rr.ErrorInstances, tail(string(log), 30))
			}
		})
	}
}
