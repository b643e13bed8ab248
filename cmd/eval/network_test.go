package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/pyindex/pyindextest"
	"github.com/featbench/featbench/internal/testenv"
)

// wordcase is a package no Debian release ships: examples/indexlib needs
// it, and the test serves its wheel from a local index.
const wordcase = `"""Splits text into words: on what is not a letter or digit, and between
a lower-case letter and an upper-case one."""

import re


def split_words(text):
    words = []
    for part in re.split(r"[^0-9A-Za-z]+", text):
        words += re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", part)
    return words
`

// TestNetworkedCollectAndRebuild is the round trip of a networked
// environment, from a fresh clone: examples/indexlib, whose metadata pins
// wordcase (only the test index has it) and pytest 8.3 (newer than the
// 3.11 base's Debian pytest 7.2), is collected by cmd/collect with
// network = "build" from a local index (wheels the test makes, and
// Debian trixie's pytest and pluggy repackaged), with exclude_newer =
// "commit" hiding a wordcase released after the commit. The dataset
// records the lock; with the environment image removed, eval images
// --build rebuilds it from the lock behind the gate, and the environment
// has the same pip freeze.
func TestNetworkedCollectAndRebuild(t *testing.T) {
	host := testenv.DockerHost(t)
	eng, _ := imagestest.Base(t)
	_, trixie := imagestest.BaseFor(t, "3.13")
	t.Setenv("DOCKER_HOST", host)
	ctx := context.Background()

	ix := pyindextest.Serve(t, t.TempDir())
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, whl := range pyindextest.DebianWheels(t, eng, trixie, ix.Dir, "python3-pytest", "python3-pluggy") {
		os.Chtimes(filepath.Join(ix.Dir, whl), old, old)
	}
	name, data := pyindextest.Wheel("wordcase", "1.2", map[string]string{"wordcase.py": wordcase})
	ix.Add(t, name, data, old)
	name, data = pyindextest.Wheel("wordcase", "1.3", map[string]string{"wordcase.py": "raise ImportError('released after the commit')\n"})
	ix.Add(t, name, data, time.Now().Add(48*time.Hour))

	root := t.TempDir()
	src := filepath.Join(root, "indexlib")
	if err := os.CopyFS(src, os.DirFS(filepath.Join("..", "..", "examples", "indexlib"))); err != nil {
		t.Fatal(err)
	}
	commit := gitInit(t, src)
	toml := `[collect]
workers = 2

[[collect.repo]]
repository = "featbench/indexlib"
source = "indexlib"
commit = "` + commit + `"
python = "3.11"
network = "build"
index_url = "` + ix.URL + `"
exclude_newer = "commit"
install = ["pip install --no-build-isolation -e .[test]"]
import_name = "indexlib"
min_lines = 1
min_f2p_points = 1
levels = [1]
`
	if err := os.WriteFile(filepath.Join(root, "featbench.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	collectBin := filepath.Join(t.TempDir(), "collect")
	if out, err := exec.Command("go", "build", "-o", collectBin, "../collect").CombinedOutput(); err != nil {
		t.Fatalf("go build ../collect: %v\n%s", err, out)
	}
	cmd := exec.Command(collectBin, "--root", root, "--dataset", "indexed/v1")
	cmd.Env = append(os.Environ(), "DOCKER_HOST="+host)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("collect: %v\n%s", err, out)
	}
	t.Logf("collect:\n%s", out)

	loaded, err := bench.LoadDatasets(ctx, filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	ds := loaded.Dataset("indexed/v1")
	if ds == nil || len(ds.Instances) == 0 {
		t.Fatalf("no instances: %+v", ds)
	}
	env := ds.Repository("featbench/indexlib").Environment
	versions := map[string]string{}
	for _, p := range env.Lock {
		versions[p.Name] = p.Version
		if len(p.Hashes) != 1 {
			t.Errorf("%s %s: hashes %v", p.Name, p.Version, p.Hashes)
		}
	}
	if env.Network != bench.NetworkBuild || env.IndexURL != ix.URL || env.ExcludeNewer == "" ||
		versions["wordcase"] != "1.2" || !strings.HasPrefix(versions["pytest"], "8.") || versions["pluggy"] == "" || len(versions) != 3 {
		t.Fatalf("the dataset's environment: %+v", env)
	}

	image := ds.Instances[0].ImageName
	freeze := func() string {
		c, err := eng.Start(ctx, container.Spec{Image: image, Name: "featbench-test-freeze", Labels: map[string]string{"featbench.test": "network"}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Remove()
		res, err := c.Exec(ctx, []string{"cat", "/opt/featbench/freeze.txt"}, container.ExecOptions{Timeout: time.Minute})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("reading the freeze: %v %s", err, res.Stderr)
		}
		return string(res.Stdout)
	}
	before := freeze()
	if err := eng.RemoveImage(ctx, image); err != nil {
		t.Fatal(err)
	}
	stdout, errOut, code := runEval(t, "images", "--root", root, "--build", "--dataset", "indexed/v1")
	if code != 0 || !strings.Contains(stdout, image) {
		t.Fatalf("eval images --build: exit %d\n%s\n%s", code, stdout, errOut)
	}
	if !strings.Contains(errOut, "behind a build gate to "+ix.URL) {
		t.Errorf("the rebuild did not go through the gate:\n%s", errOut)
	}
	if after := freeze(); after != before {
		t.Errorf("the rebuilt environment's freeze:\n%s\nwas:\n%s", after, before)
	}
	t.Logf("the environment:\n%s", before)
}

// gitInit makes dir a git repository of one commit of its files and
// returns the commit.
func gitInit(t *testing.T, dir string) string {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "fixture"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args, err, out)
		}
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
