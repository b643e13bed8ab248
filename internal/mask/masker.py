"""Remove objects from a Python repository, for FeatBench's task collection.

Run as ``python3 masker.py REQUEST.json`` with the repository root as the
working directory. The request names objects by id, ``path::qualname::line``
(line = the ``def``/``class`` keyword's line). The script edits the files in
place and prints a JSON result on stdout; on an error it exits non-zero with
a message naming the file and line on stderr. See internal/mask/doc.go for the
request and result fields. Python 3.10 or newer (the containers have 3.11),
standard library only.
"""

import ast
import difflib
import io
import json
import os
import re
import sys
import tokenize

MODULE_QUALNAME = "<module>"


class MaskError(Exception):
    """An error in the request or the repository, reported without a traceback."""


def fail(path, line, msg):
    where = path if not line else "%s:%d" % (path, line)
    raise MaskError("%s: %s" % (where, msg))


# ---------------------------------------------------------------------------
# Ids


def parse_id(oid):
    parts = oid.split("::")
    if len(parts) != 3 or not parts[0] or not parts[1] or not parts[2].isdigit():
        raise MaskError("%s: malformed object id (want path::qualname::line)" % oid)
    path, qual, line = parts[0], parts[1], int(parts[2])
    if path.startswith("/") or "\\" in path or ".." in path.split("/"):
        raise MaskError("%s: the path must be relative to the repository root, with / separators" % oid)
    return path, qual, line


def format_id(path, qual, line):
    return "%s::%s::%d" % (path, qual, line)


# ---------------------------------------------------------------------------
# Source files


class Source:
    """A file's text with its ast, and conversions from ast positions.

    ast columns are UTF-8 byte offsets within a line; the text is a str, so
    every position goes through offset().
    """

    def __init__(self, path, text):
        self.path = path
        self.text = text
        # Lines keep their endings. Only \n ends a line, as for ast (not
        # str.splitlines, which also splits at \f and friends); a lone \r is
        # not supported.
        self.lines = re.findall(r"[^\n]*\n|[^\n]+$", text)
        self.starts = [0]
        for ln in self.lines:
            self.starts.append(self.starts[-1] + len(ln))
        self.newline = "\r\n" if "\r\n" in text else "\n"
        try:
            self.tree = ast.parse(text, filename=path)
        except SyntaxError as e:
            fail(path, e.lineno or 0, "does not parse: %s" % e.msg)

    def line(self, n):
        """Line n (1-based) without its ending."""
        return self.lines[n - 1].rstrip("\r\n") if 1 <= n <= len(self.lines) else ""

    def offset(self, lineno, col):
        if lineno > len(self.lines):
            return len(self.text)
        raw = self.lines[lineno - 1].encode("utf-8")
        return self.starts[lineno - 1] + len(raw[:col].decode("utf-8", "replace"))

    def start(self, node):
        return self.offset(node.lineno, node.col_offset)

    def end(self, node):
        return self.offset(node.end_lineno, node.end_col_offset)

    def segment(self, node):
        return self.text[self.start(node):self.end(node)]

    def line_start(self, n):
        return self.starts[min(n, len(self.lines) + 1) - 1] if n >= 1 else 0

    def ending(self, n):
        ln = self.lines[n - 1] if 1 <= n <= len(self.lines) else ""
        return ln[len(ln.rstrip("\r\n")):] or self.newline

    def blank(self, n):
        return self.line(n).strip() == ""

    def indent(self, n):
        ln = self.line(n)
        return ln[: len(ln) - len(ln.lstrip(" \t"))]


def read_source(root, path):
    full = os.path.join(root, path)
    try:
        with open(full, "rb") as f:
            raw = f.read()
    except OSError as e:
        fail(path, 0, "cannot read: %s" % e.strerror)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        text = raw.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError) as e:
        fail(path, 0, "cannot decode: %s" % e)
    return Source(path, text), encoding


def write_text(root, path, text, encoding):
    with open(os.path.join(root, path), "wb") as f:
        f.write(text.encode(encoding))


# ---------------------------------------------------------------------------
# Walking definitions and blocks

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def child_blocks(node):
    """The statement lists directly under node (bodies, else, except, finally, case)."""
    out = []
    for field in ("body", "orelse", "finalbody"):
        val = getattr(node, field, None)
        if isinstance(val, list) and val and isinstance(val[0], ast.stmt):
            out.append(val)
    for h in getattr(node, "handlers", None) or []:
        out.append(h.body)
    for c in getattr(node, "cases", None) or []:
        out.append(c.body)
    return out


def iter_blocks(tree):
    """Every statement list in the tree, with its owner node."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.ExceptHandler, ast.match_case)):
            continue  # reached through their statement's handlers / cases
        for block in child_blocks(node):
            yield node, block


class Def:
    """A def or class found in a file: its node, qualname and enclosing defs."""

    def __init__(self, node, qual, parents):
        self.node = node
        self.qual = qual
        self.parents = parents  # enclosing Defs, outermost first

    @property
    def first_line(self):
        return first_line(self.node)

    @property
    def kind(self):
        if isinstance(self.node, ast.ClassDef):
            return "class"
        if self.parents and isinstance(self.parents[-1].node, ast.ClassDef):
            return "method"
        return "async function" if isinstance(self.node, ast.AsyncFunctionDef) else "function"


def first_line(node):
    decs = getattr(node, "decorator_list", None)
    return decs[0].lineno if decs else node.lineno


def find_defs(tree):
    """All defs and classes, including those under if/try/with/for/while/match."""
    found = []

    def visit(stmts, prefix, parents):
        for st in stmts:
            if isinstance(st, DEFS):
                d = Def(st, prefix + st.name, parents)
                found.append(d)
                for block in child_blocks(st):
                    visit(block, d.qual + ".", parents + [d])
            else:
                for block in child_blocks(st):
                    visit(block, prefix, parents)

    visit(tree.body, "", [])
    return found


def lookup(src, defs, oid, qual, line):
    for d in defs:
        if d.qual == qual and d.node.lineno == line:
            return d
    near = sorted(d.node.lineno for d in defs if d.qual == qual)
    hint = (" (%s is defined at line %s)" % (qual, ", ".join(map(str, near)))) if near else ""
    fail(src.path, line, "object %s not found%s" % (oid, hint))


def is_overload(node):
    for dec in getattr(node, "decorator_list", []):
        if isinstance(dec, ast.Name) and dec.id == "overload":
            return True
        if isinstance(dec, ast.Attribute) and dec.attr == "overload":
            return True
    return False


def accessor_of(node):
    """For a def decorated @name.setter/.deleter/.getter, the property's name."""
    for dec in getattr(node, "decorator_list", []):
        if (isinstance(dec, ast.Attribute) and dec.attr in ("setter", "deleter", "getter")
                and isinstance(dec.value, ast.Name)):
            return dec.value.id
    return None


def companions(defs, d):
    """Defs that cannot stay once d is gone: its @overload stubs, and the
    setter/deleter of a property whose getter it is (their decorators name it)."""
    if isinstance(d.node, ast.ClassDef):
        return []
    out = []
    own_accessor = accessor_of(d.node)
    for o in defs:
        if o is d or o.qual != d.qual or isinstance(o.node, ast.ClassDef):
            continue
        if is_overload(o.node) and not is_overload(d.node):
            out.append(o)
        elif own_accessor is None and accessor_of(o.node) == d.node.name:
            out.append(o)
    return out


# ---------------------------------------------------------------------------
# Names referenced in a module


def annotation_nodes(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            yield node.annotation
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            yield node.returns
        elif isinstance(node, ast.AnnAssign):
            yield node.annotation


def all_containers(tree):
    """(statement, container or single string node, how) for each edit site
    of __all__: ``__all__ = [...]`` (also inside ``+``), ``+= [...]``,
    ``.extend([...])``, ``.append("x")``."""
    out = []

    def literals(expr):
        if isinstance(expr, (ast.List, ast.Tuple)):
            return [expr]
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return literals(expr.left) + literals(expr.right)
        return []

    for st in ast.walk(tree):
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in st.targets):
            out += [(st, c, "assign") for c in literals(st.value)]
        elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.target.id == "__all__" and st.value:
            out += [(st, c, "assign") for c in literals(st.value)]
        elif (isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name) and st.target.id == "__all__"
              and isinstance(st.op, ast.Add)):
            out += [(st, c, "augment" if c is st.value else "assign") for c in literals(st.value)]
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            call = st.value
            f = call.func
            if (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "__all__"
                    and len(call.args) == 1 and not call.keywords):
                if f.attr == "append" and _is_str(call.args[0]):
                    out.append((st, call.args[0], "append"))
                elif f.attr == "extend":
                    out += [(st, c, "augment" if c is call.args[0] else "assign") for c in literals(call.args[0])]
    return sorted(out, key=lambda e: pos(e[1]))


