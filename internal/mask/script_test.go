package mask_test

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/mask"
	"github.com/featbench/featbench/internal/objid"
)

// lineOf returns the 1-based line of the first line of text that holds
// needle, so that the ids below follow the fixtures.
func lineOf(t *testing.T, text, needle string) int {
	t.Helper()
	return nthLineOf(t, text, needle, 1)
}

// nthLineOf returns the line of the nth line of text holding needle.
func nthLineOf(t *testing.T, text, needle string, nth int) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, needle) {
			if nth--; nth == 0 {
				return i + 1
			}
		}
	}
	t.Fatalf("%q not in fixture", needle)
	return 0
}

// objID is the id of the object whose def or class line (the first line
// holding needle) is in file p of r.
func objID(t *testing.T, r repo, p, qualname, needle string) string {
	t.Helper()
	return objid.Format(p, qualname, lineOf(t, r[p], needle))
}

// nthID is objID for the nth line holding needle.
func nthID(t *testing.T, r repo, p, qualname, needle string, nth int) string {
	t.Helper()
	return objid.Format(p, qualname, nthLineOf(t, r[p], needle, nth))
}

type maskCase struct {
	name  string
	files repo
	// req builds the request (ids depend on the fixture's lines).
	req func(t *testing.T, r repo) mask.Request
	// want holds the expected text of every file the masker edits; every
	// other file must be left as it was.
	want map[string]string
	// addOnly: the gold diff (masked -> original) must only add lines.
	addOnly bool
	check   func(t *testing.T, r repo, res *mask.Result)
}

func TestMask(t *testing.T) {
	for _, tc := range maskCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.files.write(t)
			res := mustMask(t, dir, tc.req(t, tc.files))
			got := snapshot(t, dir)
			var edited []string
			for _, p := range slices.Sorted(maps.Keys(tc.files)) {
				want, ok := tc.want[p]
				if !ok {
					want = tc.files[p]
				} else {
					edited = append(edited, p)
				}
				if got[p] != want {
					t.Errorf("%s after masking:\n%s\nwant:\n%s", p, got[p], want)
				}
			}
			var paths []string
			for _, f := range res.Files {
				paths = append(paths, f.Path)
			}
			if !reflect.DeepEqual(paths, edited) {
				t.Errorf("result files %q, want the edited files %q", paths, edited)
			}
			checkParses(t, dir, edited...)
			gold := goldRestores(t, dir)
			if tc.addOnly && len(removedLines(gold)) > 0 {
				t.Errorf("the gold diff removes lines %q; want only additions\n%s", removedLines(gold), gold)
			}
			if added := addedLines(gold); haveGit() && res.Lines != len(added) {
				t.Errorf("lines = %d, but the gold diff adds %d lines", res.Lines, len(added))
			}
			if tc.check != nil {
				tc.check(t, tc.files, res)
			}
		})
	}
}

// removedIDs lists the ids removed per file, "path: id id".
func removedIDs(res *mask.Result) []string {
	var out []string
	for _, f := range res.Files {
		var ids []string
		for _, r := range f.Removed {
			ids = append(ids, r.ID)
		}
		out = append(out, fmt.Sprintf("%s: %s", f.Path, strings.Join(ids, " ")))
	}
	return out
}

func wantStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %q, want %q", what, got, want)
	}
}

func fileResult(t *testing.T, res *mask.Result, p string) mask.File {
	t.Helper()
	for _, f := range res.Files {
		if f.Path == p {
			return f
		}
	}
	t.Fatalf("no result for %s", p)
	return mask.File{}
}

