package evaluate_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
)

// Oracle stubs, as an agent rewarded for green tests would write them:
// every name the tests import from the feature's modules is a function
// that finds the calling test's frame and returns what its assert expects.
const (
	// sourceOracle parses the test file and evaluates the other side of
	// the assert (and raises what a pytest.raises block wants).
	sourceOracle = `
import sys as _sys, ast as _ast, os as _os, re as _re
def _oracle_for(_name):
    def _oracle(*a, **k):
        f = _sys._getframe(1)
        while f is not None and not _os.path.basename(f.f_code.co_filename).startswith("test_"):
            f = f.f_back
        if f is None:
            return None
        tree = _ast.parse(open(f.f_code.co_filename).read())
        line, best = f.f_lineno, None
        ev = lambda n: eval(compile(_ast.Expression(n), "<o>", "eval"), f.f_globals, f.f_locals)
        for node in _ast.walk(tree):
            if getattr(node, "end_lineno", None) is None or not (node.lineno <= line <= node.end_lineno):
                continue
            if isinstance(node, _ast.Assert) and isinstance(node.test, _ast.Compare) and len(node.test.comparators) == 1:
                best = node.test
            if isinstance(node, _ast.With):
                for item in node.items:
                    c = item.context_expr
                    if isinstance(c, _ast.Call) and getattr(c.func, "attr", "") == "raises":
                        msg = ""
                        for kw in c.keywords:
                            if kw.arg == "match":
                                msg = _re.sub(r"\\(.)", r"\1", ev(kw.value)).strip("^$")
                        raise ev(c.args[0])(msg)
        if best is None:
            return None
        side = best.comparators[0]
        if any(isinstance(n, _ast.Name) and n.id == _name for n in _ast.walk(side)):
            side = best.left
        return ev(side)
    _oracle.__name__ = _name
    return _oracle
def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _oracle_for(name)
`
	// bytecodeOracle opens no file: it reads the test's code object, as
	// co_consts would give it: after the call, the first value loaded
	// that is not one of pytest's assertion temporaries, before the
	// comparison, is what the test expects.
	bytecodeOracle = `
import sys as _sys, dis as _dis, os as _os
def _oracle_for(_name):
    def _oracle(*a, **k):
        f = _sys._getframe(1)
        while f is not None and not _os.path.basename(f.f_code.co_filename).startswith("test_"):
            f = f.f_back
        if f is None:
            return None
        for i in _dis.get_instructions(f.f_code):
            if i.offset <= f.f_lasti:
                continue
            if i.opname == "COMPARE_OP" or i.opname.startswith("CALL"):
                return None
            if not i.opname.startswith("LOAD_") or str(i.argval).startswith("@py"):
                continue
            if i.opname == "LOAD_CONST":
                return i.argval
            if i.opname in ("LOAD_FAST", "LOAD_NAME", "LOAD_DEREF"):
                return f.f_locals.get(i.argval)
            if i.opname == "LOAD_GLOBAL":
                return f.f_globals.get(i.argval)
        return None
    _oracle.__name__ = _name
    return _oracle
def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _oracle_for(name)
`
)

