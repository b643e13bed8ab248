package trace_test

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/featbench/featbench/internal/container"
	"github.com/featbench/featbench/internal/images/imagestest"
	"github.com/featbench/featbench/internal/trace"
)

// fixture is a small repository with the cases the tracer must get right.
var fixture = map[string]string{
	"lib/__init__.py": "from lib.shapes import Circle\n",
	// api takes Circle from the package, which only re-exports it.
	"lib/api.py": "from lib import Circle\n",
	// reg names triple through a module it then deletes.
	"lib/reg.py": "import lib.shapes\n\nTABLE = {\"t\": lib.shapes.triple}\n\ndel lib\n",
	// Impl.run implements an abstract method: without it Impl cannot be made.
	"lib/base.py": `import abc


class Base(abc.ABC):
    @abc.abstractmethod
    def run(self):
        ...


class Impl(Base):
    def run(self):
        return 1

    def other(self):
        return 2
`,
	"lib/shapes.py": `import functools

REGISTRY = {}


def register(fn):
    REGISTRY[fn.__name__] = fn
    return fn


def helper(x):
    return x * 2


class Circle:
    def __init__(self, r):
        self.r = r

    def area(self):
        return round(3.14 * self.r * self.r, 2)


class Square:
    def __init__(self, s):
        self.s = helper(s)

    def area(self):
        return self.s * self.s


def decorate(f):
    @functools.wraps(f)
    def wrapper(*a):
        return f(*a)
    return wrapper


@decorate
def doubled(x):
    return helper(x)


def by_key(items):
    return sorted(items, key=helper)


ALIASES = {"dbl": doubled}


@register
def registered():
    return 1


def triple(x):
    return x * 3
`,
	"tests/test_shapes.py": `import pytest

import lib.api
import lib.base
import lib.reg

from lib import shapes
from lib.shapes import Square, by_key


def test_square():
    assert Square(2).area() == 16


def test_circle():
    assert shapes.Circle(1).area() == 3.14


def test_by_key():
    assert by_key([3, 1, 2]) == [1, 2, 3]


def test_doubled():
    assert shapes.doubled(2) == 4
    with pytest.raises(TypeError):
        shapes.doubled()
`,
}

