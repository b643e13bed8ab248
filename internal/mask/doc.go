// Package mask removes objects from a Python repository: the masking step of
// cmd/collect (FeatureBench's mask stage, with exact spans from Python's own
// ast and the imports the removal leaves unused).
//
// The work is done by an embedded Python 3.11 script ([Script], standard
// library only) that runs inside the repository's container, as
//
//	python3 /fb/masker.py REQUEST.json
//
// with the repository root as the working directory. It reads a [Request],
// edits the files in place, and prints a [Result] as JSON on stdout; on an
// error it exits non-zero with a message naming the file and line on stderr.
// [ParseResult] decodes the output.
//
// # Object ids
//
// Objects are named path::qualname::line ([objid.Parse], [objid.Format]): the path
// relative to the root with / separators, Python's __qualname__ without
// "<locals>." parts, and the line of the def or class keyword (not of the
// first decorator). Module-level code is path::<module>::0; it can be neither
// removed nor described.
//
// # Masking rules
//
//  1. Each id in Request.Remove is looked up by qualname and def line among
//     the defs and classes of its file, including those under if, try, with,
//     for, while and match blocks. An id that is not found is an error; an
//     object nested in another removed object goes with it.
//  2. Its span, from the first decorator's line to the last line, is deleted
//     as whole lines, with the blank lines around it tidied (none at the
//     start or end of the file, at most 2 at module level and 1 inside), so
//     that the gold diff (masked -> original) is a clean addition.
//  3. Companions go too: the @overload stubs of a removed function, and the
//     @x.setter / @x.deleter defs of a removed property getter x. So does
//     class-body code that names a removed member where no kept binding of
//     the name in the class precedes it, never left to fail on import or
//     to bind another object of that name (a name the module imports):
//     aliases (__or__ = union, bisect = bisect_right), other simple
//     statements (x = property(get_x)), and defs or classes whose
//     decorators, defaults or bases name it (@show.register), in turn with
//     what they bind. The statements are listed in File.Dependents. A
//     request that leaves a functools.total_ordering class none of the
//     ordering methods it defines is an error ("keep '__lt__'"): its
//     import would fail.
//  4. A block left empty gets pass. Every edited file must still parse.
//  5. In each edited file, imports that were referenced before and are
//     referenced nowhere after the removal are removed (a Name that is
//     loaded or deleted, a name in a string annotation, or a string in
//     __all__ counts as a reference). Imports unused before (re-exports)
//     and from __future__ imports stay. A statement keeps its other names,
//     their aliases and its layout; one left with no name is deleted.
//  6. The names of removed module-level objects leave their module's
//     __all__ (= [...], += [...], .append("x"), .extend([...])).
//  7. Every other .py file under the root, except Request.ProtectFiles,
//     test files (test_*.py, *_test.py, conftest.py, anything under a
//     tests or test folder) and build, .git, .egg-info, hidden and virtual
//     environment folders, loses the names it imports with from M import
//     (absolute or relative) of a removed module-level object of module M,
//     and those names leave its __all__. import M with M.name is left alone,
//     and nothing cascades further.
//
// # Interface descriptions
//
// For the ids in Request.Describe the script renders stubs from the original
// sources ([Interface]): decorators and the def or class header as written,
// the docstring as written, then "# <your code>" in a function's body; a
// class shows its class-level attributes and simple assignments, then the
// described members inside it, or "# <your code>" when none. All described
// objects under one module-level def or class share its stub.
// [Interface.WithDocstrings] fills in missing docstrings (from an LLM, say).
//
// # Level 2
//
// With Request.Level2 the script also returns the test file rewritten to take
// the top names from the agent_code package: from-imports of those names out
// of the library's package become "from agent_code import ...", uses through
// a module (mod.name, pkg.mod.name) become agent_code.name, and "import
// agent_code" is added after the module docstring and __future__ imports.
// The file itself is not written.
package mask