var maskCases = []maskCase{
	{
		name: "decorators",
		files: repo{"m.py": `"""Decorated."""

import functools


def plain():
    return 1


@functools.lru_cache(maxsize=None)
@functools.wraps(plain)
def cached(x):
    return x * 2


def after():
    return 3
`},
		req: func(t *testing.T, r repo) mask.Request {
			return mask.Request{Remove: []string{objID(t, r, "m.py", "cached", "def cached")}}
		},
		want: map[string]string{"m.py": `"""Decorated."""


def plain():
    return 1


def after():
    return 3
`},
		addOnly: true,
		check: func(t *testing.T, r repo, res *mask.Result) {
			f := fileResult(t, res, "m.py")
			if len(f.Removed) != 1 || f.Removed[0].Start != lineOf(t, r["m.py"], "@functools.lru_cache") ||
				f.Removed[0].End != lineOf(t, r["m.py"], "return x * 2") {
				t.Errorf("removed %+v, want the span from the first decorator to the last line", f.Removed)
			}
			wantStrings(t, "imports_removed", f.ImportsRemoved, []string{"import functools"})
			if res.Functions != 1 {
				t.Errorf("functions = %d, want 1", res.Functions)
			}
		},
	},
	{
		name: "nested and conditional definitions",
		files: repo{"m.py": `import sys


class Outer:
    """Outer."""

    class Inner:
        def deep(self):
            return 1

    def keep(self):
        return 2


def outer():
    def helper():
        return 3

    return 4


def outer2():
    def helper():
        return 5
    return helper()


if sys.version_info >= (3, 8):
    def compat():
        return 6
else:
    def compat():
        return 7
`},
		req: func(t *testing.T, r repo) mask.Request {
			return mask.Request{Remove: []string{
				objID(t, r, "m.py", "Outer.Inner", "class Inner"),
				objID(t, r, "m.py", "Outer.Inner.deep", "def deep"),
				objID(t, r, "m.py", "outer.helper", "def helper"),
				nthID(t, r, "m.py", "compat", "def compat", 2),
			}}
		},
		want: map[string]string{"m.py": `import sys


class Outer:
    """Outer."""

    def keep(self):
        return 2


def outer():
    return 4


def outer2():
    def helper():
        return 5
    return helper()


if sys.version_info >= (3, 8):
    def compat():
        return 6
else:
    pass
`},
		check: func(t *testing.T, r repo, res *mask.Result) {
			// Inner.deep goes with Inner and is not listed on its own.
			wantStrings(t, "removed", removedIDs(res), []string{"m.py: " + strings.Join([]string{
				objID(t, r, "m.py", "Outer.Inner", "class Inner"),
				objID(t, r, "m.py", "outer.helper", "def helper"),
				nthID(t, r, "m.py", "compat", "def compat", 2),
			}, " ")})
			if res.Functions != 2 {
				t.Errorf("functions = %d, want 2 (classes and nested defs do not count)", res.Functions)
			}
		},
	},
	{
		name: "same method name in two classes",
		files: repo{"m.py": `class A:
    def run(self):
        return "a"

    def stop(self):
        return 0


class B:
    def run(self):
        return "b"

    def stop(self):
        return 1
`},
		req: func(t *testing.T, r repo) mask.Request {
			return mask.Request{Remove: []string{
				objID(t, r, "m.py", "A.stop", "def stop"),
				nthID(t, r, "m.py", "B.run", "def run", 2),
			}}
		},
		want: map[string]string{"m.py": `class A:
    def run(self):
        return "a"


class B:
    def stop(self):
        return 1
`},
		addOnly: true,
	},
	{
		name: "an emptied class body gets pass",
		files: repo{"m.py": `class Empty:
    def a(self):
        return 1

    @staticmethod
    def b():
        return 2


class Documented:
    """Keeps its docstring."""

    def c(self):
        return 3


class Last:
    def d(self):
        return 4
`},
		req: func(t *testing.T, r repo) mask.Request {
			return mask.Request{Remove: []string{
				objID(t, r, "m.py", "Empty.a", "def a"),
				objID(t, r, "m.py", "Empty.b", "def b"),
				objID(t, r, "m.py", "Documented.c", "def c"),
				objID(t, r, "m.py", "Last.d", "def d"),
			}}
		},
		want: map[string]string{"m.py": `class Empty:
    pass


class Documented:
    """Keeps its docstring."""


class Last:
    pass
`},
	},
	{
		name: "overloads go with their function",
		files: repo{"m.py": `import typing
from typing import Union, overload


@overload
def conv(x: int) -> int: ...
@overload
def conv(x: str) -> str: ...
def conv(x: Union[int, str]) -> Union[int, str]:
    return x


class C:
    @typing.overload
    def m(self, x: int) -> int: ...

    @typing.overload
    def m(self, x: str) -> str: ...

    def m(self, x):
        return x

    def other(self) -> Union[int, None]:
        return None
`},
		req: func(t *testing.T, r repo) mask.Request {
			return mask.Request{Remove: []string{
				nthID(t, r, "m.py", "conv", "def conv", 3),
				nthID(t, r, "m.py", "C.m", "def m", 3),
			}}
		},
		want: map[string]string{"m.py": `from typing import Union


class C:
    def other(self) -> Union[int, None]:
        return None
`},
		check: func(t *testing.T, r repo, res *mask.Result) {
			f := fileResult(t, res, "m.py")
			wantStrings(t, "imports_removed", f.ImportsRemoved, []string{"import typing", "from typing import overload"})
			if len(f.Removed) != 6 || res.Functions != 6 {
				t.Errorf("removed %d objects, functions = %d; want the 2 functions and their 4 stubs", len(f.Removed), res.Functions)
			}
		},
	},
	{
		name: "property getter takes its setter and deleter",
		files: repo{"m.py": `class P:
    def __init__(self):
        self._v = 0

    @property
    def value(self):
        return self._v

    @value.setter
    def value(self, v):
        self._v = v

    @value.deleter
    def value(self):
        del self._v

    @property
    def name(self):
        return "p"

    @name.setter
    def name(self, v):
        pass

    def tail(self):
        return None
`},
		req: func(t *testing.T, r repo) mask.Request {
			return mask.Request{Remove: []string{
				objID(t, r, "m.py", "P.value", "def value"),
				nthID(t, r, "m.py", "P.name", "def name", 2), // the setter only
			}}
		},
		want: map[string]string{"m.py": `class P:
    def __init__(self):
        self._v = 0

    @property
    def name(self):
        return "p"

    def tail(self):
        return None
`},
		addOnly: true,
		check: func(t *testing.T, r repo, res *mask.Result) {
			wantStrings(t, "removed", removedIDs(res), []string{"m.py: " + strings.Join([]string{
				nthID(t, r, "m.py", "P.value", "def value", 1),
				nthID(t, r, "m.py", "P.value", "def value", 2),
				nthID(t, r, "m.py", "P.value", "def value", 3),
				nthID(t, r, "m.py", "P.name", "def name", 2),
			}, " ")})
		},
	},
	{
		name: "__all__ edits",
		files: repo{
			"mod.py": `"""All."""

__all__ = [
    "keep",
    "gone",
]
__all__ += ["gone2"]
__all__ += ["keep2", "gone3"]
__all__.append("gone")
__all__.extend(["gone2", "keep3"])


def keep():
    pass


def gone():
    pass


def gone2():
    pass


def gone3():
    pass


def keep2():
    pass


def keep3():
    pass
`,
			"tup.py": `__all__ = ("a", "b")
__all__ = "a", "b", "c"


def a():
    pass


def b():
    pass


def c():
    pass
`},
		req: func(t *testing.T, r repo) mask.Request {
			return mask.Request{Remove: []string{
				objID(t, r, "mod.py", "gone", "def gone()"),
				objID(t, r, "mod.py", "gone2", "def gone2"),
				objID(t, r, "mod.py", "gone3", "def gone3"),
				objID(t, r, "tup.py", "b", "def b"),
			}}
		},
		want: map[string]string{
			"mod.py": `"""All."""

__all__ = [
    "keep",
]
__all__ += ["keep2"]
__all__.extend(["keep3"])


def keep():
    pass


def keep2():
    pass


def keep3():
    pass
`,
			"tup.py": `__all__ = ("a",)
__all__ = "a", "c"


def a():
    pass


def c():
    pass
`},
		check: func(t *testing.T, r repo, res *mask.Result) {
			wantStrings(t, "mod.py all_removed", fileResult(t, res, "mod.py").AllRemoved, []string{"gone", "gone2", "gone3"})
			wantStrings(t, "tup.py all_removed", fileResult(t, res, "tup.py").AllRemoved, []string{"b"})
		},
	},
	{
		name: "conditional imports",
		files: repo{"m.py": `"""Cond."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib

try:
    import ujson as json_impl
except ImportError:
    json_impl = None

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path


def load(path: Path) -> dict:
    with open(path, "rb") as f:
        return tomllib.load(f)


def names(items: "Iterable[str]") -> list:
    return list(items)


def dumps(x):
    return json_impl.dumps(x)
`},
		req: func(t *testing.T, r repo) mask.Request {
			return mask.Request{Remove: []string{
				objID(t, r, "m.py", "load", "def load"),
				objID(t, r, "m.py", "names", "def names"),
			}}
		},
		// os was unused before the removal: it stays.
		want: map[string]string{"m.py": `"""Cond."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

try:
    pass
except ImportError:  # Python < 3.11
    pass

try:
    import ujson as json_impl
except ImportError:
    json_impl = None

if TYPE_CHECKING:
    pass


def dumps(x):
    return json_impl.dumps(x)
`},
		check: func(t *testing.T, r repo, res *mask.Result) {
			wantStrings(t, "imports_removed", fileResult(t, res, "m.py").ImportsRemoved, []string{
				"import tomllib", "import tomli as tomllib",
				"from collections.abc import Iterable", "from pathlib import Path"})
		},
	},
	{
		name: "a statement keeps its other names and aliases",
		files: repo{"m.py": `import json as j, os.path as osp
from re import sub as s, compile, escape  # regex helpers
from collections import (
    OrderedDict,
    defaultdict as dd,
    deque, Counter,
)
from os.path import join, \
    basename, dirname


def uses_all():
    return j.dumps(osp.join("a", s("x", "y", "z"))), dd, Counter, join, dirname


def gone():
    return compile(escape("x")), deque(), OrderedDict(), basename
`},
		req: func(t *testing.T, r repo) mask.Request {
			return mask.Request{Remove: []string{objID(t, r, "m.py", "gone", "def gone")}}
		},
		want: map[string]string{"m.py": `import json as j, os.path as osp
from re import sub as s  # regex helpers
from collections import (
    defaultdict as dd,
    Counter,
)
from os.path import join, dirname


def uses_all():
    return j.dumps(osp.join("a", s("x", "y", "z"))), dd, Counter, join, dirname
`},
		check: func(t *testing.T, r repo, res *mask.Result) {
			wantStrings(t, "imports_removed", fileResult(t, res, "m.py").ImportsRemoved, []string{
				"from re import compile", "from re import escape",
				"from collections import OrderedDict", "from collections import deque", "from os.path import basename"})
		},
	},
	{
		name: "importers and re-exports",
		files: repo{
			"pkg/__init__.py": `"""Pkg."""

from .core import kept_fn, removed_fn
from .core import removed_fn as alias_fn
from pkg.core import removed_fn as absolute_fn, kept_fn as kf
from . import core

__all__ = ["kept_fn", "removed_fn", "alias_fn", "absolute_fn", "kf", "core"]
`,
			"pkg/core.py": `def kept_fn():
    return 1


def removed_fn():
    return 2
`,
			"pkg/sub/__init__.py": ``,
			"pkg/sub/use.py": `from ..core import removed_fn
from .. import core


def f():
    return core.removed_fn(), removed_fn
`,
			"pkg/protected.py":    "from pkg.core import removed_fn\n",
			"pkg/test_helpers.py": "from pkg.core import removed_fn\n",
			"pkg/thing_test.py":   "from pkg.core import removed_fn\n",
			"conftest.py":         "from pkg.core import removed_fn\n",
			"tests/test_core.py":  "from pkg.core import removed_fn\n",
			"test/helpers.py":     "from pkg.core import removed_fn\n",
			"build/lib/pkg/x.py":  "from pkg.core import removed_fn\n",
			"pkg.egg-info/x.py":   "from pkg.core import removed_fn\n",
			".venv/lib/x.py":      "from pkg.core import removed_fn\n",
			"other/mod.py":        "import pkg.core\n\nX = pkg.core.removed_fn\n",
		},
		req: func(t *testing.T, r repo) mask.Request {
			return mask.Request{
				Remove:       []string{objID(t, r, "pkg/core.py", "removed_fn", "def removed_fn")},
				ProtectFiles: []string{"pkg/protected.py", "tests/test_core.py"},
			}
		},
		want: map[string]string{
			"pkg/__init__.py": `"""Pkg."""

from .core import kept_fn
from pkg.core import kept_fn as kf
from . import core

__all__ = ["kept_fn", "kf", "core"]
`,
			"pkg/core.py": `def kept_fn():
    return 1
`,
			"pkg/sub/use.py": `from .. import core


def f():
    return core.removed_fn(), removed_fn
`,
		},
		addOnly: false,
		check: func(t *testing.T, r repo, res *mask.Result) {
			f := fileResult(t, res, "pkg/__init__.py")
			wantStrings(t, "imports_removed", f.ImportsRemoved, []string{
				"from .core import removed_fn", "from .core import removed_fn as alias_fn",
				"from pkg.core import removed_fn as absolute_fn"})
			wantStrings(t, "all_removed", f.AllRemoved, []string{"removed_fn", "alias_fn", "absolute_fn"})
		},
	},
	{
		// ast columns are UTF-8 byte offsets: "café" before "gone" shifts them.
		name: "non-ASCII text, CRLF line ends, no final newline",
		files: repo{
			"crlf.py": "\"\"\"Doc.\"\"\"\r\nimport os\r\nfrom re import sub, compile  # é\r\n\r\n__all__ = [\"café\", \"gone\"]\r\n\r\n\r\n" +
				"def gone():\r\n    \"\"\"é\"\"\"\r\n    return os.sep, compile(\"x\")\r\n\r\n\r\ndef café():\r\n    return sub\r\n",
			"nonl.py": "def a():\n    return 1\n\n\ndef b():\n    return 2",
		},
		req: func(t *testing.T, r repo) mask.Request {
			return mask.Request{Remove: []string{
				objID(t, r, "crlf.py", "gone", "def gone"),
				objID(t, r, "nonl.py", "b", "def b"),
			}}
		},
		want: map[string]string{
			"crlf.py": "\"\"\"Doc.\"\"\"\r\nfrom re import sub  # é\r\n\r\n__all__ = [\"café\"]\r\n\r\n\r\ndef café():\r\n    return sub\r\n",
			"nonl.py": "def a():\n    return 1\n",
		},
	},
}
