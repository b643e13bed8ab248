package images_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/images/imagestest"
)

// textkit is the repository's example project.
var textkit = filepath.Join("..", "..", "examples", "textkit")

const editable = "pip install --no-index --no-deps --no-build-isolation -e ."

func TestBaseRef(t *testing.T) {
	a, err := images.BaseRef(images.BaseSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^featbench/base:[0-9a-f]{16}$`).MatchString(a) {
		t.Errorf("BaseRef = %q", a)
	}
	same, _ := images.BaseRef(images.BaseSpec{Suite: "bookworm", Mirror: "http://example.invalid/debian", Packages: []string{"git"}})
	if same != a {
		t.Errorf("the mirror, the default suite or a package already there changed the ref: %s, %s", same, a)
	}
	more, _ := images.BaseRef(images.BaseSpec{Packages: []string{"python3-yaml"}})
	if more == a {
		t.Error("an extra package did not change the ref")
	}
	if _, err := images.BaseRef(images.BaseSpec{Packages: []string{"evil; rm -rf /"}}); err == nil {
		t.Error("a bad package name was accepted")
	}
	// The default Python is bookworm's, the image every dataset before the
	// choice was graded on: naming it keeps the ref.
	if py, _ := images.BaseRef(images.BaseSpec{Python: "3.11"}); py != a {
		t.Errorf("Python 3.11 changed the ref: %s, %s", py, a)
	}
	trixie, err := images.BaseRef(images.BaseSpec{Python: "3.13"})
	if err != nil || trixie == a {
		t.Errorf("Python 3.13: %s, %v (bookworm's is %s)", trixie, err, a)
	}
	if same, _ := images.BaseRef(images.BaseSpec{Suite: "trixie"}); same != trixie {
		t.Errorf("suite trixie = %s, Python 3.13 = %s", same, trixie)
	}
	if _, err := images.BaseRef(images.BaseSpec{Python: "3.12"}); err == nil || !strings.Contains(err.Error(), `"3.13" (Debian trixie`) {
		t.Errorf("Python 3.12: %v", err)
	}
	if _, err := images.BaseRef(images.BaseSpec{Python: "3.13", Suite: "bookworm"}); err == nil || !strings.Contains(err.Error(), "trixie") {
		t.Errorf("Python 3.13 on bookworm: %v", err)
	}
}

func TestEnvRefFollowsContent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	copyTree(t, textkit, dir)
	spec := images.EnvSpec{Name: "Owner/TextKit", Source: images.Source{Dir: dir}, Install: []string{editable}, Base: "featbench/base:0123456789abcdef"}
	a, err := images.EnvRef(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^featbench/env-owner-textkit:[0-9a-f]{16}$`).MatchString(a) {
		t.Errorf("EnvRef = %q", a)
	}
	// Caches and build leftovers do not count.
	for _, p := range []string{"textkit/__pycache__/x.cpython-311.pyc", "textkit.egg-info/PKG-INFO", ".pytest_cache/v", ".git/HEAD", "textkit/y.pyc"} {
		writeFile(t, filepath.Join(dir, p), "noise")
	}
	if b, _ := images.EnvRef(ctx, spec); b != a {
		t.Errorf("caches changed the ref: %s, %s", a, b)
	}
	// A changed source file, a new file, an executable bit, a command or
	// the base do.
	seen := map[string]string{a: "original"}
	change := func(what string, f func()) {
		t.Helper()
		f()
		r, err := images.EnvRef(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := seen[r]; ok {
			t.Errorf("%s: same ref as %s (%s)", what, prev, r)
		}
		seen[r] = what
	}
	change("edited file", func() { appendFile(t, filepath.Join(dir, "textkit", "__init__.py"), "\n# edited\n") })
	change("new file", func() { writeFile(t, filepath.Join(dir, "NEW.txt"), "new") })
	change("executable bit", func() { os.Chmod(filepath.Join(dir, "NEW.txt"), 0o755) })
	change("install command", func() { spec.Install = []string{"pip install --no-index --no-deps --no-build-isolation ."} })
	change("base", func() { spec.Base = "featbench/base:fedcba9876543210" })
}

func TestEnsureBase(t *testing.T) {
	eng, ref := imagestest.Base(t)
	t.Logf("EnsureBase took %s in this test binary", imagestest.BaseBuildTime().Round(time.Millisecond))
	ctx := context.Background()
	want, _ := images.BaseRef(images.BaseSpec{})
	if ref != want {
		t.Errorf("EnsureBase = %s, BaseRef = %s", ref, want)
	}
	start := time.Now()
	if again, err := images.EnsureBase(ctx, eng, images.BaseSpec{}, nil); err != nil || again != ref {
		t.Fatalf("second EnsureBase = %s, %v", again, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("second EnsureBase took %s: it should find the image", d)
	}
	list, err := eng.Images(ctx, map[string]string{images.LabelProject: "1", images.LabelKind: images.KindBase})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, img := range list {
		if img.Ref == ref {
			found = true
			if img.Labels[images.LabelKey] != strings.TrimPrefix(ref, "featbench/base:") {
				t.Errorf("labels %v", img.Labels)
			}
			t.Logf("%s: %.0f MB", ref, float64(img.Size)/1e6)
		}
	}
	if !found {
		t.Errorf("%s not listed by its labels: %+v", ref, list)
	}

	c := start1(t, eng, ref)
	out := run(t, c, `set -e
python3 -c 'import setuptools, pytest, pytest_timeout, pip, wheel; print("pytest", pytest.__version__)'
git --version; patch --version | head -1
test "$(git config --get safe.directory)" = '*'
test "$PYTHONDONTWRITEBYTECODE" = 1 && test "$LANG" = C.UTF-8 && test "$PWD" = /testbed
python3 -m pip config list | grep -q "no-index='true'"
echo ok`)
	if !strings.Contains(out, "pytest 7.") || !strings.HasSuffix(out, "ok\n") {
		t.Errorf("base image:\n%s", out)
	}
}

// pep639 is a project whose pyproject.toml gives its license as an SPDX
// expression (PEP 639), as new projects do: setuptools 77 and later read
// it; bookworm's setuptools 66 refuses the file.
var pep639 = map[string]string{
	"pyproject.toml": `[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "spdx"
version = "0.1"
license = "MIT"
license-files = ["LICENSE"]

[tool.setuptools]
packages = ["spdx"]
`,
	"LICENSE":          "MIT License\n",
	"spdx/__init__.py": "NAME = 'spdx'\n",
}

// TestEnsureBaseTrixie builds the Python 3.13 base (Debian trixie's) and
// installs a PEP 639 project on it, offline, as collection does; on the
// 3.11 base the same install fails, which is why the choice exists.
func TestEnsureBaseTrixie(t *testing.T) {
	eng, ref := imagestest.BaseFor(t, "3.13")
	t.Logf("EnsureBase of Python 3.13 took %s in this test binary", imagestest.BaseBuildTimeFor("3.13").Round(time.Millisecond))
	if want, _ := images.BaseRef(images.BaseSpec{Python: "3.13"}); ref != want {
		t.Errorf("EnsureBase = %s, BaseRef = %s", ref, want)
	}
	c := start1(t, eng, ref)
	out := run(t, c, `set -e
python3 -c 'import sys, setuptools, pytest, pytest_timeout, pip, wheel; print("python %d.%d" % sys.version_info[:2], "setuptools", setuptools.__version__, "pytest", pytest.__version__)'
test "$(git config --get safe.directory)" = '*'
python3 -m pip config list | grep -q "no-index='true'"
echo ok`)
	if !regexp.MustCompile(`python 3\.13 setuptools (7[89]|[89]\d)\.`).MatchString(out) || !strings.HasSuffix(out, "ok\n") {
		t.Errorf("Python 3.13 base image:\n%s", out)
	}

	_, bookworm := imagestest.Base(t)
	for _, b := range []struct {
		python, ref string
		installs    bool
	}{{"3.13", ref, true}, {"3.11", bookworm, false}} {
		dir := t.TempDir()
		for name, text := range pep639 {
			writeFile(t, filepath.Join(dir, name), text)
		}
		var log bytes.Buffer
		spec := images.EnvSpec{Name: "spdx", Source: images.Source{Dir: dir}, Install: []string{editable}, Base: b.ref}
		env, err := images.EnsureEnv(context.Background(), eng, spec, &log)
		switch {
		case b.installs && err != nil:
			t.Errorf("Python %s: %v\n%s", b.python, err, log.String())
		case b.installs:
			if out := run(t, start1(t, eng, env), "cd / && python3 -c 'import spdx; print(spdx.NAME)'"); out != "spdx\n" {
				t.Errorf("Python %s: import spdx: %q", b.python, out)
			}
		case err == nil:
			t.Errorf("Python %s installed a PEP 639 project: the base has a newer setuptools than this test knows", b.python)
		}
	}
}

func TestEnsureEnvTextkit(t *testing.T) {
	eng, base := imagestest.Base(t)
	ctx := context.Background()
	dir := t.TempDir()
	copyTree(t, textkit, dir)
	spec := images.EnvSpec{Name: "textkit", Source: images.Source{Dir: dir}, Install: []string{editable}, Base: base}

	var log bytes.Buffer
	start := time.Now()
	ref, err := images.EnsureEnv(ctx, eng, spec, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	t.Logf("EnsureEnv %s took %s", ref, time.Since(start).Round(time.Millisecond))
	if want, _ := images.EnvRef(ctx, spec); want != ref {
		t.Errorf("EnsureEnv = %s, EnvRef = %s", ref, want)
	}

	// Cached by content: the second call builds nothing.
	log.Reset()
	start = time.Now()
	again, err := images.EnsureEnv(ctx, eng, spec, &log)
	if err != nil || again != ref {
		t.Fatalf("second EnsureEnv = %s, %v", again, err)
	}
	if d := time.Since(start); d > 5*time.Second || strings.Contains(log.String(), "building") {
		t.Errorf("second EnsureEnv took %s and logged %q: it should find the image", d, log.String())
	}

	c := start1(t, eng, ref)
	out := run(t, c, `set -e
cd / && python3 -c 'import textkit; print(textkit.__file__)' && cd /testbed
python3 -m pytest -q -p no:cacheprovider 2>&1 | tail -1
test -z "$(git status --porcelain)" && echo clean
echo 'raise SystemExit("broken")' > textkit/__init__.py && echo junk > junk.txt
git reset -q --hard && git clean -q -fdx
cd / && python3 -c 'import textkit; print("restored", textkit.__name__)'`)
	for _, want := range []string{"/testbed/textkit/__init__.py", " passed", "clean", "restored textkit"} {
		if !strings.Contains(out, want) {
			t.Errorf("env image: no %q in\n%s", want, out)
		}
	}

	// A changed source file makes another image.
	appendFile(t, filepath.Join(dir, "textkit", "__init__.py"), "\nEDITED = True\n")
	changed, err := images.EnvRef(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if changed == ref {
		t.Errorf("an edited source file kept the ref %s", ref)
	}
}

func TestEnsureEnvFromGit(t *testing.T) {
	eng, base := imagestest.Base(t)
	ctx := context.Background()
	repo := t.TempDir()
	copyTree(t, textkit, repo)
	// Fixed dates make the same commit hash, hence the same image, on
	// every run.
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x"}} {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	sha, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	// A file the commit does not have is not part of the source.
	writeFile(t, filepath.Join(repo, "untracked.txt"), "x")
	spec := images.EnvSpec{
		Name:    "textkit-git",
		Source:  images.Source{GitURL: "file://" + repo, Commit: strings.TrimSpace(string(sha))},
		Install: []string{"pip install --no-index --no-deps --no-build-isolation ."},
		Base:    base,
	}
	var log bytes.Buffer
	ref, err := images.EnsureEnv(ctx, eng, spec, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	c := start1(t, eng, ref)
	out := run(t, c, `cd / && python3 -c 'import textkit; print(textkit.__file__)'; ls /testbed/untracked.txt 2>&1; cd /testbed && python3 -m pytest -q -p no:cacheprovider 2>&1 | tail -1`)
	if !strings.Contains(out, images.VenvDir+"/lib/python3") || !strings.Contains(out, "No such file") || !strings.Contains(out, " passed") {
		t.Errorf("git env image:\n%s", out)
	}

	spec.Source.Commit = "HEAD"
	if _, err := images.EnsureEnv(ctx, eng, spec, nil); err == nil || !strings.Contains(err.Error(), "full commit hash") {
		t.Errorf("a branch name as commit: %v", err)
	}
}

func TestEnsureEnvInstallFails(t *testing.T) {
	eng, base := imagestest.Base(t)
	dir := t.TempDir()
	copyTree(t, textkit, dir)
	spec := images.EnvSpec{
		Name:    "textkit-broken",
		Source:  images.Source{Dir: dir},
		Install: []string{"echo installing-textkit && python3 -c 'import sys; sys.exit(\"no such dependency: frobnicate\")'"},
		Base:    base,
	}
	_, err := images.EnsureEnv(context.Background(), eng, spec, nil)
	if err == nil {
		t.Fatal("a failing install built an image")
	}
	msg := err.Error()
	t.Logf("install failure:\n%s", msg)
	for _, want := range []string{"textkit-broken", "echo installing-textkit", "non-zero code: 1", "no such dependency: frobnicate"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error has no %q:\n%s", want, msg)
		}
	}

	spec.Base = "featbench/base:0000000000000000"
	spec.Install = []string{"true"}
	if _, err := images.EnsureEnv(context.Background(), eng, spec, nil); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("a missing base image: %v", err)
	}
}

// start1 starts a container from ref, removed when the test ends.
func start1(t *testing.T, eng *container.Engine, ref string) *container.Container {
	t.Helper()
	c, err := eng.Start(context.Background(), container.Spec{
		Image: ref, Name: "featbench-test-images", Labels: map[string]string{"featbench.test": "images"},
		Limits: container.Limits{Memory: 1 << 30, Pids: 512},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Remove(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// run runs a bash script in c and returns its output; a failure fails the test.
func run(t *testing.T, c *container.Container, script string) string {
	t.Helper()
	res, err := c.Exec(context.Background(), []string{"bash", "-c", script}, container.ExecOptions{Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("exit status %d\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	return string(res.Stdout)
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, p, data string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

func TestEnsureBaseFails(t *testing.T) {
	eng := imagestest.Engine(t)
	if os.Geteuid() != 0 {
		t.Skip("debootstrap needs root")
	}
	var log bytes.Buffer
	_, err := images.EnsureBase(context.Background(), eng, images.BaseSpec{Suite: "no-such-suite"}, &log)
	if err == nil {
		t.Fatal("a base image of a missing suite was built")
	}
	if !strings.Contains(err.Error(), "debootstrap no-such-suite") || !strings.Contains(err.Error(), "--- end of its output ---") {
		t.Errorf("error:\n%v", err)
	}
	t.Logf("error:\n%v", err)
}

// TestEnsureBaseLayer: extra Debian packages are a layer on the suite's
// base image, installed by apt behind a build gate to the mirror, not a
// new debootstrap; the base image stays the one every repository shares.
func TestEnsureBaseLayer(t *testing.T) {
	eng, base := imagestest.Base(t)
	ctx := context.Background()
	spec := images.BaseSpec{Packages: []string{"python3-pytest-cov", "python3-pytest"}}
	want, err := images.BaseRef(spec)
	if err != nil {
		t.Fatal(err)
	}
	if want == base {
		t.Fatalf("the layer's ref is the base's")
	}
	var log bytes.Buffer
	start := time.Now()
	ref, err := images.EnsureBase(ctx, eng, spec, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	t.Logf("the layer took %s", time.Since(start).Round(time.Second))
	if ref != want || strings.Contains(log.String(), "debootstrap") {
		t.Errorf("EnsureBase = %s (BaseRef %s); log:\n%s", ref, want, log.String())
	}
	list, err := eng.Images(ctx, map[string]string{images.LabelProject: "1", images.LabelKind: images.KindLayer})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, img := range list {
		found = found || img.Ref == ref && img.Labels[images.LabelBase] == base
	}
	if !found {
		t.Errorf("%s is not listed as a layer on %s: %+v", ref, base, list)
	}
	c := start1(t, eng, ref)
	out := run(t, c, `python3 -c 'import pytest_cov, pytest; print("ok", pytest.__version__)'; ls /var/lib/apt/lists | grep -c _ || true`)
	if !strings.HasPrefix(out, "ok 7.") || !strings.HasSuffix(out, "0\n") {
		t.Errorf("the layer:\n%s", out)
	}
}

// An environment with patches is the source with them applied, before
// the install, and the patches' files are gone from the image; a spec
// without patches keeps the key it had (images built before are found),
// and a different patch makes a different image.
func TestEnsureEnvPatches(t *testing.T) {
	eng, base := imagestest.Base(t)
	ctx := context.Background()
	repo := t.TempDir()
	copyTree(t, textkit, repo)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x"}} {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	sha, _ := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	spec := images.EnvSpec{Name: "textkit-patched", Source: images.Source{GitURL: repo, Commit: strings.TrimSpace(string(sha))},
		Install: []string{"test -f NOTES.md"}, Base: base}
	plain, err := images.EnvRef(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.Patches = []string{"", "diff --git a/NOTES.md b/NOTES.md\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES.md\n@@ -0,0 +1 @@\n+patched\n"}
	patched, err := images.EnvRef(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	spec2 := spec
	spec2.Patches = []string{"diff --git a/NOTES.md b/NOTES.md\nnew file mode 100644\n--- /dev/null\n+++ b/NOTES.md\n@@ -0,0 +1 @@\n+other\n"}
	other, _ := images.EnvRef(ctx, spec2)
	noEmpty := spec
	noEmpty.Patches = spec.Patches[1:]
	same, _ := images.EnvRef(ctx, noEmpty)
	if plain == patched || patched == other || same != patched {
		t.Errorf("refs: plain %s, patched %s, other %s, without the empty patch %s", plain, patched, other, same)
	}
	var log bytes.Buffer
	ref, err := images.EnsureEnv(ctx, eng, spec, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if ref != patched {
		t.Errorf("EnsureEnv %s, EnvRef %s", ref, patched)
	}
	c := start1(t, eng, ref)
	out := run(t, c, `cat /testbed/NOTES.md; ls /featbench-patches 2>&1; cd /testbed && git status --porcelain | wc -l`)
	if !strings.Contains(out, "patched") || !strings.Contains(out, "No such file") || !strings.HasSuffix(strings.TrimSpace(out), "0") {
		t.Errorf("patched image:\n%s", out)
	}
}
