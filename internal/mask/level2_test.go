package mask_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/featbench/featbench/internal/mask"
)

var textkit = repo{
	"textkit/__init__.py": `"""textkit."""
`,
	"textkit/slug.py": `def slugify(text):
    return text.lower()


def unique_slug(text, taken):
    return slugify(text)
`,
	"textkit/table.py": `class Table:
    pass
`,
	"tests/test_slug.py": `"""Slug tests."""

from __future__ import annotations

import pytest

import textkit.slug
import textkit.slug as s
from textkit import slug
from textkit.slug import unique_slug, slugify
from textkit.table import Table as T


def test_it():
    assert unique_slug("a", set()) == "a"
    assert slug.unique_slug("a", set()) == s.unique_slug("a", set())
    assert textkit.slug.unique_slug("b", set()) == "b"
    assert slug.slugify("A") == "a"
    assert T


def test_local():
    from textkit.slug import unique_slug as us

    assert us("x", set()) == "x"
`,
	"tests/test_plain.py": `import textkit.slug as s


def test_plain():
    assert s.unique_slug("a", set())
`,
}

func TestLevel2(t *testing.T) {
	r := textkit
	tests := []struct {
		file, want string
	}{
		{"tests/test_slug.py", `"""Slug tests."""

from __future__ import annotations

import agent_code
import pytest

from agent_code import unique_slug, slugify
from agent_code import Table as T


def test_it():
    assert unique_slug("a", set()) == "a"
    assert agent_code.unique_slug("a", set()) == agent_code.unique_slug("a", set())
    assert agent_code.unique_slug("b", set()) == "b"
    assert agent_code.slugify("A") == "a"
    assert T


def test_local():
    from agent_code import unique_slug as us

    assert us("x", set()) == "x"
`},
		// The package's import gives way to agent_code's.
		{"tests/test_plain.py", `import agent_code


def test_plain():
    assert agent_code.unique_slug("a", set())
`},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			dir := r.write(t)
			res := mustMask(t, dir, mask.Request{
				Remove:       []string{objID(t, r, "textkit/slug.py", "unique_slug", "def unique_slug")},
				Describe:     []string{objID(t, r, "textkit/slug.py", "unique_slug", "def unique_slug")},
				ProtectFiles: []string{tc.file},
				Level2:       &mask.Level2{TestFile: tc.file, Package: "textkit", Names: []string{"unique_slug", "Table"}},
			})
			if res.Level2Test == nil {
				t.Fatalf("no level2_test in the result (%s)", res.Level2Problem)
			}
			if *res.Level2Test != tc.want {
				t.Errorf("level 2 test:\n%s\nwant:\n%s", *res.Level2Test, tc.want)
			}
			scratch := t.TempDir()
			if err := os.WriteFile(filepath.Join(scratch, "level2.py"), []byte(*res.Level2Test), 0o644); err != nil {
				t.Fatal(err)
			}
			checkParses(t, scratch, "level2.py")
			// The test file itself is not written.
			if got := read(t, dir, tc.file); got != r[tc.file] {
				t.Errorf("%s was changed on disk:\n%s", tc.file, got)
			}
		})
	}
}

