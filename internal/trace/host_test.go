package trace_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/featbench/featbench/internal/trace"
)

// The host tests run tracer.py with Debian's Python 3.11 (the interpreter
// of the repositories' containers) on small repositories in temporary
// folders, without pytest or Docker: testdata/runner.py imports the test
// files under the hook and calls their tests, as pytest would.

const hostPython = "/usr/bin/python3"

// hostTrace writes files (path -> source) to a new folder and traces the
// test files there, failing the test when a traced test fails.
func hostTrace(t *testing.T, files map[string]string, tests ...string) *trace.Graph {
	t.Helper()
	if _, err := os.Stat(hostPython); err != nil {
		t.Skipf("%s (Debian's Python 3.11, as in the repositories' containers) is missing: %v", hostPython, err)
	}
	root := t.TempDir()
	for p, src := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tools := t.TempDir()
	if err := os.WriteFile(filepath.Join(tools, trace.ScriptName), trace.Script(), 0o644); err != nil {
		t.Fatal(err)
	}
	runner, err := filepath.Abs(filepath.Join("testdata", "runner.py"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tools, "trace.json")
	cmd := exec.Command(hostPython, append([]string{runner, tools, root, out}, tests...)...)
	cmd.Dir = root
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "PYTHONDONTWRITEBYTECODE=1"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("traced run: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	g, err := trace.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range g.Notes {
		t.Logf("tracer note: %s", n)
	}
	return g
}

// mustNode returns the node with the id, failing the test with the
// graph's ids when there is none.
func mustNode(t *testing.T, g *trace.Graph, id string) *trace.Node {
	t.Helper()
	n := g.Node(id)
	if n == nil {
		var ids []string
		for _, n := range g.Nodes {
			ids = append(ids, n.ID)
		}
		t.Fatalf("no node %s; nodes: %v", id, ids)
	}
	return n
}

// wantReached checks which ids the run counts as reached (entered or
// referenced): those of want must be, those of not must not.
func wantReached(t *testing.T, g *trace.Graph, want, not []string) {
	t.Helper()
	r := g.Reached()
	for _, id := range want {
		if !r[id] {
			t.Errorf("%s is not reached; reached: %v", id, sortedKeys(r))
		}
	}
	for _, id := range not {
		if r[id] {
			t.Errorf("%s is reached, but the run neither entered nor needs it", id)
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestHostTracer checks the harness itself on a call the tracer has
// always seen.
func TestHostTracer(t *testing.T) {
	g := hostTrace(t, map[string]string{
		"lib/__init__.py": "",
		"lib/m.py":        "def helper(x):\n    return x + 1\n\n\ndef f(x):\n    return helper(x)\n",
		"tests/test_m.py": "from lib.m import f\n\n\ndef test_f():\n    assert f(1) == 2\n",
	}, "tests/test_m.py")
	if n := mustNode(t, g, "lib/m.py::f::5"); !slices.Contains(n.Callees, "lib/m.py::helper::1") {
		t.Errorf("f's callees = %v, want helper", n.Callees)
	}
	mustNode(t, g, "tests/test_m.py::test_f::4")
}
