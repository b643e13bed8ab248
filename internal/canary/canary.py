"""featbench_canary: canary tests in a repository's fail-to-pass test files.

Run as root, with python3 -I, before pytest, once the tests are in place:

    python3 -I featbench_canary.py SPEC.json OUT.json

SPEC is {"root": DIR, "seed": N, "tests": [FUNC, ...], "sites": [SITE, ...]
or null, "max": K}. A FUNC is a test function's id without parameters,
"path::func" or "path::Class::func". A SITE is {"test": FUNC, "n": N,
"kind": "eq" | "match" | "raises", "alts": [...]}: the n-th mutable place of
the function (in source order) and, for "raises", the exception names a
canary may expect instead.

Every FUNC the file allows is renamed to a fresh name made of words of the
file's own tests, so that no name says which test is the dataset's. Then
canaries are added: for a site, a copy of its test under another fresh name
in which one expected value differs (an asserted constant changed, a
pytest.raises match changed by a letter, or another exception expected), so
that a correct implementation fails it. Of a pair, either may come first.
With "sites": null (derive), every site of every test gets canaries, two of
each "eq", one per "match", one per candidate exception of each "raises",
for gold to show which fail. Otherwise at most K of the given sites, drawn
with the seed, get one canary each, its mutation drawn too.

OUT gets {"tests": {FUNC: NEWFUNC}, "canaries": [{"id": CANARYFUNC, "twin":
FUNC, "site": SITE}], "skipped": {FUNC: why}}. The file is written mode 0600:
the tests' user cannot read which test is which. Exit status 0; 2 on a bad
spec, with a message.
"""

import ast
import json
import os
import random
import re
import sys

_ALTS = ("KeyError", "ZeroDivisionError", "FileNotFoundError", "UnicodeDecodeError", "RecursionError", "NotADirectoryError")
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _literal(node):
    """The value of a literal node (numbers, strings, bytes, booleans, and
    tuples or lists of them), else raises ValueError."""
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, (bool, int, float, str, bytes)) and not isinstance(v, complex):
            return v
        raise ValueError
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(node.operand, ast.Constant):
        v = node.operand.value
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v if isinstance(node.op, ast.USub) else v
        raise ValueError
    if isinstance(node, (ast.Tuple, ast.List)):
        vals = [_literal(e) for e in node.elts]
        return tuple(vals) if isinstance(node, ast.Tuple) else vals
    raise ValueError


def _is_literal(node):
    try:
        _literal(node)
        return True
    except ValueError:
        return False


def _is_raises(func):
    return (isinstance(func, ast.Attribute) and func.attr == "raises" and isinstance(func.value, ast.Name) and func.value.id == "pytest") or (
        isinstance(func, ast.Name) and func.id == "raises"
    )


def _body_nodes(fn):
    """The nodes of a function's body, not of functions, lambdas or classes
    defined inside it."""
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _scalar_nodes(node):
    """The scalar literal nodes of a literal, in order (a composite's
    elements, recursively)."""
    if isinstance(node, (ast.Tuple, ast.List)):
        out = []
        for e in node.elts:
            out += _scalar_nodes(e)
        return out
    return [node]


def sites_of(fn):
    """The mutable places of a test function, in source order: (kind, node)
    where node is what a canary replaces."""
    found = []
    for node in _body_nodes(fn):
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1 and isinstance(node.test.ops[0], ast.Eq):
            left, right = node.test.left, node.test.comparators[0]
            for side, other in ((right, left), (left, right)):
                if _is_literal(side) and not _is_literal(other) and _scalar_nodes(side):
                    found.append(("eq", side))
                    break
        elif isinstance(node, ast.Call) and _is_raises(node.func) and node.args:
            match = [k for k in node.keywords if k.arg == "match"]
            if match:
                v = match[0].value
                if isinstance(v, ast.Constant) and isinstance(v.value, str) and _letters(v.value):
                    found.append(("match", v))
            elif isinstance(node.args[0], (ast.Name, ast.Attribute)):
                found.append(("raises", node.args[0]))
    found.sort(key=lambda kn: (kn[1].lineno, kn[1].col_offset))
    return found