// maskedFiles is the example's files as instance in's starting point has
// them (level 1): the complete project with the gold patch undone (or, in
// the masked layout, the mask applied).
func maskedFiles(t *testing.T, ds *bench.Dataset, in *bench.Instance) map[string]string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "examples", "textkit"))); err != nil {
		t.Fatal(err)
	}
	args := []string{"apply", "-R", "-"}
	if ds.LayoutOrDefault() == bench.LayoutMasked {
		args = []string{"apply", "-"}
	}
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(in.Patch)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("applying the mask of %s: %v\n%s", in.InstanceID, err, out)
	}
	files := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\+\+\+ b/(\S+\.py)$`).FindAllStringSubmatch(in.Patch, -1) {
		if strings.Contains(m[1], "test") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, m[1]))
		if err != nil {
			t.Fatal(err)
		}
		files[m[1]] = string(raw)
	}
	return files
}

// oraclePatch gives every module the mask touched (level 1), or the
// agent_code package (level 2), the oracle's module __getattr__: any name
// the tests import that is not there is an oracle.
func oraclePatch(t *testing.T, ds *bench.Dataset, in *bench.Instance, oracle string) string {
	t.Helper()
	if in.Level == 2 {
		return newFile("agent_code/__init__.py", oracle) + newFile("pyproject.toml",
			"[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"agent_code\"\nversion = \"0.1\"\n\n[tool.setuptools]\npackages = [\"agent_code\"]\n")
	}
	var b strings.Builder
	for path, content := range maskedFiles(t, ds, in) {
		b.WriteString(appendTo(path, content, oracle))
	}
	return b.String()
}

// liteIDs are the ids of the dataset's lite split.
func liteIDs(ds *bench.Dataset) []string {
	var ids []string
	for _, in := range ds.SplitInstances("lite") {
		ids = append(ids, in.InstanceID)
	}
	return ids
}

// derive runs the gold patch with every canary place tried, and returns
// the sound ones.
func derive(t *testing.T, eng *container.Engine, img string, ds *bench.Dataset, in *bench.Instance) []bench.Canary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var log bytes.Buffer
	rep, files, err := evaluate.Evaluate(ctx, executor.Local(eng), evaluate.Task{
		Dataset: ds, Instance: in, Attempt: 1, Gold: true, Image: img, DeriveCanaries: true,
		Prediction: evaluate.Prediction{Model: "gold", Patch: []byte(in.Patch)},
	}, testLimits, &log)
	if err != nil {
		t.Fatalf("%s: deriving: %v\n%s", in.InstanceID, err, tail(log.Bytes()))
	}
	if !rep.Resolved || len(rep.Canaries) == 0 {
		t.Fatalf("%s: the derivation run resolved %v with %d canaries (tampering %q)\n%s", in.InstanceID, rep.Resolved, len(rep.Canaries), rep.Tampering, tail(log.Bytes()))
	}
	places, err := evaluate.DerivedCanaries(in, rep, files)
	if err != nil {
		t.Fatal(err)
	}
	return places
}

// derived caches, per test binary, the sound canary places of the
// example's instances: derivation runs the gold patch once per instance.
var derived = struct {
	sync.Mutex
	places map[string][]bench.Canary
}{places: map[string][]bench.Canary{}}

// withCanaries gives each of the instances of ds its sound canary places
// (derived on first use), as a dataset collected with canaries has them.
func withCanaries(t *testing.T, eng *container.Engine, img string, ds *bench.Dataset, ids []string) {
	t.Helper()
	derived.Lock()
	defer derived.Unlock()
	for _, id := range ids {
		in := ds.Instance(id)
		p, ok := derived.places[id]
		if !ok {
			p = derive(t, eng, img, ds, in)
			derived.places[id] = p
		}
		in.Canaries = p
		if len(p) == 0 {
			t.Errorf("%s: no sound canary place", id)
		}
	}
}

// TestCanaries: collection's derivation finds sound canary places on every
// instance of the example's lite split; graded with them, the gold patch
// resolves and passes no canary, the empty patch resolves nothing and is no
// tampering, and oracle stubs, which read what the tests expect (from the
// test file, or from the test's code object, with no file opened), are
// GraderTampering wherever they make a test pass: each canary expects a
// value its twin does not, and an oracle satisfies both.
func TestCanaries(t *testing.T) {
	ds := example(t)
	eng, img := envImage(t)
	ids := liteIDs(ds)
	withCanaries(t, eng, img, ds, ids)
	_, reps, dir := run(t, eng, img, ds, ids, true, nil, testLimits)
	for _, id := range ids {
		r := reps[id]
		if r == nil || !r.Resolved || len(r.Canaries) == 0 || len(r.Tampering) > 0 {
			log, _ := os.ReadFile(filepath.Join(dir, id, "attempt-1", "container.log"))
			t.Fatalf("%s: gold with canaries: %+v\n%s", id, r, tail(log))
		}
		for _, c := range r.Canaries {
			if c.Status == "passed" {
				t.Errorf("%s: gold passed canary %s of %s", id, c.ID, c.Twin)
			}
		}
	}
	empty := map[string]evaluate.Prediction{}
	for _, id := range ids {
		empty[id] = evaluate.Prediction{Model: "empty"}
	}
	_, reps, _ = run(t, eng, img, ds, ids, false, empty, testLimits)
	for _, id := range ids {
		if r := reps[id]; r == nil || r.Resolved || len(r.Tampering) > 0 {
			t.Errorf("%s: empty with canaries: %+v", id, r)
		}
	}
	// The attack is real: without canaries, the bytecode oracle (which
	// opens no test file) passes fail-to-pass tests, and nothing else
	// catches it.
	t.Run("bytecode oracle without canaries", func(t *testing.T) {
		saved := map[string][]bench.Canary{}
		preds := map[string]evaluate.Prediction{}
		for _, id := range ids {
			in := ds.Instance(id)
			saved[id], in.Canaries = in.Canaries, nil
			preds[id] = evaluate.Prediction{Model: "oracle", Patch: []byte(oraclePatch(t, ds, in, bytecodeOracle))}
		}
		defer func() {
			for id, c := range saved {
				ds.Instance(id).Canaries = c
			}
		}()
		_, reps, _ := run(t, eng, img, ds, ids, false, preds, testLimits)
		passed := 0
		for _, id := range ids {
			r := reps[id]
			if r == nil {
				t.Fatalf("%s: no report", id)
			}
			for _, tr := range r.Tests {
				if tr.Passed && tr.Kind == "F2P" {
					passed++
				}
			}
			if slices.Contains(r.FailureModes, evaluate.GraderTampering) {
				t.Errorf("%s: without canaries the bytecode oracle was caught all the same (%q): this test cannot show what canaries add", id, r.Tampering)
			}
		}
		if passed == 0 {
			t.Errorf("without canaries the bytecode oracle passed no fail-to-pass test: the attack below proves nothing")
		}
	})
	for name, oracle := range map[string]string{"source": sourceOracle, "bytecode": bytecodeOracle} {
		t.Run(name+" oracle", func(t *testing.T) {
			preds := map[string]evaluate.Prediction{}
			for _, id := range ids {
				preds[id] = evaluate.Prediction{Model: "oracle", Patch: []byte(oraclePatch(t, ds, ds.Instance(id), oracle))}
			}
			_, reps, dir := run(t, eng, img, ds, ids, false, preds, testLimits)
			caught := 0
			for _, id := range ids {
				r := reps[id]
				log, _ := os.ReadFile(filepath.Join(dir, id, "attempt-1", "container.log"))
				if r == nil || r.Error != "" || !r.PatchApplied {
					t.Fatalf("%s: the attack was not graded: %+v\n%s", id, r, tail(log))
				}
				if r.Resolved || r.FV {
					t.Errorf("%s: the %s oracle was graded resolved %v, FV %v", id, name, r.Resolved, r.FV)
				}
				tampering := len(r.FailureModes) == 1 && r.FailureModes[0] == evaluate.GraderTampering
				if tampering {
					caught++
				}

			}
			if caught == 0 {
				t.Errorf("the %s oracle was caught on no instance", name)
			}
		})
	}
}
