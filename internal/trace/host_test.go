package trace_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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
	return hostTraceEnv(t, nil, files, tests...)
}

// hostTraceEnv is hostTrace with more environment variables for the
// runner (see testdata/runner.py).
func hostTraceEnv(t *testing.T, env []string, files map[string]string, tests ...string) *trace.Graph {
	t.Helper()
	if _, err := os.Stat(hostPython); err != nil {
		t.Skipf("%s (Debian's Python 3.11, as in the repositories' containers) is missing: %v", hostPython, err)
	}
	return hostTraceWith(t, hostPython, env, files, tests...)
}

// hostTraceWith is hostTraceEnv with another Python.
func hostTraceWith(t *testing.T, python string, env []string, files map[string]string, tests ...string) *trace.Graph {
	t.Helper()
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
	cmd := exec.Command(python, append([]string{runner, tools, root, out}, tests...)...)
	cmd.Dir = root
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "LC_ALL=C", "PYTHONDONTWRITEBYTECODE=1"}, env...)
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
	if g.Hook != "sys.setprofile" {
		t.Errorf("hook %q on Python 3.11, want sys.setprofile", g.Hook)
	}
	if n := mustNode(t, g, "lib/m.py::f::5"); !slices.Contains(n.Callees, "lib/m.py::helper::1") {
		t.Errorf("f's callees = %v, want helper", n.Callees)
	}
	mustNode(t, g, "tests/test_m.py::test_f::4")
}

// importOf returns the test file's import of module (name "" for an
// "import module" statement).
func importOf(t *testing.T, g *trace.Graph, file, module, name string) trace.Import {
	t.Helper()
	for _, im := range g.Imports[file] {
		if im.Module == module && im.Name == name {
			return im
		}
	}
	t.Fatalf("%s does not import %q from %q; imports: %+v", file, name, module, g.Imports[file])
	return trace.Import{}
}

