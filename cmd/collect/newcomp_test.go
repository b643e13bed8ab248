package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/config"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/llmdouble"
	"github.com/featbench/featbench/internal/testenv"
)

// widgetRepo builds a git repository with a history of pull requests, as
// GitHub leaves it (merge commits "Merge pull request #N from …" and a
// squash commit "… (#N)"), each a case of the new-components method:
//
//	#1 adds chunked(), whose error message the tests compare and the
//	   docstring gives: kept;
//	#2 fixes size(): no new component;
//	#3 adds windowed(), whose message the tests compare verbatim and no
//	   docstring gives: dropped at the statement;
//	#4 renames name_of to type_name: moved, not new;
//	#5 adds pairs() with a test that fails after the patch: dropped at
//	   verification.
//
// It returns the repository's folder and its tip.
func widgetRepo(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	day := 0
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		date := fmt.Sprintf("2025-01-%02dT12:00:00Z", day+1)
		cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH"),
			"GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.invalid", "GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.invalid",
			"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(files map[string]string) {
		t.Helper()
		for p, text := range files {
			full := filepath.Join(dir, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	commit := func(msg string) {
		day++
		git("add", "-A")
		git("commit", "-q", "-m", msg)
	}
	// pr makes a branch with one commit and merges it as GitHub does.
	pr := func(n int, branch, title, body string, files map[string]string) {
		git("checkout", "-q", "-b", branch)
		write(files)
		commit(title)
		git("checkout", "-q", "main")
		day++
		git("merge", "-q", "--no-ff", branch, "-m", fmt.Sprintf("Merge pull request #%d from dev/%s\n\n%s\n\n%s", n, branch, title, body))
	}
	git("init", "-q", "-b", "main")
	core := "def size(items):\n    \"\"\"How many items there are.\"\"\"\n    return len(items)\n\n\ndef name_of(obj):\n    \"\"\"The name of obj's type.\"\"\"\n    return type(obj).__name__\n"
	write(map[string]string{
		"pyproject.toml":        "[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"widgetlib\"\nversion = \"0.1\"\n\n[tool.setuptools]\npackages = [\"widgetlib\"]\n",
		"widgetlib/__init__.py": "from .core import *  # noqa\n",
		"widgetlib/core.py":     core,
		"tests/__init__.py":     "",
		"tests/test_core.py":    "from widgetlib.core import size, name_of\n\n\ndef test_size():\n    assert size([1, 2]) == 2\n\n\ndef test_name_of():\n    assert name_of(1) == \"int\"\n",
		// A test file that changes pytest's machinery, as boltons'
		// test_tbutils does: grading believes none of its outcomes, so it
		// gives no pass-to-pass test.
		"tests/test_hook.py": "import sys\n\n\ndef test_hook():\n    sys.excepthook = lambda *args: None\n",
		"CHANGELOG.md":       "# Changelog\n\n## 0.1\n\n- First release.\n",
	})
	commit("Initial version")
	git("tag", "v0.1")

	chunked := "\n\ndef chunked(items, n):\n    \"\"\"Split *items* into lists of *n* items; the last may be shorter.\n\n    Raises ``ValueError(\"n must be at least 1, got N\")`` when *n* is below 1.\n    \"\"\"\n    if n < 1:\n        raise ValueError(\"n must be at least 1, got %d\" % n)\n    out, cur = [], []\n    for x in items:\n        cur.append(x)\n        if len(cur) == n:\n            out.append(cur)\n            cur = []\n    if cur:\n        out.append(cur)\n    return out\n"
	core += chunked
	pr(1, "chunks", "Add chunked() to split items into lists", "This adds a new function, `chunked`, which splits items into lists of n.", map[string]string{
		"widgetlib/core.py":    core,
		"tests/test_chunks.py": "import pytest\n\nfrom widgetlib.core import chunked\n\n\ndef test_chunked():\n    assert chunked([1, 2, 3], 2) == [[1, 2], [3]]\n\n\ndef test_chunked_empty():\n    assert chunked([], 3) == []\n\n\ndef test_chunked_bad_n():\n    with pytest.raises(ValueError) as e:\n        chunked([1], 0)\n    assert str(e.value) == \"n must be at least 1, got 0\"\n",
	})

	core = strings.Replace(core, "return len(items)", "return len(list(items))", 1)
	write(map[string]string{"widgetlib/core.py": core,
		"tests/test_core.py": "from widgetlib.core import size, name_of\n\n\ndef test_size():\n    assert size([1, 2]) == 2\n    assert size(x for x in \"ab\") == 2\n\n\ndef test_name_of():\n    assert name_of(1) == \"int\"\n"})
	commit("Fix size() on generators (#2)")

	core += "\n\ndef windowed(items, n):\n    \"\"\"Overlapping windows of n items.\"\"\"\n    if n < 1:\n        raise ValueError(\"window size must be positive\")\n    items = list(items)\n    return [tuple(items[i:i + n]) for i in range(len(items) - n + 1)]\n"
	pr(3, "window", "Add windowed() for sliding windows", "A new function for overlapping windows.", map[string]string{
		"widgetlib/core.py":    core,
		"tests/test_window.py": "import pytest\n\nfrom widgetlib.core import windowed\n\n\ndef test_windowed():\n    assert windowed([1, 2, 3], 2) == [(1, 2), (2, 3)]\n\n\ndef test_windowed_bad():\n    with pytest.raises(ValueError) as e:\n        windowed([1], 0)\n    assert str(e.value) == \"window size must be positive\"\n",
	})

	core = strings.Replace(core, "def name_of(obj):", "def type_name(obj):", 1)
	pr(4, "rename", "Rename name_of to type_name", "A clearer name.", map[string]string{
		"widgetlib/core.py":  core,
		"tests/test_core.py": "from widgetlib.core import size, type_name\n\n\ndef test_size():\n    assert size([1, 2]) == 2\n    assert size(x for x in \"ab\") == 2\n\n\ndef test_type_name():\n    assert type_name(1) == \"int\"\n",
	})

	core += "\n\ndef pairs(items):\n    \"\"\"Adjacent pairs of items.\"\"\"\n    items = list(items)\n    result = []\n    for a, b in zip(items, items[1:]):\n        result.append((a, b))\n    return result\n"
	pr(5, "pairs", "Add pairs() for adjacent items", "A new function.", map[string]string{
		"widgetlib/core.py":   core,
		"tests/test_pairs.py": "from widgetlib.core import pairs\n\n\ndef test_pairs():\n    assert pairs([1, 2, 3]) == [(1, 2), (2, 3)]\n\n\ndef test_pairs_wrong():\n    assert pairs([1, 2]) == []\n",
	})
	write(map[string]string{"CHANGELOG.md": "# Changelog\n\n## 0.2\n\n- Added `chunked` (#1), `windowed` (#3) and `pairs` (#5).\n- Fixed `size` on generators (#2).\n\n## 0.1\n\n- First release.\n"})
	commit("Release 0.2")
	git("tag", "v0.2")
	return dir, git("rev-parse", "HEAD")
}

// TestCollectNewComponentsWithLLMTestDouble collects the new-components method from the
// history widgetRepo makes, in real containers: one instance (#1) with its
// new component, its fail-to-pass tests (which did not import before) and
// its release; every other pull request dropped with its one-line reason
// at the step the funnel counts. Then eval infer's prompt mode asks the
// LLM test double once about the instance and eval run grades the answer.
func TestCollectNewComponentsWithLLMTestDouble(t *testing.T) {
	imagestest.Base(t)
	host := testenv.DockerHost(t)
	src, tip := widgetRepo(t)
	root := t.TempDir()
	toml := fmt.Sprintf(`[eval]
docker_host = %q
memory = "1g"

[collect]
workers = 2
release_date = "2026-11-01"

[[collect.repo]]
repository = "featbench/widgetlib"
source = %q
commit = %q
method = "new-components"
install = ["pip install --no-index --no-deps --no-build-isolation -e ."]
import_name = "widgetlib"
`, host, src, tip)
	if err := os.WriteFile(filepath.Join(root, config.FileName), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCollect("--root", root, "--dataset", "nc/v1")
	if code != 0 {
		t.Fatalf("collect: exit %d\n%s%s", code, out, errOut)
	}
	ds, err := bench.LoadDatasets(t.Context(), filepath.Join(root, "data"))
	if err != nil {
		t.Fatal(err)
	}
	d := ds.Dataset("nc/v1")
	if d == nil || len(d.Instances) != 1 {
		t.Fatalf("the dataset holds %v, want one instance\n%s%s", d, out, errOut)
	}
	in := d.Instances[0]
	if in.InstanceID != "featbench__widgetlib-1.new-components" || in.Method != bench.MethodNewComponents || in.PullNumber != 1 || in.Release != "v0.2" {
		t.Errorf("instance %s: method %q, pull %d, release %q", in.InstanceID, in.Method, in.PullNumber, in.Release)
	}
	if len(in.Components) != 1 || in.Components[0].Name != "chunked" || in.Components[0].Signature != "def chunked(items, n):" ||
		!strings.Contains(in.Components[0].Docstring, "n must be at least 1, got N") {
		t.Errorf("components %+v", in.Components)
	}
	if strings.Join(in.FailToPass, " ") != "tests/test_chunks.py::test_chunked tests/test_chunks.py::test_chunked_bad_n tests/test_chunks.py::test_chunked_empty" {
		t.Errorf("FAIL_TO_PASS %q: the new test file's tests, which did not import before", in.FailToPass)
	}
	if len(in.PassToPass) == 0 || !strings.HasPrefix(in.PassToPass[0], "tests/test_core.py::") || strings.Contains(strings.Join(in.PassToPass, " "), "test_hook") {
		t.Errorf("PASS_TO_PASS %q: the other test files of the folder", in.PassToPass)
	}
	for _, want := range []string{"Add chunked() to split items into lists", "def chunked(items, n):", "n must be at least 1, got N"} {
		if !strings.Contains(in.ProblemStatement, want) {
			t.Errorf("the statement lacks %q:\n%s", want, in.ProblemStatement)
		}
	}
	if strings.Contains(in.ProblemStatement, "cur.append(x)") {
		t.Errorf("the statement gives the body")
	}

	// The funnel and the drops, one line each.
	raw, err := os.ReadFile(filepath.Join(root, "data", "datasets", "nc", "v1", bench.CollectionFile))
	if err != nil {
		t.Fatal(err)
	}
	var coll bench.Collection
	if err := json.Unmarshal(raw, &coll); err != nil {
		t.Fatal(err)
	}
	rep := coll.Repos[0]
	if rep.Method != bench.MethodNewComponents || len(rep.Funnel) == 0 {
		t.Fatalf("collection.json: method %q, funnel %+v", rep.Method, rep.Funnel)
	}
	drops := map[int]string{}
	for _, dr := range rep.Drops {
		if dr.Pull > 0 {
			drops[dr.Pull] = dr.Stage + ": " + dr.Reason
			if strings.Contains(dr.Reason, "\n") {
				t.Errorf("drop of #%d is not one line: %q", dr.Pull, dr.Reason)
			}
		}
	}
	for n, want := range map[int]string{
		2: "filter: the code patch adds no function, class or method",
		3: `statements: statement incomplete: the tests compare "window size must be positive" verbatim`,
		4: "filter: the code patch adds no new function, class or method: what it adds is moved or renamed (type_name was widgetlib/core.py::name_of)",
		5: "verify: 1 tests of the test patch's files do not pass after the patch (tests/test_pairs.py::test_pairs_wrong)",
	} {
		if !strings.HasPrefix(drops[n], want) {
			t.Errorf("drop of #%d: %q, want it to start %q", n, drops[n], want)
		}
	}
	t.Logf("funnel %+v", rep.Funnel)

	// FEA-Bench's inference on the new instance: eval infer's prompt mode
	// against the LLM test double, which answers with the gold patch, and
	// eval run grades its prediction on the real engine.
	eval := filepath.Join(t.TempDir(), "eval")
	if b, err := exec.Command("go", "build", "-o", eval, "../eval").CombinedOutput(); err != nil {
		t.Fatalf("building cmd/eval: %v\n%s", err, b)
	}
	dbl, err := llmdouble.Start(func(r llmdouble.Request) llmdouble.Reply {
		if strings.Contains(r.Text, "def chunked(items, n):") && strings.Contains(r.Text, "----- widgetlib/core.py -----") {
			return llmdouble.Reply{Text: "```diff\n" + in.Patch + "```\n"}
		}
		return llmdouble.Reply{Text: "No idea."}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dbl.Close()
	for _, args := range [][]string{
		{"infer", "--mode", "prompt", "--context", "bm25", "--budget", "8000", "--dataset", "nc/v1", "--model", "double", "--upstream", dbl.URL, "--run-id", "prompt"},
		{"run", "--dataset", "nc/v1", "--predictions", filepath.Join(root, "runs", "prompt", "predictions.jsonl"), "--run-id", "prompt"},
	} {
		cmd := exec.Command(eval, append(args, "--root", root)...)
		cmd.Env = append(os.Environ(), "DOCKER_HOST="+host)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("eval %s: %v\n%s", args[0], err, b)
		}
		if args[0] == "run" && !strings.Contains(string(b), "1 of 1 instances resolved") {
			t.Errorf("eval run of the prompt's prediction:\n%s", b)
		}
	}
}