def pos(node):
    return (node.lineno, node.col_offset)


def _is_str(node):
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def all_strings(tree):
    """The string nodes listed in __all__."""
    out = []
    for _, c, how in all_containers(tree):
        if how == "append":
            out.append(c)
        else:
            out += [e for e in c.elts if _is_str(e)]
    return out


def referenced_names(tree, skip_strings=()):
    """Names the module uses: every Name that is loaded or deleted (attribute
    chains included, as their root is a Name), names inside string
    annotations, and names listed in __all__ (except skip_strings nodes)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            names.add(node.id)
    for ann in annotation_nodes(tree):
        for node in ast.walk(ann):
            if _is_str(node):
                try:
                    sub = ast.parse(node.value.strip(), mode="eval")
                except SyntaxError:
                    continue
                names.update(n.id for n in ast.walk(sub) if isinstance(n, ast.Name))
    skip = set(map(id, skip_strings))
    names.update(s.value for s in all_strings(tree) if id(s) not in skip)
    return names


def bound_name(stmt, alias):
    if alias.asname:
        return alias.asname
    if isinstance(stmt, ast.Import):
        return alias.name.split(".")[0]
    return alias.name


def describe_import(stmt, alias):
    name = alias.name + (" as " + alias.asname if alias.asname else "")
    if isinstance(stmt, ast.Import):
        return "import " + name
    return "from %s%s import %s" % ("." * stmt.level, stmt.module or "", name)


# ---------------------------------------------------------------------------
# Editing


class Editor:
    """Collects edits against one Source and applies them together.

    Whole statements are deleted as line ranges (so that the gold diff is a
    clean addition), with the blank lines around them tidied; everything else
    is a replacement of a character range. Edits must not overlap.
    """

    def __init__(self, src):
        self.src = src
        self.spans = []  # (first, last, is_first, is_last, col): deleted statement lines
        self.lines_gone = set()  # deleted lines inside brackets (no tidying)
        self.edits = []  # (start, end, text)

    def replace(self, start, end, text):
        self.edits.append((start, end, text))

    def replace_node(self, node, text):
        self.replace(self.src.start(node), self.src.end(node), text)

    def owns_lines(self, first, node):
        """Whether node's lines (from line first) hold nothing else but comments."""
        src = self.src
        head = src.line(first)
        if first == node.lineno:
            head = head.encode("utf-8")[: node.col_offset].decode("utf-8", "replace")
        else:
            head = head[: len(src.indent(first))]
        tail = src.line(node.end_lineno).encode("utf-8")[node.end_col_offset:].decode("utf-8", "replace")
        return head.strip() == "" and re.fullmatch(r"\s*(#.*)?", tail) is not None

    def drop_statements(self, tree, drop):
        """Delete the statements whose id() is in drop; a block left empty gets
        ``pass`` in place of its first statement."""
        src = self.src
        for owner, stmts in iter_blocks(tree):
            idx = [i for i, s in enumerate(stmts) if id(s) in drop]
            if not idx:
                continue
            emptied = len(idx) == len(stmts) and not isinstance(owner, ast.Module)
            for i in idx:
                s = stmts[i]
                first = first_line(s)
                if not self.owns_lines(first, s):
                    # Shares a line with other code (``try: import x``, ``a; b``):
                    # a pass keeps that line valid.
                    self.replace(src.start(s), src.end(s), "pass")
                    continue
                is_first = all(id(x) in drop for x in stmts[:i])
                is_last = all(id(x) in drop for x in stmts[i + 1:])
                col = len(src.indent(first))
                if emptied and i == idx[0]:
                    self.replace(src.line_start(first), src.line_start(first + 1),
                                 src.indent(first) + "pass" + src.ending(first))
                    if s.end_lineno > first:
                        self.spans.append((first + 1, s.end_lineno, False, True, col))
                else:
                    self.spans.append((first, s.end_lineno, is_first, is_last, col))

    def remove_items(self, stmt, items, gone, container=None):
        """Remove the items (aliases of an import, strings of a list) whose
        id() is in gone from a comma-separated sequence, keeping the layout:
        an item alone on its line loses the line, items sharing a line are
        rejoined with ", "."""
        src = self.src
        kept_all = [src.segment(it) for it in items if id(it) not in gone]
        if isinstance(container, ast.Tuple):
            bare = not src.segment(container).startswith("(")
            if bare or len(kept_all) == 1:
                # A tuple left with one item needs its comma, and a bare one
                # (``__all__ = "a", "b"``) is simplest rewritten whole.
                text = ", ".join(kept_all) + ("," if len(kept_all) == 1 else "")
                self.replace_node(container, text if bare else "(" + text + ")")
                return
        if items[0].lineno != items[-1].end_lineno and not self._bracketed(stmt, items[0]):
            # Lines joined by backslashes: rejoin what is left on one line.
            self.replace(src.start(items[0]), src.end(items[-1]), ", ".join(kept_all))
            return
        groups = []
        for it in items:
            if groups and it.lineno == it.end_lineno == groups[-1][-1].end_lineno == groups[-1][-1].lineno:
                groups[-1].append(it)
            else:
                groups.append([it])
        for group in groups:
            if not any(id(it) in gone for it in group):
                continue
            start, end = src.start(group[0]), src.end(group[-1])
            kept = [src.segment(it) for it in group if id(it) not in gone]
            if kept:
                self.replace(start, end, ", ".join(kept))
                continue
            a, b = group[0].lineno, group[-1].end_lineno
            head = src.text[src.line_start(a):start]
            tail = src.text[end:src.line_start(b + 1)]
            if kept_all and head.strip() == "" and re.fullmatch(r"\s*,?\s*(#.*)?\s*", tail):
                self.lines_gone.update(range(a, b + 1))
                self.replace(src.line_start(a), src.line_start(b + 1), "")
            else:
                m = re.match(r"\s*,[ \t]*", tail)
                self.replace(start, end + (m.end() if m else 0), "")

    def _bracketed(self, stmt, first_item):
        """Whether the items sit inside brackets (a list, a tuple, a from-import
        with parentheses) rather than on lines joined by backslashes."""
        if isinstance(stmt, ast.Import):
            return False
        if isinstance(stmt, ast.ImportFrom):
            return "(" in self.src.text[self.src.start(stmt):self.src.start(first_item)]
        return True

    def _tidy(self):
        """Line deletions for the spans plus the surplus blank lines around them.

        A run of deleted and blank lines keeps as many blank lines as the
        removal should leave: none at the start or end of the file, the gap
        before it when it began a block, the gap after it when it ended one,
        else the larger of the two, at most 2 at module level and 1 inside.
        Any of these counts makes the gold diff (masked -> original) a clean
        addition, since the blank lines are alike.
        """
        src = self.src
        n = len(src.lines)
        span_of = {}
        for sp in self.spans:
            for ln in range(sp[0], sp[1] + 1):
                span_of[ln] = sp
        gone = set()
        ln = 1
        while ln <= n:
            if ln not in span_of:
                ln += 1
                continue
            start = ln
            while start - 1 >= 1 and start - 1 not in span_of and start - 1 not in self.lines_gone and src.blank(start - 1):
                start -= 1
            last_del = ln
            j = ln
            while j + 1 <= n and (j + 1 in span_of or (j + 1 not in self.lines_gone and src.blank(j + 1))):
                j += 1
                if j in span_of:
                    last_del = j
            first_sp, last_sp = span_of[ln], span_of[last_del]
            before, after = ln - start, j - last_del
            blanks = [x for x in range(start, j + 1) if x not in span_of]
            if start == 1 or j == n:
                keep = 0
            elif last_sp[3]:
                keep = after
            elif first_sp[2]:
                keep = before
            else:
                # Module level (either side, or the statement after the run) allows 2.
                level = min(first_sp[4], last_sp[4], len(src.indent(j + 1)))
                keep = min(max(before, after), 2 if level == 0 else 1)
            gone.update(x for x in range(start, j + 1) if x in span_of)
            gone.update(blanks[keep:])
            ln = j + 1
        for a in sorted(gone):
            self.replace(src.line_start(a), src.line_start(a + 1), "")

    def apply(self):
        self._tidy()
        edits = sorted(self.edits, key=lambda e: (e[0], e[1]))
        text = self.src.text
        out = []
        pos = 0
        for start, end, repl in edits:
            if start < pos:
                fail(self.src.path, 0, "internal error: overlapping edits at offset %d" % start)
            out.append(text[pos:start])
            out.append(repl)
            pos = end
        out.append(text[pos:])
        return "".join(out)


