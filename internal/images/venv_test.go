package images_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/pybase"
	"github.com/featbench/featbench/internal/pytest"
)

// shipped is a repository named as a package the test stack of both base
// images ships (Debian's tomli, installed without a RECORD file pip could
// uninstall it by), with a test that checks which copy the tests get.
var shipped = map[string]string{
	"pyproject.toml": `[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "tomli"
version = "99.0"

[tool.setuptools.packages.find]
where = ["src"]
`,
	"src/tomli/__init__.py": "WHO = 'the repository under test'\n",
	"tests/test_where.py": `import os, sys
import tomli


def test_the_repository_wins():
    assert tomli.WHO == "the repository under test"
    assert os.path.realpath(tomli.__file__).startswith("/testbed/"), tomli.__file__


def test_its_own_environment():
    assert sys.prefix == "` + images.VenvDir + `", sys.prefix
    assert sys.prefix != sys.base_prefix
`,
}

// TestEnvRepositoryTheTestStackShips: a repository the base image's test
// stack also ships installs (on main it failed: "Cannot uninstall tomli"),
// in the environment's own virtual environment, where it wins over the
// base's copy; the harness's runner runs the tests with that
// environment's Python, and still imports pytest and its plugins before
// the working folder is on sys.path (a pluggy.py put there shadows
// nothing).
func TestEnvRepositoryTheTestStackShips(t *testing.T) {
	for _, b := range pybase.All() {
		t.Run(b.Python, func(t *testing.T) {
			eng, base := imagestest.BaseFor(t, b.Python)
			ctx := context.Background()
			dir := t.TempDir()
			for name, data := range shipped {
				writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), data)
			}
			spec := images.EnvSpec{Name: "shipped-tomli", Source: images.Source{Dir: dir}, Install: []string{editable}, Base: base}
			ref, err := images.EnsureEnv(ctx, eng, spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			c := start1(t, eng, ref)
			out := run(t, c, `set -e
cd / && python3 -c 'import tomli, sys; print(tomli.__file__, sys.prefix)'
cat `+images.FreezeFile)
			if !strings.Contains(out, "/testbed/src/tomli/__init__.py "+images.VenvDir) || !strings.Contains(out, "-e ") {
				t.Errorf("the environment:\n%s", out)
			}
			if err := c.CopyIn(ctx, "/fb", []container.File{
				{Path: pytest.RunnerFile, Mode: 0o644, Data: pytest.RunnerSource()},
				{Path: "plugin/" + pytest.PluginFile, Mode: 0o644, Data: pytest.PluginSource()},
			}); err != nil {
				t.Fatal(err)
			}
			// What a prediction might add to shadow the test stack.
			run(t, c, `echo 'raise SystemExit("shadowed")' > /testbed/pluggy.py`)
			o := pytest.RunOptions{Root: "/testbed", File: "tests/test_where.py", JUnitXML: "/tmp/j.xml", JSONL: "/fb/stream.jsonl",
				PluginDir: "/fb/plugin", Runner: "/fb/" + pytest.RunnerFile, User: "65534:65534"}
			res, err := c.Exec(ctx, pytest.Command(o), container.ExecOptions{WorkDir: "/testbed", Env: pytest.Env(o), Timeout: 2 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "2 passed") {
				t.Errorf("the runner: exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
			}
		})
	}
}

// TestRunnerWithProjectCoverage: a project whose addopts turn pytest-cov
// on (python-semver's --cov=semver) runs under the harness's runner to
// the end, exit 0: coverage keeps its data under /tmp, which the log
// says, where on main every such run ended in an INTERNALERROR (exit 3:
// "Couldn't use data file '/testbed/.coverage'").
func TestRunnerWithProjectCoverage(t *testing.T) {
	eng, _ := imagestest.Base(t)
	ctx := context.Background()
	base, err := images.EnsureBase(ctx, eng, images.BaseSpec{Packages: []string{"python3-pytest-cov", "python3-pytest"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string]string{
		"pyproject.toml": "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"covlib\"\nversion = \"0.1\"\n\n" +
			"[tool.setuptools]\npackages = [\"covlib\"]\n\n[tool.pytest.ini_options]\naddopts = \"--cov=covlib --cov-report=term-missing --cov-branch\"\n",
		"covlib/__init__.py":   "def double(x):\n    return 2 * x\n",
		"tests/test_double.py": "from covlib import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
	} {
		writeFile(t, filepath.Join(dir, filepath.FromSlash(name)), data)
	}
	ref, err := images.EnsureEnv(ctx, eng, images.EnvSpec{Name: "covlib", Source: images.Source{Dir: dir}, Install: []string{editable}, Base: base}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := start1(t, eng, ref)
	if err := c.CopyIn(ctx, "/fb", []container.File{
		{Path: pytest.RunnerFile, Mode: 0o644, Data: pytest.RunnerSource()},
		{Path: "plugin/" + pytest.PluginFile, Mode: 0o644, Data: pytest.PluginSource()},
	}); err != nil {
		t.Fatal(err)
	}
	o := pytest.RunOptions{Root: "/testbed", File: "tests/test_double.py", JUnitXML: "/tmp/j.xml", JSONL: "/fb/stream.jsonl",
		PluginDir: "/fb/plugin", Runner: "/fb/" + pytest.RunnerFile, User: "65534:65534"}
	res, err := c.Exec(ctx, pytest.Command(o), container.ExecOptions{WorkDir: "/testbed", Env: pytest.Env(o), Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || strings.Contains(string(res.Stdout), "INTERNALERROR") || !strings.Contains(string(res.Stdout), "1 passed") {
		t.Errorf("exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if !strings.Contains(string(res.Stderr), "pytest-cov keeps its data in COVERAGE_FILE="+pytest.CoverageFile) {
		t.Errorf("the log does not say where coverage went:\n%s", res.Stderr)
	}
}
