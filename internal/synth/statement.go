package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Statement shapes for Config.Statements.
const (
	// StatementsReal are shaped like FeatureBench's 200 published task
	// statements: 27 KB on average and at most 123 KB, about 4.8 fenced
	// code blocks each (four in five Python, a fifth of those 8 KB or
	// more, most of them with imports), about 5.6 headings, lists, and
	// interface descriptions: classes and functions with typed
	// signatures, decorators and long docstrings.
	StatementsReal = "real"
	// StatementsSmall are the about 1.5 KB statements of earlier
	// benchmarks: a task, one short interface block and a list.
	StatementsSmall = "small"
)

// Sizes of real-shaped statements, from FeatureBench's.
const (
	statementMean = 27 << 10
	statementMax  = 123 << 10
	statementMin  = 6 << 10
)

// stmtGen writes one real-shaped statement. It has a random source of its
// own, so that the shape of statements changes no other field of the
// generated data.
type stmtGen struct {
	r *rand.Rand
	f feature
	b strings.Builder
}

func (s *stmtGen) between(lo, hi int) int { return lo + s.r.IntN(hi-lo+1) }

func (s *stmtGen) pick(words []string) string { return words[s.r.IntN(len(words))] }

func (s *stmtGen) chance(p float64) bool { return s.r.Float64() < p }

func (s *stmtGen) sentence(minW, maxW int) string {
	n := s.between(minW, maxW)
	w := make([]string, n)
	for i := range w {
		switch {
		case s.chance(0.06):
			w[i] = "`" + s.ident() + "`"
		case s.chance(0.04):
			w[i] = s.pick(proseWords) + ","
		default:
			w[i] = s.pick(proseWords)
		}
	}
	first := strings.TrimLeft(w[0], "`")
	if first == w[0] {
		w[0] = strings.ToUpper(w[0][:1]) + w[0][1:]
	}
	return strings.TrimSuffix(strings.Join(w, " "), ",") + "."
}

func (s *stmtGen) paragraph(minS, maxS int) string {
	n := s.between(minS, maxS)
	out := make([]string, n)
	for i := range out {
		out[i] = s.sentence(7, 20)
	}
	return strings.Join(out, " ")
}

var proseWords = []string{
	"the", "function", "must", "return", "a", "value", "when", "given", "an", "input", "that", "is", "not", "valid",
	"raise", "error", "with", "message", "keep", "existing", "behaviour", "unchanged", "for", "callers", "which",
	"already", "use", "module", "and", "its", "public", "interface", "should", "accept", "keyword", "arguments",
	"default", "documented", "below", "each", "entry", "of", "result", "in", "order", "they", "were", "added",
	"empty", "sequence", "instead", "missing", "key", "lookup", "object", "attribute", "method", "class", "instance",
	"shape", "index", "column", "row", "frame", "series", "array", "dtype", "axis", "mapping", "path", "file",
	"encoding", "stream", "buffer", "chunk", "timeout", "retry", "request", "response", "session", "cache",
	"registry", "handler", "callback", "option", "setting", "configuration", "test", "tests", "case", "expected",
	"output", "format", "string", "integer", "float", "boolean", "list", "tuple", "dictionary", "iterator",
	"generator", "lazily", "eagerly", "once", "twice", "every", "any", "all", "none", "only", "also", "then",
}

