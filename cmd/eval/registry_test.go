package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/testenv"
)

// registryDataset writes, into a copy of the project, example/v4 as the
// version "registry" whose repository's base image is the registry's
// pinned, as cmd/collect writes it for a repository with a base_image:
// the environment is then built on that image instead of a Debian base.
func registryDataset(t *testing.T, root, pinned string) {
	t.Helper()
	src, dst := filepath.Join(root, "data", "datasets", "example", "v4"), filepath.Join(root, "data", "datasets", "example", "registry")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(src, "dataset.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), `version = "v4"`, `version = "registry"`, 1)
	text = strings.Replace(text, `python = "3.11"`, "base_image = "+strconv.Quote(pinned), 1)
	if !strings.Contains(text, pinned) {
		t.Fatal("example/v4's dataset.toml names no python to replace")
	}
	if err := os.WriteFile(filepath.Join(dst, "dataset.toml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	ins, err := os.ReadFile(filepath.Join(src, "instances.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "instances.jsonl"), ins, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runCounts reads a run's resolved and completed instances.
func runCounts(t *testing.T, dir string) (resolved, completed int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, evaluate.RunReportFile))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Resolved  int `json:"resolved_instances"`
		Completed int `json:"completed_instances"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	return r.Resolved, r.Completed
}

// TestRunOnRegistryBase grades, from a dataset whose repository's base
// image is pinned in a registry, the gold and the empty predictions of a
// level 1 and a level 2 instance: the base is pulled by its digest
// through the engine, the environment built on it, and the grades are
// those of the Debian base (gold resolves, empty does not). With a swarm
// (testenv.Swarm), the same again with backend = "swarm": the environment
// is pushed to the swarm's registry and referenced there by digest.
func TestRunOnRegistryBase(t *testing.T) {
	host := testenv.DockerHost(t)
	t.Setenv("DOCKER_HOST", host)
	eng, _, pinned := imagestest.RegistryBase(t, "featbench-test/python:3.12-slim")
	ctx := context.Background()
	ids := []string{"featbench__textkit.test_roman.0e26fade.lv1", "featbench__textkit.test_roman.0e26fade.lv2"}
	grade := func(t *testing.T, root, how string) {
		t.Helper()
		for _, baseline := range []string{"--gold", "--empty"} {
			id := "registry" + strings.TrimPrefix(baseline, "-") + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			args := []string{"run", "--root", root, "--dataset", "example/registry", "--split", "full", baseline, "--run-id", id}
			for _, in := range ids {
				args = append(args, "--instance", in)
			}
			_, errOut, code := runEval(t, args...)
			if code != 0 {
				t.Fatalf("%s: eval run %s: exit %d\n%s", how, baseline, code, errOut)
			}
			if onSwarm := strings.Contains(errOut, "the swarm at"); onSwarm != (how == "swarm") {
				t.Errorf("%s: eval run says it runs on the swarm: %v\n%s", how, onSwarm, errOut)
			}
			resolved, completed := runCounts(t, filepath.Join(root, "runs", id))
			want := map[string]int{"--gold": len(ids), "--empty": 0}[baseline]
			if completed != len(ids) || resolved != want {
				t.Errorf("%s %s: %d of %d completed resolved; want %d of %d\n%s", how, baseline, resolved, completed, want, len(ids), errOut)
			}
			// Graded in the environment built on the registry's base.
			rep, err := evaluate.ReadReport(filepath.Join(root, "runs", id, ids[0], "attempt-1"))
			if err != nil {
				t.Fatal(err)
			}
			imgs, err := eng.Images(ctx, map[string]string{images.LabelKind: images.KindEnv})
			if err != nil {
				t.Fatal(err)
			}
			onBase := false
			for _, im := range imgs {
				if im.Ref == rep.Image {
					onBase = im.Labels[images.LabelBase] == pinned
				}
			}
			if !onBase {
				t.Errorf("%s: graded in %s, which is not built on %s", how, rep.Image, pinned)
			}
		}
	}
	t.Run("local", func(t *testing.T) {
		root := copyProject(t)
		registryDataset(t, root, pinned)
		// The engine has no copy: eval pulls it by its digest.
		if err := eng.RemoveImage(ctx, pinned); err != nil {
			t.Fatal(err)
		}
		grade(t, root, "local")
		if ok, _ := eng.ImageExists(ctx, pinned); !ok {
			t.Errorf("the engine has no image %s after the run", pinned)
		}
	})
	t.Run("swarm", func(t *testing.T) {
		manager, registry, push := testenv.Swarm(t)
		root := copyProject(t)
		registryDataset(t, root, pinned)
		useSwarm(t, root, manager, registry, push)
		grade(t, root, "swarm")
	})
}
