package collect

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/images/imagestest"
)

// project makes a project folder with the fixture library minilib and a
// featbench.toml collecting from it.
func project(t *testing.T, extra string) (string, config.Config) {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "minilib"), os.DirFS("testdata/minilib")); err != nil {
		t.Fatal(err)
	}
	toml := `[collect]
workers = 2
release_date = "2026-11-01"
lite = 1

[[collect.repo]]
repository = "featbench/minilib"
source = "minilib"
install = ["pip install --no-index --no-deps --no-build-isolation -e ."]
import_name = "minilib"
min_lines = 1
min_f2p_points = 1
forbidden_links = ["https://github.com/featbench/minilib"]
` + extra
	p := filepath.Join(root, config.FileName)
	if err := os.WriteFile(p, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadRoot(p, root)
	if err != nil {
		t.Fatal(err)
	}
	return root, cfg
}

// TestCollectMinilib runs the whole pipeline on the fixture library in a
// real Docker engine, then again: the second run reuses every stage and
// writes the same instances, byte for byte.
func TestCollectMinilib(t *testing.T) {
	eng, _ := imagestest.Base(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	root, cfg := project(t, "")
	var log bytes.Buffer
	opts := Options{Root: root, Config: cfg, Dataset: "mini/v1", Seed: 7, Engine: eng, Log: &log}
	rep, err := Run(ctx, opts)
	if err != nil {
		t.Fatalf("collect: %v\n%s", err, log.String())
	}
	data, err := bench.LoadDatasets(ctx, filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Datasets[0]
	ids := map[string]*bench.Instance{}
	for _, in := range ds.Instances {
		ids[in.InstanceID] = in
	}
	r := rep.Repos[0]
	if r.TestFiles != 3 || r.Passing != 3 || r.Candidates != 3 || r.Traced != 3 || r.Kept != 4 || len(ds.Instances) != 4 {
		t.Fatalf("report %+v, %d instances\n%s", r, len(ds.Instances), log.String())
	}
	// test_util tests the helper every other file uses: no pass-to-pass
	// file can do without it.
	if len(r.Drops) != 1 || r.Drops[0].File != "tests/test_util.py" || r.Drops[0].Stage != StageP2P {
		t.Errorf("drops = %+v", r.Drops)
	}
	greet := ids["featbench__minilib.test_greet."+digest("tests/test_greet.py")[:8]+".lv1"]
	if greet == nil {
		t.Fatalf("no level 1 instance of test_greet among %v", keys(ids))
	}
	if want := []string{"minilib/greet.py::farewell::16", "minilib/greet.py::greet::6", "minilib/greet.py::shout::11"}; strings.Join(greet.TopObjects, " ") != strings.Join(want, " ") {
		t.Errorf("tops = %v, want %v", greet.TopObjects, want)
	}
	// The helper the pass-to-pass files use stays; the feature goes,
	// with the package's re-export of it.
	for _, want := range []string{"+def greet(name: str) -> str:", "+def farewell(", "+from minilib.greet import greet"} {
		if !strings.Contains(greet.Patch, want) {
			t.Errorf("gold patch lacks %q:\n%s", want, greet.Patch)
		}
	}
	if strings.Contains(greet.Patch, "def clean") {
		t.Errorf("the gold patch removes the shared helper:\n%s", greet.Patch)
	}
	if !strings.HasPrefix(greet.TestPatch, "diff --git a/tests/test_greet.py b/tests/test_greet.py\nnew file mode") {
		t.Errorf("test patch:\n%s", greet.TestPatch)
	}
	if len(greet.FailToPass) != 4 || len(greet.PassToPass) == 0 || strings.Contains(strings.Join(greet.PassToPass, " "), "test_greet") {
		t.Errorf("F2P %v, P2P %v", greet.FailToPass, greet.PassToPass)
	}
	for _, want := range []string{"Path: `/testbed/minilib/greet.py`", "def farewell(name: str, formal: bool = False) -> str:", "https://github.com/featbench/minilib"} {
		if !strings.Contains(greet.ProblemStatement, want) {
			t.Errorf("statement lacks %q:\n%s", want, greet.ProblemStatement)
		}
	}
	l2 := ids[strings.TrimSuffix(greet.InstanceID, ".lv1")+".lv2"]
	if l2 == nil || !strings.Contains(l2.TestPatch, "+from agent_code import farewell, greet, shout") || len(l2.PassToPass) != 0 {
		t.Errorf("level 2 instance: %+v", l2)
	}
	if ds.Collection == nil || ds.Collection.Repos[0].Kept != 4 {
		t.Errorf("collection.json: %+v", ds.Collection)
	}
	if s := ds.Split("lite"); s == nil || len(s.Instances) != 1 {
		t.Errorf("lite split: %+v", s)
	}

	// An existing version is never overwritten.
	if _, err := Run(ctx, opts); err == nil || !strings.Contains(err.Error(), "never overwritten") {
		t.Errorf("a second run into mini/v1: %v", err)
	}
	// Again into another version: every stage comes from the work folder,
	// and the instances are the same bytes.
	log.Reset()
	opts.Dataset = "mini/v2"
	rep2, err := Run(ctx, opts)
	if err != nil {
		t.Fatalf("second run: %v\n%s", err, log.String())
	}
	if len(rep2.Stages["featbench/minilib"]) != 10 {
		t.Errorf("stage times: %+v", rep2.Stages)
	}
	for _, s := range rep2.Stages["featbench/minilib"] {
		if !s.Reused {
			t.Errorf("stage %s ran again (%.1f s)", s.Stage, s.Seconds)
		}
	}
	a, _ := os.ReadFile(filepath.Join(root, "data/datasets/mini/v1", bench.InstancesFile))
	b, _ := os.ReadFile(filepath.Join(root, "data/datasets/mini/v2", bench.InstancesFile))
	if !bytes.Equal(a, b) {
		t.Error("the same inputs gave different instances.jsonl")
	}
	// collection.json differs only in the dataset's name.
	a, _ = os.ReadFile(filepath.Join(root, "data/datasets/mini/v1", bench.CollectionFile))
	b, _ = os.ReadFile(filepath.Join(root, "data/datasets/mini/v2", bench.CollectionFile))
	if !bytes.Equal(bytes.Replace(a, []byte("mini/v1"), []byte("mini/v2"), 1), b) {
		t.Errorf("the same inputs gave different collection.json:\n%s\n%s", a, b)
	}
}

func keys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// TestCollectErrors: a failing install and a repository without tests are
// clear errors naming the stage, and a stage run alone without the earlier
// stages' outputs says so.
func TestCollectErrors(t *testing.T) {
	eng, _ := imagestest.Base(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	root, cfg := project(t, "")
	cfg.Collect.Repos[0].Install = []string{"pip install --no-index --no-deps --no-build-isolation -e . && false"}
	_, err := Run(ctx, Options{Root: root, Config: cfg, Dataset: "mini/v1", Engine: eng})
	if err == nil || !strings.Contains(err.Error(), "stage env") || !strings.Contains(err.Error(), "false") {
		t.Errorf("failing install: %v", err)
	}

	// The only repository, from git without a release date in the
	// configuration, fails: the error says why, not that a date is
	// missing (which it took from the commit, had the repository been
	// collected).
	root, cfg = project(t, "")
	commit := gitInit(t, filepath.Join(root, "minilib"))
	cfg.Collect.ReleaseDate = ""
	cfg.Collect.Repos[0].Commit = commit
	cfg.Collect.Repos[0].Install = []string{"exit 7"}
	_, err = Run(ctx, Options{Root: root, Config: cfg, Dataset: "mini/v1", Engine: eng})
	if err == nil || !strings.Contains(err.Error(), "stage env") || !strings.Contains(err.Error(), "no repository was collected (1 failed)") ||
		strings.Contains(err.Error(), "release date") {
		t.Errorf("the only repository failing: %v", err)
	}

	root, cfg = project(t, "")
	if err := os.RemoveAll(filepath.Join(root, "minilib", "tests")); err != nil {
		t.Fatal(err)
	}
	_, err = Run(ctx, Options{Root: root, Config: cfg, Dataset: "mini/v1", Engine: eng})
	if err == nil || !strings.Contains(err.Error(), "stage discover") || !strings.Contains(err.Error(), "no tests") {
		t.Errorf("no tests: %v", err)
	}
	if _, serr := os.Stat(filepath.Join(root, "data", "datasets", "mini", "v1")); !errors.Is(serr, fs.ErrNotExist) {
		t.Errorf("a failed run left a dataset behind: %v", serr)
	}

	root, cfg = project(t, "")
	_, err = Run(ctx, Options{Root: root, Config: cfg, Dataset: "mini/v1", Engine: eng, Stage: StageWalk})
	if err == nil || !strings.Contains(err.Error(), "no stored output") {
		t.Errorf("--stage walk on an empty work folder: %v", err)
	}
}

// TestCollectPython313: a library whose pyproject.toml gives its license
// as a PEP 639 expression installs on the Python 3.13 base (Debian
// trixie's setuptools 78) and is collected there; listed again on 3.11
// (bookworm's setuptools 66 refuses it), that repository fails at the env
// stage, and the run goes on: the dataset is written from the other, and
// collection.json and the table report both.
func TestCollectPython313(t *testing.T) {
	eng, trixie := imagestest.BaseFor(t, "3.13")
	imagestest.Base(t) // the 3.11 base, for the repository that fails
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "pep639lib"), os.DirFS("testdata/pep639lib")); err != nil {
		t.Fatal(err)
	}
	repo := func(name, python string) string {
		return `
[[collect.repo]]
repository = "` + name + `"
source = "pep639lib"
python = "` + python + `"
install = ["pip install --no-index --no-deps --no-build-isolation -e ."]
import_name = "pep639lib"
min_lines = 1
min_f2p_points = 1
`
	}
	p := filepath.Join(root, config.FileName)
	toml := "[collect]\nworkers = 2\nrelease_date = \"2026-11-01\"\n" + repo("featbench/pep639lib", "3.13") + repo("featbench/pep639lib-bookworm", "3.11")
	if err := os.WriteFile(p, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadRoot(p, root)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	rep, err := Run(ctx, Options{Root: root, Config: cfg, Dataset: "spdx/v1", Engine: eng, Log: &log})
	if err != nil {
		t.Fatalf("collect: %v\n%s", err, log.String())
	}
	var table bytes.Buffer
	WriteTable(&table, rep)
	t.Logf("%s", table.String())

	data, err := bench.LoadDatasets(ctx, filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Datasets[0]
	if len(ds.Repos) != 1 || ds.Repos[0].Name != "featbench/pep639lib" || ds.Repos[0].Environment.Python != "3.13" {
		t.Errorf("dataset.toml's repositories: %+v", ds.Repos)
	}
	if len(ds.Instances) == 0 {
		t.Fatalf("no instance\n%s", log.String())
	}
	// Verified, and to be graded, on an environment built on the 3.13 base.
	for _, in := range ds.Instances {
		if in.Repo != "featbench/pep639lib" {
			t.Errorf("%s is from %s", in.InstanceID, in.Repo)
		}
	}
	imgs, err := eng.Images(ctx, map[string]string{images.LabelKind: images.KindEnv, images.LabelRepo: "featbench/pep639lib"})
	if err != nil {
		t.Fatal(err)
	}
	onTrixie := false
	for _, im := range imgs {
		if im.Ref == ds.Instances[0].ImageName {
			onTrixie = im.Labels[images.LabelBase] == trixie
		}
	}
	if !onTrixie {
		t.Errorf("the instances' image %s is not built on the 3.13 base %s: %+v", ds.Instances[0].ImageName, trixie, imgs)
	}

	c := ds.Collection
	if c == nil || len(c.Repos) != 2 {
		t.Fatalf("collection.json: %+v", c)
	}
	ok, failed := c.Repos[0], c.Repos[1]
	if ok.Failure != nil || ok.Kept != len(ds.Instances) || ok.TestFiles != 2 {
		t.Errorf("collected repository: %+v", ok)
	}
	if f := failed.Failure; f == nil || f.Stage != StageEnv || strings.ContainsAny(f.Reason, "\n\r") || !strings.Contains(f.Reason, "env.log") {
		t.Errorf("failed repository: %+v, failure %+v", failed, f)
	}
	for _, want := range []string{"featbench/pep639lib-bookworm: failed at stage env: ", "  failed\n"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q", want)
		}
	}
	envLog, _ := os.ReadFile(filepath.Join(root, ".cache", "collect", fileKey("featbench/pep639lib-bookworm"), "env.log"))
	if !strings.Contains(string(envLog), "license") {
		t.Errorf("env.log of the failed repository does not show why:\n%s", envLog)
	}
}

// TestRunFileTampering: a test file whose run changes pytest's machinery
// (boltons' test_tbutils sets sys.excepthook to the library's function)
// passes under pytest, but grading believes none of its outcomes, so it
// does not pass here: as a pass-to-pass file it made every instance that
// drew it fail verification with GraderTampering.
func TestRunFileTampering(t *testing.T) {
	eng, base := imagestest.Base(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ls, err := executor.Hold(ctx, executor.Local(eng), "test "+t.Name(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Release()
	b, err := openBox(ctx, ls, base, "featbench/tamper", container.Limits{}, "")
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	if err := b.c.CopyIn(ctx, fbDir, scripts()); err != nil {
		t.Fatal(err)
	}
	if err := b.c.CopyIn(ctx, repoDir, []container.File{
		{Path: "hook.py", Data: []byte("def show(*a):\n    pass\n")},
		{Path: "test_plain.py", Data: []byte("def test_it():\n    assert 1\n")},
		{Path: "test_hook.py", Data: []byte("import sys\n\nimport hook\n\n\ndef test_it():\n    sys.excepthook = hook.show\n    assert 1\n")},
	}); err != nil {
		t.Fatal(err)
	}
	for file, wantOK := range map[string]bool{"test_plain.py": true, "test_hook.py": false} {
		out, err := runFile(ctx, b, file, []string{file + "::test_it"}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if out.OK != wantOK || len(out.Passed) != 1 {
			t.Errorf("%s: ok %v (want %v), passed %q, tampering %q", file, out.OK, wantOK, out.Passed, out.Tampering)
		}
		if !wantOK && (len(out.Tampering) == 0 || !strings.Contains(out.Tampering[0], "excepthook")) {
			t.Errorf("%s: tampering %q, want sys.excepthook named", file, out.Tampering)
		}
	}
}

// gitInit makes dir a git repository of one commit of its files and
// returns the commit.
func gitInit(t *testing.T, dir string) string {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "fixture"}} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args, err, out)
		}
	}
	out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestCollectP2PParametrizedOverTheFeature: a pass-to-pass file whose
// tests are parametrized over the package's public names (python-semver's
// test_docstrings) has fewer tests on the masked codebase. Those vanished
// tests are the feature's and are left out of PASS_TO_PASS; before, the
// empty run's missing ids took the fail-to-pass file's ImportError and
// every such candidate was dropped ("the masked codebase fails
// pass-to-pass tests: ImportError") though each test that ran passed.
func TestCollectP2PParametrizedOverTheFeature(t *testing.T) {
	eng, _ := imagestest.Base(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "paramlib"), os.DirFS("testdata/paramlib")); err != nil {
		t.Fatal(err)
	}
	toml := `[collect]
workers = 2
release_date = "2026-11-01"

[[collect.repo]]
repository = "featbench/paramlib"
source = "paramlib"
install = ["pip install --no-index --no-deps --no-build-isolation -e ."]
import_name = "paramlib"
min_lines = 1
min_f2p_points = 1
levels = [1]
p2p_files = [2, 2]
`
	p := filepath.Join(root, config.FileName)
	if err := os.WriteFile(p, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadRoot(p, root)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	rep, err := Run(ctx, Options{Root: root, Config: cfg, Dataset: "param/v1", Engine: eng, Log: &log})
	if err != nil {
		t.Fatalf("collect: %v\n%s", err, log.String())
	}
	data, err := bench.LoadDatasets(ctx, filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	var text *bench.Instance
	for _, in := range data.Datasets[0].Instances {
		if strings.Contains(in.InstanceID, ".test_text.") {
			text = in
		}
	}
	if text == nil {
		t.Fatalf("test_text gave no instance; drops %+v", rep.Repos[0].Drops)
	}
	p2p := strings.Join(text.PassToPass, " ")
	for _, want := range []string{"tests/test_docs.py::test_documented[add]", "tests/test_docs.py::test_documented[mul]", "tests/test_ops.py::test_add"} {
		if !strings.Contains(p2p, want) {
			t.Errorf("PASS_TO_PASS lacks %s: %s", want, p2p)
		}
	}
	if strings.Contains(p2p, "[shout]") || strings.Contains(p2p, "[whisper]") {
		t.Errorf("PASS_TO_PASS holds the tests of the masked names: %s", p2p)
	}
}