var (
	identNouns = []string{"path", "data", "value", "key", "items", "result", "index", "name", "options", "config", "buffer",
		"offset", "count", "chunk", "encoding", "timeout", "callback", "axis", "dtype", "frame", "series", "mask", "level",
		"columns", "row", "cache", "keys", "other", "node", "parent", "children", "state", "context", "request", "response",
		"session", "handler", "limit", "size", "width", "precision", "label", "labels", "values", "weights", "source",
		"target", "prefix", "suffix", "pattern", "token", "tokens", "entry", "entries", "record", "records", "field",
		"schema", "reader", "writer", "stream", "queue", "batch", "step", "scale", "unit", "units", "start", "stop"}
	identVerbs = []string{"get", "set", "read", "write", "load", "dump", "parse", "format", "build", "make", "resolve",
		"validate", "normalize", "convert", "apply", "merge", "split", "compute", "update", "register", "lookup", "iter",
		"find", "check", "render", "encode", "decode", "flush", "reset", "clear", "copy", "fit", "transform", "emit"}
	pyTypes = []string{"int", "str", "float", "bool", "bytes", "Any", "list[str]", "dict[str, Any]", "tuple[int, ...]",
		"Sequence[float]", "Mapping[str, int]", "Callable[[str], bool]", "Optional[Path]", "np.ndarray", "pd.DataFrame",
		"Iterator[tuple[str, int]]", "int | None", "str | os.PathLike[str]", "type[T]", "Iterable[T]", "set[str]",
		"frozenset[int]", "Literal[\"left\", \"right\"]", "\"Node\"", "list[dict[str, float]]", "T", "Self"}
	pyDefaults = []string{"None", "True", "False", "0", "1", "-1", "0.5", "1e-8", "\"utf-8\"", "'auto'", "()",
		"100_000", "0xFF", "DEFAULT_TIMEOUT", "\"\"", "'\\t'", "1.0", "2", "None", "None", "\"strict\"", "0o644"}
	decorators = []string{"@property", "@staticmethod", "@classmethod", "@functools.lru_cache(maxsize=128)",
		"@overload", "@abc.abstractmethod", "@cached_property", "@functools.wraps(func)", "@contextmanager",
		"@deprecated(\"use read() instead\")", "@pytest.fixture(scope=\"module\")", "@app.route(\"/items/<int:item_id>\", methods=[\"GET\"])"}
	importLines = []string{
		"import os", "import re", "import sys", "import json", "import logging", "import warnings", "import functools",
		"import itertools", "import numpy as np", "import pandas as pd", "import os.path as osp", "import abc",
		"from __future__ import annotations", "from pathlib import Path", "from dataclasses import dataclass, field",
		"from collections.abc import Iterable, Iterator, Mapping, Sequence", "from functools import cached_property",
		"from contextlib import contextmanager", "from typing import TYPE_CHECKING, Any, Callable, Generic, Literal, Optional, TypeVar, overload",
		"from typing import (\n    Any,\n    ClassVar,\n    Final,\n    Protocol,\n)",
		"from . import _compat", "from .base import BaseReader, BaseWriter", "from ..utils import check_array, validate_params",
		"from ._typing import ArrayLike, Self", "from .exceptions import ParserError as _ParserError",
	}
)

func (s *stmtGen) ident() string {
	if s.chance(0.5) {
		return s.pick(identVerbs) + "_" + s.pick(identNouns)
	}
	return s.pick(identNouns)
}

func (s *stmtGen) className() string {
	return camel(s.pick(adjs)) + camel(s.pick(nouns))
}

