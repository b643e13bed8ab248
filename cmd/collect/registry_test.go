package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/testenv"
)

// TestCollectOnRegistryBase collects the fixture library with its base
// image taken from the local registry by tag (base_image =
// "…/python:3.12-slim"), on the local engine and then on the swarm: each
// writes the base pinned by the digest the registry holds into
// dataset.toml (without a Debian Python), verifies its instances in an
// environment built on that image, and both write the same dataset.
func TestCollectOnRegistryBase(t *testing.T) {
	eng, tagged, pinned := imagestest.RegistryBase(t, "featbench-test/python:3.12-slim")
	host := testenv.DockerHost(t)
	withBase := func(root string) {
		t.Helper()
		p := filepath.Join(root, config.FileName)
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// The last table is the repository's.
		if err := os.WriteFile(p, append(raw, []byte("base_image = "+strconv.Quote(tagged)+"\n")...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(t *testing.T, root string) []byte {
		t.Helper()
		dir := filepath.Join(root, "data", "datasets", "mini", "v1")
		data, err := bench.LoadDatasets(context.Background(), filepath.Join(root, "data"))
		if err != nil {
			t.Fatal(err)
		}
		ds := data.Datasets[0]
		env := ds.Repos[0].Environment
		if env == nil || env.BaseImage != pinned || env.Python != "" {
			t.Fatalf("dataset.toml's environment: %+v; want base_image %s and no python", env, pinned)
		}
		if len(ds.Instances) == 0 {
			t.Fatal("no instance")
		}
		imgs, err := eng.Images(context.Background(), map[string]string{images.LabelKind: images.KindEnv, images.LabelRepo: swarmRepo})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, im := range imgs {
			if im.Ref == ds.Instances[0].ImageName {
				found = im.Labels[images.LabelBase] == pinned
			}
		}
		if !found {
			t.Errorf("the instances' image %s is not built on %s", ds.Instances[0].ImageName, pinned)
		}
		raw, err := os.ReadFile(filepath.Join(dir, bench.InstancesFile))
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	local := minilibProject(t, host, "")
	withBase(local)
	if err := eng.RemoveImage(context.Background(), pinned); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runCollect("--root", local, "--dataset", "mini/v1"); code != 0 {
		t.Fatalf("local collection: exit %d\n%s%s", code, out, errOut)
	}
	want := check(t, local)

	t.Run("swarm", func(t *testing.T) {
		manager, registry, push := testenv.Swarm(t)
		root := minilibProject(t, host, fmt.Sprintf("backend = \"swarm\"\n\n[eval.swarm]\nmanager = %q\nregistry = %q\npush_registry = %q\n", manager, registry, push))
		withBase(root)
		out, errOut, code := runCollect("--root", root, "--dataset", "mini/v1")
		if code != 0 {
			t.Fatalf("collection on the swarm: exit %d\n%s%s", code, out, errOut)
		}
		if !strings.Contains(errOut, "swarm") {
			t.Errorf("the collection does not say it ran on the swarm:\n%s", errOut)
		}
		if got := check(t, root); string(got) != string(want) {
			t.Errorf("the swarm's instances differ from the local engine's:\n%s\n%s", got, want)
		}
	})
}