def _letters(pattern):
    """Places in a regular expression where a letter stands for itself."""
    out = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            j = pattern.find("}", i)
            i = j + 1 if j > 0 else len(pattern)
            continue
        if ch == "[" or pattern.startswith("(?", i):
            # In a character class, or a group's flags or name, a letter
            # may not stand for itself.
            j = pattern.find("]" if ch == "[" else ")", i)
            i = j + 1 if j > 0 else len(pattern)
            continue
        if ch.isascii() and ch.isalpha():
            out.append(i)
        i += 1
    return out


def _mutate(value, rng):
    """A value of the same kind that differs from value."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.choice((1, -1, 2, -2, 10))
    if isinstance(value, float):
        return value + rng.choice((0.5, 1.0, -1.0, 2.5))
    if isinstance(value, (str, bytes)):
        return _mutate_text(value, rng)
    if isinstance(value, (tuple, list)):
        items = list(value)
        if not items:
            items = [0]
        elif len(items) > 1 and rng.random() < 0.25:
            items.pop(rng.randrange(len(items)))
        else:
            i = rng.randrange(len(items))
            items[i] = _mutate(items[i], rng)
        return tuple(items) if isinstance(value, tuple) else items
    raise ValueError


def _mutate_text(s, rng):
    text = s.decode("latin-1") if isinstance(s, bytes) else s
    if not text:
        out = rng.choice(("a", " ", "0"))
    else:
        i = rng.randrange(len(text))
        ch = text[i]
        op = rng.choice(("replace", "replace", "delete", "double")) if len(text) > 1 else rng.choice(("replace", "double"))
        if op == "replace":
            pool = "0123456789" if ch.isdigit() else (_LETTERS.upper() if ch.isupper() else _LETTERS)
            new = rng.choice([c for c in pool if c != ch] or ["x"])
            out = text[:i] + new + text[i + 1 :]
        elif op == "delete":
            out = text[:i] + text[i + 1 :]
        else:
            out = text[:i] + ch + text[i:]
    return out.encode("latin-1") if isinstance(s, bytes) else out


def _mutate_match(pattern, rng):
    places = _letters(pattern)
    i = rng.choice(places)
    ch = pattern[i]
    pool = _LETTERS.upper() if ch.isupper() else _LETTERS
    new = rng.choice([c for c in pool if c.lower() != ch.lower()])
    return pattern[:i] + new + pattern[i + 1 :]


class _File:
    """One test file's text, parsed, with the edits to make."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            raw = f.read()
        self.text = raw.decode("utf-8")
        self.lines = self.text.splitlines(keepends=True)
        self.tree = ast.parse(raw, filename=path)
        self.vocab = sorted(self._words())
        self.taken = set(self._names())
        self.moves = {}  # first line (0-based) of a moved span -> its end (exclusive)
        self.inserts = {}  # line (0-based) -> [text, ...] to insert before it

    def _names(self):
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                yield node.name
            elif isinstance(node, ast.Name):
                yield node.id

    def _words(self):
        words = set()
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
                words.update(w for w in node.name.split("_") if w and w != "test" and w.isidentifier())
        if len(words) < 6:
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Name) and node.id.islower() and 2 < len(node.id) < 16:
                    words.update(w for w in node.id.split("_") if w)
        return words or {"case", "check", "value", "result", "basic", "more"}

    def fresh(self, rng):
        for _ in range(1000):
            k = rng.choice((1, 2, 2, 3))
            name = "test_" + "_".join(rng.choice(self.vocab) for _ in range(k))
            if name not in self.taken:
                self.taken.add(name)
                return name
        name = "test_%s_%d" % (rng.choice(self.vocab), rng.randrange(10**6))
        self.taken.add(name)
        return name

    def find(self, parts):
        """The def of path::[Class::]func, and the body holding it."""
        body, node = self.tree.body, None
        for i, name in enumerate(parts):
            last = i == len(parts) - 1
            hits = [n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef) if last else ast.ClassDef) and n.name == name]
            if len(hits) != 1:
                return None, None
            node = hits[0]
            if not last:
                body = node.body
        return node, body

    def span(self, node):
        first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
        return first, node.end_lineno  # 0-based start, exclusive end

    def after(self, node, body):
        """Lines where a def of body's scope may go, at or after node's end."""
        ends = [node.end_lineno]
        seen = False
        for stmt in body:
            if stmt is node:
                seen = True
                continue
            if seen and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                ends.append(stmt.end_lineno)
        return ends

    def source(self, start, end, new_name, old_name, def_line, edit=None):
        """The span's text with the def renamed and an optional (node,
        replacement) applied."""
        lines = list(self.lines[start:end])
        if edit is not None:
            node, repl = edit
            a, b = node.lineno - 1 - start, node.end_lineno - 1 - start
            head, tail = lines[a][: _col(lines[a], node.col_offset)], lines[b][_col(lines[b], node.end_col_offset) :]
            lines[a : b + 1] = [head + repl + tail]
        i = def_line - start
        lines[i] = _rename(lines[i], old_name, new_name)
        text = "".join(lines)
        if not text.endswith("\n"):
            text += "\n"
        return text

    def write(self):
        out = []
        skip_until = -1
        for i in range(len(self.lines) + 1):
            for text in self.inserts.get(i, ()):
                out.append(text)
            if i == len(self.lines):
                break
            if i in self.moves:
                skip_until = self.moves[i]
            if i < skip_until:
                continue
            out.append(self.lines[i])
        st = os.stat(self.path)
        tmp = self.path + ".featbench-canary"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("".join(out))
        os.chown(tmp, st.st_uid, st.st_gid)
        os.chmod(tmp, st.st_mode & 0o7777)
        os.replace(tmp, self.path)


