package mask_test

import (
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/mask"
)

// pyRun runs a Python snippet in dir (the masked repository) and returns
// its output, failing the test when it fails: the masked code must import.
func pyRun(t *testing.T, dir, code string) string {
	t.Helper()
	cmd := exec.Command(needPython(t), "-c", code)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "PYTHONDONTWRITEBYTECODE=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python -c %q in the masked repository: %v\n%s", code, err, out)
	}
	return strings.TrimSpace(string(out))
}

func dependents(res *mask.Result) []mask.Dependent {
	var out []mask.Dependent
	for _, f := range res.Files {
		out = append(out, f.Dependents...)
	}
	return out
}

// TestMaskClassAliases: a class-body alias of a removed method goes with
// it (and an alias of the alias): left behind, "__or__ = union" fails the
// import with a NameError.
func TestMaskClassAliases(t *testing.T) {
	r := repo{"sets.py": `class SortedSet:
    def __init__(self, items=()):
        self._items = sorted(set(items))

    def union(self, other):
        return SortedSet(self._items + list(other))

    __or__ = union
    __ror__ = __or__

    def __iter__(self):
        return iter(self._items)

    size = property(lambda self: len(self._items))
`}
	dir := r.write(t)
	res := mustMask(t, dir, mask.Request{Remove: []string{objID(t, r, "sets.py", "SortedSet.union", "def union")}})
	want := `class SortedSet:
    def __init__(self, items=()):
        self._items = sorted(set(items))

    def __iter__(self):
        return iter(self._items)

    size = property(lambda self: len(self._items))
`
	if got := read(t, dir, "sets.py"); got != want {
		t.Errorf("sets.py after masking:\n%s\nwant:\n%s", got, want)
	}
	wantDeps := []mask.Dependent{
		{Class: "SortedSet", Names: []string{"__or__"}, Start: 8, End: 8},
		{Class: "SortedSet", Names: []string{"__ror__"}, Start: 9, End: 9},
	}
	if got := dependents(res); !reflect.DeepEqual(got, wantDeps) {
		t.Errorf("dependents = %+v, want %+v", got, wantDeps)
	}
	if got := pyRun(t, dir, "import sets; print(list(sets.SortedSet([2, 1])), sets.SortedSet([3]).size)"); got != "[1, 2] 1" {
		t.Errorf("the masked module gives %q", got)
	}
	goldRestores(t, dir)
}

// TestMaskAliasNotShadowed: with the method bisect_right removed, "bisect
// = bisect_right" in its class would bind the standard library's function
// the module imports, silently. It goes with the method.
func TestMaskAliasNotShadowed(t *testing.T) {
	r := repo{"sl.py": `from bisect import bisect_left, bisect_right


def position(items, x):
    return bisect_right(items, x)


class SortedList:
    def __init__(self, items=()):
        self._items = sorted(items)

    def bisect_left(self, x):
        return bisect_left(self._items, x)

    def bisect_right(self, x):
        return bisect_right(self._items, x)

    bisect = bisect_right

    def __len__(self):
        return len(self._items)
`}
	dir := r.write(t)
	res := mustMask(t, dir, mask.Request{Remove: []string{objID(t, r, "sl.py", "SortedList.bisect_right", "def bisect_right")}})
	if got := read(t, dir, "sl.py"); strings.Contains(got, "bisect = bisect_right") {
		t.Errorf("the alias stayed:\n%s", got)
	}
	if got := dependents(res); len(got) != 1 || !reflect.DeepEqual(got[0].Names, []string{"bisect"}) {
		t.Errorf("dependents = %+v, want the bisect alias", got)
	}
	if got := pyRun(t, dir, "import sl; print(hasattr(sl.SortedList, 'bisect'), sl.SortedList([1, 3]).bisect_left(2))"); got != "False 1" {
		t.Errorf("the masked module gives %q, want no bisect attribute (not the standard library's function)", got)
	}
	goldRestores(t, dir)
}