var vendored = repo{
	"textkit/__init__.py": `"""textkit."""

from textkit.slug import slugify
`,
	"textkit/_text.py": `import re


def norm(text):
    return re.sub(r"\s+", " ", text).strip()
`,
	"textkit/slug.py": `from textkit._text import norm

_SEP = "-"


def slugify(text):
    return norm(text).lower().replace(" ", _SEP)


def _taken(slug, taken):
    return slug in taken


def unique_slug(text, taken):
    slug = slugify(text)
    while _taken(slug, taken):
        slug += _SEP + "x"
    return slug


def careful(text):
    return _taken(text, set())
`,
	"textkit/other.py": `def unused():
    return 1
`,
	"tests/test_slug.py": `from textkit.slug import slugify, unique_slug


def test_it():
    assert unique_slug("A b", {"a-b"}) == "a-b-x"
    assert slugify("A b") == "a-b"
`,
	"tests/test_module.py": `import pytest

from textkit import slug


def test_it(monkeypatch):
    monkeypatch.setattr(slug, "_SEP", "_")
`,
	// more-itertools: @patch('more_itertools.recipes.groupby') patched the
	// original at level 2, not agent_code, and the gold failed.
	"tests/test_patched.py": `import doctest
from unittest.mock import patch

from textkit.slug import unique_slug


def load_tests(loader, tests, ignore):
    tests.addTests(doctest.DocTestSuite("textkit.slug"))
    return tests


@patch("textkit.slug._taken", return_value=False)
def test_it(taken):
    assert unique_slug("a", {"a"}) == "a"
`,
	"tests/test_doctests.py": `import doctest

from textkit.slug import unique_slug


def load_tests(loader, tests, ignore):
    tests.addTests(doctest.DocTestSuite("textkit.slug"))
    return tests


def test_it():
    assert unique_slug("a", set()) == "a"
`,
	"tests/test_careful.py": `from textkit.slug import careful, unique_slug


def test_it():
    assert careful("a") is False
    assert unique_slug("a", set())
`,
}

// TestLevel2Package checks the rest of level 2: the reference solution is
// the package vendored as agent_code (what the names need, and the
// package's __init__), and the code the tests use beyond the described
// objects is given whole, with the helpers it needs; what cannot be made
// fair is a problem, not a test file.
func TestLevel2Package(t *testing.T) {
	r := vendored
	unique := objID(t, r, "textkit/slug.py", "unique_slug", "def unique_slug")
	taken := objID(t, r, "textkit/slug.py", "_taken", "def _taken")
	request := func(file string) mask.Request {
		return mask.Request{
			Remove: []string{unique, taken}, Describe: []string{unique}, ProtectFiles: []string{file},
			Level2: &mask.Level2{TestFile: file, Package: "textkit", Names: []string{"unique_slug"}},
		}
	}
	res := mustMask(t, r.write(t), request("tests/test_slug.py"))
	if res.Level2Problem != "" || res.Level2Test == nil {
		t.Fatalf("level 2 refused: %q", res.Level2Problem)
	}
	if want := []string{"slugify", "unique_slug"}; !slices.Equal(res.Level2Names, want) {
		t.Errorf("names %q, want %q", res.Level2Names, want)
	}
	files := map[string]string{}
	for _, f := range res.Level2Vendor {
		files[f.Path] = f.Text
	}
	if got := slices.Sorted(maps.Keys(files)); !slices.Equal(got, []string{"agent_code/__init__.py", "agent_code/_text.py", "agent_code/slug.py"}) {
		t.Errorf("vendored %q: want the package's __init__ and what it and the names import, not other.py", got)
	}
	if !strings.Contains(files["agent_code/slug.py"], "from agent_code._text import norm\n") ||
		!strings.Contains(files["agent_code/slug.py"], "def unique_slug(text, taken):") {
		t.Errorf("slug.py not vendored from the original with its import rewritten:\n%s", files["agent_code/slug.py"])
	}
	if !strings.Contains(files["agent_code/__init__.py"], "from agent_code.slug import slugify, unique_slug\n") {
		t.Errorf("__init__.py does not export the names:\n%s", files["agent_code/__init__.py"])
	}
	var given []string
	for _, g := range res.Level2Given {
		given = append(given, g.Module+": "+strings.Join(g.Imports, "; ")+" | "+strings.Join(g.Code, " | "))
	}
	want := []string{
		"textkit._text: import re | def norm(text):\n    return re.sub(r\"\\s+\", \" \", text).strip()",
		"textkit.slug:  | _SEP = \"-\" | def slugify(text):\n    return norm(text).lower().replace(\" \", _SEP)",
	}
	if !slices.Equal(given, want) {
		t.Errorf("given code:\n%q\nwant:\n%q", given, want)
	}
	if len(res.Level2Interfaces) != 1 || !strings.Contains(res.Level2Interfaces[0].Code, "def unique_slug(text, taken):") {
		t.Errorf("level 2 interfaces: %+v", res.Level2Interfaces)
	}

	// A load_tests hook, which pytest never calls, may name the package.
	if res := mustMask(t, r.write(t), request("tests/test_doctests.py")); res.Level2Test == nil {
		t.Errorf("tests/test_doctests.py: level 2 refused: %q", res.Level2Problem)
	}
	for file, problem := range map[string]string{
		"tests/test_patched.py": "names textkit.slug._taken of the package in a string",
		"tests/test_module.py":  "uses the module textkit.slug itself",
		"tests/test_careful.py": "needs textkit/slug.py::_taken::10, which the feature removes and the statement does not describe (careful, which the tests use, needs _taken)",
	} {
		res := mustMask(t, r.write(t), request(file))
		if res.Level2Test != nil || !strings.Contains(res.Level2Problem, problem) {
			t.Errorf("%s: level 2 test made (%v) or problem %q, want one naming %q", file, res.Level2Test != nil, res.Level2Problem, problem)
		}
	}
	// The removed helper the given code needs is one collection must
	// describe: with it described, level 2 is made.
	res = mustMask(t, r.write(t), request("tests/test_careful.py"))
	if !slices.ContainsFunc(res.Undescribed, func(u mask.Undescribed) bool { return u.ID == taken }) {
		t.Errorf("undescribed %+v, want %s", res.Undescribed, taken)
	}
	req := request("tests/test_careful.py")
	req.Describe = append(req.Describe, taken)
	if res := mustMask(t, r.write(t), req); res.Level2Test == nil || len(res.Undescribed) != 0 {
		t.Errorf("with _taken described: level 2 problem %q, undescribed %+v", res.Level2Problem, res.Undescribed)
	}
}