# ---------------------------------------------------------------------------
# Modules and importers


def module_names(root, path):
    """Dotted names a file can be imported as: its full path, and every
    shorter suffix down to the top of its package (``src/pkg/m.py`` is
    ``src.pkg.m`` and ``pkg.m``)."""
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts:
        return set()
    # The package top: walk up while the folder holds __init__.py.
    top = len(parts) - 1
    d = os.path.dirname(path)
    while d and os.path.isfile(os.path.join(root, d, "__init__.py")):
        top -= 1
        d = os.path.dirname(d)
    if path.endswith("__init__.py"):
        top += 1
    top = max(0, min(top, len(parts) - 1))
    return {".".join(parts[i:]) for i in range(0, top + 1)}


def resolve_from(path, stmt):
    """The absolute module of a from-import in file path (relative imports
    resolved against the file's folder)."""
    if stmt.level == 0:
        return stmt.module or ""
    pkg = path.split("/")[:-1]
    up = stmt.level - 1
    if up > len(pkg):
        return None
    base = pkg[: len(pkg) - up]
    return ".".join(base + ([stmt.module] if stmt.module else []))


SKIP_DIRS = {".git", "build", "tests", "test", "__pycache__", "site-packages", "node_modules", "venv", ".venv",
             ".tox", ".nox", ".eggs", "dist-packages"}


