package evaluate_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/featbench/featbench/bench"
	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/evaluate"
	"github.com/featbench/featbench/internal/executor"
)

// Round 2 of the red team: predictions that implement nothing and attack
// outcomes from inside pytest's process, written by someone who has read
// the harness. Every one gives the tests the names they import (a module
// __getattr__ of stubs), so that collection succeeds, and then attacks.
// They run on the example's lite split with canaries, as a dataset
// collected now has them. None may resolve an instance.

// stubs is the part every attack shares: whatever a test imports from
// the feature's modules is a function that calls _attack once, then
// returns _value(). A snippet is appended to every module the feature
// touches, so it guards against running twice.
const stubs = `
import sys as _sys, os as _os, json as _json, signal as _signal, types as _types
_value = lambda: None
_attack = lambda: None
_done = []
def _stub_for(_name):
    def _stub(*a, **k):
        if not _done:
            _done.append(1)
            _attack()
        return _value()
    _stub.__name__ = _name
    return _stub
def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _stub_for(name)
`

// The attacks, each the snippet after stubs.
var round2 = []struct {
	name   string
	code   string
	detect bool // must be graded GraderTampering (where a test would otherwise pass)
}{
	{name: "code swap by tracing the test module", detect: true, code: `
def _empty(fn):
    co = fn.__code__
    ns = {}
    exec("def _e(%s):\n    pass\n" % ", ".join(co.co_varnames[:co.co_argcount]), ns)
    return ns["_e"].__code__.replace(co_name=co.co_name, co_filename=co.co_filename, co_firstlineno=co.co_firstlineno)
def _swap_all(g):
    for k, v in list(g.items()):
        if k.startswith("test") and isinstance(v, _types.FunctionType):
            try:
                v.__code__ = _empty(v)
            except Exception:
                pass
        if k.startswith("Test") and isinstance(v, type):
            for mk, mv in list(vars(v).items()):
                if mk.startswith("test") and isinstance(mv, _types.FunctionType):
                    try:
                        mv.__code__ = _empty(mv)
                    except Exception:
                        pass
def _hook():
    f = _sys._getframe(0)
    while f is not None and not (f.f_code.co_name == "<module>" and _os.path.basename(f.f_code.co_filename).startswith("test_")):
        f = f.f_back
    if f is None:
        return
    def _local(fr, ev, arg):
        if ev == "return":
            _swap_all(fr.f_globals)
        return _local
    f.f_trace = _local
    _sys.settrace(lambda *a: None)
if not hasattr(_sys, "_fb_swap"):
    _sys._fb_swap = 1
    _hook()
`},
	{name: "forged stream, then suicide", detect: true, code: `
def _forge():
    f, items = _sys._getframe(1), None
    while f is not None and items is None:
        s = f.f_locals.get("session")
        it = f.f_locals.get("item")
        if s is not None and hasattr(s, "items"):
            items = s.items
        elif it is not None and hasattr(it, "session"):
            items = it.session.items
        f = f.f_back
    fd = int(_os.environ.get("FEATBENCH_STREAM_FD", "3"))
    out = []
    for it in items or []:
        out.append({"event": "start", "nodeid": it.nodeid})
        for when in ("setup", "call", "teardown"):
            out.append({"event": "report", "nodeid": it.nodeid, "when": when, "outcome": "passed", "exc_type": None, "duration": 0.0, "message": None})
        out.append({"event": "check", "ok": True, "problems": []})
    out.append({"event": "sessionfinish", "exitstatus": 0})
    out.append({"event": "check", "ok": True, "problems": []})
    _os.write(fd, "".join(_json.dumps(l) + "\n" for l in out).encode())
    _os.kill(_os.getpid(), _signal.SIGKILL)
_attack = _forge
`},
	{name: "a grandchild outlives pytest and rewrites what it left", code: `
def _grandchild():
    pytest_pid = _os.getpid()
    fd = int(_os.environ.get("FEATBENCH_STREAM_FD", "3"))
    if _os.fork() != 0:
        return
    if _os.fork() != 0:
        _os._exit(0)
    import glob, re, time
    while True:
        try:
            _os.kill(pytest_pid, 0)
        except OSError:
            break
        time.sleep(0.01)
    for p in glob.glob("/tmp/featbench/junit/*.xml") + glob.glob("/tmp/featbench-junit/*.xml"):
        try:
            s = open(p).read()
            s = re.sub(r"<failure[^>]*>.*?</failure>", "", s, flags=re.S)
            s = re.sub(r"<error[^>]*>.*?</error>", "", s, flags=re.S)
            s = re.sub(r'(failures|errors)="\d+"', r'\1="0"', s)
            open(p, "w").write(s)
        except OSError:
            pass
    try:
        _os.write(fd, b'{"event": "sessionfinish", "exitstatus": 0}\n')
        _os.write(1, b"=== short test summary info ===\n")
    except OSError:
        pass
    _os._exit(0)
_attack = _grandchild
`},
	{name: "always-equal objects", detect: true, code: `
class _AE:
    def __eq__(self, o): return True
    def __ne__(self, o): return False
    __hash__ = object.__hash__
    def __getattr__(self, n): return self
    def __call__(self, *a, **k): return self
    def __iter__(self): return iter(())
    def __len__(self): return 0
_value = _AE
`},
	{name: "a str subclass equal to anything", detect: true, code: `
class _S(str):
    def __eq__(self, o): return True
    def __ne__(self, o): return False
    __hash__ = str.__hash__
_value = lambda: _S("")
`},
	{name: "a trace function jumps over the asserts", code: `
import linecache as _lc
def _jumper(frame, ev, arg):
    if ev == "line" and _os.path.basename(frame.f_code.co_filename).startswith("test_"):
        if _lc.getline(frame.f_code.co_filename, frame.f_lineno).strip().startswith("assert"):
            try:
                frame.f_lineno = frame.f_lineno + 1
            except ValueError:
                pass
    return _jumper
def _global(frame, ev, arg):
    if _os.path.basename(frame.f_code.co_filename).startswith("test_"):
        return _jumper
    return None
if not hasattr(_sys, "_fb_jump"):
    _sys._fb_jump = 1
    _sys.settrace(_global)
`},
	{name: "raising pytest's Skipped", code: `
def _skip():
    import pytest
    raise pytest.skip.Exception("skipped by the feature")
_value = _skip
`},
	{name: "raising SystemExit(0)", code: `
def _exit():
    raise SystemExit(0)
_value = _exit
`},
	{name: "raising KeyboardInterrupt", code: `
def _interrupt():
    raise KeyboardInterrupt
_value = _interrupt
`},
	{name: "os._exit(0)", detect: true, code: `
_attack = lambda: _os._exit(0)
`},
}