// TestLevel2Class: from scratch, a class the feature is part of is shown
// whole but for what the mask removes: its described methods as stubs, the
// rest as written, a removed helper not at all.
func TestLevel2Class(t *testing.T) {
	r := repo{
		"textkit/__init__.py": "",
		"textkit/toc.py": `class Toc:
    """A table of contents."""

    depth: int = 2
    items: list

    def add(self, title):
        """Add a heading."""
        self.items.append(self._norm(title))

    def _norm(self, title):
        return title.strip()

    def __len__(self):
        return len(self.items)
`,
		"tests/test_toc.py": `from textkit.toc import Toc


def test_it():
    assert len(Toc()) == 0
`,
	}
	add := objID(t, r, "textkit/toc.py", "Toc.add", "def add")
	norm := objID(t, r, "textkit/toc.py", "Toc._norm", "def _norm")
	res := mustMask(t, r.write(t), mask.Request{
		Remove: []string{add, norm}, Describe: []string{add}, ProtectFiles: []string{"tests/test_toc.py"},
		Level2: &mask.Level2{TestFile: "tests/test_toc.py", Package: "textkit", Names: []string{"Toc"}},
	})
	if res.Level2Problem != "" || len(res.Level2Interfaces) != 1 {
		t.Fatalf("problem %q, interfaces %+v", res.Level2Problem, res.Level2Interfaces)
	}
	want := `class Toc:
    """A table of contents."""
    depth: int = 2
    items: list

    def add(self, title):
        """Add a heading."""
        # <your code>

    def __len__(self):
        return len(self.items)
`
	if got := res.Level2Interfaces[0].Code; got != want {
		t.Errorf("level 2 interface:\n%s\nwant:\n%s", got, want)
	}
	if len(res.Level2Given) != 0 {
		t.Errorf("the class is described, not given: %+v", res.Level2Given)
	}
}

