package mask_test

import (
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/mask"
)

var shapes = repo{"iface/shapes.py": `"""Shapes."""

import dataclasses
from typing import ClassVar


def area(
    width: float,
    height: float = 1.0,  # default: a strip
    *,
    scale: float = 1.0,
) -> float:
    """Return the area.

    Multiplied by *scale*.
    """
    return width * height * scale


async def fetch(url: str) -> bytes:  # no docstring
    return b""


@dataclasses.dataclass
class Box:
    """A box."""

    kind: ClassVar[str] = "box"
    width: float = 0.0
    depth = 2

    def volume(self, height: float) -> float:
        """The volume."""
        return self.width * self.depth * height

    @property
    def label(self):
        return self.kind

    def hidden(self):
        return None
`}

func TestInterfaces(t *testing.T) {
	const p = "iface/shapes.py"
	r := shapes
	dir := r.write(t)
	area := objID(t, r, p, "area", "def area")
	fetch := objID(t, r, p, "fetch", "async def fetch")
	volume := objID(t, r, p, "Box.volume", "def volume")
	label := objID(t, r, p, "Box.label", "def label")
	box := objID(t, r, p, "Box", "class Box")
	// Described from the original even though everything is removed, and
	// in any order.
	res := mustMask(t, dir, mask.Request{
		Remove:   []string{label, area, fetch, volume},
		Describe: []string{label, fetch, volume, area},
	})
	type want struct {
		id, kind, qualname string
		described          bool
		docstring          string // "" for none
		code               string
		members            []string
	}
	wants := []want{
		{area, "function", "area", true, "Return the area.\n\nMultiplied by *scale*.", `def area(
    width: float,
    height: float = 1.0,  # default: a strip
    *,
    scale: float = 1.0,
) -> float:
    """Return the area.

    Multiplied by *scale*.
    """
    # <your code>
`, nil},
		{fetch, "async function", "fetch", true, "", `async def fetch(url: str) -> bytes:
    # <your code>
`, nil},
		{box, "class", "Box", false, "A box.", `@dataclasses.dataclass
class Box:
    """A box."""
    kind: ClassVar[str] = "box"
    width: float = 0.0
    depth = 2

    def volume(self, height: float) -> float:
        """The volume."""
        # <your code>

    @property
    def label(self):
        # <your code>
`, []string{volume, label}},
	}
	if len(res.Interfaces) != len(wants) {
		t.Fatalf("got %d interfaces, want %d: %+v", len(res.Interfaces), len(wants), res.Interfaces)
	}
	for i, w := range wants {
		in := res.Interfaces[i]
		if in.ID != w.id || in.Kind != w.kind || in.Qualname != w.qualname || in.Path != p || in.Described != w.described {
			t.Errorf("interface %d = %s %s %s %s described=%v, want %s %s %s %s described=%v", i,
				in.ID, in.Kind, in.Qualname, in.Path, in.Described, w.id, w.kind, w.qualname, p, w.described)
		}
		if got := deref(in.Docstring); got != w.docstring || (in.Docstring == nil) != (w.docstring == "") {
			t.Errorf("%s docstring = %q (nil %v), want %q", w.id, got, in.Docstring == nil, w.docstring)
		}
		if in.Code != w.code {
			t.Errorf("%s code:\n%s\nwant:\n%s", w.id, in.Code, w.code)
		}
		var members []string
		for _, m := range in.Members {
			members = append(members, m.ID)
		}
		wantStrings(t, w.id+" members", members, w.members)
	}

	// Docstrings filled in where missing; existing ones stay.
	docs := map[string]string{fetch: "Fetch *url*.", label: "The label.\n\nAlways the kind.", volume: "ignored"}
	if got, want := res.Interfaces[1].WithDocstrings(docs), `async def fetch(url: str) -> bytes:
    """Fetch *url*."""
    # <your code>
`; got != want {
		t.Errorf("fetch with docstring:\n%s\nwant:\n%s", got, want)
	}
	if got, want := res.Interfaces[2].WithDocstrings(docs), `@dataclasses.dataclass
class Box:
    """A box."""
    kind: ClassVar[str] = "box"
    width: float = 0.0
    depth = 2

    def volume(self, height: float) -> float:
        """The volume."""
        # <your code>

    @property
    def label(self):
        """The label.

        Always the kind.
        """
        # <your code>
`; got != want {
		t.Errorf("Box with docstrings:\n%s\nwant:\n%s", got, want)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestUndescribed: a removed object that code which stays reaches by name
// (another module, a test file, a dunder of a class that stays) and that
// the request does not describe is reported; a helper only removed code
// called is not.
func TestUndescribed(t *testing.T) {
	r := repo{
		"pkg/__init__.py": "",
		"pkg/mod.py": `__all__ = ["top", "public"]


def top():
    return _helper() + used_elsewhere()


def public():
    return 0


def _helper():
    return 1


def used_elsewhere():
    return 2


def tested_directly():
    return 3


class K:
    def __init__(self):
        self.x = 1

    def shown(self):
        return self.x
`,
		"pkg/other.py": `from pkg.mod import used_elsewhere


def f():
    return used_elsewhere()
`,
		"tests/test_mod.py": `from pkg.mod import K, tested_directly, top


def test_it():
    assert top() == 3 and tested_directly() == 3 and K().shown() == 1
`,
	}
	id := func(qual, marker string) string { return objID(t, r, "pkg/mod.py", qual, marker) }
	top, helper, elsewhere, direct, init := id("top", "def top"), id("_helper", "def _helper"),
		id("used_elsewhere", "def used_elsewhere"), id("tested_directly", "def tested_directly"), id("K.__init__", "def __init__")
	public := id("public", "def public")
	res := mustMask(t, r.write(t), mask.Request{
		Remove: []string{top, helper, elsewhere, direct, init, public}, Describe: []string{top},
		ProtectFiles: []string{"tests/test_mod.py"},
	})
	got := map[string]string{}
	for _, u := range res.Undescribed {
		got[u.ID] = u.ReachedBy
	}
	want := map[string]string{elsewhere: "pkg/other.py", direct: "tests/test_mod.py", init: "Python itself (__init__ of a class that stays)",
		public: "__all__ of pkg/mod.py"}
	if len(got) != len(want) {
		t.Errorf("undescribed %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: reached by %q, want %q", k, got[k], v)
		}
	}
	// Described, nothing is left.
	res = mustMask(t, r.write(t), mask.Request{
		Remove: []string{top, helper, elsewhere, direct, init, public}, Describe: []string{top, elsewhere, direct, init, public},
		ProtectFiles: []string{"tests/test_mod.py"},
	})
	if len(res.Undescribed) != 0 {
		t.Errorf("everything reached is described, yet undescribed: %+v", res.Undescribed)
	}
}

// TestUndescribedThroughAlias: a method removed with its class-body alias
// (__or__ = union) is reached through the alias, which Python calls.
func TestUndescribedThroughAlias(t *testing.T) {
	r := repo{
		"pkg/__init__.py": "",
		"pkg/sets.py": `class S:
    def __init__(self, items):
        self.items = set(items)

    def union(self, other):
        return S(self.items | other.items)

    __or__ = union
`,
		"tests/test_sets.py": `from pkg.sets import S


def test_it():
    assert (S([1]) | S([2])).items == {1, 2}
`,
	}
	union := objID(t, r, "pkg/sets.py", "S.union", "def union")
	res := mustMask(t, r.write(t), mask.Request{Remove: []string{union}, ProtectFiles: []string{"tests/test_sets.py"}})
	if len(res.Undescribed) != 1 || res.Undescribed[0].ID != union || !strings.Contains(res.Undescribed[0].ReachedBy, "__or__") {
		t.Errorf("undescribed %+v, want %s reached through __or__", res.Undescribed, union)
	}
}