// realStatement writes a statement shaped like FeatureBench's: a task with
// its requirements as lists, precautions, an example interface, then
// interface descriptions whose Python code holds most of the bytes.
func realStatement(r *rand.Rand, f feature) string {
	s := &stmtGen{r: r, f: f}
	// Log-normal sizes with FeatureBench's mean, bounded by its largest.
	// The target is what the blocks are cut to; whole definitions take
	// them about a tenth over it.
	const sigma = 0.75
	over := 1.16
	mu := math.Log(statementMean/over) - sigma*sigma/2
	size := int(math.Exp(mu + sigma*r.NormFloat64()))
	size = min(max(size, statementMin), int(float64(statementMax)/over))

	b := &s.b
	b.Grow(size + 4096)
	pkg := f.repo.pkg
	fmt.Fprintf(b, "## Task\n**Task Statement: %s %s `%s` in `%s`**\n\n", camel(s.pick(verbs)), strings.ToLower(s.pick(adjs)), f.fn, f.module)
	b.WriteString(s.paragraph(3, 6))
	b.WriteString("\n\n**Core Functionalities:**\n")
	for i := range s.between(2, 4) {
		fmt.Fprintf(b, "%d. %s\n", i+1, s.sentence(6, 14))
	}
	b.WriteString("\n**Main Features and Requirements:**\n")
	for range s.between(3, 6) {
		fmt.Fprintf(b, "- **%s**: %s\n", camel(s.pick(identNouns)), s.sentence(8, 18))
	}
	b.WriteString("\n**Key Challenges:**\n")
	for range s.between(2, 4) {
		fmt.Fprintf(b, "- %s\n", s.sentence(8, 16))
	}
	fmt.Fprintf(b, "\n**NOTE**:\n- This test comes from the `%s` library, and we have given you the content of this code repository under `/testbed/`, and you need to complete based on this code repository and supplement the files we specify. Remember, all your changes must be in this codebase, and changes that are not in this codebase will not be discovered and tested by us.\n", pkg)
	b.WriteString("- We've already installed all the environments and dependencies you need, you don't need to install any dependencies, just focus on writing the code!\n")
	fmt.Fprintf(b, "- **CRITICAL REQUIREMENT**: After completing the task, pytest will be used to test your implementation. **YOU MUST** match the exact interface shown in the **Interface Description** (I will give you this later).\n\n")
	fmt.Fprintf(b, "Your final deliverable should be code under the `/testbed/` directory, and after completing the codebase, we will evaluate your completion and it is important that you complete our tasks with integrity and precision.\n\n")

	b.WriteString("## Precautions\n\n")
	for range s.between(2, 4) {
		fmt.Fprintf(b, "- %s\n", s.sentence(10, 22))
	}
	if s.chance(0.4) {
		// A command to run, as some statements give.
		s.otherBlock()
	}

	b.WriteString("\n## Test and Interface Descriptions\n\n")
	b.WriteString("The **Interface Description** describes what the functions we are testing do and the input and output formats.\n\nfor example, you will get things like this:\n\n")
	fmt.Fprintf(b, "Path: `/testbed/%s`\n```python\n", f.module)
	example := s.python(s.between(400, 1400), false, 0)
	b.WriteString(example)
	b.WriteString("```\n\nThe value of Path declares the path under which the following interface should be implemented and you must generate the interface class/function given to you under the specified path.\n\n")
	b.WriteString("What's more, in order to implement this functionality, some additional libraries etc. are often required, I don't restrict you to any libraries, you need to think about what dependencies you might need and fetch and install and call them yourself. The only thing is that you **MUST** fulfill the input/output format described by this interface, otherwise the test will not pass and you will get zero points for this feature.\n\n")
	b.WriteString("And note that there may be not only one **Interface Description**, you should match all **Interface Description {n}**\n")

	// The interface descriptions share what is left: two or three of
	// them (FeatureBench's statements have 5.6 headings), of skewed
	// sizes, so that about a fifth of the Python blocks reach 8 KB.
	left := size - b.Len()
	n := 2
	for n < 8 && s.chance(0.35) {
		n++
	}
	weights := make([]float64, n)
	total := 0.0
	for i := range weights {
		weights[i] = math.Exp(1.0 * r.NormFloat64())
		total += weights[i]
	}
	for i := range n {
		fmt.Fprintf(b, "\n### Interface Description %d\nBelow is **Interface Description %d**\n\n", i+1, i+1)
		path := pkg + "/" + s.pick(nouns) + "/" + s.pick(identNouns) + ".py"
		if i == 0 {
			path = f.module
		}
		share := int(float64(left) * weights[i] / total)
		// Prose around the block takes a few hundred bytes of its share.
		code := max(share-s.between(300, 700), 200)
		fmt.Fprintf(b, "Path: `/testbed/%s`\n```python\n", path)
		b.WriteString(s.python(code, code >= 6<<10 && s.chance(0.85) || s.chance(0.35), i))
		b.WriteString("```\n\n")
		b.WriteString(s.paragraph(1, 3))
		b.WriteString("\n")
		if s.chance(0.5) {
			b.WriteString("\nAdditional information:\n")
			for range s.between(2, 5) {
				fmt.Fprintf(b, "- `%s` %s\n", s.ident(), strings.ToLower(s.sentence(6, 16)))
			}
		}
		if s.chance(0.08) {
			b.WriteString("\nUsage:\n\n```python\n")
			b.WriteString(s.python(s.between(150, 500), s.chance(0.5), 0))
			b.WriteString("```\n")
		}
	}
	if s.chance(0.55) {
		b.WriteString("\n")
		s.otherBlock()
	}
	return b.String()
}