// TestLevel2CompoundBinding: a module-level name bound inside a try (or an
// if) is the module's: boltons' setutils binds _MISSING in a try that
// falls back when an import fails, and its tests import it. Level 2 gives
// the whole statement; it was refused as "not a module-level name".
func TestLevel2CompoundBinding(t *testing.T) {
	r := repo{
		"textkit/__init__.py": "",
		"textkit/marks.py": `def make_sentinel(name):
    return type(name, (), {})()
`,
		"textkit/iset.py": `import sys

try:
    from .marks import make_sentinel
    _MISSING = make_sentinel('_MISSING')
except ImportError:
    _MISSING = object()

if sys.version_info >= (3, 0):
    _EMPTY = ()
else:
    _EMPTY = []


class ISet:
    def __init__(self, items=_EMPTY):
        self.items = [x for x in items if x is not _MISSING]

    def add(self, x):
        self.items.append(x)
`,
		"tests/test_iset.py": `from textkit.iset import ISet, _MISSING, _EMPTY


def test_it():
    s = ISet(_EMPTY)
    s.add(1)
    assert _MISSING not in s.items
`,
	}
	add := objID(t, r, "textkit/iset.py", "ISet.add", "def add")
	res := mustMask(t, r.write(t), mask.Request{
		Remove: []string{add}, Describe: []string{add}, ProtectFiles: []string{"tests/test_iset.py"},
		Level2: &mask.Level2{TestFile: "tests/test_iset.py", Package: "textkit", Names: []string{"ISet"}},
	})
	if res.Level2Problem != "" || res.Level2Test == nil {
		t.Fatalf("level 2 refused: %q", res.Level2Problem)
	}
	var code, imports []string
	for _, g := range res.Level2Given {
		code = append(code, g.Code...)
		imports = append(imports, g.Imports...)
	}
	if !slices.Contains(imports, "import sys") {
		t.Errorf("given imports %q, want the if's import sys", imports)
	}
	joined := strings.Join(code, "\n")
	for _, want := range []string{"try:\n    from .marks import make_sentinel\n    _MISSING = make_sentinel('_MISSING')\nexcept ImportError:\n    _MISSING = object()",
		"if sys.version_info >= (3, 0):\n    _EMPTY = ()\nelse:\n    _EMPTY = []"} {
		if !strings.Contains(joined, want) {
			t.Errorf("given code lacks the statement that binds the name:\n%s\nwant within it:\n%s", joined, want)
		}
	}
}

// TestLevel2StarReexport: a name the package re-exports with a star
// import (toolz's __init__: from .functoolz import *) is found in the
// module that defines it: "from toolz import curry" was refused as "not a
// module-level name there". A name the module's __all__ leaves out is not
// re-exported.
func TestLevel2StarReexport(t *testing.T) {
	r := repo{
		"textkit/__init__.py": "from .core import *\nfrom .extra import *\n",
		"textkit/core.py": `__all__ = ("curry", "first")

_SEP = " "


def first(seq):
    return next(iter(seq))


def curry(f):
    return f


def hidden():
    return 0
`,
		"textkit/extra.py": `from .core import curry


def words(text):
    return curry(str.split)(text)
`,
		"tests/test_words.py": `from textkit import curry, first, words


def test_it():
    assert words("a b") == ["a", "b"]
    assert first(words("a b")) == "a"
    assert curry(len)("ab") == 2
`,
		"tests/test_hidden.py": `from textkit import hidden, words


def test_it():
    assert words("a") == ["a"]
`,
	}
	words := objID(t, r, "textkit/extra.py", "words", "def words")
	request := func(file string) mask.Request {
		return mask.Request{
			Remove: []string{words}, Describe: []string{words}, ProtectFiles: []string{file},
			Level2: &mask.Level2{TestFile: file, Package: "textkit", Names: []string{"words"}},
		}
	}
	res := mustMask(t, r.write(t), request("tests/test_words.py"))
	if res.Level2Problem != "" || res.Level2Test == nil {
		t.Fatalf("level 2 refused: %q", res.Level2Problem)
	}
	var code []string
	for _, g := range res.Level2Given {
		code = append(code, g.Module+": "+strings.Join(g.Code, " | "))
	}
	want := []string{"textkit.core: def first(seq):\n    return next(iter(seq)) | def curry(f):\n    return f"}
	if !slices.Equal(code, want) {
		t.Errorf("given code %q, want %q", code, want)
	}
	res = mustMask(t, r.write(t), request("tests/test_hidden.py"))
	if res.Level2Test != nil || !strings.Contains(res.Level2Problem, "hidden") {
		t.Errorf("a name __all__ leaves out: level 2 made (%v), problem %q", res.Level2Test != nil, res.Level2Problem)
	}
}