func attrOf(t *testing.T, im trace.Import, name string) trace.Attr {
	t.Helper()
	for _, a := range im.Attrs {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no use of %s.%s counted; attrs: %+v", im.Module, name, im.Attrs)
	return trace.Attr{}
}

// TestImportsPackageThenSubmodule: "import pkg" then "import pkg.sub"
// both bind pkg, to the same package; pkg.f stays a use of the package's
// f (the second import used to rebind pkg to pkg.sub in the analysis, and
// the uses of pkg.f were lost).
func TestImportsPackageThenSubmodule(t *testing.T) {
	g := hostTrace(t, map[string]string{
		"cachelib/__init__.py": "def cached(x):\n    return x\n",
		"cachelib/keys.py":     "def hashkey(*a):\n    return a\n",
		"tests/test_cache.py": `import cachelib
import cachelib.keys


def test_cached():
    assert cachelib.cached(1) == 1
    assert cachelib.cached(2) == 2
    assert cachelib.keys.hashkey(3) == (3,)
`,
	}, "tests/test_cache.py")
	pkg := importOf(t, g, "tests/test_cache.py", "cachelib", "")
	if a := attrOf(t, pkg, "cached"); a.ID != "cachelib/__init__.py::cached::1" || a.Uses != 2 || a.AssertUses != 2 {
		t.Errorf("cachelib.cached = %+v, want 2 uses in assertions", a)
	}
	sub := importOf(t, g, "tests/test_cache.py", "cachelib.keys", "")
	if a := attrOf(t, sub, "hashkey"); a.ID != "cachelib/keys.py::hashkey::1" || a.Uses != 1 || a.AssertUses != 1 {
		t.Errorf("cachelib.keys.hashkey = %+v, want 1 use in an assertion", a)
	}
}

// TestImportsUnittestAssertions: unittest's self.assert* calls (and the
// callable form of assertRaises) are assertions, as assert statements and
// pytest.raises blocks are.
func TestImportsUnittestAssertions(t *testing.T) {
	g := hostTrace(t, map[string]string{
		"lib/__init__.py": "",
		"lib/m.py": `def double(x):
    return 2 * x


def check(x):
    if x < 0:
        raise ValueError(x)
    return x


def build(x):
    return [x]
`,
		"tests/test_m.py": `import unittest

from lib.m import build, check, double


class TestM(unittest.TestCase):
    def test_double(self):
        self.assertEqual(double(2), 4)
        self.assertTrue(double(0) == 0)

    def test_check(self):
        self.assertRaises(ValueError, check, -1)
        with self.assertRaises(ValueError):
            check(-2)

    def test_build(self):
        got = build(1)
        self.assertEqual(got, [1])
`,
	}, "tests/test_m.py")
	for name, want := range map[string][2]int{"double": {2, 2}, "check": {2, 2}, "build": {1, 0}} {
		im := importOf(t, g, "tests/test_m.py", "lib.m", name)
		if im.Uses != want[0] || im.AssertUses != want[1] {
			t.Errorf("%s: %d uses, %d in assertions; want %d and %d", name, im.Uses, im.AssertUses, want[0], want[1])
		}
	}
}

// closures is a caching decorator's factory, its decorator and wrapper,
// and a test that calls the wrapper.
var closures = map[string]string{
	"lib/__init__.py": "",
	"lib/caching.py": `def _key(args):
    return tuple(args)


def _store(cache, k, v):
    cache[k] = v
    return v


def cached(cache):
    def decorator(func):
        def wrapper(*args):
            k = _key(args)
            if k in cache:
                return cache[k]
            return _store(cache, k, func(*args))
        return wrapper
    return decorator
`,
	"tests/test_caching.py": `from lib.caching import cached


def test_cached():
    c = {}

    @cached(c)
    def square(x):
        return x * x

    assert square(3) == 9
    assert square(3) == 9
    assert c == {(3,): 9}
`,
}

// TestClosureCallsReachTheFactory: a function a factory returns, called
// later by the test, is the factory's work: the factory's node reaches the
// closure (through the nested decorator), so that a walk from the factory
// goes on to what the closure calls (the walk from a caching decorator
// used to stop at the decorator itself, its helpers left in place).
func TestClosureCallsReachTheFactory(t *testing.T) {
	g := hostTrace(t, closures, "tests/test_caching.py")
	const (
		factory   = "lib/caching.py::cached::10"
		decorator = "lib/caching.py::cached.decorator::11"
		wrapper   = "lib/caching.py::cached.decorator.wrapper::12"
	)
	if n := mustNode(t, g, factory); !slices.Contains(n.Callees, decorator) {
		t.Errorf("cached's callees = %v, want its nested decorator", n.Callees)
	}
	if n := mustNode(t, g, decorator); !slices.Contains(n.Callees, wrapper) {
		t.Errorf("decorator's callees = %v, want its nested wrapper", n.Callees)
	}
	res := trace.Walk(trace.WalkInput{Graph: g, Tops: []string{factory}, Budget: 100,
		Eligible: func(n *trace.Node) bool { return n.File == "lib/caching.py" },
		Through:  func(n *trace.Node) bool { return n.Local }})
	want := []string{"lib/caching.py::_key::1", "lib/caching.py::_store::5", factory}
	if !slices.Equal(res.Extracted, want) {
		t.Errorf("the walk from cached extracts %v, want %v", res.Extracted, want)
	}
}

// TestReferencesAreReached: code that ran and takes a repository function
// as a value, without calling it, needs it: a method bound through a local
// (sortedcontainers' SortedDict.__init__ does self.islice =
// _list.islice), a module-level function passed on, a name a
// function-level import binds. The run reaches them, so that a walk of
// another test file keeps them.
func TestReferencesAreReached(t *testing.T) {
	g := hostTrace(t, map[string]string{
		"lib/__init__.py": "",
		"lib/sortedlist.py": `class SortedList:
    def __init__(self):
        self._items = []

    def add(self, x):
        self._items.append(x)
        self._items.sort()

    def islice(self, start=None, stop=None):
        return iter(self._items[start:stop])

    def irange(self, lo, hi):
        return iter([x for x in self._items if lo <= x <= hi])
`,
		"lib/render.py": "def render(x):\n    return str(x)\n\n\ndef unused(x):\n    return x\n",
		"lib/sorteddict.py": `from lib.sortedlist import SortedList


def _identity(k):
    return k


def unused(k):
    return k


class SortedDict(dict):
    def __init__(self):
        self._list = SortedList()
        _list = self._list
        self._list_add = _list.add
        self.islice = _list.islice
        self._key = _identity
        unused = None
        self._other = unused
        dict.__init__(self)

    def __setitem__(self, k, v):
        if k not in self:
            self._list_add(k)
        dict.__setitem__(self, k, v)

    def formatter(self):
        from lib.render import render
        return render
`,
		"tests/test_sorteddict.py": `from lib.sorteddict import SortedDict


def test_set():
    d = SortedDict()
    d["b"] = 1
    d["a"] = 2
    assert d._list._items == ["a", "b"]
    assert d.formatter() is not None
`,
	}, "tests/test_sorteddict.py")
	wantReached(t, g,
		[]string{"lib/sortedlist.py::SortedList.islice::9", "lib/sorteddict.py::_identity::4", "lib/render.py::render::1"},
		[]string{"lib/sortedlist.py::SortedList.irange::12", "lib/sorteddict.py::unused::8", "lib/render.py::unused::5"})
	if n := mustNode(t, g, "lib/sorteddict.py::SortedDict.__init__::13"); !slices.Contains(n.Refs, "lib/sortedlist.py::SortedList.islice::9") {
		t.Errorf("SortedDict.__init__ refs = %v, want SortedList.islice", n.Refs)
	}
}

// TestClassBodyReferences: names in a class body are the class's own
// members once bound there, not the module's globals. An alias of a
// member (__or__ = union, bisect = bisect_right) goes with the member when
// it is removed (the masker's rule), so it is no reference, and neither is
// a module function of the same name; any other use of a member at import
// (property(get_size), a dataclass field's default_factory) is. A class
// functools.total_ordering completed needs its root comparison to import;
// a property's setter that ran needs its getter; an alias taken as a
// value reaches what it names.
func TestClassBodyReferences(t *testing.T) {
	g := hostTrace(t, map[string]string{
		"lib/__init__.py": "",
		"lib/sets.py": `import dataclasses
import functools
from bisect import bisect_right


def union(a, b):
    return a | b


class SortedSet:
    def __init__(self, items=()):
        self._items = sorted(set(items))

    def union(self, other):
        return SortedSet(self._items + list(other))

    __or__ = union

    def bisect_right(self, x):
        return bisect_right(self._items, x)

    bisect = bisect_right

    def get_size(self):
        return len(self._items)

    size = property(get_size)


@functools.total_ordering
class Version:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return self.n == other.n

    def __lt__(self, other):
        return self.n < other.n


@dataclasses.dataclass
class Config:
    def _default_tags():
        return []

    tags: list = dataclasses.field(default_factory=_default_tags)


class Box:
    @property
    def value(self):
        return self._v

    @value.setter
    def value(self, v):
        self._v = v


def finder(s):
    return s.bisect
`,
		"tests/test_sets.py": `from lib.sets import Box, Config, SortedSet, Version, finder


def test_build():
    assert list(SortedSet([2, 1])._items) == [1, 2]
    assert Version(1).n == 1
    assert Config(tags=[1]).tags == [1]
    b = Box()
    b.value = 3
    assert b._v == 3
    assert finder(SortedSet()) is not None
`,
	}, "tests/test_sets.py")
	wantReached(t, g, []string{
		"lib/sets.py::SortedSet.get_size::24",
		"lib/sets.py::Version.__lt__::38",
		"lib/sets.py::Config._default_tags::44",
		"lib/sets.py::Box.value::52",              // the getter, for the setter that ran
		"lib/sets.py::SortedSet.bisect_right::19", // s.bisect taken as a value
	}, []string{
		"lib/sets.py::SortedSet.union::14",
		"lib/sets.py::union::6",
		"lib/sets.py::Version.__eq__::35",
	})
	for _, id := range []string{"lib/sets.py::SortedSet.union::14", "lib/sets.py::union::6", "lib/sets.py::SortedSet.bisect_right::19"} {
		if slices.Contains(g.ImportRefs, id) {
			t.Errorf("import_refs hold %s: only an alias names it in the class body", id)
		}
	}
}

// TestTracerAllocatesNoTrackedObjects: sortedcontainers' test_ref_counts
// counts gc.get_objects() around making and deleting a SortedDict; each
// new call edge the tracer recorded was a tuple the collector tracks, so
// the counts differed and the file failed only when traced.
func TestTracerAllocatesNoTrackedObjects(t *testing.T) {
	g := hostTrace(t, map[string]string{
		"lib/__init__.py": "",
		"lib/box.py": `class Box:
    def __init__(self):
        self.items = self._make()

    def _make(self):
        return []
`,
		"tests/__init__.py": "",
		"tests/test_gc.py": `import gc

from lib.box import Box


def test_ref_counts():
    start = len(gc.get_objects())
    temp = Box()
    assert len(gc.get_objects()) > start
    del temp
    assert len(gc.get_objects()) == start
`,
	}, "tests/test_gc.py")
	mustNode(t, g, "lib/box.py::Box.__init__::2")
}

// loops is a library whose calls repeat: one caller calling one function in
// a loop, two calls taking turns, a generator and its consumer. The hook
// counts a call it saw just before (the same callee from the same caller)
// without recording it again; counts and edges must stay exact.
var loops = map[string]string{
	"lib/__init__.py": "",
	"lib/loops.py": `def leaf(x):
    return x + 1


def other(x):
    return x


def one(n):
    return sum(leaf(i) for i in range(n))


def two(n):
    s = 0
    for i in range(n):
        s += leaf(i)
        s += other(i)
    return s


def gen(n):
    for i in range(n):
        yield leaf(i)


def consume(n):
    return list(gen(n))


def alternate(n):
    for _ in range(n):
        one(1)
        two(1)
`,
	"tests/test_loops.py": `from lib import loops


def test_loops():
    assert loops.two(1000) == 1000 * 1001 // 2 + 1000 * 999 // 2
    loops.alternate(100)
    assert loops.consume(50) == list(range(1, 51))
    assert loops.leaf(0) == 1
`,
}

// TestLoopCounts checks counts and edges of repeated calls against
// what the test does.
func TestLoopCounts(t *testing.T) {
	g := hostTrace(t, loops, "tests/test_loops.py")
	const f = "lib/loops.py::"
	calls := map[string]int{
		f + "leaf::1":       1000 + 100 + 100 + 50 + 1, // two(1000); one(1), two(1) 100 times; consume(50); the test
		f + "other::5":      1000 + 100,
		f + "one::9":        100 + 2*100, // with its generator expression's calls: started and ended, for n = 1
		f + "two::13":       1 + 100,
		f + "gen::21":       51, // started, resumed for each of 50 values, and once more to end
		f + "consume::26":   1,
		f + "alternate::30": 1,
	}
	for id, want := range calls {
		if n := mustNode(t, g, id); n.Calls != want {
			t.Errorf("%s: %d calls, want %d", id, n.Calls, want)
		}
	}
	callees := map[string][]string{
		f + "one::9":        {f + "leaf::1"}, // from its generator expression
		f + "two::13":       {f + "leaf::1", f + "other::5"},
		f + "gen::21":       {f + "leaf::1"},
		f + "consume::26":   {f + "gen::21"},
		f + "alternate::30": {f + "one::9", f + "two::13"},
		f + "leaf::1":       nil,
		f + "other::5":      nil,
	}
	for id, want := range callees {
		if n := mustNode(t, g, id); !slices.Equal(n.Callees, want) {
			t.Errorf("%s: callees %v, want %v", id, n.Callees, want)
		}
	}
	if n := mustNode(t, g, "tests/test_loops.py::test_loops::4"); !slices.Equal(n.Callees, []string{
		f + "alternate::30", f + "consume::26", f + "leaf::1", f + "two::13"}) {
		t.Errorf("test_loops: callees %v", n.Callees)
	}
}

// threads is a library function that starts two threads, each calling
// another function of the library.
var threads = map[string]string{
	"lib/__init__.py": "",
	"lib/work.py": `import threading


def helper(x):
    return x * 2


def work(out, n):
    for i in range(n):
        out.append(helper(i))


def run(n):
    out = []
    threads = [threading.Thread(target=work, args=(out, n)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(out)
`,
	"tests/test_work.py": `from lib.work import run


def test_run():
    assert run(100) == sorted(list(range(0, 200, 2)) * 2)
`,
}

// TestThreadCalls: a thread the test starts is traced from its start, with
// a profile function of its own.
func TestThreadCalls(t *testing.T) {
	g := hostTrace(t, threads, "tests/test_work.py")
	if n := mustNode(t, g, "lib/work.py::work::8"); n.Calls != 2 || !slices.Equal(n.Callees, []string{"lib/work.py::helper::4"}) {
		t.Errorf("work = %+v, want 2 calls of helper", n)
	}
	if n := mustNode(t, g, "lib/work.py::helper::4"); n.Calls != 200 {
		t.Errorf("helper: %d calls, want 200", n.Calls)
	}
}

// TestImportedBeforeTheRun: the hook of the thread that runs the tests
// starts with the repository's first module body (pytest's start goes
// unhooked), unless a repository module was imported before the run,
// whose functions can run without one: then it starts at once.
func TestImportedBeforeTheRun(t *testing.T) {
	g := hostTraceEnv(t, []string{"FB_PRECALL=lib.pre:setup"}, map[string]string{
		"lib/__init__.py": "",
		"lib/pre.py": `def helper():
    return 1


def setup():
    return helper()
`,
		"tests/test_pre.py": `def test_nothing():
    pass
`,
	}, "tests/test_pre.py")
	if n := mustNode(t, g, "lib/pre.py::setup::5"); n.Calls != 1 || !slices.Equal(n.Callees, []string{"lib/pre.py::helper::1"}) {
		t.Errorf("setup = %+v, want one call, of helper", n)
	}
}

// monitoringPython is a Python 3.12 or later, for the tests of the
// tracer's sys.monitoring hook: $FEATBENCH_TEST_PYTHON, else Debian's
// python3.13 or python3.12.
func monitoringPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("FEATBENCH_TEST_PYTHON"), "/usr/bin/python3.13", "/usr/bin/python3.12"} {
		if p == "" {
			continue
		}
		out, err := exec.Command(p, "-c", "import sys; print(sys.version_info >= (3, 12))").Output()
		if err == nil && strings.TrimSpace(string(out)) == "True" {
			return p
		}
	}
	t.Skip("no Python 3.12 or later ($FEATBENCH_TEST_PYTHON, /usr/bin/python3.13, /usr/bin/python3.12): the sys.monitoring hook is not tested")
	return ""
}