// otherBlock writes a block that is not Python: a command, an output, a
// configuration.
func (s *stmtGen) otherBlock() {
	b := &s.b
	switch k := s.r.IntN(20); {
	case k < 7:
		fmt.Fprintf(b, "Run the tests with:\n\n```bash\npython -m pytest %s -x -q\n```\n", s.f.test)
	case k < 13:
		fmt.Fprintf(b, "For example, the call above prints:\n\n```\n%s(%s=%d, %s='%s')\n%s\n```\n", camel(s.f.fn), s.pick(identNouns), s.r.IntN(100), s.pick(identNouns), s.pick(identNouns), s.sentence(4, 9))
	case k < 16:
		fmt.Fprintf(b, "The expected output:\n\n```text\n%s\n%s\n```\n", s.sentence(4, 10), s.sentence(4, 10))
	case k < 18:
		fmt.Fprintf(b, "The configuration it reads:\n\n```json\n{\"%s\": %d, \"%s\": \"%s\"}\n```\n", s.pick(identNouns), s.r.IntN(1000), s.pick(identNouns), s.pick(identNouns))
	default:
		fmt.Fprintf(b, "Install it in development mode:\n\n```sh\npip install -e .[test]\n```\n")
	}
}

// pyWriter writes Python source line by line at an indentation.
type pyWriter struct {
	s      *stmtGen
	b      strings.Builder
	indent int
}

func (w *pyWriter) line(format string, args ...any) {
	for range w.indent {
		w.b.WriteString("    ")
	}
	if len(args) == 0 {
		w.b.WriteString(format)
	} else {
		fmt.Fprintf(&w.b, format, args...)
	}
	w.b.WriteByte('\n')
}

func (w *pyWriter) blank() { w.b.WriteByte('\n') }

// python writes about size bytes of Python: imports when asked, then
// constants, classes and functions with docstrings, some with bodies and
// some with the "<your code>" placeholder of FeatureBench's interfaces.
func (s *stmtGen) python(size int, imports bool, nth int) string {
	w := &pyWriter{s: s}
	w.b.Grow(size + 2048)
	if imports {
		if s.chance(0.3) {
			w.line(`"""%s"""`, s.sentence(4, 10))
			w.blank()
		}
		seen := map[int]bool{}
		for range s.between(3, 9) {
			k := s.r.IntN(len(importLines))
			if !seen[k] {
				seen[k] = true
				w.line("%s", importLines[k])
			}
		}
		w.blank()
		if s.chance(0.5) {
			w.line("if TYPE_CHECKING:")
			w.indent++
			w.line("from %s.%s import %s", s.f.repo.pkg, s.pick(nouns), s.className())
			w.indent--
			w.blank()
		}
		if s.chance(0.6) {
			s.constants(w)
		}
	}
	for first := true; first || w.b.Len() < size; first = false {
		switch k := s.r.IntN(10); {
		case k < 6 || (first && nth == 0):
			s.class(w, size)
		default:
			s.function(w, false)
		}
		w.blank()
	}
	return strings.TrimRight(w.b.String(), "\n") + "\n"
}