// TestLevel2PrivateAttributes: from scratch, agent_code has only what the
// statement names. sortedcontainers' SortedSet tests compare with
// ss._set, an attribute the removed __init__ makes and no interface
// names: level 2 is refused, naming it. A private method the interfaces
// show (_check), a private name of another module (sys._getframe), the
// tests' own (cachetools' test_func sets self._use_cache) and one of what
// an attribute holds (more-itertools: it._executor._shutdown, of a
// ThreadPoolExecutor) are fine.
func TestLevel2PrivateAttributes(t *testing.T) {
	r := repo{
		"textkit/__init__.py": "",
		"textkit/bag.py": `class Bag:
    def __init__(self, items=()):
        self._set = set(items)

    def _check(self):
        assert isinstance(self._set, set)

    def __len__(self):
        return 2
`,
		"tests/test_bag.py": `import sys

from textkit.bag import Bag


class Key:
    def __init__(self, n):
        self._n = n

    def _twice(self):
        return 2 * self._n


def test_it():
    b = Bag([1, 2])
    b._check()
    assert sys._getframe() is not None
    assert len(b) == 2
    assert Key(1)._n == 1 and Key(1)._twice() == 2
    assert b._check.__self__._pool is None or True
`,
		"tests/test_set.py": `from textkit.bag import Bag


def test_it():
    assert Bag([1])._set == {1}
`,
	}
	init := objID(t, r, "textkit/bag.py", "Bag.__init__", "def __init__")
	check := objID(t, r, "textkit/bag.py", "Bag._check", "def _check")
	request := func(file string) mask.Request {
		return mask.Request{
			Remove: []string{init, check}, Describe: []string{init, check}, ProtectFiles: []string{file},
			Level2: &mask.Level2{TestFile: file, Package: "textkit", Names: []string{"Bag"}},
		}
	}
	if res := mustMask(t, r.write(t), request("tests/test_bag.py")); res.Level2Test == nil {
		t.Errorf("level 2 refused: %q", res.Level2Problem)
	}
	res := mustMask(t, r.write(t), request("tests/test_set.py"))
	if res.Level2Test != nil || !strings.Contains(res.Level2Problem, "the attribute _set") {
		t.Errorf("level 2 made (%v), problem %q; want it refused for _set", res.Level2Test != nil, res.Level2Problem)
	}
}

// TestLevel2TestHelpers: a relative import of the tests' own helpers
// (cachetools: from . import CacheTestMixin, from tests/__init__.py) stays
// as it is; it refused level 2 for every cachetools test file. A helper
// that imports the package would bring the original back, and a relative
// import inside the package is the package's: both are refused.
func TestLevel2TestHelpers(t *testing.T) {
	r := repo{
		"src/textkit/__init__.py": "",
		"src/textkit/lru.py": `class LRU:
    def get(self, k):
        return k
`,
		"tests/__init__.py": `class Mixin:
    def check(self, c):
        assert c.get(1) == 1
`,
		"tests/impure.py": `import textkit.lru
`,
		"tests/test_lru.py": `from textkit.lru import LRU

from . import Mixin


def test_it():
    Mixin().check(LRU())
`,
		"tests/test_impure.py": `from textkit.lru import LRU

from . import impure


def test_it():
    assert LRU().get(1) == 1
`,
		"src/textkit/tests/__init__.py": "",
		"src/textkit/tests/test_in.py": `from textkit.lru import LRU

from .. import lru


def test_it():
    assert LRU().get(1) == 1
`,
	}
	get := objID(t, r, "src/textkit/lru.py", "LRU.get", "def get")
	request := func(file string) mask.Request {
		return mask.Request{
			Remove: []string{get}, Describe: []string{get}, ProtectFiles: []string{file},
			Level2: &mask.Level2{TestFile: file, Package: "textkit", Names: []string{"LRU"}},
		}
	}
	res := mustMask(t, r.write(t), request("tests/test_lru.py"))
	if res.Level2Test == nil {
		t.Fatalf("level 2 refused: %q", res.Level2Problem)
	}
	if !strings.Contains(*res.Level2Test, "from agent_code import LRU\n\nfrom . import Mixin\n") {
		t.Errorf("level 2 test:\n%s", *res.Level2Test)
	}
	for file, problem := range map[string]string{
		"tests/test_impure.py":         "imports test code (tests/impure.py) that imports textkit",
		"src/textkit/tests/test_in.py": "has a relative import of the package",
	} {
		res := mustMask(t, r.write(t), request(file))
		if res.Level2Test != nil || !strings.Contains(res.Level2Problem, problem) {
			t.Errorf("%s: level 2 made (%v), problem %q; want %q", file, res.Level2Test != nil, res.Level2Problem, problem)
		}
	}
}