// TestMonitoringHook: on Python 3.12 and later the tracer hooks
// sys.monitoring (every thread's events; a code location outside the
// repository is disabled after its first event) and records what the
// same Python records under sys.setprofile: the same nodes, edges and
// references, and with the event budget off the same counts. With the
// budget (on by default) a count may stop short, never above.
func TestMonitoringHook(t *testing.T) {
	py := monitoringPython(t)
	for _, c := range []struct {
		name  string
		files map[string]string
		test  string
	}{{"loops", loops, "tests/test_loops.py"}, {"threads", threads, "tests/test_work.py"}, {"closures", closures, "tests/test_caching.py"}} {
		for _, budget := range []bool{false, true} {
			name := c.name + "/budget-off"
			var env []string
			if budget {
				name = c.name + "/budget"
			} else {
				env = budgetOff
			}
			t.Run(name, func(t *testing.T) {
				mon := hostTraceWith(t, py, env, c.files, c.test)
				prof := hostTraceWith(t, py, append([]string{"FEATBENCH_TRACE_HOOK=setprofile"}, env...), c.files, c.test)
				if mon.Hook != "sys.monitoring" || prof.Hook != "sys.setprofile" {
					t.Fatalf("hooks %q and %q, want sys.monitoring and sys.setprofile", mon.Hook, prof.Hook)
				}
				sameGraphs(t, mon, prof, "sys.monitoring", "sys.setprofile")
			})
		}
	}
}