def _col(line, col):
    """A byte column of ast as a character column of line."""
    return len(line.encode("utf-8")[:col].decode("utf-8", "replace"))


def _rename(line, old, new):
    out, n = re.subn(r"(\bdef\s+)" + re.escape(old) + r"\b", lambda m: m.group(1) + new, line, count=1)
    if n != 1:
        raise ValueError("cannot rename %s" % old)
    return out


def _like(source, value):
    """value written as the literal source is written (its quotes, and raw
    when it can be), so that nothing of its form says it was made."""
    if not isinstance(value, (str, bytes)):
        return repr(value)
    i = 0
    while i < len(source) and source[i] in "bBrRuU":
        i += 1
    prefix, rest = source[:i], source[i:]
    quote = rest[:3] if rest[:3] in ('"""', "'''") else rest[:1]
    if quote not in ('"', "'", '"""', "'''"):
        return repr(value)
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    if "r" in prefix.lower() and quote[0] not in text and not text.endswith("\\") and (len(quote) == 3 or "\n" not in text):
        return prefix + quote + text + quote
    r = repr(value)
    body = r[2:-1] if isinstance(value, bytes) else r[1:-1]
    used = r[-1]
    if used != quote[0]:
        if used == "'":
            body = body.replace("\\'", "'").replace(quote[0], "\\" + quote[0])
        else:
            body = body.replace(quote[0], "\\" + quote[0])
    prefix = prefix.replace("r", "").replace("R", "")
    return prefix + quote + body + quote


def _render(kind, node, src, rng, alt=None):
    """The canary's replacement of node (whose source is src), and the node
    it replaces: for a composite literal, one of its scalars."""
    if kind == "eq":
        scalar = rng.choice(_scalar_nodes(node))
        text = _segment(src, scalar)
        return scalar, _like(text, _mutate(_literal(scalar), rng))
    if kind == "match":
        return node, _like(_segment(src, node), _mutate_match(node.value, rng))
    return node, alt