// TestLevel2InterfaceReferences: what the level 2 interfaces show names
// package code that is not the feature: cachetools' lru_cache stub has
// key=keys.hashkey, and the described LRUCache's base is Cache; neither was
// given, so an agent working from the statement met names it could not
// know. They are given now, with what they need; a shown name the feature
// removes without describing it refuses level 2.
func TestLevel2InterfaceReferences(t *testing.T) {
	r := repo{
		"textkit/__init__.py": "",
		"textkit/keys.py": `def hashkey(*args):
    return args
`,
		"textkit/cache.py": `from collections import OrderedDict

from . import keys

_DEFAULT = 128


class Cache(OrderedDict):
    """A cache."""

    def __init__(self, maxsize):
        self.maxsize = maxsize


class LRUCache(Cache):
    """Least recently used."""

    limit = _DEFAULT

    def touch(self, key):
        return key

    def size(self):
        return _helper(self)


def _helper(c):
    return len(c)


def lru_cache(maxsize=_DEFAULT, key=keys.hashkey):
    """Decorate."""
    def deco(f):
        return f
    return deco
`,
		"tests/test_cache.py": `from textkit.cache import lru_cache


def test_it():
    assert lru_cache()(len)("ab") == 2
`,
	}
	lru := objID(t, r, "textkit/cache.py", "lru_cache", "def lru_cache")
	cls := objID(t, r, "textkit/cache.py", "LRUCache", "class LRUCache")
	touch := objID(t, r, "textkit/cache.py", "LRUCache.touch", "def touch")
	level2 := &mask.Level2{TestFile: "tests/test_cache.py", Package: "textkit", Names: []string{"lru_cache"}}
	res := mustMask(t, r.write(t), mask.Request{
		Remove: []string{lru, touch}, Describe: []string{lru, cls, touch}, ProtectFiles: []string{"tests/test_cache.py"},
		Level2: level2,
	})
	if res.Level2Problem != "" || res.Level2Test == nil {
		t.Fatalf("level 2 refused: %q", res.Level2Problem)
	}
	given := map[string]string{}
	for _, g := range res.Level2Given {
		given[g.Module] = strings.Join(append(slices.Clone(g.Imports), g.Code...), "\n")
	}
	for module, want := range map[string][]string{
		"textkit.cache": {"class Cache(OrderedDict):", "from collections import OrderedDict", "_DEFAULT = 128", "def _helper(c):"},
		"textkit.keys":  {"def hashkey(*args):"},
	} {
		for _, w := range want {
			if !strings.Contains(given[module], w) {
				t.Errorf("given code of %s lacks %q:\n%s", module, w, given[module])
			}
		}
	}
	if strings.Contains(given["textkit.cache"], "class LRUCache") || strings.Contains(given["textkit.cache"], "def lru_cache") {
		t.Errorf("described objects are given too:\n%s", given["textkit.cache"])
	}

	// The kept method's helper removed and not described: the statement
	// would show a name it never gives.
	helper := objID(t, r, "textkit/cache.py", "_helper", "def _helper")
	res = mustMask(t, r.write(t), mask.Request{
		Remove: []string{lru, touch, helper}, Describe: []string{lru, cls, touch}, ProtectFiles: []string{"tests/test_cache.py"},
		Level2: level2,
	})
	if !strings.Contains(res.Level2Problem, "_helper") || !slices.ContainsFunc(res.Undescribed, func(u mask.Undescribed) bool { return u.ID == helper }) {
		t.Errorf("level 2 with a shown, removed, undescribed helper: problem %q, undescribed %+v", res.Level2Problem, res.Undescribed)
	}

	// A given class that holds removed code (textkit's Heading, whose walk
	// the feature removes) is not given whole, which would give the
	// removed code away: its removed member is one to describe.
	r["textkit/cache.py"] += `

class Entry:
    def __init__(self, key):
        self.key = key

    def expire(self):
        return None


def lookup(c: Cache, key) -> Entry:
    """Find an entry."""
    return Entry(key)
`
	r["tests/test_cache.py"] = `from textkit.cache import lookup


def test_it():
    assert lookup({}, 1).key == 1
`
	look := objID(t, r, "textkit/cache.py", "lookup", "def lookup")
	expire := objID(t, r, "textkit/cache.py", "Entry.expire", "def expire")
	level2.Names = []string{"lookup"}
	res = mustMask(t, r.write(t), mask.Request{
		Remove: []string{look, expire}, Describe: []string{look}, ProtectFiles: []string{"tests/test_cache.py"}, Level2: level2,
	})
	if !slices.ContainsFunc(res.Undescribed, func(u mask.Undescribed) bool { return u.ID == expire }) {
		t.Errorf("a shown class holding removed code: undescribed %+v, want %s (problem %q)", res.Undescribed, expire, res.Level2Problem)
	}
	res = mustMask(t, r.write(t), mask.Request{
		Remove: []string{look, expire}, Describe: []string{look, expire}, ProtectFiles: []string{"tests/test_cache.py"}, Level2: level2,
	})
	if res.Level2Test == nil {
		t.Fatalf("with Entry.expire described: level 2 refused: %q", res.Level2Problem)
	}
	var shown []string
	for _, in := range res.Level2Interfaces {
		shown = append(shown, in.Code)
	}
	if all := strings.Join(shown, "\n"); !strings.Contains(all, "class Entry:") || !strings.Contains(all, "def expire(self):") {
		t.Errorf("Entry is not in the interfaces with its removed member as a stub:\n%s", all)
	}
	for _, g := range res.Level2Given {
		if strings.Contains(strings.Join(g.Code, "\n"), "class Entry") {
			t.Errorf("Entry given whole:\n%s", strings.Join(g.Code, "\n"))
		}
	}
}