// budgetOff turns the tracer's event budget off: every call counted.
var budgetOff = []string{"FEATBENCH_TRACE_BUDGET=0", "FEATBENCH_TRACE_QUIET=0"}

// sameGraphs compares two graphs of one run: the same nodes, edges
// (callees) and references, and the same call counts where both are
// exact; where a's counts are bounded (the event budget), a's count is at
// most b's, and at least one.
func sameGraphs(t *testing.T, a, b *trace.Graph, an, bn string) {
	t.Helper()
	for _, g := range []*trace.Graph{a, b} {
		if g.Counts != trace.CountsExact && g.Counts != trace.CountsBounded {
			t.Errorf("counts %q, want exact or bounded", g.Counts)
		}
	}
	if b.Bounded() {
		t.Fatalf("the reference graph (%s) has bounded counts", bn)
	}
	type rec struct {
		calls   int
		callees []string
		refs    []string
	}
	nodes := func(g *trace.Graph) map[string]rec {
		m := map[string]rec{}
		for _, n := range g.Nodes {
			m[n.ID] = rec{n.Calls, n.Callees, n.Refs}
		}
		return m
	}
	x, y := nodes(a), nodes(b)
	for id, p := range x {
		q, ok := y[id]
		switch {
		case !ok:
			t.Errorf("%s: a node under %s only", id, an)
		case !slices.Equal(p.callees, q.callees) || !slices.Equal(p.refs, q.refs):
			t.Errorf("%s: %+v under %s, %+v under %s", id, p, an, q, bn)
		case !a.Bounded() && p.calls != q.calls:
			t.Errorf("%s: %d calls under %s, %d under %s (both exact)", id, p.calls, an, q.calls, bn)
		case a.Bounded() && (p.calls > q.calls || (p.calls < 1 && q.calls > 0)):
			t.Errorf("%s: %d calls under %s (bounded), %d under %s", id, p.calls, an, q.calls, bn)
		}
	}
	for id := range y {
		if _, ok := x[id]; !ok {
			t.Errorf("%s: a node under %s only", id, bn)
		}
	}
}

