// Package components finds the new components of a change: the functions,
// classes and methods a pull request's code patch adds, FEA-Bench's
// "definition of new components" (paper 004, section 3.3), found by
// diffing Python syntax trees before and after.
//
// The work is done by an embedded Python script ([Script], standard library
// only) that runs inside a container of the repository's environment image,
// as
//
//	python3 -I /fb/components.py REQUEST.json
//
// It reads a [Request], prints a [Result] as JSON on stdout and exits 0; a
// request it cannot read exits 2 with the reason on stderr. [ParseResult]
// decodes the output. It runs where the repository's tests run because that
// Python is the one whose grammar the repository's code is written for (a
// 3.12 type statement does not parse on 3.11); it only parses the files,
// imports and runs nothing of them, and needs no network.
//
// # What a component is
//
//  1. The definitions of a file are its defs and classes at module level and
//     in class bodies, also under if, try, with, for, while and match blocks,
//     named by qualified name (Outer.Inner.method). A def inside a function
//     is local, reachable by no name from outside, and is never a component.
//  2. A component is a qualified name that the file defines after the change
//     and did not define before (a new file: all of its). All the
//     definitions of one name make one component: @overload stubs with their
//     implementation, a property's getter, setter and deleter, alternatives
//     under if/else. Its Kind is "class", "method" (a def in a class body) or
//     "function"; a new class lists its new methods as components too.
//  3. Signature is each definition's header as written (decorators, async,
//     the def or class line up to the colon that ends it, without comments),
//     dedented, one per distinct header, joined by newlines; Docstring is the
//     implementation's (not an overload stub's), cleaned as inspect does, or
//     null.
//  4. A component whose code, but for its name and docstring, equals a
//     definition the change removed anywhere (a method moved to another
//     class, a renamed function, a module moved) names it in SameAs. Tests
//     call it by its new name, so the statement must define it, but its
//     lines are no new code.
//
// # Lines
//
// Added and Removed count the file's lines a line diff (difflib, as git's
// diff in all but rare cases) adds and removes. A component's Lines are the
// added lines inside its spans (first decorator to last line); a file's
// ComponentLines is the union of those of its components without SameAs.
// The share of a change's edited lines that new components account for,
// FEA-Bench's filter (> 25 %), is [ChangeResult.Share].
//
// # Files that are not Python
//
// A file whose bytes cannot be decoded as Python decodes source (PEP 263:
// UTF-8, or the encoding its coding line names), or that does not parse, has
// Error set ("after the change: does not parse: … (line N)") and no
// components; its lines count nothing. The request lists Python files only:
// the caller counts the other files' edited lines from the patch.
package components