// TestLevel2GivenModuleAttribute: given code that reaches a module of the
// package as module.X (jmespath's ParsedResult.search makes a
// visitor.TreeInterpreter) needs that module, which neither the given code
// nor the interfaces provide: the level 2 statement cannot be complete.
// The masker gave ParsedResult whole, with visitor unbound in it.
func TestLevel2GivenModuleAttribute(t *testing.T) {
	r := repo{
		"jp/__init__.py": "",
		"jp/visitor.py": `class TreeInterpreter:
    def visit(self, node, value):
        return value.get(node)
`,
		"jp/parser.py": `from jp import visitor


class ParsedResult:
    def __init__(self, parsed):
        self.parsed = parsed

    def search(self, value):
        interpreter = visitor.TreeInterpreter()
        return interpreter.visit(self.parsed, value)


class Parser:
    def parse(self, expression):
        return ParsedResult(expression.strip())
`,
		"tests/test_parser.py": `from jp.parser import Parser, ParsedResult


def test_parse():
    assert isinstance(Parser().parse(" a "), ParsedResult)
    assert Parser().parse("a").search({"a": 1}) == 1
`,
	}
	parse := objID(t, r, "jp/parser.py", "Parser.parse", "def parse")
	res := mustMask(t, r.write(t), mask.Request{
		Remove: []string{parse}, Describe: []string{parse}, ProtectFiles: []string{"tests/test_parser.py"},
		Level2: &mask.Level2{TestFile: "tests/test_parser.py", Package: "jp", Names: []string{"ParsedResult", "Parser"}},
	})
	if res.Level2Test != nil || !strings.Contains(res.Level2Problem, "visitor.TreeInterpreter") {
		var code []string
		for _, g := range res.Level2Given {
			code = append(code, g.Code...)
		}
		t.Fatalf("level 2 problem %q; want one naming visitor.TreeInterpreter, which the given code reaches:\n%s", res.Level2Problem, strings.Join(code, "\n"))
	}
}