// TestTracer runs the tracer on the fixture with pytest in a container of
// the base image and checks the graph it writes.
func TestTracer(t *testing.T) {
	eng, base := imagestest.Base(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := eng.Start(ctx, container.Spec{Image: base, Name: "featbench-test-trace", WorkDir: "/testbed"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Remove()
	var files []container.File
	for p, src := range fixture {
		files = append(files, container.File{Path: p, Data: []byte(src)})
	}
	if err := c.CopyIn(ctx, "/testbed", files); err != nil {
		t.Fatal(err)
	}
	if err := c.CopyIn(ctx, "/fb", []container.File{{Path: trace.ScriptName, Data: trace.Script()}}); err != nil {
		t.Fatal(err)
	}
	argv, err := trace.Command(trace.Options{Script: "/fb/" + trace.ScriptName, Root: "/testbed", Out: "/fb/trace.json",
		Tests: []string{"tests/test_shapes.py"}, Args: []string{"-q", "-p", "no:cacheprovider", "tests/test_shapes.py"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Exec(ctx, argv, container.ExecOptions{Timeout: 2 * time.Minute, Env: []string{"PYTHONPATH=/testbed", "PYTHONDONTWRITEBYTECODE=1"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("tracer: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	out, err := c.CopyOut(ctx, "/fb/trace.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := trace.Decode(bytes.NewReader(out[0].Data))
	if err != nil {
		t.Fatal(err)
	}

	node := func(id string) *trace.Node {
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
	calls := func(from, to string) {
		t.Helper()
		if !slices.Contains(node(from).Callees, to) {
			t.Errorf("%s does not call %s; callees %v", from, to, node(from).Callees)
		}
	}
	// Two methods of one name in one file stay two nodes, each with its
	// own calls (FeatureBench's tracer merged them).
	node("lib/shapes.py::Circle.__init__::16")
	calls("lib/shapes.py::Square.__init__::24", "lib/shapes.py::helper::11")
	if slices.Contains(node("lib/shapes.py::Circle.__init__::16").Callees, "lib/shapes.py::helper::11") {
		t.Error("Circle.__init__ was given Square.__init__'s call")
	}
	// A call made by the standard library (sorted's key) is the nearest
	// repository caller's.
	calls("lib/shapes.py::by_key::43", "lib/shapes.py::helper::11")
	calls("tests/test_shapes.py::test_by_key::19", "lib/shapes.py::by_key::43")
	// A decorated function: its id has the def line, its span starts at
	// the decorator; the wrapper is local to its decorator.
	d := node("lib/shapes.py::doubled::39")
	if d.Start != 38 || d.End != 40 || d.Kind != trace.KindFunction || d.Calls != 1 {
		t.Errorf("doubled = %+v, want span 38-40, one call (the second call fails in the wrapper)", d)
	}
	w := node("lib/shapes.py::decorate.wrapper::33")
	if !w.Local || w.Calls != 2 {
		t.Errorf("wrapper = %+v, want local with 2 calls", w)
	}
	calls("lib/shapes.py::decorate.wrapper::33", "lib/shapes.py::doubled::39")
	// Classes are nodes when their bodies run, on import.
	if n := node("lib/shapes.py::Square::23"); n.Kind != trace.KindClass || n.Start != 23 || n.End != 28 {
		t.Errorf("Square = %+v", n)
	}
	calls("lib/shapes.py::<module>::0", "lib/shapes.py::register::6")
	// Import-time references: a registered function, an alias, a name
	// imported from a package that re-exports it (lib/__init__.py's own
	// import from the defining module is not one: the masker rewrites it).
	for _, id := range []string{"lib/shapes.py::doubled::39", "lib/shapes.py::register::6", "lib/shapes.py::decorate::31", "lib/shapes.py::Circle::15"} {
		if !slices.Contains(g.ImportRefs, id) {
			t.Errorf("import_refs %v lack %s", g.ImportRefs, id)
		}
	}
	if slices.Contains(g.ImportRefs, "lib/shapes.py::helper::11") {
		t.Error("helper is referenced only inside functions, not on import")
	}
	// Through a module deleted after use, and an abstract method's
	// implementation (but not the class's other methods).
	for _, id := range []string{"lib/shapes.py::triple::55", "lib/base.py::Impl.run::11"} {
		if !slices.Contains(g.ImportRefs, id) {
			t.Errorf("import_refs %v lack %s", g.ImportRefs, id)
		}
	}
	if slices.Contains(g.ImportRefs, "lib/base.py::Impl.other::14") {
		t.Error("Impl.other implements nothing abstract")
	}
	// The test file's imports and how it uses them.
	imps := g.Imports["tests/test_shapes.py"]
	byName := map[string]trace.Import{}
	for _, im := range imps {
		byName[im.Module+":"+im.Name] = im
	}
	if im := byName["lib.shapes:Square"]; im.Kind != "repo-object" || im.ID != "lib/shapes.py::Square::23" || im.Uses != 1 || im.AssertUses != 1 {
		t.Errorf("Square import = %+v", im)
	}
	mod := byName["lib:shapes"]
	if mod.Kind != "repo-module" || mod.File != "lib/shapes.py" {
		t.Errorf("shapes import = %+v", mod)
	}
	attrs := map[string]trace.Attr{}
	for _, a := range mod.Attrs {
		attrs[a.Name] = a
	}
	if a := attrs["doubled"]; a.ID != "lib/shapes.py::doubled::39" || a.Uses != 2 || a.AssertUses != 2 {
		t.Errorf("shapes.doubled = %+v, want 2 uses, both asserting (an assert and a pytest.raises block)", a)
	}
	if a := attrs["Circle"]; a.ID != "lib/shapes.py::Circle::15" || a.AssertUses != 1 {
		t.Errorf("shapes.Circle = %+v", a)
	}
	if im := byName["pytest:"]; im.Kind != "external-module" {
		t.Errorf("pytest import = %+v", im)
	}
}