func (s *stmtGen) constants(w *pyWriter) {
	w.line(`logger = logging.getLogger(__name__)`)
	w.line(`T = TypeVar("T", bound="%s")`, s.className())
	w.line(`DEFAULT_TIMEOUT: Final[float] = 30.0`)
	forms := []string{
		`_MAX_ROWS = 1_000_000`, `_MASK = 0xFF_FF`, `_MODE = 0o755`, `_FLAGS = 0b1010_0101`, `_EPS = 1e-12`,
		`_RATIO = .5`, `_COMPLEX = 3.5j`, `_BIG = 6.022E+23`, `_SEP = "\t"`, `_RESET = "\x1b[0m"`,
		`_ACCENT = "\u00e9"`, `_NUL = b"\x00\xff"`, `_NAME_RE = re.compile(r"^(?P<name>[a-z_][a-z0-9_]*)\s*=\s*(?P<value>.+)$")`,
		`_TEMPLATE = "%(name)s=%(value)r"`, `_FMT = "{0:>10} | {1:<8.3f}"`, `_BULLET = "\N{BULLET} "`,
		`__all__ = ["` + s.className() + `", "` + s.f.fn + `"]`, `_UNITS: dict[str, float] = {"ms": 1e-3, "s": 1.0, "min": 60.0}`,
	}
	for range s.between(3, 7) {
		w.line("%s", s.pick(forms))
	}
	w.blank()
	w.blank()
}

func (s *stmtGen) params(self bool) string {
	var ps []string
	if self {
		ps = append(ps, "self")
	}
	n := s.between(0, 5)
	star := false
	for i := range n {
		name := s.pick(identNouns)
		p := name
		if s.chance(0.8) {
			p += ": " + s.pick(pyTypes)
		}
		if i >= n/2 {
			if !star && s.chance(0.4) {
				ps = append(ps, "*")
				star = true
			}
			if strings.Contains(p, ":") {
				p += " = " + s.pick(pyDefaults)
			} else {
				p += "=" + s.pick(pyDefaults)
			}
		}
		ps = append(ps, p)
	}
	if s.chance(0.15) {
		ps = append(ps, "**kwargs: Any")
	}
	return strings.Join(ps, ", ")
}

func (s *stmtGen) class(w *pyWriter, size int) {
	name := s.className()
	if s.chance(0.3) {
		w.line("@dataclass(frozen=%s, slots=True)", s.pick([]string{"True", "False"}))
	}
	switch k := s.r.IntN(4); k {
	case 0:
		w.line("class %s:", name)
	case 1:
		w.line("class %s(%s):", name, s.pick([]string{"BaseReader", "Exception", "Generic[T]", "abc.ABC", "Protocol", "NamedTuple", "dict[str, Any]"}))
	default:
		w.line("class %s(%s, metaclass=abc.ABCMeta):", name, s.className())
	}
	w.indent++
	s.docstring(w, name, true)
	w.blank()
	if s.chance(0.5) {
		for range s.between(1, 4) {
			w.line("%s: %s = %s", s.pick(identNouns), s.pick(pyTypes), s.pick(pyDefaults))
		}
		if s.chance(0.3) {
			w.line("_registry: ClassVar[dict[str, type[%q]]] = {}", name)
		}
		w.blank()
	}
	methods := s.between(2, 6)
	for i := range methods {
		if i > 0 {
			w.blank()
		}
		if i == 0 && s.chance(0.6) {
			w.line("def __init__(self, %s) -> None:", s.params(false))
			w.indent++
			s.docstring(w, "__init__", false)
			s.body(w)
			w.indent--
		} else {
			s.function(w, true)
		}
		if w.b.Len() >= size {
			break
		}
	}
	w.indent--
}

