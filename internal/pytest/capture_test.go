package pytest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var update = flag.Bool("update", false,
	"re-capture testdata/captured from real pytest runs (needs a python3 with pytest and pytest-timeout: "+
		"/usr/bin/python3, or $FEATBENCH_PYTHON)")

// captureCase is one real pytest run whose output the parser tests read.
type captureCase struct {
	name string
	// root: "project" (testdata/project), "textkit" (examples/textkit), or
	// "textkit-base:<instance id>" (textkit with that instance's patch
	// reverse-applied: the base with the test patch, where F2P tests fail).
	root     string
	file     string
	ids      []string
	args     []string
	timeout  time.Duration
	noPlugin bool   // run without the plugin, as a log from elsewhere would be
	killAt   string // SIGKILL the run when this test starts (a harness timeout)
}

func captureCases() []captureCase {
	cases := []captureCase{
		{name: "outcomes", root: "project", file: "tests/test_outcomes.py"},
		{name: "outcomes_noplugin", root: "project", file: "tests/test_outcomes.py", noPlugin: true},
		{name: "fixtures", root: "project", file: "tests/test_fixtures.py"},
		{name: "fixtures_noplugin", root: "project", file: "tests/test_fixtures.py", noPlugin: true},
		{name: "ids", root: "project", file: "tests/test_ids.py"},
		{name: "ids_noplugin", root: "project", file: "tests/test_ids.py", noPlugin: true},
		{name: "ids_selected", root: "project", file: "tests/test_ids.py", ids: []string{
			"tests/test_ids.py::test_param[a::b]",
			"tests/test_ids.py::test_param[x - y]",
			"tests/test_ids.py::TestOuter::TestInner::test_nested",
			"tests/test_ids.py::test_gone",
		}},
		// Node ids given to pytest itself: they work, "::" inside parameters
		// included, until one does not exist, which stops the whole run.
		{name: "ids_positional", root: "project", file: "tests/test_ids.py::test_param[a::b]"},
		{name: "ids_positional_notfound", root: "project", file: "tests/test_ids.py::test_gone",
			args: []string{"tests/test_ids.py::test_param[a::b]"}},
		{name: "passing_with_skips", root: "project", file: "tests/test_passing_with_skips.py"},
		{name: "timeout", root: "project", file: "tests/test_timeout.py", timeout: time.Second},
		{name: "killed", root: "project", file: "tests/test_killed.py", killAt: "tests/test_killed.py::test_hangs"},
		{name: "crash", root: "project", file: "tests/test_crash.py"},
		{name: "conftest_error", root: "project", file: "tests/broken/test_broken.py"},
	}
	for _, c := range []string{"nameerror", "attributeerror", "typeerror", "importerror",
		"modulenotfound", "syntaxerror", "badparam", "moduleskip"} {
		cases = append(cases, captureCase{name: "collect_" + c, root: "project", file: "tests/collect/test_" + c + ".py"})
	}
	for _, f := range textkitFiles() {
		cases = append(cases, captureCase{name: "textkit_" + f, root: "textkit", file: "tests/test_" + f + ".py"})
	}
	for _, b := range textkitBases() {
		cases = append(cases, captureCase{name: "textkit_base_" + b.name, root: "textkit-base:" + b.instance, file: b.file})
	}
	return cases
}

func textkitFiles() []string {
	return []string{"case", "dates", "fuzzy", "markdown", "pipeline", "roman", "slug", "template", "wrap"}
}

// textkitBases are instances whose base state (F2P tests failing) is
// captured, one per way an F2P test fails in the example dataset.
func textkitBases() []struct{ name, instance, file string } {
	return []struct{ name, instance, file string }{
		{"case", "featbench__textkit.test_case.3f4c65e3.lv1", "tests/test_case.py"},    // a name the test file imports is gone: ImportError at collection
		{"dates", "featbench__textkit.test_dates.4a59211b.lv1", "tests/test_dates.py"}, // a function the tests call is gone: AttributeError
		{"fuzzy", "featbench__textkit.test_fuzzy.3ef8640e.lv1", "tests/test_fuzzy.py"}, // a helper inside the library is gone: NameError
	}
}

const (
	capturedDir     = "testdata/captured"
	textkitDir      = "../../examples/textkit"
	exampleDataset  = "../../data/datasets/example/v2/instances.jsonl"
	projectDir      = "testdata/project"
	captureDeadline = 2 * time.Minute
)

// captureMeta is meta.json: how the run went, beside its raw files.
type captureMeta struct {
	Case     string   `json:"case"`
	Argv     []string `json:"argv"`
	ExitCode int      `json:"exit_code"`
	TimedOut bool     `json:"timed_out"`
	Signal   string   `json:"signal,omitempty"`
}