// hot is a library whose test runs a hot loop (a function and a
// generator, each from one caller, thousands of times), then a test that
// calls the loop's callee from a new caller, and one whose thread runs a
// hot loop.
var hot = map[string]string{
	"lib/__init__.py": "",
	"lib/hot.py": `import threading


def leaf(x):
    return x + 1


def gen(n):
    for i in range(n):
        yield leaf(i)


def loop(n):
    t = 0
    for x in gen(n):
        t += leaf(x)
    return t


def newcaller():
    return leaf(0)


def threaded(n):
    out = []
    th = threading.Thread(target=lambda: out.append(loop(n)))
    th.start()
    th.join()
    return out[0]
`,
	"tests/test_hot.py": `from lib import hot


def test_a_loop():
    assert hot.loop(5000) == sum(range(2, 5002))


def test_b_new_caller():
    assert hot.newcaller() == 1


def test_c_thread():
    assert hot.threaded(3000) == sum(range(2, 3002))
`,
}

// TestEventBudget: with a small event budget, a hot loop stops being
// counted (the counts are bounded: at most the exact ones), yet the
// graph's nodes and edges are those of a run without the budget; a later
// test's new caller of the loop's callee is still an edge (the budget
// starts again with each test), and a thread's loop too. On Python 3.11
// (sys.setprofile) and, when there is one, 3.12 or later
// (sys.monitoring).
func TestEventBudget(t *testing.T) {
	small := []string{"FEATBENCH_TRACE_BUDGET=50", "FEATBENCH_TRACE_QUIET=200"}
	check := func(t *testing.T, python string) {
		exact := hostTraceWith(t, python, budgetOff, hot, "tests/test_hot.py")
		bounded := hostTraceWith(t, python, small, hot, "tests/test_hot.py")
		if exact.Counts != trace.CountsExact || bounded.Counts != trace.CountsBounded {
			t.Fatalf("counts %q without the budget, %q with it; want exact and bounded", exact.Counts, bounded.Counts)
		}
		sameGraphs(t, bounded, exact, "the budget", "no budget")
		const f = "lib/hot.py::"
		if n := mustNode(t, exact, f+"leaf::4"); n.Calls != 2*5000+1+2*3000 {
			t.Errorf("leaf: %d calls without the budget, want %d", n.Calls, 2*5000+1+2*3000)
		}
		if n := mustNode(t, bounded, f+"leaf::4"); n.Calls >= 2*5000 {
			t.Errorf("leaf: %d calls with a budget of 50 events, want fewer than the loop's", n.Calls)
		}
		if n := mustNode(t, bounded, f+"newcaller::20"); !slices.Equal(n.Callees, []string{f + "leaf::4"}) {
			t.Errorf("newcaller, after the loop's test: callees %v, want leaf", n.Callees)
		}
		for _, id := range []string{f + "gen::8", f + "loop::13"} {
			if n := mustNode(t, bounded, id); !slices.Contains(n.Callees, f+"leaf::4") {
				t.Errorf("%s: callees %v, want leaf", id, n.Callees)
			}
		}
		var notes []string
		notes = append(notes, bounded.Notes...)
		if !slices.ContainsFunc(notes, func(s string) bool { return strings.Contains(s, "lower bounds") }) {
			t.Errorf("no note of the bounded counts: %v", notes)
		}
	}
	t.Run("setprofile", func(t *testing.T) {
		if _, err := os.Stat(hostPython); err != nil {
			t.Skipf("%s is missing: %v", hostPython, err)
		}
		check(t, hostPython)
	})
	t.Run("monitoring", func(t *testing.T) {
		check(t, monitoringPython(t))
	})
}