var magicMethods = []string{"__repr__", "__len__", "__iter__", "__eq__", "__getitem__", "__contains__", "__enter__", "__exit__", "__call__", "__hash__"}

func (s *stmtGen) function(w *pyWriter, method bool) {
	if s.chance(0.35) {
		w.line("%s", s.pick(decorators))
	}
	name := s.ident()
	if method && s.chance(0.1) {
		name = s.pick(magicMethods)
	} else if s.chance(0.2) {
		name = "_" + name
	}
	def := "def"
	if s.chance(0.1) {
		def = "async def"
	}
	ret := s.pick(pyTypes)
	if s.chance(0.2) {
		ret = "None"
	}
	w.line("%s %s(%s) -> %s:", def, name, s.params(method), ret)
	w.indent++
	s.docstring(w, name, false)
	s.body(w)
	w.indent--
}

// docstring writes a docstring in the numpy style most FeatureBench
// interfaces use, or a short one.
func (s *stmtGen) docstring(w *pyWriter, name string, class bool) {
	if s.chance(0.15) {
		w.line(`"""%s"""`, s.sentence(5, 12))
		return
	}
	w.line(`"""`)
	w.line("%s", s.sentence(6, 14))
	w.blank()
	for _, l := range wrap(s.paragraph(2, 5), 76) {
		w.line("%s", l)
	}
	w.blank()
	section := func(title string) {
		w.line("%s", title)
		w.line("%s", strings.Repeat("-", len(title)))
	}
	section("Parameters")
	for range s.between(1, 4) {
		w.line("%s : %s", s.pick(identNouns), s.pick([]string{"str", "int, optional", "float", "bool, default False", "array-like of shape (n_samples,)", "callable", "dict of {str: int}", "Path or str"}))
		w.indent++
		for _, l := range wrap(s.paragraph(1, 2), 72) {
			w.line("%s", l)
		}
		if s.chance(0.2) {
			w.line("Defaults to ``%s`` \u2014 see :func:`%s` for details.", s.pick(pyDefaults), s.ident())
		}
		w.indent--
	}
	w.blank()
	if !class {
		section("Returns")
		w.line("%s", s.pick(pyTypes))
		w.indent++
		w.line("%s", s.sentence(6, 14))
		w.indent--
		w.blank()
	}
	if s.chance(0.5) {
		section("Raises")
		w.line("%s", s.pick([]string{"ValueError", "TypeError", "KeyError", "FileNotFoundError", "NotImplementedError"}))
		w.indent++
		w.line("If ``%s`` is %s.", s.pick(identNouns), s.pick([]string{"negative", "empty", "not a str", "missing", "None", "out of range"}))
		w.indent--
		w.blank()
	}
	if s.chance(0.3) {
		section("Notes")
		for _, l := range wrap(s.paragraph(1, 3), 76) {
			w.line("%s", l)
		}
		w.blank()
	}
	if s.chance(0.35) {
		section("Examples")
		obj := strings.ToLower(name[:1])
		w.line(">>> %s = %s(%q, limit=%d)", obj, name, s.pick(identNouns)+".csv", s.r.IntN(100))
		w.line(">>> %s.%s()", obj, s.ident())
		w.line("[%d, %d, %d]", s.r.IntN(10), s.r.IntN(100), s.r.IntN(1000))
		w.blank()
	}
	w.line(`"""`)
}

// body writes a function's body: FeatureBench's placeholder, an ellipsis,
// or a few statements of real code.
func (s *stmtGen) body(w *pyWriter) {
	switch k := s.r.IntN(10); {
	case k < 5:
		w.line("<your code>")
		return
	case k < 6:
		w.line("...")
		return
	}
	for range s.between(2, 7) {
		s.statement(w)
	}
	w.line("return %s", s.pick([]string{"result", "self", "None", "NotImplemented", "value", "out", "[x for x in items if x]", "(lo, hi)"}))
}

