package collect

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/images/imagestest"
)

// gitRepo is a git repository a test writes, commit by commit, at fixed
// dates, so that its hashes are the same on every run.
type gitRepo struct {
	t   *testing.T
	dir string
	now time.Time
}

func newGitRepo(t *testing.T, dir string) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	g := &gitRepo{t: t, dir: dir, now: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)}
	g.git("init", "-q", "-b", "main")
	return g
}

func (g *gitRepo) git(args ...string) string {
	g.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", g.dir, "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
	date := g.now.Format(time.RFC3339)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.invalid", "GIT_COMMITTER_NAME=C", "GIT_COMMITTER_EMAIL=c@example.invalid",
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// write writes files, path then content ("" deletes).
func (g *gitRepo) write(pairs ...string) {
	g.t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		p := filepath.Join(g.dir, filepath.FromSlash(pairs[i]))
		if pairs[i+1] == "" {
			if err := os.Remove(p); err != nil {
				g.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			g.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(pairs[i+1]), 0o644); err != nil {
			g.t.Fatal(err)
		}
	}
}

func (g *gitRepo) commit(msg string) string {
	g.t.Helper()
	g.now = g.now.Add(24 * time.Hour)
	g.git("add", "-A")
	g.git("commit", "-q", "--allow-empty", "-m", msg)
	return g.git("rev-parse", "HEAD")
}

// pull makes a pull request merged with a merge commit: a branch with one
// commit of the files, merged into main.
func (g *gitRepo) pull(n int, title string, pairs ...string) string {
	g.t.Helper()
	br := fmt.Sprintf("pr%d", n)
	g.git("checkout", "-q", "-b", br)
	g.write(pairs...)
	g.commit(title)
	g.git("checkout", "-q", "main")
	g.now = g.now.Add(24 * time.Hour)
	g.git("merge", "-q", "--no-ff", "-m", fmt.Sprintf("Merge pull request #%d from someone/%s\n\n%s", n, br, title), br)
	return g.git("rev-parse", "HEAD")
}

// squash makes a pull request merged as one squash commit.
func (g *gitRepo) squash(n int, title string, pairs ...string) string {
	g.t.Helper()
	g.write(pairs...)
	return g.commit(fmt.Sprintf("%s (#%d)", title, n))
}

const geomCore = `"""Plane geometry."""


def area(w, h):
    """The area of a w by h rectangle."""
    return w * h


def perimeter(w, h):
    return 2 * (w + h)
`

const geomTests = `from geom.core import area, perimeter


def test_area():
    assert area(2, 3) == 6


def test_perimeter():
    assert perimeter(2, 3) == 10
`

// buildGeom writes a small library with a history: a first release, then
// pull requests of every kind the release method must tell apart, a
// changelog naming them, and a second release.
func buildGeom(t *testing.T, dir string) (*gitRepo, map[string]string) {
	g := newGitRepo(t, dir)
	g.write("pyproject.toml", "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"geom\"\nversion = \"1.0\"\n\n[tool.setuptools]\npackages = [\"geom\"]\n",
		"geom/__init__.py", "\n", "geom/core.py", geomCore, "tests/__init__.py", "\n", "tests/test_core.py", geomTests,
		"tests/test_misc.py", "def test_truth():\n    assert True\n",
		"CHANGELOG.md", "# Changelog\n\n## 1.0.0\n\n- First release.\n")
	g.commit("Initial import")
	g.git("tag", "-a", "v1.0.0", "-m", "Release 1.0.0")
	hashes := map[string]string{}

	// #2: a feature that only modifies area, with a test that fails
	// before it, and a binary file beside it.
	hashes["scale"] = g.pull(2, "Add a scale to area",
		"geom/core.py", strings.Replace(geomCore, "def area(w, h):\n    \"\"\"The area of a w by h rectangle.\"\"\"\n    return w * h",
			"def area(w, h, scale=1):\n    \"\"\"The area of a w by h rectangle, scaled.\"\"\"\n    return w * h * scale", 1),
		"tests/test_core.py", geomTests+"\n\ndef test_area_scaled():\n    assert area(2, 3, scale=2) == 12\n",
		"docs/logo.png", "\x89PNG\x00\x01\x02\x00binary")
	// #3: a feature that adds a function.
	withScale := strings.Replace(geomCore, "def area(w, h):\n    \"\"\"The area of a w by h rectangle.\"\"\"\n    return w * h",
		"def area(w, h, scale=1):\n    \"\"\"The area of a w by h rectangle, scaled.\"\"\"\n    return w * h * scale", 1)
	g.squash(3, "Add volume", "geom/core.py", withScale+"\n\ndef volume(w, h, d):\n    return w * h * d\n",
		"tests/test_volume.py", "from geom.core import volume\n\n\ndef test_volume():\n    assert volume(1, 2, 3) == 6\n")
	withVolume := withScale + "\n\ndef volume(w, h, d):\n    return w * h * d\n"
	// #4: a fix.
	g.squash(4, "Fix perimeter of squares", "geom/core.py", strings.Replace(withVolume, "return 2 * (w + h)", "return 2 * w + 2 * h", 1))
	fixed := strings.Replace(withVolume, "return 2 * (w + h)", "return 2 * w + 2 * h", 1)
	// #5: a feature whose test patch only deletes tests.
	g.squash(5, "Support negative sides", "geom/core.py", strings.Replace(fixed, "def perimeter(w, h):\n", "def perimeter(w, h):\n    w, h = abs(w), abs(h)\n", 1),
		"tests/test_misc.py", "")
	withAbs := strings.Replace(fixed, "def perimeter(w, h):\n", "def perimeter(w, h):\n    w, h = abs(w), abs(h)\n", 1)
	// #6: a feature of the documentation only.
	g.squash(6, "Add a usage guide", "docs/usage.md", "# Usage\n\nCall area.\n", "tests/test_docs.py", "def test_docs():\n    assert True\n")
	// #7: a feature whose new test already passes before it.
	g.pull(7, "Allow float sides in perimeter", "geom/core.py", strings.Replace(withAbs, "    return 2 * w + 2 * h", "    return float(2 * w + 2 * h) if isinstance(w, float) else 2 * w + 2 * h", 1),
		"tests/test_core.py", geomTests+"\n\ndef test_area_scaled():\n    assert area(2, 3, scale=2) == 12\n\n\ndef test_perimeter_int():\n    assert perimeter(1, 1) == 4\n")
	g.write("CHANGELOG.md", "# Changelog\n\n## [1.1.0] - 2025-03-20\n\n### Added\n\n"+
		"- `area` takes a `scale` factor (#2).\n- A `volume` function (#3).\n- Negative sides are supported (#5).\n- A usage guide (#6).\n- `perimeter` accepts float sides (#7).\n\n"+
		"### Fixed\n\n- The perimeter of squares (#4).\n\n## 1.0.0\n\n- First release.\n")
	hashes["tip"] = g.commit("Release 1.1.0")
	g.git("tag", "v1.1.0")
	return g, hashes
}

// TestCollectReleaseMethod collects from a library whose history the test
// writes, with the release method, on the real Docker engine and without
// an LLM (the rules sort the notes and write the request): one pull
// request of six survives, each other dropped with its reason; the
// instance grades with the evaluation harness; its container's .git holds
// nothing of the history; a second run gives the same dataset byte for
// byte.
func TestCollectReleaseMethod(t *testing.T) {
	eng, _ := imagestest.Base(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	root := t.TempDir()
	if d := os.Getenv("FEATBENCH_TEST_KEEP"); d != "" {
		root = d // a folder to look into after the test
	}
	g, hashes := buildGeom(t, filepath.Join(root, "geom"))
	toml := fmt.Sprintf(`[collect]
workers = 2
release_date = "2026-11-01"

[[collect.repo]]
repository = "acme/geom"
source = "geom"
commit = "%s"
method = "release"
install = ["pip install --no-index --no-deps --no-build-isolation -e ."]
import_name = "geom"
`, hashes["tip"])
	p := filepath.Join(root, config.FileName)
	if err := os.WriteFile(p, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadRoot(p, root)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	rep, err := Run(ctx, Options{Root: root, Config: cfg, Dataset: "geom/v1", Seed: 3, Engine: eng, Log: &log})
	if err != nil {
		var table bytes.Buffer
		if rep != nil {
			WriteTable(&table, rep)
			for _, r := range rep.Repos {
				for _, d := range r.Drops {
					fmt.Fprintf(&table, "%s #%d %s: %s\n", d.File, d.Pull, d.Stage, d.Reason)
				}
			}
		}
		t.Fatalf("collect: %v\n%s\n%s", err, log.String(), table.String())
	}
	r := rep.Repos[0]
	if r.Method != bench.MethodRelease {
		t.Errorf("method %q", r.Method)
	}
	funnel := map[string]int{}
	var steps []string
	for _, s := range r.Funnel {
		funnel[s.Step] = s.Count
		steps = append(steps, s.Step)
	}
	wantSteps := []string{stepReleases, stepEntries, stepWanted, stepPulls, stepReadable, stepPython, stepTests, stepModifies, "verified", "with a statement", "kept"}
	if !reflect.DeepEqual(steps, wantSteps) {
		t.Errorf("funnel steps %q, want %q", steps, wantSteps)
	}
	for k, v := range map[string]int{stepReleases: 2, stepEntries: 7, stepWanted: 5, stepPulls: 5, stepPython: 4, stepTests: 3, stepModifies: 2, "verified": 1, "kept": 1} {
		if funnel[k] != v {
			t.Errorf("funnel %q = %d, want %d (funnel %v)", k, funnel[k], v, r.Funnel)
		}
	}
	why := map[int]string{}
	for _, d := range r.Drops {
		if d.Pull > 0 {
			why[d.Pull] = d.Stage + ": " + d.Reason
		}
	}
	for n, want := range map[int]string{
		3: "filter: the code patch adds definitions: volume (geom/core.py)",
		5: "filter: the test patch only deletes tests (tests/test_misc.py)",
		6: "filter: the code patch changes no Python file",
		7: "verify: no test of the test patch fails before the patch and passes after it",
	} {
		if why[n] != want {
			t.Errorf("#%d dropped for %q, want %q", n, why[n], want)
		}
	}
	if _, ok := why[2]; ok {
		t.Errorf("#2 dropped: %s\n%s", why[2], log.String())
	}
	if !slices.ContainsFunc(r.Drops, func(d Drop) bool {
		return d.File == "v1.1.0: The perimeter of squares." && d.Reason == "not wanted: its kind is fix (release_kinds: feature)"
	}) {
		t.Errorf("the fix entry's drop is missing: %+v", r.Drops)
	}

	data, err := bench.LoadDatasets(ctx, filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	ds := data.Datasets[0]
	if len(ds.Instances) != 1 {
		t.Fatalf("%d instances", len(ds.Instances))
	}
	in := ds.Instances[0]
	base := g.git("rev-parse", hashes["scale"]+"^1")
	if in.InstanceID != "acme__geom-2.release" || in.Method != bench.MethodRelease || in.PullNumber != 2 || in.Release != "v1.1.0" || in.BaseCommit != base {
		t.Errorf("instance %s: method %q, pull %d, release %q, base %s (want %s)", in.InstanceID, in.Method, in.PullNumber, in.Release, in.BaseCommit, base)
	}
	if len(in.Canaries) == 0 {
		t.Error("the instance carries no canaries: its verification derived none")
	}
	if !reflect.DeepEqual(in.FailToPass, []string{"tests/test_core.py::test_area_scaled"}) {
		t.Errorf("FAIL_TO_PASS %q", in.FailToPass)
	}
	for _, id := range []string{"tests/test_core.py::test_area", "tests/test_core.py::test_perimeter", "tests/test_misc.py::test_truth"} {
		if !slices.Contains(in.PassToPass, id) {
			t.Errorf("PASS_TO_PASS %q lacks %s", in.PassToPass, id)
		}
	}
	if strings.Contains(in.Patch+in.TestPatch, "logo.png") || strings.Contains(in.TestPatch, "geom/core.py") || !strings.Contains(in.Patch, "scale=1") {
		t.Errorf("patches:\n%s\n%s", in.Patch, in.TestPatch)
	}
	if !strings.HasPrefix(in.ProblemStatement, "I want to") || hasCode(in.ProblemStatement) != "" || leaks(in.ProblemStatement, in.Patch, in.TestPatch) != "" {
		t.Errorf("statement:\n%s", in.ProblemStatement)
	}

	// Graded as cmd/eval grades it: the image from the instance, the
	// gold patch resolves. A prediction that also checks, when the
	// library is imported by the tests, that the repository holds one
	// commit and no tag, and none of the history's commits, resolves too:
	// the seal leaves nothing of the history reachable.
	baseImg, err := images.EnsureBase(ctx, eng, images.BaseSpec{Prefix: cfg.Eval.ImagePrefix}, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := images.EnvSpec{Name: "acme/geom", Source: images.Source{GitURL: filepath.Join(root, "geom")},
		Install: cfg.Collect.Repos[0].Install, Base: baseImg, Prefix: cfg.Eval.ImagePrefix}
	img, err := images.EnsureEnv(ctx, eng, evaluate.HistoryEnv(spec, in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if img != in.ImageName {
		t.Errorf("cmd/eval's image %s is not collection's %s", img, in.ImageName)
	}
	lim, _ := evaluate.ConfigLimits(cfg.Eval)
	sealCheck := fmt.Sprintf(`
import subprocess as _sp
def _git(*a):
    return _sp.run(["git", "-c", "safe.directory=*", "-C", "/testbed"] + list(a), capture_output=True, text=True)
_kinds = _git("cat-file", "--batch-all-objects", "--batch-check=%%(objecttype)").stdout.split()
if _kinds.count("commit") != 1 or "tag" in _kinds or _git("tag").stdout.strip():
    raise RuntimeError("the history is reachable: %%r" %% (_kinds,))
for _h in (%q, %q, %q):
    if _git("cat-file", "-e", _h).returncode == 0:
        raise RuntimeError("a commit of the history is in the repository: " + _h)
`, hashes["tip"], hashes["scale"], base)
	pred := in.Patch + addToFile("geom/__init__.py", "\n", sealCheck)
	for _, c := range []struct {
		name string
		p    evaluate.Prediction
		gold bool
		want bool
	}{
		{"gold", evaluate.Prediction{Model: "gold", Patch: []byte(in.Patch)}, true, true},
		{"empty", evaluate.Prediction{Model: "empty"}, false, false},
		{"gold and a check of the seal", evaluate.Prediction{Model: "seal", Patch: []byte(pred)}, false, true},
	} {
		var elog bytes.Buffer
		er, _, err := evaluate.Evaluate(ctx, executor.Local(eng), evaluate.Task{Dataset: ds, Instance: in, Attempt: 1, Prediction: c.p, Gold: c.gold, Image: img}, lim, &elog)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if er.Resolved != c.want {
			t.Errorf("%s: resolved %v, want %v\n%s", c.name, er.Resolved, c.want, elog.String())
		}
	}

	// Again into another version: every stage from the work folder, the
	// same files byte for byte.
	rep2, err := Run(ctx, Options{Root: root, Config: cfg, Dataset: "geom/v2", Seed: 3, Engine: eng, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range rep2.Stages[stagesKey("acme/geom", config.MethodRelease)] {
		if !st.Reused && st.Stage != StageEnv && st.Stage != StageHistory {
			t.Errorf("stage %s ran again", st.Stage)
		}
	}
	for _, f := range []string{bench.InstancesFile, bench.CollectionFile} {
		a, _ := os.ReadFile(filepath.Join(root, "data", "datasets", "geom", "v1", f))
		b, _ := os.ReadFile(filepath.Join(root, "data", "datasets", "geom", "v2", f))
		b = bytes.ReplaceAll(b, []byte(`"geom/v2"`), []byte(`"geom/v1"`)) // the dataset's own name
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between the two runs", f)
		}
	}
}

// addToFile is a diff adding text to the end of a file whose whole
// content is old (one line).
func addToFile(path, old, text string) string {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -1,1 +1,%d @@\n", path, path, path, path, 1+len(lines))
	b.WriteString(" " + strings.TrimSuffix(old, "\n") + "\n")
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}