// TestMaskClassBodyUses: other class-body code that names a removed
// member goes with it too (an old-style property, a singledispatchmethod's
// registered implementations, code in an if block of the class body), but
// a use that still finds a kept binding of the name in the class stays (a
// property's deleter after its setter is removed).
func TestMaskClassBodyUses(t *testing.T) {
	r := repo{"c.py": `import functools
import sys


class C:
    def get_x(self):
        return 1

    x = property(get_x)

    @functools.singledispatchmethod
    def show(self, v):
        return "any"

    @show.register
    def _(self, v: int):
        return "int"

    if sys.version_info >= (3,):
        shown = show

    @property
    def y(self):
        return self._y

    @y.setter
    def y(self, v):
        self._y = v

    @y.deleter
    def y(self):
        del self._y

    def keep(self):
        return "kept"
`}
	dir := r.write(t)
	res := mustMask(t, dir, mask.Request{Remove: []string{
		objID(t, r, "c.py", "C.get_x", "def get_x"),
		objID(t, r, "c.py", "C.show", "def show"),
		nthID(t, r, "c.py", "C.y", "def y", 2), // the setter
	}})
	got := read(t, dir, "c.py")
	for _, gone := range []string{"x = property(get_x)", "@show.register", "shown = show", "@y.setter"} {
		if strings.Contains(got, gone) {
			t.Errorf("%q stayed:\n%s", gone, got)
		}
	}
	for _, kept := range []string{"@y.deleter", "def keep", "if sys.version_info >= (3,):\n        pass"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%q was removed:\n%s", kept, got)
		}
	}
	if n := len(dependents(res)); n != 2 {
		t.Errorf("dependents = %+v, want x and shown", dependents(res))
	}
	if got := pyRun(t, dir, "import c; o = c.C(); o._y = 1; del o.y; print(o.keep(), hasattr(c.C, 'x'))"); got != "kept False" {
		t.Errorf("the masked module gives %q", got)
	}
	checkParses(t, dir, "c.py")
	goldRestores(t, dir)
}

// TestMaskTotalOrdering: functools.total_ordering fails the import of a
// class left with no ordering method ("must define at least one ordering
// operation"). The masker refuses such a request rather than write a
// codebase that does not import; removing one of two is fine (the
// decorator derives it from the other).
func TestMaskTotalOrdering(t *testing.T) {
	r := repo{"v.py": `import functools


@functools.total_ordering
class Version:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return self.n == other.n

    def __lt__(self, other):
        return self.n < other.n

    def __le__(self, other):
        return self.n <= other.n
`}
	dir := r.write(t)
	out := runMasker(t, dir, mask.Request{Remove: []string{
		objID(t, r, "v.py", "Version.__lt__", "def __lt__"),
		objID(t, r, "v.py", "Version.__le__", "def __le__"),
	}})
	if out.err == nil {
		t.Fatalf("the masker removed every ordering method of a total_ordering class:\n%s", read(t, dir, "v.py"))
	}
	for _, w := range []string{"v.py", "Version", "total_ordering", "keep '__lt__'"} {
		if !strings.Contains(out.stderr, w) {
			t.Errorf("stderr %q does not mention %q", out.stderr, w)
		}
	}
	dir = r.write(t)
	mustMask(t, dir, mask.Request{Remove: []string{objID(t, r, "v.py", "Version.__le__", "def __le__")}})
	if got := pyRun(t, dir, "import v; print(v.Version(1) <= v.Version(2))"); got != "True" {
		t.Errorf("the masked module gives %q", got)
	}
}

// TestMaskSubmoduleBinding: in a package's __init__, "from .exceptions
// import merge" also binds the submodule exceptions; with merge removed,
// dropping the statement broke toolz.curried's "del exceptions" (the
// masked codebase did not import). It becomes "from . import exceptions";
// a submodule nothing uses goes as before.
func TestMaskSubmoduleBinding(t *testing.T) {
	r := repo{
		"pkg/__init__.py": `from .exceptions import merge, merge_with
from .other import helper

del exceptions
`,
		"pkg/exceptions.py": `def merge(*ds):
    return {k: v for d in ds for k, v in d.items()}


def merge_with(f, *ds):
    return f(merge(*ds))
`,
		"pkg/other.py": `def helper():
    return 1
`,
	}
	dir := r.write(t)
	mustMask(t, dir, mask.Request{Remove: []string{
		objID(t, r, "pkg/exceptions.py", "merge", "def merge("),
		objID(t, r, "pkg/exceptions.py", "merge_with", "def merge_with"),
		objID(t, r, "pkg/other.py", "helper", "def helper"),
	}})
	want := `from . import exceptions

del exceptions
`
	if got := read(t, dir, "pkg/__init__.py"); got != want {
		t.Errorf("pkg/__init__.py:\n%s\nwant:\n%s", got, want)
	}
	pyRun(t, dir, "import pkg")
	goldRestores(t, dir)
}