func (s *stmtGen) statement(w *pyWriter) {
	a, b, c := s.pick(identNouns), s.pick(identNouns), s.pick(identNouns)
	switch s.r.IntN(24) {
	case 0:
		w.line("if %s is None:", a)
		w.line("    %s = %s", a, s.pick(pyDefaults))
	case 1:
		w.line("result = [item.%s for item in %s if item is not None]", b, a)
	case 2:
		w.line("for i, %s in enumerate(%s):", a, b)
		w.line("    total += %s * i  # weighted by position", a)
	case 3:
		w.line("with open(%s, encoding=\"utf-8\") as fh:", a)
		w.line("    text = fh.read()")
	case 4:
		w.line("try:")
		w.line("    value = self._cache[%s]", a)
		w.line("except KeyError as exc:")
		w.line("    raise LookupError(f\"unknown %s {%s!r}\") from exc", a, a)
	case 5:
		w.line("raise ValueError(f\"%s must be positive, got {%s:.3f}\")", a, a)
	case 6:
		w.line("logger.debug(\"%%s: %%d rows in %%.2fs\", %s, len(%s), elapsed)", a, b)
	case 7:
		w.line("msg = \"Expected {0}, got {%s}\".format(expected, %s=%s)", b, b, c)
	case 8:
		w.line("pattern = re.compile(r\"^\\s*(?P<key>[\\w.]+)\\s*=\\s*(?P<value>.*)$\")")
	case 9:
		w.line("parts = line.rstrip(\"\\n\").split(\"\\t\")")
	case 10:
		w.line("out = {k: v for k, v in %s.items() if not k.startswith(\"_\")}", a)
	case 11:
		w.line("if (n := len(%s)) > self.max_%s:", a, b)
		w.line("    %s = %s[:n // 2]", a, a)
	case 12:
		w.line("yield from self._walk(%s)", a)
	case 13:
		w.line("response = await self._client.get(%s, timeout=%s)", a, s.pick([]string{"timeout", "DEFAULT_TIMEOUT", "2.5", "None"}))
	case 14:
		w.line("key = lambda x: (x.%s, -x.%s)", a, b)
	case 15:
		w.line("assert isinstance(%s, (list, tuple)), \"%s must be a sequence\"", a, a)
	case 16:
		w.line("mask = (flags & 0x0F) | (1 << %d)", s.r.IntN(8))
	case 17:
		w.line("self._buffer += b\"\\x00\" * (%s - len(self._buffer) %% 8)", a)
	case 18:
		w.line("# TODO: %s", strings.ToLower(s.sentence(4, 10)))
	case 19:
		w.line("warnings.warn(")
		w.line("    f\"'{%s}' is deprecated; use '{%s}' instead\",", a, b)
		w.line("    DeprecationWarning,")
		w.line("    stacklevel=2,")
		w.line(")")
	case 20:
		w.line("def _key(item):")
		w.line("    return (item.%s, item.%s)", a, b)
		w.line("%s = sorted(%s, key=_key, reverse=%s)", c, a, s.pick([]string{"True", "False"}))
	case 21:
		w.line("match %s:", a)
		w.line("    case \"csv\" | \"tsv\":")
		w.line("        sep = \",\" if %s == \"csv\" else \"\\t\"", a)
		w.line("    case _:")
		w.line("        raise NotImplementedError(%s)", a)
	case 22:
		w.line("label = f\"{self.name!r}: {%s:>{width}} ({ratio:.1%%})\"", a)
	default:
		w.line("super().__init__(**kwargs)")
		w.line("self._%s: dict[str, %s] = {}", a, s.pick(pyTypes))
	}
}

// wrap breaks text into lines of at most width bytes, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	for len(text) > width {
		i := strings.LastIndexByte(text[:width], ' ')
		if i <= 0 {
			break
		}
		lines = append(lines, text[:i])
		text = text[i+1:]
	}
	return append(lines, text)
}