// TestCapture re-captures every case's output with -update; without it the
// parser tests read what is committed.
func TestCapture(t *testing.T) {
	if !*update {
		t.Skip("run with -update to re-capture the pytest runs")
	}
	python := os.Getenv("FEATBENCH_PYTHON")
	if python == "" {
		python = "/usr/bin/python3"
	}
	if out, err := exec.Command(python, "-c", "import pytest, pytest_timeout; print(pytest.__version__)").CombinedOutput(); err != nil {
		t.Skipf("%s has no pytest and pytest-timeout (apt-get install python3-pytest python3-pytest-timeout): %v\n%s", python, err, out)
	}
	for _, c := range captureCases() {
		t.Run(c.name, func(t *testing.T) { capture(t, python, c) })
	}
}

func capture(t *testing.T, python string, c captureCase) {
	root := captureRoot(t, c.root)
	out, plugdir := t.TempDir(), t.TempDir()
	if _, err := WritePlugin(plugdir); err != nil {
		t.Fatal(err)
	}
	o := RunOptions{Python: python, Root: root, File: c.file, IDs: c.ids, Args: c.args, Timeout: c.timeout,
		JUnitXML: filepath.Join(out, "junit.xml"), JSONL: filepath.Join(out, "report.jsonl"), PluginDir: plugdir}
	argv := Command(o)
	if c.noPlugin {
		argv = withoutPlugin(argv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), captureDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = root
	// A small, fixed environment, as in a container.
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "LANG=C.UTF-8"}, Env(o)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	if c.killAt != "" {
		want := []byte(fmt.Sprintf(`{"event": "start", "nodeid": %q}`, c.killAt))
		for !bytes.Contains(readIfExists(o.JSONL), want) {
			if ctx.Err() != nil {
				t.Fatalf("%s never started", c.killAt)
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond) // let it get well into the test
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		killed = true
	}
	err := cmd.Wait()
	meta := captureMeta{Case: c.name, TimedOut: killed}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		meta.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// As a shell or timeout(1) reports a process killed by a signal.
			meta.ExitCode, meta.Signal = 128+int(ws.Signal()), ws.Signal().String()
		}
	default:
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the run took longer than %v", captureDeadline)
	}
	for _, a := range argv {
		a = strings.ReplaceAll(a, out, "$OUT")
		a = strings.ReplaceAll(a, plugdir, "$PLUGIN")
		a = strings.ReplaceAll(a, root, "$ROOT")
		meta.Argv = append(meta.Argv, strings.ReplaceAll(a, python, "python3"))
	}
	dir := filepath.Join(capturedDir, c.name)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mj, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"stdout.txt": stdout.Bytes(), "stderr.txt": stderr.Bytes(), "meta.json": append(mj, '\n')}
	for _, name := range []string{"junit.xml", "report.jsonl"} {
		if b, err := os.ReadFile(filepath.Join(out, name)); err == nil {
			files[name] = b
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("exit %d, %d bytes of output", meta.ExitCode, stdout.Len())
}

// withoutPlugin drops the plugin's arguments from argv.
func withoutPlugin(argv []string) []string {
	var out []string
	for i := 0; i < len(argv); i++ {
		switch {
		case argv[i] == "-p" && i+1 < len(argv) && argv[i+1] == PluginModule:
			i++
		case strings.HasPrefix(argv[i], "--featbench-"):
		default:
			out = append(out, argv[i])
		}
	}
	return out
}

func readIfExists(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

// captureRoot returns the absolute folder a case runs in.
func captureRoot(t *testing.T, root string) string {
	t.Helper()
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	switch {
	case root == "project":
		return abs(projectDir)
	case root == "textkit":
		return abs(textkitDir)
	case strings.HasPrefix(root, "textkit-base:"):
		inst := exampleInstance(t, strings.TrimPrefix(root, "textkit-base:"))
		dir := filepath.Join(t.TempDir(), "textkit")
		if err := os.CopyFS(dir, os.DirFS(abs(textkitDir))); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "apply", "-R", "-")
		cmd.Dir, cmd.Stdin = dir, strings.NewReader(inst.Patch)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git apply -R of %s's patch: %v\n%s", inst.ID, err, out)
		}
		return dir
	}
	t.Fatalf("unknown root %q", root)
	return ""
}

// exampleInst is the part of an example dataset instance the tests use.
type exampleInst struct {
	ID    string   `json:"instance_id"`
	Patch string   `json:"patch"`
	F2P   []string `json:"FAIL_TO_PASS"`
	P2P   []string `json:"PASS_TO_PASS"`
}

func exampleInstances(t *testing.T) []exampleInst {
	t.Helper()
	data, err := os.ReadFile(exampleDataset)
	if err != nil {
		t.Fatal(err)
	}
	var out []exampleInst
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var in exampleInst
		if err := json.Unmarshal(line, &in); err != nil {
			t.Fatal(err)
		}
		out = append(out, in)
	}
	return out
}

func exampleInstance(t *testing.T, id string) exampleInst {
	t.Helper()
	for _, in := range exampleInstances(t) {
		if in.ID == id {
			return in
		}
	}
	t.Fatalf("no instance %s in %s", id, exampleDataset)
	return exampleInst{}
}
