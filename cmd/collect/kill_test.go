package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/executor/killtest"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/testenv"
)

// killRepo is the repository the SIGKILL test collects: minilib under a
// name of its own, whose containers (featbench.repo) are the test's.
const killRepo = "featbench/minilib-kill"

// TestKilledCollectLeavesNothing: cmd/collect SIGKILLed with its
// containers at work, on the local engine and on the swarm; collecting
// again starts at once and, once it ended, none of the killed
// collection's containers is left.
func TestKilledCollectLeavesNothing(t *testing.T) {
	for _, backend := range []string{"local", "swarm"} {
		t.Run(backend, func(t *testing.T) {
			imagestest.Base(t)
			host := testenv.DockerHost(t)
			extra := ""
			var cli *client.Client
			if backend == "swarm" {
				manager, registry, push := testenv.Swarm(t)
				extra = fmt.Sprintf("backend = \"swarm\"\n\n[eval.swarm]\nmanager = %q\nregistry = %q\npush_registry = %q\n", manager, registry, push)
				var err error
				if cli, err = client.New(client.WithHost(manager)); err != nil {
					t.Fatal(err)
				}
				defer cli.Close()
			}
			root := minilibProject(t, host, extra)
			path := filepath.Join(root, config.FileName)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(strings.Replace(string(raw), swarmRepo, killRepo, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			w, inFlight := killtest.Local(imagestest.Engine(t)), 2
			if backend == "swarm" {
				w, inFlight = killtest.Swarm(cli), killtest.FillSwarm(t, cli, path)
			}
			bin := filepath.Join(t.TempDir(), "collect")
			if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			killtest.Kill{Where: w, InFlight: inFlight, Stalls: backend == "swarm",
				Mine: func(labels map[string]string) bool { return labels["featbench.repo"] == killRepo },
				Cmd: func(bool) *exec.Cmd {
					c := exec.Command(bin, "--root", root, "--dataset", "mini/v1")
					c.Env = append(os.Environ(), "DOCKER_HOST="+host)
					return c
				}}.Run(t)
		})
	}
}
