package components_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/components"
)

// The script tests run the embedded script with Debian's Python 3.11, the
// interpreter of the repositories' containers, on real Python code.

const hostPython = "/usr/bin/python3"

func run(t *testing.T, req components.Request) *components.Result {
	t.Helper()
	if _, err := os.Stat(hostPython); err != nil {
		t.Skipf("%s (Debian's Python 3.11, as in the repositories' containers) is missing: %v", hostPython, err)
	}
	if err := req.Validate(); err != nil {
		t.Fatalf("request: %v", err)
	}
	dir := t.TempDir()
	sp := filepath.Join(dir, components.ScriptName)
	if err := os.WriteFile(sp, components.Script(), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	rp := filepath.Join(dir, "request.json")
	if err := os.WriteFile(rp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	argv := components.Command(sp, rp)
	cmd := exec.Command(hostPython, argv[1:]...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("script: %v\n%s", err, stderr.String())
	}
	res, err := components.ParseResult(stdout.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if len(res.Changes) != len(req.Changes) {
		t.Fatalf("%d change results for %d changes", len(res.Changes), len(req.Changes))
	}
	return res
}

// one runs a single change of one file.
func one(t *testing.T, path string, before, after *string) components.FileResult {
	t.Helper()
	f := components.FileChange{Path: path}
	if before != nil {
		f.Before = []byte(*before)
	}
	if after != nil {
		f.After = []byte(*after)
	}
	res := run(t, components.Request{Changes: []components.Change{{ID: "c", Files: []components.FileChange{f}}}})
	return res.Changes[0].Files[0]
}

func s(x string) *string { return &x }

func names(f components.FileResult) []string {
	var out []string
	for _, c := range f.Components {
		out = append(out, c.Kind+" "+c.Name)
	}
	return out
}

func find(t *testing.T, f components.FileResult, name string) components.Component {
	t.Helper()
	for _, c := range f.Components {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no component %s among %q", name, names(f))
	return components.Component{}
}

func wantNames(t *testing.T, f components.FileResult, want ...string) {
	t.Helper()
	if got := names(f); !reflect.DeepEqual(got, want) {
		t.Errorf("components %q, want %q", got, want)
	}
}

const cacheBefore = `import functools


class Registry:
    """Holds handlers."""

    def __init__(self):
        self._items = {}

    def get(self, key):
        return self._items[key]


def helper(x):
    def inner(y):
        return y
    return inner(x)
`

const cacheAfter = `import functools
import typing


class Registry:
    """Holds handlers."""

    def __init__(self):
        self._items = {}

    def get(self, key):
        return self._items[key]

    @property
    def size(self) -> int:
        """How many handlers there are."""
        return len(self._items)

    @size.setter
    def size(self, value):
        raise AttributeError("size is read-only")

    async def fetch(self, key, *, timeout: float = 1.0):  # a comment
        """Wait for the handler of key."""
        return self._items[key]

    class Entry:
        """One handler."""

        def __init__(self, fn):
            self.fn = fn

    @functools.lru_cache(
        maxsize=None,
    )
    def cached(self, key=lambda k: k[0], opts: "dict[str, int]" = {"a": 1}) -> typing.Callable[[int], int]:
        return key


def helper(x):
    def inner(y):
        return y

    def another(z):
        return z
    return inner(x)


@typing.overload
def parse(x: int) -> int: ...
@typing.overload
def parse(x: str) -> str: ...
def parse(x):
    """Parse x, an int or a str."""
    return x


if typing.TYPE_CHECKING:
    def only_typing() -> None: ...
else:
    def only_typing():
        pass
`

func TestComponentsOfAClass(t *testing.T) {
	f := one(t, "pkg/registry.py", s(cacheBefore), s(cacheAfter))
	if f.Error != "" {
		t.Fatal(f.Error)
	}
	// inner functions (helper's another) are local: no component.
	wantNames(t, f, "method Registry.size", "method Registry.fetch", "class Registry.Entry", "method Registry.Entry.__init__",
		"method Registry.cached", "function parse", "function only_typing")

	size := find(t, f, "Registry.size")
	if want := "@property\ndef size(self) -> int:\n@size.setter\ndef size(self, value):"; size.Signature != want {
		t.Errorf("property signature %q, want %q", size.Signature, want)
	}
	if size.Docstring == nil || *size.Docstring != "How many handlers there are." {
		t.Errorf("property docstring %v", size.Docstring)
	}
	if !reflect.DeepEqual(size.Spans, [][]int{{14, 17}, {19, 21}}) || size.Lines != 7 {
		t.Errorf("property spans %v lines %d, want [[14 17] [19 21]] and 7 lines", size.Spans, size.Lines)
	}
	fetch := find(t, f, "Registry.fetch")
	if want := "async def fetch(self, key, *, timeout: float = 1.0):"; fetch.Signature != want {
		t.Errorf("async signature %q, want %q (the comment left out)", fetch.Signature, want)
	}
	cached := find(t, f, "Registry.cached")
	if want := "@functools.lru_cache(\n    maxsize=None,\n)\ndef cached(self, key=lambda k: k[0], opts: \"dict[str, int]\" = {\"a\": 1}) -> typing.Callable[[int], int]:"; cached.Signature != want {
		t.Errorf("decorated signature\n%s\nwant\n%s", cached.Signature, want)
	}
	if cached.Docstring != nil {
		t.Errorf("cached has no docstring, got %q", *cached.Docstring)
	}
	entry := find(t, f, "Registry.Entry")
	if entry.Signature != "class Entry:" || entry.Kind != "class" {
		t.Errorf("nested class %+v", entry)
	}
	parse := find(t, f, "parse")
	if want := "@typing.overload\ndef parse(x: int) -> int:\n@typing.overload\ndef parse(x: str) -> str:\ndef parse(x):"; parse.Signature != want {
		t.Errorf("overload signature\n%s\nwant\n%s", parse.Signature, want)
	}
	if parse.Docstring == nil || *parse.Docstring != "Parse x, an int or a str." {
		t.Errorf("overload docstring %v, want the implementation's", parse.Docstring)
	}
	alt := find(t, f, "only_typing")
	if alt.Signature != "def only_typing() -> None:\ndef only_typing():" {
		t.Errorf("alternatives %q", alt.Signature)
	}
	// Every added line but "import typing", the blank lines between the
	// new definitions, "if"/"else" and helper's local "another" is a
	// component's: 4+3 (size), 3 (fetch), 5 (Entry), 5 (cached), 7
	// (parse), 1+2 (only_typing) of 45 added.
	if f.Added != 45 || f.Removed != 0 || f.ComponentLines != 30 {
		t.Errorf("added %d, removed %d, component lines %d; want 45, 0, 30", f.Added, f.Removed, f.ComponentLines)
	}
}

func TestMovedAndRenamed(t *testing.T) {
	before := `class A:
    def move_me(self, x):
        """Doubles."""
        total = x * 2
        return total


class B:
    pass


def old_name(a, b):
    return a + b * 3
`
	after := `class A:
    pass


class B:
    def move_me(self, x):
        """Doubles x."""
        total = x * 2
        return total


def new_name(a, b):
    return a + b * 3


def brand_new(a):
    return a - 1
`
	f := one(t, "m.py", s(before), s(after))
	wantNames(t, f, "method B.move_me", "function new_name", "function brand_new")
	if c := find(t, f, "B.move_me"); c.SameAs != "m.py::A.move_me" {
		t.Errorf("moved method same_as %q", c.SameAs)
	}
	if c := find(t, f, "new_name"); c.SameAs != "m.py::old_name" {
		t.Errorf("renamed function same_as %q", c.SameAs)
	}
	bn := find(t, f, "brand_new")
	if bn.SameAs != "" || bn.Lines != 2 {
		t.Errorf("brand_new %+v", bn)
	}
	if f.ComponentLines != 2 {
		t.Errorf("component lines %d: only brand_new's 2 lines are new code", f.ComponentLines)
	}
}

func TestMovedAcrossFiles(t *testing.T) {
	body := "def shared(x):\n    return [i for i in range(x) if i % 2]\n"
	res := run(t, components.Request{Changes: []components.Change{{ID: "pr-7", Files: []components.FileChange{
		{Path: "pkg/old.py", Before: []byte("import os\n\n\n" + body), After: []byte("import os\n")},
		{Path: "pkg/new.py", After: []byte(body)},
	}}}})
	c := res.Changes[0]
	if c.ID != "pr-7" {
		t.Errorf("id %q", c.ID)
	}
	nf := c.Files[1]
	wantNames(t, nf, "function shared")
	if nf.Components[0].SameAs != "pkg/old.py::shared" || nf.ComponentLines != 0 {
		t.Errorf("moved module function: %+v, component lines %d", nf.Components[0], nf.ComponentLines)
	}
	share, comp, edited := c.Share(0)
	if share != 0 || comp != 0 || edited != 6 {
		t.Errorf("share %v (%d of %d), want 0 of 6", share, comp, edited)
	}
}

func TestFilesThatAreNotPython(t *testing.T) {
	latin1 := append([]byte("# -*- coding: latin-1 -*-\n\n\ndef caf\xe9_name():\n    \"\"\"Le caf\xe9.\"\"\"\n    return 1\n"), []byte{}...)
	res := run(t, components.Request{Changes: []components.Change{{ID: "x", Files: []components.FileChange{
		{Path: "broken.py", Before: []byte("def f():\n    return 1\n"), After: []byte("def f(:\n    return 1\n\ndef g():\n    pass\n")},
		{Path: "py2.py", Before: []byte("print 'x'\n"), After: []byte("print 'x'\n\ndef h():\n    pass\n")},
		{Path: "latin.py", After: latin1},
		{Path: "bad_bytes.py", After: []byte("def f():\n    return '\xff\xfe'\n")},
		{Path: "nul.py", After: []byte("def f():\n    return 1\x00\n")},
		{Path: "ok.py", Before: []byte(""), After: []byte("def fine():\n    return 2\n")},
	}}}})
	fs := res.Changes[0].Files
	for i, want := range []string{
		"after the change: does not parse: invalid syntax (line 1)",
		"before the change: does not parse: Missing parentheses in call to 'print'",
		"",
		"after the change: cannot be decoded",
		"after the change: does not parse",
		"",
	} {
		if want == "" {
			if fs[i].Error != "" {
				t.Errorf("%s: error %q", fs[i].Path, fs[i].Error)
			}
			continue
		}
		if !strings.HasPrefix(fs[i].Error, want) {
			t.Errorf("%s: error %q, want it to start %q", fs[i].Path, fs[i].Error, want)
		}
		if len(fs[i].Components) != 0 || fs[i].ComponentLines != 0 {
			t.Errorf("%s: components from a file that does not parse: %q", fs[i].Path, names(fs[i]))
		}
	}
	wantNames(t, fs[2], "function café_name")
	if d := fs[2].Components[0].Docstring; d == nil || *d != "Le café." {
		t.Errorf("latin-1 docstring %v", d)
	}
	wantNames(t, fs[5], "function fine")
	if errs := res.Changes[0].Errors(); len(errs) != 4 {
		t.Errorf("errors %q", errs)
	}
}

func TestNothingNewWhenOnlyEdited(t *testing.T) {
	before := "def f(x):\n    return x\n\n\nclass C:\n    def m(self):\n        return 1\n"
	after := "def f(x, y=0):\n    \"\"\"Now with y.\"\"\"\n    return x + y\n\n\nclass C:\n    def m(self):\n        return 2\n"
	f := one(t, "e.py", s(before), s(after))
	wantNames(t, f)
	if f.Added != 4 || f.Removed != 3 {
		t.Errorf("added %d removed %d, want 4 and 3", f.Added, f.Removed)
	}
	// A deleted file: nothing new, every line removed.
	g := one(t, "gone.py", s(before), nil)
	if len(g.Components) != 0 || g.Removed != 7 || g.Added != 0 {
		t.Errorf("deleted file: %+v", g)
	}
}

func TestShare(t *testing.T) {
	c := components.ChangeResult{Files: []components.FileResult{
		{Path: "a.py", Added: 30, Removed: 10, ComponentLines: 12},
		{Path: "b.py", Added: 5, Removed: 5, ComponentLines: 0},
	}}
	share, comp, edited := c.Share(10)
	if comp != 12 || edited != 60 || share != 0.2 {
		t.Errorf("share %v = %d / %d, want 0.2 = 12 / 60", share, comp, edited)
	}
}

func TestValidate(t *testing.T) {
	bad := components.Request{Changes: []components.Change{
		{ID: "a", Files: []components.FileChange{{Path: "../x.py", After: []byte("")}, {Path: "y.py"}}},
		{ID: "a"},
	}}
	err := bad.Validate()
	if err == nil {
		t.Fatal("a request with a path outside, a file with no side and an id twice was accepted")
	}
	for _, want := range []string{"changes[0].files[0].path", "changes[0].files[1] (y.py) has neither side", `changes[1].id "a" is given twice`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestParseResultRefusesDrift(t *testing.T) {
	if _, err := components.ParseResult([]byte(`{"changes":[{"id":"a","files":[],"extra":1}]}`)); err == nil {
		t.Error("an unknown field was accepted")
	}
	if _, err := components.ParseResult([]byte(`{"changes":[{"id":"a","files":[{"path":"a.py","added":1,"removed":0,"component_lines":2,"components":[]}]}]}`)); err == nil {
		t.Error("more component lines than added lines were accepted")
	}
	if _, err := components.ParseResult([]byte(`{"changes":[{"id":"a","files":[{"path":"a.py","added":1,"removed":0,"component_lines":0,"components":[{"name":"f","kind":"lambda","signature":"x","docstring":null,"line":1,"spans":[[1,1]],"lines":1}]}]}]}`)); err == nil {
		t.Error("an unknown kind was accepted")
	}
}