def _segment(src, node):
    return ast.get_source_segment(src, node) or ""


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: featbench_canary.py SPEC.json OUT.json\n")
        sys.exit(2)
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    root = spec["root"]
    rng = random.Random(int(spec.get("seed", 0)))
    derive = spec.get("sites") is None
    tests = sorted(set(spec.get("tests") or ()))
    by_test = {}
    for s in spec.get("sites") or ():
        by_test.setdefault(s["test"], []).append(s)
    chosen = None
    if not derive:
        pool = [s for t in sorted(by_test) for s in sorted(by_test[t], key=lambda s: s["n"])]
        chosen = rng.sample(pool, min(len(pool), int(spec.get("max") or 16)))
    files, out = {}, {"tests": {}, "canaries": [], "skipped": {}}
    plans = []
    for t in tests:
        path, _, rest = t.partition("::")
        parts = rest.split("::")
        if not rest or any(not p.isidentifier() for p in parts):
            out["skipped"][t] = "not a test function's id"
            continue
        full = os.path.join(root, path)
        try:
            if full not in files:
                files[full] = _File(full)
            f = files[full]
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError) as e:
            out["skipped"][t] = "%s: %s" % (type(e).__name__, e)
            continue
        node, body = f.find(parts)
        if node is None:
            out["skipped"][t] = "no single def of it"
            continue
        plans.append((t, path, parts, f, node, body))
    for t, path, parts, f, node, body in plans:
        new = f.fresh(rng)
        start, end = f.span(node)
        out["tests"][t] = "::".join([path] + parts[:-1] + [new])
        sites = sites_of(node)
        wanted = []
        if derive:
            for n, (kind, _) in enumerate(sites):
                if kind == "eq":
                    wanted += [{"test": t, "n": n, "kind": kind}] * 2
                elif kind == "match":
                    wanted.append({"test": t, "n": n, "kind": kind})
                else:
                    for alt in _ALTS:
                        wanted.append({"test": t, "n": n, "kind": kind, "alts": [alt]})
        else:
            wanted = [s for s in chosen if s["test"] == t]
        copies = []
        for s in wanted:
            n = s["n"]
            if n >= len(sites) or sites[n][0] != s["kind"]:
                out["skipped"].setdefault(t, "site %d is not a %s place" % (n, s["kind"]))
                continue
            kind, target = sites[n]
            alt = None
            if kind == "raises":
                alts = [a for a in s.get("alts") or () if isinstance(a, str) and a.isidentifier()]
                if not alts:
                    continue
                alt = rng.choice(alts)
            cname = f.fresh(rng)
            text = f.source(start, end, cname, node.name, node.lineno - 1, _render(kind, target, f.text, rng, alt))
            site = {"test": t, "n": n, "kind": kind}
            if alt:
                site["alts"] = [alt]
            copies.append(text)
            out["canaries"].append({"id": "::".join([path] + parts[:-1] + [cname]), "twin": t, "site": site})
        real = f.source(start, end, new, node.name, node.lineno - 1)
        # The real test and its canaries, in a random order: the first
        # where the test was, each other one at a place of its scope after
        # it (where what its decorators name is defined, as for the test).
        group = [real] + copies
        rng.shuffle(group)
        f.moves[start] = end
        f.inserts.setdefault(start, []).append(group[0])
        places = f.after(node, body)
        gap = "\n" if body is not f.tree.body else "\n\n"  # PEP 8's blank lines, as around the others
        for text in group[1:]:
            f.inserts.setdefault(rng.choice(places), []).append(gap + text)
    for f in files.values():
        f.write()
    fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as w:
        json.dump(out, w, sort_keys=True)


if __name__ == "__main__":
    main()