def importer_candidates(root, protect):
    """Non-test .py files under root, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel = "" if rel == "." else rel + "/"
        keep = []
        for d in sorted(dirnames):
            if (d in SKIP_DIRS or d.endswith(".egg-info") or d.startswith(".")
                    or os.path.isfile(os.path.join(dirpath, d, "pyvenv.cfg"))
                    or os.path.islink(os.path.join(dirpath, d))):
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            if not f.endswith(".py") or f == "conftest.py" or f.startswith("test_") or f.endswith("_test.py"):
                continue
            p = rel + f
            if p not in protect and not os.path.islink(os.path.join(dirpath, f)):
                out.append(p)
    return sorted(out)


# ---------------------------------------------------------------------------
# Masking one file


class FileResult:
    """What the result says about one file."""

    def __init__(self, path):
        self.path = path
        self.removed = []
        self.dependents = []
        self.imports_removed = []
        self.all_removed = []


def remove_defs(src, units, deps):
    """Phase 1: delete the units' spans and the dependent statements;
    returns the new text."""
    ed = Editor(src)
    ed.drop_statements(src.tree, {id(d.node) for d in units} | {id(x.stmt) for x in deps})
    return ed.apply()


def clean_module(src, refs_before, all_names, importer_targets, own_path, res):
    """Phase 2: remove all_names from __all__, the from-imports of removed
    objects (importer_targets: module -> names), and imports that the removal
    left unused (referenced in refs_before, nowhere now)."""
    ed = Editor(src)
    tree = src.tree
    drop = set()
    gone_strings = []
    all_removed = []
    for st, c, how in all_containers(tree):
        if how == "append":
            if c.value in all_names:
                drop.add(id(st))
                gone_strings.append(c)
                all_removed.append(c.value)
            continue
        gone = [e for e in c.elts if _is_str(e) and e.value in all_names]
        if not gone:
            continue
        gone_strings += gone
        all_removed += [e.value for e in gone]
        if len(gone) == len(c.elts):
            if how == "augment":
                drop.add(id(st))
            else:
                ed.replace_node(c, "()" if isinstance(c, ast.Tuple) else "[]")
        else:
            ed.remove_items(st, c.elts, set(map(id, gone)), container=c)
    refs_after = referenced_names(tree, skip_strings=gone_strings)

    for st in sorted((n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))), key=pos):
        if isinstance(st, ast.ImportFrom) and st.module == "__future__" and st.level == 0:
            continue
        target = None
        if isinstance(st, ast.ImportFrom):
            mod = resolve_from(own_path, st)
            target = importer_targets.get(mod) if mod is not None else None
        gone = []
        for a in st.names:
            if a.name == "*":
                continue
            name = bound_name(st, a)
            if (target and a.name in target) or (name in refs_before and name not in refs_after):
                gone.append(a)
        if not gone:
            continue
        res.imports_removed += [describe_import(st, a) for a in gone]
        if len(gone) == len(st.names):
            keep = submodule_binding(tree, st, own_path, refs_after)
            if keep:
                ed.replace_node(st, keep)
            else:
                drop.add(id(st))
        else:
            ed.remove_items(st, st.names, set(map(id, gone)))
    ed.drop_statements(tree, drop)
    for n in all_removed:
        if n not in res.all_removed:
            res.all_removed.append(n)
    return ed.apply()


def submodule_binding(tree, st, own_path, refs_after):
    """In a package's __init__, `from .sub import x` binds sub too: the
    import sets the submodule on the package, whose namespace is the
    __init__'s. When code that stays uses sub and nothing else binds it
    (toolz.curried's `del exceptions` after `from .exceptions import
    merge`), the statement becomes `from . import sub` rather than going."""
    if not (isinstance(st, ast.ImportFrom) and st.level == 1 and st.module and own_path.endswith("__init__.py")):
        return None
    sub = st.module.split(".")[0]
    if sub not in refs_after:
        return None
    for n in ast.walk(tree):
        if n is st:
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == sub:
            return None
        if isinstance(n, (ast.Import, ast.ImportFrom)) and any(bound_name(n, a) == sub for a in n.names):
            return None
        if isinstance(n, DEFS) and n.name == sub:
            return None
    return "from . import %s" % sub


def reparse(path, text, what):
    try:
        return Source(path, text)
    except MaskError as e:
        raise MaskError("%s (after %s)" % (e, what))


def count_removed_lines(before, after):
    a = before.splitlines()
    b = after.splitlines()
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum(i2 - i1 for tag, i1, i2, _, _ in sm.get_opcodes() if tag in ("delete", "replace"))


# ---------------------------------------------------------------------------
# Interface descriptions


def header_lines(src, node):
    """Decorator and def/class header lines of node, verbatim, the last one cut
    after the header's colon."""
    first = first_line(node)
    lines = [src.line(n) for n in range(first, node.lineno)]
    # Tokenize from the keyword to find the colon that ends the header
    # (annotations and defaults hold colons only inside brackets).
    start = src.start(node)
    stop = src.start(node.body[0])
    seg = src.text[start:stop]
    depth = 0
    colon = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(seg).readline):
            if tok.type == tokenize.OP:
                if tok.string in ("(", "[", "{"):
                    depth += 1
                elif tok.string in (")", "]", "}"):
                    depth -= 1
                elif tok.string == ":" and depth == 0:
                    colon = tok.end
                    break
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    if colon is None:
        fail(src.path, node.lineno, "cannot find the end of the header")
    seg_lines = [ln.rstrip("\r") for ln in seg.split("\n")]
    head = seg_lines[: colon[0]]
    head[-1] = head[-1][: colon[1]]
    head[0] = src.line(node.lineno)[: len(src.indent(node.lineno))] + head[0]
    return lines + head


def shift(lines, old, new):
    """Re-indent lines: strip up to len(old) leading blanks, prefix new."""
    out = []
    for ln in lines:
        if ln.strip() == "":
            out.append("")
            continue
        lead = len(ln) - len(ln.lstrip(" \t"))
        out.append(new + ln[min(lead, len(old)):])
    return out


def docstring_node(node):
    body = node.body
    if body and isinstance(body[0], ast.Expr) and _is_str(body[0].value):
        return body[0]
    return None


def render_stub(src, d, children, level, out, points, gone=None):
    """Append the stub of Def d at nesting level to out; record where its
    docstring sits (or would go) in points. With gone (the ids of removed
    nodes), a class's other statements are kept whole, for level 2, where
    the agent sees nothing else of it."""
    node = d.node
    ind, body_ind = "    " * level, "    " * (level + 1)
    out += shift(header_lines(src, node), src.indent(first_line(node)), ind)
    doc = docstring_node(node)
    points.append({"id": format_id(src.path, d.qual, node.lineno), "qualname": d.qual, "kind": d.kind,
                   "docstring": ast.get_docstring(node, clean=True), "doc_line": len(out), "indent": body_ind})
    body_lines = 0
    if doc is not None:
        seg = src.segment(doc).split("\n")
        seg = [s.rstrip("\r") for s in seg]
        out += [body_ind + seg[0]] + shift(seg[1:], " " * doc.col_offset, body_ind)
        body_lines += 1
    kids = children.get(id(node), [])
    if isinstance(node, ast.ClassDef) and gone is not None:
        prev_def = False
        for st in node.body:
            kid = next((k for k in kids if k.node is st), None)
            if st is doc or (kid is None and id(st) in gone):
                continue
            if body_lines and (isinstance(st, DEFS) or prev_def):
                out.append("")
            prev_def = isinstance(st, DEFS)
            if kid is not None:
                render_stub(src, kid, children, level + 1, out, points, gone)
            else:
                lines = [src.line(n) for n in range(first_line(st), st.end_lineno + 1)]
                out += shift(lines, src.indent(first_line(st)), body_ind)
            body_lines += 1
        if not body_lines:
            out.append(body_ind + "pass")
        return
    if isinstance(node, ast.ClassDef):
        for st in node.body:
            simple = ((isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name))
                      or (isinstance(st, ast.Assign) and all(isinstance(t, ast.Name) for t in st.targets)))
            if simple:
                lines = [src.line(n) for n in range(st.lineno, st.end_lineno + 1)]
                out += shift(lines, src.indent(st.lineno), body_ind)
                body_lines += 1
    for k in kids:
        if body_lines:
            out.append("")
        render_stub(src, k, children, level + 1, out, points)
        body_lines += 1
    if not kids:
        out.append(body_ind + "# <your code>")


def interfaces(ids, cache, gone=None):
    """Stubs of the described objects, one per outermost enclosing def or
    class (the described methods of a class share their class's stub).
    gone: see render_stub."""
    described = set()
    groups = {}  # (path, line of the outermost def) -> (src, outermost Def)
    children = {}  # id(node) -> Defs rendered inside it
    for oid in ids:
        path, qual, line = parse_id(oid)
        if qual == MODULE_QUALNAME:
            fail(path, 0, "cannot describe module-level code (%s)" % oid)
        src, defs = cache(path)
        d = lookup(src, defs, oid, qual, line)
        described.add(format_id(path, qual, line))
        chain = d.parents + [d]
        groups.setdefault((path, chain[0].node.lineno), (src, chain[0]))
        for parent, child in zip(chain, chain[1:]):
            kids = children.setdefault(id(parent.node), [])
            if child not in kids:
                kids.append(child)
    for kids in children.values():
        kids.sort(key=lambda k: k.node.lineno)
    out = []
    for key in sorted(groups):
        src, top = groups[key]
        lines, points = [], []
        render_stub(src, top, children, 0, lines, points, gone)
        head = points[0]
        out.append({"id": head["id"], "path": src.path, "kind": top.kind, "qualname": top.qual,
                    "line": top.node.lineno, "described": head["id"] in described,
                    "docstring": head["docstring"], "code": "\n".join(lines) + "\n",
                    "doc_line": head["doc_line"], "indent": head["indent"],
                    "members": [p for p in points[1:] if p["id"] in described]})
    return out


# ---------------------------------------------------------------------------
# Level 2: the test file importing from agent_code, the honest reference
# solution (the original package vendored as agent_code) and the code the
# tests use that is not the feature.


class Level2Incomplete(Exception):
    """Level 2 needs removed objects the statement does not describe."""

    def __init__(self, need):
        super().__init__("the level 2 statement needs %s, which the feature removes and the statement does not describe"
                         " (%s)" % (need[0]["id"], need[0]["reached_by"]))
        self.need = need


class Level2Problem(Exception):
    """Why an instance cannot be made at level 2 (the level is dropped, not the candidate)."""


def package_roots(root, package):
    top = package.split(".")[0]
    cands = [".", "src", "lib"]
    try:
        cands += sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)) and not d.startswith("."))
    except OSError:
        pass
    out = []
    for c in cands:
        base = os.path.normpath(os.path.join(root, c))
        if (os.path.isdir(os.path.join(base, top)) or os.path.isfile(os.path.join(base, top + ".py"))) and base not in out:
            out.append(base)
    return out


class PackageFiles:
    """Where a top-level package's modules are, relative to the root."""

    def __init__(self, root, package):
        self.root, self.package = root, package
        roots = package_roots(root, package)
        if not roots:
            raise Level2Problem("the package %s is not in the repository" % package)
        self.base = os.path.relpath(roots[0], root).replace(os.sep, "/")
        self.base = "" if self.base == "." else self.base + "/"

    def file_of(self, dotted):
        """The file of module dotted (in the package), or None."""
        rel = self.base + dotted.replace(".", "/")
        for p in (rel + ".py", rel + "/__init__.py"):
            if os.path.isfile(os.path.join(self.root, p)):
                return p
        return None

    def module_of(self, path):
        rel = path[len(self.base):-3]
        parts = rel.split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        return ".".join(parts)

    def inside(self, dotted):
        return dotted == self.package or dotted.startswith(self.package + ".")

    def holds(self, rel):
        """Whether rel, a path from the root, is the package's folder or in it."""
        top = self.base + self.package
        return rel == top or rel.startswith(top + "/")


DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
BY_NAME = {"patch", "setattr", "delattr", "import_module", "__import__"}


def level2_rewrite(root, spec):
    """The test file with every name it imports from the package imported
    from agent_code instead (``from pkg.mod import x`` and ``pkg.mod.x``
    alike), and the names moved, as (name, module) pairs. The rewritten file
    may import nothing else from the package."""
    path = spec["test_file"]
    package = spec["package"]
    pf = PackageFiles(root, package)
    src, _ = read_source(root, path)

    def is_module(dotted):
        return pf.inside(dotted) and pf.file_of(dotted) is not None

    ed = Editor(src)
    tree = src.tree
    # A patch or import given a dotted path into the package by name
    # (mock's @patch('more_itertools.recipes.groupby'), monkeypatch.setattr,
    # importlib.import_module) acts on the original, not on agent_code,
    # whose layout is the agent's. (Other strings, such as a load_tests
    # hook's DocTestSuite('more_itertools.more'), which pytest never calls,
    # are left alone.)
    for node in ast.walk(tree):
        f = node.func if isinstance(node, ast.Call) else None
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if name in BY_NAME:
            for arg in node.args:
                if _is_str(arg) and DOTTED.match(arg.value) and pf.inside(arg.value):
                    raise Level2Problem("%s:%d names %s of the package in a string" % (path, node.lineno, arg.value))
    bind = {}  # local name -> dotted module it was imported as (modules of the package only)
    module_imports = []  # import statements that bind package modules
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(pf.inside(a.name) for a in node.names):
                if not all(pf.inside(a.name) for a in node.names):
                    raise Level2Problem("%s:%d imports the package with other modules in one statement" % (path, node.lineno))
                module_imports.append(node)
            for a in node.names:
                if pf.inside(a.name):
                    if a.asname:
                        bind[a.asname] = a.name
                    else:
                        bind[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and pf.inside(node.module):
            for a in node.names:
                if a.name == "*":
                    raise Level2Problem("%s:%d star-imports from %s" % (path, node.lineno, node.module))
                if is_module(node.module + "." + a.name):
                    bind[a.asname or a.name] = node.module + "." + a.name
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            # The tests' own helpers (cachetools: from . import
            # CacheTestMixin, in tests/__init__.py) stay as they are, when
            # they are not the package's and do not import it.
            target = resolve_from(path, node)
            if target is None or pf.holds(target.replace(".", "/")):
                raise Level2Problem("%s:%d has a relative import of the package" % (path, node.lineno))
            for f in helper_files(root, target, node):
                if imports_package(f, read_source(root, f)[0].tree, pf):
                    raise Level2Problem("%s:%d imports test code (%s) that imports %s" % (path, node.lineno, f, package))

    moved = []  # (name, module), in order

    def move(name, module):
        if (name, module) not in moved:
            moved.append((name, module))

    # from PKG.mod import x  ->  from agent_code import x. The modules it
    # binds go: every use of them is rewritten below (or is a problem).
    drop = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and pf.inside(node.module)):
            continue
        names = [a for a in node.names if not is_module(node.module + "." + a.name)]
        for a in names:
            move(a.name, node.module)
        if names:
            ed.replace_node(node, "from agent_code import " + ", ".join(src.segment(a) for a in names))
        else:
            drop.add(id(node))
        module_imports.append(node)
    drop.update(id(n) for n in module_imports if isinstance(n, ast.Import))

    def resolve(expr):
        if isinstance(expr, ast.Name):
            return bind.get(expr.id)
        if isinstance(expr, ast.Attribute):
            base = resolve(expr.value)
            return base + "." + expr.attr if base else None
        return None

    # mod.x, pkg.mod.x -> agent_code.x, outermost chain first; any other use
    # of a module of the package is a problem.
    replaced = [0]
    in_import = set()
    for node in module_imports:
        for sub in ast.walk(node):
            in_import.add(id(sub))

    def visit(node):
        if id(node) in in_import:
            return
        if isinstance(node, ast.Attribute):
            dotted = resolve(node.value)
            if dotted and is_module(dotted) and not is_module(dotted + "." + node.attr):
                if not isinstance(node.ctx, ast.Load):
                    raise Level2Problem("%s:%d assigns to %s.%s" % (path, node.lineno, dotted, node.attr))
                ed.replace_node(node, "agent_code." + node.attr)
                move(node.attr, dotted)
                replaced[0] += 1
                return
        if isinstance(node, ast.Name) and node.id in bind:
            raise Level2Problem("%s:%d uses the module %s itself, not a name in it" % (path, node.lineno, bind[node.id]))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    has_import = any(isinstance(st, ast.Import) and any(a.name == "agent_code" and not a.asname for a in st.names)
                     for st in tree.body)
    if replaced[0] and not has_import:
        body = tree.body
        i = 0
        if body and isinstance(body[0], ast.Expr) and _is_str(body[0].value):
            i = 1
        while i < len(body) and isinstance(body[i], ast.ImportFrom) and body[i].module == "__future__":
            i += 1
        if i < len(body) and id(body[i]) in drop and ed.owns_lines(first_line(body[i]), body[i]):
            # The package's import the rewrite drops makes way for agent_code's.
            drop.discard(id(body[i]))
            ed.replace_node(body[i], "import agent_code")
        elif i < len(body) and (i == 0 or first_line(body[i]) > body[i - 1].end_lineno):
            ln = first_line(body[i])
            ed.replace(src.line_start(ln), src.line_start(ln), "import agent_code" + src.ending(ln))
        elif i < len(body):
            ln = body[i - 1].end_lineno
            ed.replace(src.line_start(ln + 1), src.line_start(ln + 1), "import agent_code" + src.newline)
        else:
            end = len(src.text)
            sep = "" if src.text.endswith("\n") or not src.text else src.newline
            ed.replace(end, end, sep + "import agent_code" + src.newline)
    ed.drop_statements(tree, drop)
    text = ed.apply()
    reparse(path, text, "the level 2 rewrite")
    return text, moved


def rename_package(text, package, path):
    """text with the package's name replaced by agent_code wherever it
    starts a dotted name (imports and attribute chains; not strings)."""
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError) as e:
        raise Level2Problem("%s does not tokenize: %s" % (path, e))
    lines = re.findall(r"[^\n]*\n|[^\n]+$", text)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))
    edits = []
    prev = None
    for t in toks:
        if t.type in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            continue
        if t.type == tokenize.NAME and t.string == package and not (prev is not None and prev.string == "."):
            edits.append(starts[t.start[0] - 1] + t.start[1])
        prev = t
    out, pos = [], 0
    for off in edits:
        out.append(text[pos:off])
        out.append("agent_code")
        pos = off + len(package)
    out.append(text[pos:])
    return "".join(out)


def imported_modules(pf, path, tree):
    """The package's modules a file imports, absolute and relative."""
    mod = pf.module_of(path).split(".")
    pkg = mod if path.endswith("__init__.py") else mod[:-1]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names if pf.inside(a.name)]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                up = node.level - 1
                if up > len(pkg):
                    continue
                target = ".".join(pkg[:len(pkg) - up] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not pf.inside(target):
                continue
            out.append(target)
            out += [target + "." + a.name for a in node.names if pf.file_of(target + "." + a.name)]
    return out


def level2_vendor(root, pf, moved, cache):
    """The reference solution's files: the modules of the package that the
    moved names need, copied under agent_code/ (with the package's
    __init__, and every package on the way) and the package's name
    rewritten; __init__ also imports each moved name."""
    files = {}
    queue = [pf.package] + [m for _, m in moved]
    while queue:
        dotted = queue.pop()
        parts = dotted.split(".")
        for i in range(1, len(parts) + 1):
            sub = ".".join(parts[:i])
            p = pf.file_of(sub)
            if p is None or p in files:
                continue
            src, _ = cache(p)
            files[p] = src
            queue += imported_modules(pf, p, src.tree)
    out = []
    top = pf.file_of(pf.package)
    for p in sorted(files):
        src = files[p]
        rel = p[len(pf.base):]
        new = "agent_code/__init__.py" if rel == pf.package + ".py" else "agent_code" + rel[len(pf.package):]
        text = rename_package(src.text, pf.package, p)
        if p == top:
            by_module = {}
            for n, m in moved:
                if m != pf.package:
                    by_module.setdefault(m, []).append(n)
            extra = ["from agent_code%s import %s" % (m[len(pf.package):], ", ".join(ns)) for m, ns in sorted(by_module.items())]
            if extra:
                if text and not text.endswith("\n"):
                    text += src.newline
                text += src.newline.join(["", "# The names the level 2 tests import from agent_code."] + extra) + src.newline
        out.append({"path": new, "text": text})
    return out


BUILTINS = set(dir(__builtins__)) if not isinstance(__builtins__, dict) else set(__builtins__)


def bound_names(node):
    """Names bound inside node (arguments, assignments, imports, defs)."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            out.add(n.id)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, DEFS) and n is not node:
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
    return out


def free_names(node):
    loads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loads - bound_names(node) - BUILTINS


def binds(st, name):
    if isinstance(st, DEFS):
        return st.name == name
    if isinstance(st, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in st.targets)
    if isinstance(st, ast.AnnAssign):
        return isinstance(st.target, ast.Name) and st.target.id == name
    if isinstance(st, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name).split(".")[0] == name for a in st.names)
    # A module-level name bound in a compound statement (try: from .x
    # import f / except ImportError: f = ..., or an if on the Python
    # version) is the module's too: the whole statement binds it.
    if isinstance(st, (ast.If, ast.Try, ast.With) + TRY_STAR):
        blocks = [st.body, getattr(st, "orelse", []), getattr(st, "finalbody", [])]
        blocks += [h.body for h in getattr(st, "handlers", [])]
        return any(binds(x, name) for b in blocks for x in b)
    return False


TRY_STAR = (ast.TryStar,) if hasattr(ast, "TryStar") else ()


def level2_given(pf, moved, tops, units, cache):
    """The code the level 2 tests use that is not the feature: each moved
    name that is not described, with the module-level helpers and imports
    it needs, by module. A name that holds or needs removed code the
    statement does not describe is a problem."""
    described = set()
    for oid in tops:
        path, qual, _ = parse_id(oid)
        described.add((path, qual.split(".")[0]))
    removed = {}
    for path, us in units.items():
        for d in us:
            removed.setdefault(path, []).append(d.node)
    # Removed objects the level 2 statement needs but does not describe:
    # collection describes them and masks again (see undescribed_reached).
    need = {}  # id -> its record, the first reason kept

    def needs(path, node, why):
        """Records the removed units node is or holds; whether there are any."""
        found = False
        for d in units.get(path, []):
            if d.node is node or (node.lineno <= d.node.lineno and d.node.end_lineno <= node.end_lineno):
                oid = format_id(path, d.qual, d.node.lineno)
                need.setdefault(oid, {"id": oid, "reached_by": why})
                found = True
        return found

    def source_of(path, st):
        mod = pf.module_of(path).split(".")
        pkg = mod if path.endswith("__init__.py") else mod[:-1]
        if not st.level:
            return st.module or ""
        return ".".join(pkg[:len(pkg) - (st.level - 1)] + ([st.module] if st.module else []))

    def star_exports(module, name):
        # What "from module import *" binds: __all__ when the module
        # lists one, else its public names.
        p = pf.file_of(module)
        if p is None:
            return False
        sites = all_containers(cache(p)[0].tree)
        if sites:
            return any(c.value == name if how == "append" else any(_is_str(e) and e.value == name for e in c.elts)
                       for _, c, how in sites)
        return not name.startswith("_")

    def find(module, name, depth=0):
        path = pf.file_of(module)
        if path is None or depth > 20:
            return None
        src, _ = cache(path)
        found = None
        for st in src.tree.body:
            if binds(st, name):
                found = st
        if found is None:
            # A name a star import re-exports from a module of the
            # package (toolz's __init__: from .functoolz import *); the
            # last such import wins, as at run time.
            for st in reversed(src.tree.body):
                if isinstance(st, ast.ImportFrom) and any(a.name == "*" for a in st.names):
                    target = source_of(path, st)
                    if pf.inside(target) and star_exports(target, name):
                        b = find(target, name, depth + 1)
                        if b is not None:
                            return b
            return None
        if isinstance(found, ast.ImportFrom):
            a = next(a for a in found.names if (a.asname or a.name) == name)
            target = source_of(path, found)
            if pf.inside(target):
                if pf.file_of(target + "." + a.name):
                    return None  # a module, not a value
                return find(target, a.name, depth + 1)
        return path, src, found, name

    def package_module(path, name):
        """The module of the package that name is bound to at module level
        of path (from pkg import mod, import pkg.mod as m), or None."""
        src, _ = cache(path)
        found = None
        for st in src.tree.body:
            if isinstance(st, (ast.Import, ast.ImportFrom)) and binds(st, name):
                found = st
            elif binds(st, name):
                found = None
        if isinstance(found, ast.ImportFrom):
            a = next(a for a in found.names if (a.asname or a.name) == name)
            target = source_of(path, found)
            module = (target + "." + a.name) if target else a.name
            if pf.inside(target) and pf.file_of(module):
                return module
        elif isinstance(found, ast.Import):
            a = next(a for a in found.names if (a.asname or a.name).split(".")[0] == name)
            module = a.name if a.asname else a.name.split(".")[0]
            if pf.inside(module):
                return module
        return None

    given = {}  # path -> {id(stmt): stmt}
    imports = {}  # path -> [import lines]
    order = {}
    todo = []
    for name, module in moved:
        b = find(module, name)
        if b is None:
            raise Level2Problem("the tests import %s from %s, which is not a module-level name there" % (name, module))
        todo.append(b)
    # What the interfaces show names package code too: a described class's
    # base (cachetools' LRUCache(Cache)), a default (key=keys.hashkey), a
    # kept method's helper. Built from the statement alone, agent_code needs
    # it, so it is given like the tests' own imports.
    for path, name in shown_references(tops, cache, removed):
        module = pf.module_of(path)
        if not pf.inside(module):
            continue
        if isinstance(name, tuple):  # module.attr, module a package module
            target = module_binding(pf, path, cache(path)[0], name[0], source_of)
            b = find(target, name[1]) if target else None
            label = "%s.%s" % name
        else:
            b = find(module, name)
            label = name
        if b is None:
            continue
        if any(b[2] is node for node in removed.get(b[0], [])) and (b[0], b[3]) not in described:
            needs(b[0], b[2], "the level 2 statement shows %s (%s)" % (label, module))
            continue
        todo.append(b)
    while todo:
        path, src, st, name = todo.pop()
        if (path, name) in described:
            continue
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            a = next(a for a in st.names if (a.asname or a.name).split(".")[0] == name)
            if isinstance(st, ast.Import):
                line = "import " + src.segment(a)
            else:
                line = "from %s%s import %s" % ("." * st.level, st.module or "", src.segment(a))
            imports.setdefault(path, [])
            if line not in imports[path]:
                imports[path].append(line)
            continue
        if needs(path, st, "%s of %s, which level 2 uses, holds it" % (name, pf.module_of(path))):
            # Given whole, it would give away removed code: described, its
            # removed members are stubs in the interfaces instead.
            continue
        if id(st) in given.setdefault(path, {}):
            continue
        given[path][id(st)] = st
        for free in sorted(free_names(st)):
            mod = package_module(path, free)
            if mod is not None:
                # Shown as one module, the given code has no module of the
                # package to reach: jmespath's ParsedResult.search makes a
                # visitor.TreeInterpreter, which nothing gives.
                attrs = sorted({n.attr for n in ast.walk(st) if isinstance(n, ast.Attribute)
                                and isinstance(n.value, ast.Name) and n.value.id == free})
                use = "%s.%s" % (free, attrs[0]) if attrs else free
                raise Level2Problem("%s of %s, which the tests use, reaches the package's module %s as %s, which the statement does not give"
                                    % (name, pf.module_of(path), mod, use))
            b = find(pf.module_of(path), free)
            if b is None:
                continue
            if any(b[2] is node for node in removed.get(b[0], [])) and (b[0], free) not in described:
                needs(b[0], b[2], "%s, which the tests use, needs %s" % (name, free))
                continue
            todo.append(b)
    if need:
        raise Level2Incomplete(list(need.values()))
    seen = {}
    for path, stmts in given.items():
        for st in stmts.values():
            for n in ([st.name] if isinstance(st, DEFS) else [t.id for t in ast.walk(st) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)]):
                if seen.setdefault(n, path) != path:
                    raise Level2Problem("the code the tests use defines %s in both %s and %s" % (n, pf.module_of(seen[n]), pf.module_of(path)))
    out = []
    for path in sorted(set(given) | set(imports)):
        src, _ = cache(path)
        stmts = sorted(given.get(path, {}).values(), key=lambda s: s.lineno)
        code = []
        for st in stmts:
            code.append("\n".join(src.line(n) for n in range(first_line(st), st.end_lineno + 1)))
        rel_imports = [i for i in imports.get(path, []) if i.startswith("from .")]
        if rel_imports:
            raise Level2Problem("given code of %s needs a relative import: %s" % (pf.module_of(path), rel_imports[0]))
        if code or imports.get(path):
            out.append({"module": pf.module_of(path), "imports": imports.get(path, []), "code": code})
    return out


def helper_files(root, target, node):
    """The files a relative import of test code loads: the module it names
    and the names it imports that are modules."""
    base = target.replace(".", "/")
    out = []
    for stem in [base] + [base + "/" + a.name for a in node.names if a.name != "*"]:
        for cand in (stem + ".py", stem + "/__init__.py"):
            if os.path.isfile(os.path.join(root, cand)) and cand not in out:
                out.append(cand)
    return out


def imports_package(path, tree, pf):
    for n in ast.walk(tree):
        if isinstance(n, ast.Import) and any(pf.inside(a.name) for a in n.names):
            return True
        if isinstance(n, ast.ImportFrom):
            if n.level:
                mod = resolve_from(path, n)
                if mod is None or pf.holds(mod.replace(".", "/")):
                    return True
            elif n.module and pf.inside(n.module):
                return True
    return False


PRIVATE = re.compile(r"_(?!_)\w*$")


def unnamed_private_attributes(root, spec, out):
    """The private attributes (_set, not __len__) the level 2 test file uses
    that neither the interfaces nor the given code name: built from the
    statement alone, agent_code cannot have them (sortedcontainers'
    SortedSet tests compare with ss._set, an attribute __init__ makes).
    Attributes of modules the tests import from elsewhere (sys._getframe)
    are not the package's."""
    src, _ = read_source(root, spec["test_file"])
    others = set()
    for n in ast.walk(src.tree):
        if isinstance(n, ast.Import):
            others.update(bound_name(n, a) for a in n.names if a.name.split(".")[0] != spec["package"])
    used, own = set(), set()
    for n in ast.walk(src.tree):
        if isinstance(n, ast.Attribute) and PRIVATE.match(n.attr):
            if isinstance(n.ctx, ast.Store):
                own.add(n.attr)  # the tests' own (self._use_cache = ...)
            elif isinstance(n.value, ast.Attribute):
                # it._executor._shutdown: an attribute of what _executor
                # holds (a standard library object), not the package's.
                continue
            elif not (isinstance(n.value, ast.Name) and n.value.id in others):
                used.add(n.attr)
        elif isinstance(n, DEFS):
            own.add(n.name)
    used -= own
    text = "\n".join([i["code"] for i in out.get("level2_interfaces") or []] +
                     ["\n".join(g["imports"] + g["code"]) for g in out.get("level2_given") or []])
    return sorted(a for a in used if not re.search(r"(?<!\w)%s(?!\w)" % re.escape(a), text))


def shown_references(tops, cache, removed):
    """(path, name) for each free name, and (path, (module name, attr)) for
    each attribute of a free name, in what the level 2 interfaces of the
    described objects show: headers (decorators, bases, defaults,
    annotations) and, of a class, every statement the mask keeps (see
    render_stub); a described function's body is the agent's to write."""
    gone = {id(n) for nodes in removed.values() for n in nodes}
    nodes = {}  # path -> {id: node} of described defs
    tops_by_path = {}
    for oid in tops:
        path, qual, line = parse_id(oid)
        src, defs = cache(path)
        d = lookup(src, defs, oid, qual, line)
        nodes.setdefault(path, {})[id(d.node)] = d.node
        top = (d.parents + [d])[0].node
        tops_by_path.setdefault(path, {})[id(top)] = top

    def header(n):
        parts = list(n.decorator_list)
        if isinstance(n, ast.ClassDef):
            return parts + n.bases + [k.value for k in n.keywords]
        a = n.args
        parts += a.defaults + [x for x in a.kw_defaults if x is not None]
        parts += [x.annotation for x in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]
                  if x is not None and x.annotation is not None]
        return parts + ([n.returns] if n.returns is not None else [])

    def shown(n, described):
        parts = header(n)
        if isinstance(n, ast.ClassDef):
            doc = docstring_node(n)
            for st in n.body:
                if st is doc:
                    continue
                if id(st) in described:
                    parts += shown(st, described)
                elif id(st) not in gone:
                    parts.append(st)
        return parts

    out = []
    for path in sorted(tops_by_path):
        for top in sorted(tops_by_path[path].values(), key=lambda n: n.lineno):
            parts = shown(top, nodes[path])
            # Every part lies inside top, so what top binds anywhere
            # (arguments, locals, class attributes) is not a module name.
            local = bound_names(top) - {top.name}
            names, attrs = set(), set()
            for part in parts:
                for n in ast.walk(part):
                    if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and isinstance(n.value.ctx, ast.Load):
                        attrs.add((n.value.id, n.attr))
                    elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                        names.add(n.id)
            names -= local | BUILTINS
            out += [(path, n) for n in sorted(names)]
            out += [(path, a) for a in sorted(attrs) if a[0] not in local and a[0] not in BUILTINS]
    return out


def module_binding(pf, path, src, name, source_of):
    """The package module a module-level name of path is bound to by an
    import (from . import keys; import pkg.keys as keys), or None."""
    for st in src.tree.body:
        if isinstance(st, ast.ImportFrom):
            for a in st.names:
                if (a.asname or a.name) == name:
                    target = source_of(path, st) + "." + a.name
                    if pf.inside(target) and pf.file_of(target):
                        return target
        elif isinstance(st, ast.Import):
            for a in st.names:
                if a.asname == name and pf.inside(a.name) and pf.file_of(a.name):
                    return a.name
    return None


def level2_task(root, spec, tops, units, cache):
    """Everything level 2 needs, or the problem that stops it."""
    try:
        if "." in spec["package"]:
            raise Level2Problem("the package %s is not a top-level package" % spec["package"])
        text, moved = level2_rewrite(root, spec)
        if not moved:
            raise Level2Problem("the test file imports nothing from %s" % spec["package"])
        pf = PackageFiles(root, spec["package"])
        vendor = level2_vendor(root, pf, moved, cache)
        given = level2_given(pf, moved, tops, units, cache)
        names = [n for n, _ in moved]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise Level2Problem("the tests import %s from more than one module" % ", ".join(dup))
    except Level2Incomplete as e:
        return {"level2_problem": str(e), "level2_undescribed": e.need}
    except Level2Problem as e:
        return {"level2_problem": str(e)}
    return {"level2_test": text, "level2_names": names, "level2_vendor": vendor, "level2_given": given}


# ---------------------------------------------------------------------------
# Main


def removal_units(remove, protect, cache):
    """path -> the Defs to delete: the requested ones, their companions and
    the class-body defs that need them, without those nested in another
    (they go with it), by line; and path -> the class-body statements that
    go with them (see class_dependents)."""
    wanted = {}
    for oid in sorted(set(remove)):
        path, qual, line = parse_id(oid)
        if qual == MODULE_QUALNAME:
            fail(path, 0, "cannot remove module-level code (%s)" % oid)
        if path in protect:
            fail(path, 0, "%s is in a protected file" % oid)
        src, defs = cache(path)
        d = lookup(src, defs, oid, qual, line)
        found = wanted.setdefault(path, {})
        for x in [d] + companions(defs, d):
            found[id(x.node)] = x
    units = {}
    deps = {}
    for path, found in wanted.items():
        src, defs = cache(path)
        stmts = class_dependents(defs, found)
        check_total_ordering(src, defs, found)
        units[path] = sorted((d for d in found.values() if not any(id(p.node) in found for p in d.parents)),
                             key=lambda d: d.node.lineno)
        if stmts:
            deps[path] = stmts
    return units, deps


ORDERING = ("__lt__", "__le__", "__gt__", "__ge__")


def check_total_ordering(src, defs, found):
    """A functools.total_ordering class must keep one of the ordering
    methods it defines: without any, its import fails ("must define at
    least one ordering operation")."""
    for cls in defs:
        if not isinstance(cls.node, ast.ClassDef) or id(cls.node) in found:
            continue
        if not any((isinstance(x, ast.Name) and x.id == "total_ordering")
                   or (isinstance(x, ast.Attribute) and x.attr == "total_ordering") for x in cls.node.decorator_list):
            continue
        ops = [d for d in defs if d.parents and d.parents[-1] is cls and d.node.name in ORDERING]
        if ops and all(id(d.node) in found for d in ops):
            names = sorted({d.node.name for d in ops})
            # total_ordering's own choice among several: the greatest name.
            fail(src.path, cls.node.lineno, "removing %s leaves the functools.total_ordering class %s with no ordering"
                 " method, and its import would fail: keep '%s'" % (", ".join(names), cls.qual, max(names)))


class Dependent:
    """A class-body statement that goes with removed members: it names one
    of them (an alias, __or__ = union; a property built from a getter)."""

    def __init__(self, cls, stmt):
        self.cls, self.stmt = cls, stmt

    def record(self):
        names = sorted({n.id for t in assign_targets(self.stmt) for n in ast.walk(t)
                        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)})
        return {"class": self.cls.qual, "names": names, "start": self.stmt.lineno, "end": self.stmt.end_lineno}


def assign_targets(st):
    if isinstance(st, ast.Assign):
        return st.targets
    if isinstance(st, (ast.AnnAssign, ast.AugAssign)):
        return [st.target]
    return []


def class_scope_loads(node):
    """The names an expression loads in the scope it is evaluated in: a
    lambda's body and a comprehension's (but for its first iterable) run
    in a scope of their own, which does not see a class's names."""
    out = set()

    def visit(n):
        if isinstance(n, ast.Lambda):
            for x in n.args.defaults + [x for x in n.args.kw_defaults if x is not None]:
                visit(x)
            return
        if isinstance(n, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            visit(n.generators[0].iter)
            return
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            out.add(n.id)
        for c in ast.iter_child_nodes(n):
            visit(c)

    visit(node)
    return out


def def_time_loads(node):
    """The names a def or class statement loads where it stands:
    decorators, defaults, bases and keywords."""
    exprs = list(node.decorator_list)
    if isinstance(node, ast.ClassDef):
        exprs += node.bases + [k.value for k in node.keywords]
    else:
        exprs += node.args.defaults + [x for x in node.args.kw_defaults if x is not None]
    out = set()
    for e in exprs:
        out |= class_scope_loads(e)
    return out


def class_dependents(defs, found):
    """Class-body code that names a removed member goes with it, never left
    to fail or to find another object of that name: an alias (``__or__ =
    union``; ``bisect = bisect_right`` would bind the standard library's
    bisect_right that the module imports), any other simple statement
    (``x = property(get_x)``), and a def or class whose decorators,
    defaults or bases name it (singledispatchmethod's ``@f.register``);
    what they bind is removed in turn. A name still bound in the class
    before the use (a kept def of that name) is not removed.

    Defs are added to found; the statements are returned as Dependents."""
    by_node = {id(d.node): d for d in defs}
    out = []
    for cls in defs:
        if not isinstance(cls.node, ast.ClassDef) or id(cls.node) in found:
            continue
        if any(id(p.node) in found for p in cls.parents):
            continue
        if not any(d.parents and d.parents[-1] is cls and id(d.node) in found for d in defs):
            continue
        kept, gone = set(), set()

        def broken(names):
            return any(n in gone and n not in kept for n in names)

        def bind(names, removed):
            for n in names:
                if removed:
                    if n not in kept:
                        gone.add(n)
                else:
                    kept.add(n)

        def scan(stmts):
            for st in stmts:
                if isinstance(st, DEFS):
                    d = by_node.get(id(st))
                    removed = id(st) in found
                    if not removed and d is not None and broken(def_time_loads(st)):
                        found[id(st)] = d
                        removed = True
                    bind([st.name], removed)
                elif isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)):
                    loads = class_scope_loads(st.value) if st.value is not None else set()
                    if isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
                        loads.add(st.target.id)
                    names = [n.id for t in assign_targets(st) for n in ast.walk(t)
                             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
                    removed = broken(loads)
                    if removed:
                        out.append(Dependent(cls, st))
                    bind(names, removed)
                elif isinstance(st, (ast.Import, ast.ImportFrom)):
                    bind([bound_name(st, a) for a in st.names], False)
                else:
                    # if/try/with/for blocks of the class body are its scope too.
                    for block in child_blocks(st):
                        scan(block)

        scan(cls.node.body)
    return out


def importers(root, protect, targets, skip):
    """The files that may import a removed object: candidates whose text
    mentions one of the names (parsing every file would be slow)."""
    needles = [n.encode() for n in sorted(set().union(*targets.values()))]
    out = []
    for p in importer_candidates(root, protect):
        if p in skip:
            continue
        try:
            with open(os.path.join(root, p), "rb") as f:
                raw = f.read()
        except OSError:
            continue
        if b"import" in raw and any(n in raw for n in needles):
            out.append(p)
    return out


def mask_file(root, path, src, units, deps, targets):
    """The new text of one file and its FileResult."""
    res = FileResult(path)
    refs_before = referenced_names(src.tree)
    for d in units:
        res.removed.append({"id": format_id(path, d.qual, d.node.lineno), "start": d.first_line, "end": d.node.end_lineno})
    res.dependents = [x.record() for x in sorted(deps, key=lambda x: x.stmt.lineno)]
    cur = src
    if units:
        text = remove_defs(src, units, deps)
        cur = reparse(path, text, "removing " + ", ".join(r["id"] for r in res.removed))
    own = module_names(root, path)
    importer_targets = {m: ns for m, ns in targets.items() if m not in own}
    # Removed module-level objects leave __all__, and so do the names this
    # file imported from a removed object's module.
    all_names = {d.node.name for d in units if not d.parents}
    for st in ast.walk(cur.tree):
        if isinstance(st, ast.ImportFrom):
            ns = importer_targets.get(resolve_from(path, st), ())
            all_names.update(a.asname or a.name for a in st.names if a.name in ns)
    text = clean_module(cur, refs_before, all_names, importer_targets, path, res)
    reparse(path, text, "removing unused imports")
    return text, res


def undescribed_reached(root, protect, units, describe, written, all_removed, deps=None):
    """The removed objects the statement does not describe although code
    that stays reaches them by name: a retained module, a test file or
    __all__ names a removed function or class, or uses the name of a
    removed method of a class that stays (any dunder counts: Python calls
    it). Such an object must be described (or kept) for the statement to
    be complete. written maps the edited files to their new text."""
    described = set()
    for oid in describe:
        path, qual, _ = parse_id(oid)
        described.add((path, qual))
    todo = []
    for path, us in units.items():
        for d in us:
            quals = [d.qual] + [p.qual for p in d.parents]
            if any((path, q) in described for q in quals):
                continue
            todo.append((path, d))
    if not todo:
        return []
    names, attrs, where = set(), set(), {}
    files = sorted(set(importer_candidates(root, protect)) | set(protect) | set(written))
    for p in files:
        text = written.get(p)
        if text is None:
            try:
                text, _ = read_source(root, p)
                text = text.text
            except MaskError:
                continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                names.add(node.id)
                where.setdefault(("n", node.id), p)
            elif isinstance(node, ast.Attribute):
                attrs.add(node.attr)
                where.setdefault(("a", node.attr), p)
            elif isinstance(node, ast.alias):
                names.add(node.name.split(".")[-1])
                where.setdefault(("n", node.name.split(".")[-1]), p)
        for s in all_strings(tree):
            names.add(s.value)
            where.setdefault(("n", s.value), p)
    for p, gone in all_removed.items():
        for n in gone:
            # Public: its module listed it in __all__ (the mask took it out).
            names.add(n)
            where.setdefault(("n", n), "__all__ of " + p)
    # A class-body alias removed with a member (__or__ = union) reaches it
    # when what the alias bound is reached: a dunder, or a name code uses.
    via_alias = {}
    for path, ds in (deps or {}).items():
        for dep in ds:
            bound = dep.record()["names"]
            hit = [n for n in bound if (n.startswith("__") and n.endswith("__")) or n in names or n in attrs]
            if hit:
                for n in ast.walk(dep.stmt):
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                        via_alias.setdefault((path, dep.cls.qual + "." + n.id), "%s of %s, an alias that goes with it" % (hit[0], dep.cls.qual))
    out = []
    for path, d in todo:
        name = d.node.name
        method = bool(d.parents) and isinstance(d.parents[-1].node, ast.ClassDef)
        if (path, d.qual) in via_alias:
            out.append({"id": format_id(path, d.qual, d.node.lineno), "reached_by": via_alias[(path, d.qual)]})
        elif method and name.startswith("__") and name.endswith("__"):
            out.append({"id": format_id(path, d.qual, d.node.lineno), "reached_by": "Python itself (%s of a class that stays)" % name})
        elif not method and name in names:
            out.append({"id": format_id(path, d.qual, d.node.lineno), "reached_by": where[("n", name)]})
        elif name in attrs:
            out.append({"id": format_id(path, d.qual, d.node.lineno), "reached_by": where[("a", name)]})
    return out


def run(root, req):
    protect = set(req.get("protect_files") or [])
    level2 = req.get("level2")
    sources = {}

    def cache(path):
        if path not in sources:
            src, enc = read_source(root, path)
            sources[path] = (src, find_defs(src.tree), enc)
        return sources[path][:2]

    # Descriptions and the level 2 test come from the original sources.
    result_interfaces = interfaces(req.get("describe") or [], cache)
    units, deps = removal_units(req.get("remove") or [], protect, cache)
    level2_out = None
    if level2:
        level2_out = level2_task(root, level2, req.get("describe") or [], units, cache)
        if "level2_test" in level2_out:
            # From scratch, a class is given whole but for what is removed.
            gone = {id(d.node) for us in units.values() for d in us}
            level2_out["level2_interfaces"] = interfaces(req.get("describe") or [], cache, gone)
            unnamed = unnamed_private_attributes(root, level2, level2_out)
            if unnamed:
                level2_out = {"level2_problem": "the tests use the attribute %s, which the statement never names"
                                                % unnamed[0]}
    # Removed module-level names, under every module name their file goes by.
    targets = {}
    for path, us in units.items():
        top = {d.node.name for d in us if not d.parents}
        if top:
            for m in module_names(root, path):
                targets.setdefault(m, set()).update(top)
    todo = set(units)
    if targets:
        todo.update(importers(root, protect, targets, todo))

    files = []
    writes = []  # written only once every file is done, so an error leaves the tree as it was
    total_lines = 0
    functions = 0
    for path in sorted(todo):
        if path in sources:
            src, _, enc = sources[path]
        else:
            try:
                src, enc = read_source(root, path)
            except MaskError:
                continue  # an importer candidate that does not parse is not ours to judge
        us = units.get(path, [])
        functions += sum(1 for d in us if not isinstance(d.node, ast.ClassDef))
        text, res = mask_file(root, path, src, us, deps.get(path, []), targets)
        if text == src.text:
            continue
        writes.append((path, text, enc))
        total_lines += count_removed_lines(src.text, text)
        files.append({"path": path, "removed": res.removed, "dependents": res.dependents,
                      "imports_removed": res.imports_removed, "all_removed": res.all_removed})
    undescribed = undescribed_reached(root, protect, units, req.get("describe") or [], {p: t for p, t, _ in writes},
                                      {f["path"]: f["all_removed"] for f in files if f["all_removed"]}, deps)
    if level2_out:
        known = {u["id"] for u in undescribed}
        undescribed += [u for u in level2_out.pop("level2_undescribed", []) if u["id"] not in known]
    for path, text, enc in writes:
        write_text(root, path, text, enc)

    out = {"files": files, "lines": total_lines, "functions": functions, "interfaces": result_interfaces}
    if undescribed:
        out["undescribed"] = undescribed
    if level2_out:
        out.update(level2_out)
    return out


def main(argv):
    if sys.version_info < (3, 10):
        # ast.alias carries its position only from 3.10 on.
        sys.stderr.write("masker: needs Python 3.10 or newer, not %s\n" % sys.version.split()[0])
        return 2
    if len(argv) != 2:
        sys.stderr.write("usage: masker.py REQUEST.json\n")
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            req = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("%s: cannot read the request: %s\n" % (argv[1], e))
        return 2
    try:
        out = run(".", req)
    except MaskError as e:
        sys.stderr.write("masker: %s\n" % e)
        return 1
    sys.stdout.write(json.dumps(out, ensure_ascii=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
