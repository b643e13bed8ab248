package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor/killtest"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/llmdouble"
	"github.com/featbench/featbench/internal/testenv"
)

// killOn is where a SIGKILL test's containers run, and how many the
// killed run has at work: the local engine (with 2 workers), or the swarm
// with a project whose containers reserve so much memory that one fits
// on a node (the killed run fills the swarm, and the next one stalls
// unless the dead run's reservations are let go).
func killOn(t *testing.T, backend, root string) (killtest.Where, int) {
	t.Helper()
	if backend == "local" {
		return killtest.Local(imagestest.Engine(t)), 2
	}
	manager, registry, push := testenv.Swarm(t)
	useSwarm(t, root, manager, registry, push)
	cli, err := client.New(client.WithHost(manager))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return killtest.Swarm(cli), killtest.FillSwarm(t, cli, filepath.Join(root, "featbench.toml"))
}

// runsOf matches the containers of the runs whose ids start with prefix.
func runsOf(prefix string) killtest.Match {
	return func(labels map[string]string) bool { return strings.HasPrefix(labels[evaluate.LabelRun], prefix) }
}

// TestKilledRunLeavesNothing: eval run SIGKILLed with its containers at
// work, on the local engine and on the swarm; the next run starts at
// once and, once it ended, none of the killed run's containers is left.
func TestKilledRunLeavesNothing(t *testing.T) {
	for _, backend := range []string{"local", "swarm"} {
		t.Run(backend, func(t *testing.T) {
			host := testenv.DockerHost(t)
			imagestest.Base(t)
			root := copyProject(t)
			w, inFlight := killOn(t, backend, root)
			bin := evalBinary(t)
			prefix := "kill-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"
			killtest.Kill{Where: w, Mine: runsOf(prefix), InFlight: inFlight, Stalls: backend == "swarm", Cmd: func(first bool) *exec.Cmd {
				c := exec.Command(bin, "run", "--root", root, "--dataset", "example/v3", "--split", "full", "--gold",
					"--workers", strconv.Itoa(inFlight), "--run-id", prefix+"killed")
				if !first {
					c.Args = append(c.Args[:len(c.Args)-1], prefix+"next", "--instance", "featbench__textkit.test_roman.0e26fade.lv1")
				}
				c.Env = append(os.Environ(), "DOCKER_HOST="+host)
				return c
			}}.Run(t)
		})
	}
}

// TestKilledInferLeavesNothingWithLLMTestDouble: eval infer SIGKILLed
// while its agents wait on the model (the LLM test double holds their
// requests), on the local engine and on the swarm; the next run starts at
// once and, once it ended, none of the killed run's containers is left.
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
			release := func() { once.Do(func() { close(dead) }) }
			dbl, err := llmdouble.Start(func(llmdouble.Request) llmdouble.Reply {
				<-dead
				return llmdouble.Reply{Text: "Nothing to do."}
			})
			if err != nil {
				t.Fatal(err)
			}
			defer dbl.Close()
			defer release()
			prefix := "kill-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"
			killtest.Kill{Where: w, Mine: runsOf(prefix), InFlight: inFlight, Stalls: backend == "swarm", Killed: release, Cmd: func(first bool) *exec.Cmd {
				c := exec.Command(bin, "infer", "--root", root, "--dataset", "example/v3", "--split", "lite", "--agent", "shell-loop",
					"--model", doubleModel, "--upstream", dbl.URL, "--workers", strconv.Itoa(inFlight), "--run-id", prefix+"killed")
				if !first {
					c.Args = append(c.Args[:len(c.Args)-1], prefix+"next", "--instance", inferL1)
				}
				c.Env = append(os.Environ(), "DOCKER_HOST="+host)
				return c
			}}.Run(t)
		})
	}
}