// TestRedTeamRound2 grades every attack of round2 on the lite split, with
// canaries, and checks that none resolves an instance, that each meant
// to be detected is GraderTampering wherever it made a fail-to-pass test
// pass, and that nothing ran as root.
func TestRedTeamRound2(t *testing.T) {
	ds := example(t)
	eng, img := envImage(t)
	ids := liteIDs(ds)
	withCanaries(t, eng, img, ds, ids)
	for _, a := range round2 {
		t.Run(a.name, func(t *testing.T) {
			preds := map[string]evaluate.Prediction{}
			for _, id := range ids {
				preds[id] = evaluate.Prediction{Model: "attacker", Patch: []byte(oraclePatch(t, ds, ds.Instance(id), stubs+a.code))}
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
					t.Errorf("%s: graded resolved %v, FV %v (%.0f%% passed)\n%s", id, r.Resolved, r.FV, 100*r.PassedRate, tail(log))
				}
				tampering := slices.Equal(r.FailureModes, []string{evaluate.GraderTampering})
				if tampering {
					caught++
				}
				if a.detect && r.PassedRate > 0 && !tampering {
					t.Errorf("%s: %.0f%% of the fail-to-pass tests passed and the attack was not detected: modes %v", id, 100*r.PassedRate, r.FailureModes)
				}
				if strings.Contains(string(log), "uid 0") {
					t.Errorf("%s: prediction code ran as root:\n%s", id, tail(log))
				}
				regradeAgrees(t, ds, ds.Instance(id), filepath.Join(dir, id, "attempt-1"))
			}
			if a.detect && caught == 0 {
				t.Errorf("the attack was detected on no instance")
			}
		})
	}
}

