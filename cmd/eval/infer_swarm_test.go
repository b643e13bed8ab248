package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/llmdouble"
	"github.com/featbench/featbench/internal/swarm"
	"github.com/featbench/featbench/internal/testenv"
)

// useSwarm makes the project's featbench.toml run containers on the
// swarm: backend = "swarm" and its [eval.swarm] table.
func useSwarm(t *testing.T, root, manager, registry, push string) {
	t.Helper()
	path := filepath.Join(root, "featbench.toml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "[eval]\n", "[eval]\nbackend = \"swarm\"\n", 1)
	text += "\n[eval.swarm]\nmanager = " + strconv.Quote(manager) + "\nregistry = " + strconv.Quote(registry) +
		"\npush_registry = " + strconv.Quote(push) + "\n"
	if !strings.Contains(text, "backend = \"swarm\"") {
		t.Fatal("featbench.toml has no [eval] table")
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInferOnSwarmWithLLMTestDouble: with backend = "swarm", eval infer
// runs the shell-loop agent in swarm tasks, as many at once as the swarm
// has room for (both instances, though --workers says 1) (while the agent talks to the
// model, the run has a service on the swarm and no container on the
// local engine), reaching the metering proxy through the relay over the
// node engine's exec stream: the two instances are solved, the tokens,
// turns and cost the proxy measured are what the LLM test double served,
// and no service is left.
func TestInferOnSwarmWithLLMTestDouble(t *testing.T) {
	host := testenv.DockerHost(t)
	manager, registry, push := testenv.Swarm(t)
	eng, _ := imagestest.Base(t)
	t.Setenv("DOCKER_HOST", host)
	root := inferProject(t)
	useSwarm(t, root, manager, registry, push)
	ctx := context.Background()
	sw, err := swarm.Connect(ctx, swarm.Config{Manager: manager, Registry: registry, PushRegistry: push, Local: eng})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	id := "swarm-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	run := map[string]string{evaluate.LabelRun: id, evaluate.LabelKind: "infer"}
	t.Cleanup(func() {
		if _, err := sw.RemoveContainers(context.Background(), run, nil); err != nil {
			t.Error(err)
		}
	})
	// count counts the run's services without removing them.
	count := func() (int, error) {
		n := 0
		_, err := sw.RemoveContainers(ctx, run, func(map[string]string) bool { n++; return true })
		return n, err
	}

	solve := shellLoopScript(t, root, inferL1, inferL2)
	var mu sync.Mutex
	var where []string // per request: the run's local containers and services
	var nnp []string   // the agent's NoNewPrivs, as its commands printed it
	both := false      // both instances' containers were on the swarm at once
	dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
		// Until both run at once, each request waits for the other's
		// container: the run is given --workers 1, and the swarm, which
		// has room for both, must admit them all the same.
		for deadline := time.Now().Add(30 * time.Second); ; {
			n, err := count()
			mu.Lock()
			both = both || err == nil && n == 2
			done := both
			mu.Unlock()
			if done || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		local, lerr := eng.Containers(ctx, run)
		services, serr := count()
		mu.Lock()
		if lerr != nil || serr != nil {
			where = append(where, "error: "+lerr.Error()+" "+serr.Error())
		} else {
			where = append(where, strconv.Itoa(len(local))+" local, "+strconv.Itoa(services)+" services")
		}
		if i := strings.Index(r.Last, "NoNewPrivs:"); i >= 0 {
			nnp = append(nnp, strings.Fields(r.Last[i:])[1])
		}
		mu.Unlock()
		// The agent's commands first say whether they could gain
		// privileges through a setuid program: a swarm task of Docker
		// 20.10 lacks no-new-privileges, which the harness sets itself.
		reply := solve(r)
		reply.Text = strings.Replace(reply.Text, "```bash\n", "```bash\ngrep NoNewPrivs /proc/self/status\n", 1)
		return reply
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	out, errOut, code := runEval(t, "infer", "--root", root, "--dataset", "example/v3", "--split", "lite", "--agent", "shell-loop",
		"--model", doubleModel, "--upstream", dbl.URL, "--run-id", id, "--instance", inferL1, "--instance", inferL2, "--workers", "1")
	if code != 0 {
		t.Fatalf("eval infer: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "on the swarm at "+manager) {
		t.Errorf("eval infer does not say it runs on the swarm:\n%s", errOut)
	}
	if !regexp.MustCompile(`\] .*; [0-9]+ nodes, [0-9]+ tasks in flight \(room for [0-9]+\)`).MatchString(errOut) {
		t.Errorf("eval infer's progress does not show the swarm's nodes and tasks in flight:\n%s", errOut)
	}
	preds := readPreds(t, filepath.Join(root, "runs", id, "predictions.jsonl"))
	if len(preds) != 2 {
		t.Fatalf("%d predictions; want 2:\n%s", len(preds), errOut)
	}
	for pid, p := range preds {
		if p.FailureMode != "" || p.Patch == "" || p.TokensIn == 0 {
			alog, _ := os.ReadFile(filepath.Join(root, "runs", id, "infer", pid, "agent.log"))
			clog, _ := os.ReadFile(filepath.Join(root, "runs", id, "infer", pid, "container.log"))
			t.Errorf("%s: failure %q, %d tokens in, patch:\n%s\nthe agent's output:\n%s\nthe harness's log:\n%s", pid, p.FailureMode, p.TokensIn, p.Patch, alog, clog)
		}
	}
	served := dbl.Served()
	if served.Requests == 0 {
		t.Fatal("the double served nothing")
	}
	checkServed(t, preds, served)
	mu.Lock()
	for i, w := range where {
		if !strings.HasPrefix(w, "0 local, ") || strings.HasPrefix(w, "0 local, 0 services") {
			t.Errorf("request %d: the run had %s; want none local and its services on the swarm", i+1, w)
		}
	}
	if !both {
		t.Errorf("the two instances never ran at once: the swarm did not admit the second while the first ran (--workers 1)")
	}
	if len(nnp) == 0 || slices.ContainsFunc(nnp, func(v string) bool { return v != "1" }) {
		t.Errorf("the agent's NoNewPrivs, as its commands printed it: %v; want 1 for each", nnp)
	}
	mu.Unlock()
	if n, err := count(); err != nil || n != 0 {
		t.Errorf("%d services of the run left (%v)", n, err)
	}
}
