package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/events"
	"github.com/moby/moby/api/types/swarm"
	"github.com/moby/moby/client"

	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/images/imagestest"
	fbswarm "github.com/featbench/featbench/internal/swarm"
	"github.com/featbench/featbench/internal/testenv"
)

// swarmRepo is the repository the swarm test collects: minilib under a
// name of its own, so that its containers are told apart (by their
// featbench.repo label) from those of other tests on the same engines.
const swarmRepo = "featbench/minilib-swarm"

// minilibProject makes a project folder with internal/collect's fixture
// library and a featbench.toml collecting it with the containers on the
// engine at host, the [eval] table ending with evalExtra.
func minilibProject(t *testing.T, host, evalExtra string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "minilib"), os.DirFS("../../internal/collect/testdata/minilib")); err != nil {
		t.Fatal(err)
	}
	toml := fmt.Sprintf(`[eval]
docker_host = %q
memory = "1g"
%s
[collect]
workers = 2
release_date = "2026-11-01"

[[collect.repo]]
repository = %q
source = "minilib"
install = ["pip install --no-index --no-deps --no-build-isolation -e ."]
import_name = "minilib"
min_lines = 1
min_f2p_points = 1
levels = [1] # level 2's verification is the same flow again: half the test's time
`, host, evalExtra, swarmRepo)
	if err := os.WriteFile(filepath.Join(root, config.FileName), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestCollectSwarm collects the fixture library on the local engine and
// with [eval] backend = "swarm": the swarm's nodes run every container of
// the second collection (the local engine none, though it builds the
// images), and both write the same dataset, file for file.
func TestCollectSwarm(t *testing.T) {
	imagestest.Base(t) // the base image, built once per machine
	host := testenv.DockerHost(t)
	manager, registry, push := testenv.Swarm(t)
	nodes := nodeEngines(t, manager)
	local := minilibProject(t, host, "")
	onSwarm := minilibProject(t, host, fmt.Sprintf("backend = \"swarm\"\n\n[eval.swarm]\nmanager = %q\nregistry = %q\npush_registry = %q\n", manager, registry, push))
	// One worker: the swarm, which has room for more, admits the
	// containers by its room instead.
	onePath := filepath.Join(onSwarm, config.FileName)
	raw, err := os.ReadFile(onePath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(onePath, bytes.Replace(raw, []byte("workers = 2"), []byte("workers = 1"), 1), 0o644); err != nil {
		t.Fatal(err)
	}

	localOnLocal := watch(t, host)
	start := time.Now()
	if out, errOut, code := runCollect("--root", local, "--dataset", "mini/v1"); code != 0 {
		t.Fatalf("local collection: exit %d\n%s%s", code, out, errOut)
	}
	mid := time.Now()
	if n, _ := localOnLocal(); n == 0 {
		t.Error("the local collection started no container on the local engine: the checks below prove nothing")
	}
	swarmOnLocal := watch(t, host)
	swarmOnNodes := watch(t, nodes...)
	out, errOut, code := runCollect("--root", onSwarm, "--dataset", "mini/v1")
	if code != 0 {
		t.Fatalf("collection on the swarm: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("local %s, swarm %s\n%s", mid.Sub(start).Round(time.Second), time.Since(mid).Round(time.Second), out)
	if n, _ := swarmOnLocal(); n != 0 {
		t.Errorf("the collection on the swarm started %d containers on the local engine", n)
	}
	onNodes, mostAtOnce := swarmOnNodes()
	if onNodes == 0 {
		t.Error("the collection on the swarm started no container on the swarm's nodes")
	}
	t.Logf("%d containers on the swarm's nodes", onNodes)
	if mostAtOnce < 2 {
		t.Errorf("at most %d of the collection's containers ran at once on the swarm: with workers = 1, the swarm's room, not the workers, should bound them", mostAtOnce)
	}

	// The same dataset: instances (fail-to-pass and pass-to-pass lists,
	// patches, statements), collection.json's counts and drops, splits.
	a, b := filepath.Join(local, "data/datasets/mini/v1"), filepath.Join(onSwarm, "data/datasets/mini/v1")
	files := 0
	err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil {
			t.Errorf("the swarm's dataset lacks %s: %v", rel, err)
		} else if !bytes.Equal(got, want) {
			t.Errorf("%s differs:\nlocal:\n%s\nswarm:\n%s", rel, want, got)
		}
		files++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := filepath.WalkDir(b, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files--
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if files != 0 {
		t.Errorf("the datasets hold different numbers of files (local minus swarm: %d)", files)
	}
}

// nodeEngines are the engines of the swarm's nodes, once every node is
// ready (a node another test stopped may be coming back).
func nodeEngines(t *testing.T, manager string) []string {
	t.Helper()
	cli, err := client.New(client.WithHost(manager))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for {
		res, err := cli.NodeList(ctx, client.NodeListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var hosts []string
		for _, n := range res.Items {
			if n.Status.State == swarm.NodeStateReady {
				hosts = append(hosts, n.Spec.Labels[fbswarm.EngineLabel])
			}
		}
		if len(hosts) == len(res.Items) {
			return hosts
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d nodes ready", len(hosts), len(res.Items))
		case <-time.After(time.Second):
		}
	}
}

// watch follows the containers of swarmRepo's collection on the engines
// at hosts, from their create to their destroy events, until the function
// it returns is called, which says how many were created and the most
// that existed at once. The events are read as they come: an engine keeps
// only its last 256 for a later query, which other tests on a shared
// engine soon push out.
func watch(t *testing.T, hosts ...string) (stop func() (created, most int)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	created, cur, most := 0, 0, 0
	var wg sync.WaitGroup
	for _, host := range hosts {
		cli, err := client.New(client.WithHost(host))
		if err != nil {
			t.Fatal(err)
		}
		res := cli.Events(ctx, client.EventsListOptions{
			Filters: make(client.Filters).Add("type", string(events.ContainerEventType)).
				Add("event", string(events.ActionCreate)).Add("event", string(events.ActionDestroy)).
				Add("label", "featbench.repo="+swarmRepo),
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cli.Close()
			for {
				select {
				case m := <-res.Messages:
					mu.Lock()
					if m.Action == events.ActionCreate {
						created++
						cur++
					} else {
						cur--
					}
					most = max(most, cur)
					mu.Unlock()
				case err := <-res.Err:
					if err != nil && ctx.Err() == nil {
						t.Errorf("events of %s: %v", host, err)
					}
					return
				}
			}
		}()
	}
	return func() (int, int) {
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return created, most
	}
}