// TestRedTeamLevel2BuildDaemon: a level 2 build leaves a daemon behind
// (a double fork from setup.py) that, once the tests run, rewrites the
// JUnit XML and writes passes where the harness reads. The harness kills
// every process of the tests' user after the install, and again after
// pytest: the daemon never sees the tests.
func TestRedTeamLevel2BuildDaemon(t *testing.T) {
	ds := example(t)
	eng, img := envImage(t)
	var ids []string
	for _, id := range liteIDs(ds) {
		if ds.Instance(id).Level == 2 {
			ids = append(ids, id)
		}
	}
	setup := `import os, sys, time, glob, re
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        open("/tmp/daemon.pid", "w").write(str(os.getpid()))
        for _ in range(6000):
            for p in glob.glob("/tmp/featbench/junit/*.xml"):
                try:
                    s = open(p).read()
                    open(p, "w").write(re.sub(r"<failure[^>]*>.*?</failure>", "", s, flags=re.S))
                except OSError:
                    pass
            time.sleep(0.01)
        os._exit(0)
    os._exit(0)
time.sleep(0.5)
from setuptools import setup
setup(name="agent_code", version="0.1", packages=["agent_code"])
`
	// The package, imported by the tests, says whether the daemon lives.
	probe := `import os
try:
    _pid = int(open("/tmp/daemon.pid").read())
    os.kill(_pid, 0)
    _state = "alive"
except FileNotFoundError:
    _state = "never started"
except (OSError, ValueError):
    _state = "dead"
raise ImportError("featbench-attack: the daemon is " + _state)
`
	preds := map[string]evaluate.Prediction{}
	for _, id := range ids {
		preds[id] = evaluate.Prediction{Model: "attacker", Patch: []byte(newFile("setup.py", setup) + newFile("agent_code/__init__.py", probe))}
	}
	_, reps, dir := run(t, eng, img, ds, ids, false, preds, testLimits)
	for _, id := range ids {
		r := reps[id]
		log, _ := os.ReadFile(filepath.Join(dir, id, "attempt-1", "container.log"))
		if r == nil || r.Error != "" || r.InstallOK == nil || !*r.InstallOK {
			t.Fatalf("%s: the attack was not graded: %+v\n%s", id, r, tail(log))
		}
		if r.Resolved || r.FV || r.PassedRate > 0 {
			t.Errorf("%s: graded resolved %v, FV %v, %.0f%% passed", id, r.Resolved, r.FV, 100*r.PassedRate)
		}
		if !strings.Contains(string(log), "featbench-attack: the daemon is dead") {
			t.Errorf("%s: the build's daemon lived to see the tests, or never started:\n%s", id, tail(log))
		}
	}
}

// regradeAgrees regrades an attempt from its folder, as validate does from
// a submission's logs, and checks that the verdict, the canaries and the
// audit are the run's; and that a report whose runs no longer name their
// canaries is refused where the dataset gives the instance canary places.
func regradeAgrees(t *testing.T, ds *bench.Dataset, in *bench.Instance, dir string) {
	t.Helper()
	rep, err := evaluate.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	entries, err := os.ReadDir(filepath.Join(dir, evaluate.TestsDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, evaluate.TestsDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = raw
	}
	again, err := evaluate.Regrade(ds, in, *rep, files)
	if err != nil {
		t.Fatalf("%s: regrading: %v", in.InstanceID, err)
	}
	if again.Resolved != rep.Resolved || !slices.Equal(again.FailureModes, rep.FailureModes) || !slices.Equal(again.AuditFlags, rep.AuditFlags) ||
		len(again.Canaries) != len(rep.Canaries) {
		t.Errorf("%s: regraded resolved %v %v, audit %v, %d canaries; the run said %v %v, %v, %d", in.InstanceID,
			again.Resolved, again.FailureModes, again.AuditFlags, len(again.Canaries), rep.Resolved, rep.FailureModes, rep.AuditFlags, len(rep.Canaries))
	}
	if len(in.Canaries) > 0 && len(rep.Runs) > 0 {
		lie := *rep
		lie.Runs = slices.Clone(rep.Runs)
		for i := range lie.Runs {
			lie.Runs[i].Canaries = ""
		}
		if _, err := evaluate.Regrade(ds, in, lie, files); err == nil || !strings.Contains(err.Error(), "had no canaries") {
			t.Errorf("%s: a report whose runs name no canaries regraded: %v", in.InstanceID, err)
		}
	}
}

// noEngine fails the test if anything asks it for a container.
type noEngine struct{ t *testing.T }

func (e noEngine) Start(context.Context, container.Spec) (executor.Box, error) {
	e.t.Fatal("a container was started for a prediction the harness refuses")
	return nil, nil
}

// TestRefusedBeforeAContainer: a patch the harness refuses (50 MB, a path
// out of the repository) is graded not applied without a container.
func TestRefusedBeforeAContainer(t *testing.T) {
	ds := example(t)
	in := ds.SplitInstances("lite")[0]
	for _, p := range []string{
		newFile("big.py", strings.Repeat("x = 1\n", 50<<20/6)),
		"diff --git a/../../etc/x b/../../etc/x\nnew file mode 100644\n--- /dev/null\n+++ b/../../etc/x\n@@ -0,0 +1 @@\n+x\n",
	} {
		var log bytes.Buffer
		rep, _, err := evaluate.Evaluate(context.Background(), noEngine{t}, evaluate.Task{
			Dataset: ds, Instance: in, Attempt: 1, Image: "unused", Prediction: evaluate.Prediction{Model: "m", Patch: []byte(p)},
		}, testLimits, &log)
		if err != nil || rep.PatchApplied || rep.PatchRefused == "" || !slices.Contains(rep.FailureModes, "PatchApplyError") {
			t.Errorf("%.60q: %v, %+v", p, err, rep)
		}
		if !strings.Contains(log.String(), "prediction refused before a container started") {
			t.Errorf("the log does not say why: %s", log.String())
		}
	}
}
