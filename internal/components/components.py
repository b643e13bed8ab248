"""Find the functions, classes and methods a change adds to Python files.

Run as ``python3 components.py REQUEST.json``. The request lists changes
(a pull request's code patch), each as the files it touches with their text
before and after (base64; null when the file does not exist on that side).
The script parses both sides with ast, and prints a JSON result on stdout:
per file, the definitions whose qualified name is new, with their
signature as written, docstring, span and the added lines they account
for. See internal/components/doc.go for the fields. A file that cannot be
decoded or parsed is reported in its result, not raised. Python 3.10 or
newer, standard library only; nothing of the repository is imported or run.
"""

import ast
import base64
import copy
import difflib
import io
import json
import sys
import tokenize

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class FileError(Exception):
    """A file that cannot be read as Python: reported, not raised."""


def decode(raw):
    """The file's text, decoded as Python decodes source (PEP 263)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        return raw.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError) as e:
        raise FileError("cannot be decoded: %s" % e)


def parse(text):
    try:
        return ast.parse(text)
    except SyntaxError as e:
        raise FileError("does not parse: %s (line %s)" % (e.msg, e.lineno or 0))
    except (ValueError, RecursionError, MemoryError) as e:
        raise FileError("does not parse: %s" % (str(e) or type(e).__name__))


def child_blocks(node):
    """The statement lists directly under a compound statement."""
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


def definitions(tree):
    """qualname -> (kind, [nodes]) for the defs and classes of a module:
    at module level and in class bodies, also under if, try, with, for,
    while and match blocks; never inside a function (a local def is not
    reachable by name)."""
    out = {}

    def visit(stmts, prefix, in_class):
        for st in stmts:
            if isinstance(st, DEFS):
                qual = prefix + st.name
                if isinstance(st, ast.ClassDef):
                    kind = "class"
                else:
                    kind = "method" if in_class else "function"
                entry = out.setdefault(qual, (kind, []))
                entry[1].append(st)
                if isinstance(st, ast.ClassDef):
                    visit(st.body, qual + ".", True)
            else:
                for block in child_blocks(st):
                    visit(block, prefix, in_class)

    visit(tree.body, "", False)
    return out


def first_line(node):
    return min([d.lineno for d in node.decorator_list] + [node.lineno])


class Text:
    def __init__(self, text):
        self.text = text
        # Only \n ends a line, as for ast.
        self.lines = text.split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()

    def line(self, n):
        return self.lines[n - 1].rstrip("\r") if 1 <= n <= len(self.lines) else ""


def header(src, node):
    """The def or class header as written, decorators included, up to the
    colon that ends it, dedented to the keyword's indentation."""
    start = first_line(node)
    kw = src.line(node.lineno)
    indent = kw[: len(kw) - len(kw.lstrip(" \t"))]
    # The header ends at the first ':' outside brackets after the keyword
    # (annotations and defaults may hold colons inside brackets: lambdas,
    # slices, dicts).
    lines = [src.line(n) + "\n" for n in range(node.lineno, node.end_lineno + 1)]
    it = iter(lines)
    depth, end = 0, None
    try:
        for tok in tokenize.generate_tokens(lambda: next(it, "")):
            if tok.type != tokenize.OP:
                continue
            if tok.string in "([{":
                depth += 1
            elif tok.string in ")]}":
                depth -= 1
            elif tok.string == ":" and depth == 0:
                end = tok.end
                break
    except (tokenize.TokenError, SyntaxError, IndentationError):
        end = None
    if end is None:
        # Unreachable for code ast parsed; kept as a safe answer.
        stub = ast.parse(ast.unparse(node).split("\n")[0] + "\n    ...").body[0]
        return ast.unparse(stub).rsplit("\n", 1)[0]
    row, col = end
    out = [src.line(n) for n in range(start, node.lineno)]
    body = [src.line(node.lineno + i) for i in range(row)]
    body[-1] = body[-1][:col]
    out += body
    text = []
    for ln in out:
        ln = ln.rstrip()
        if ln.startswith(indent):
            ln = ln[len(indent):]
        if ln.lstrip().startswith("#") or not ln.strip():
            continue  # comments and blank lines between decorators
        text.append(ln)
    return "\n".join(text)


def is_overload(node):
    for d in node.decorator_list:
        if (isinstance(d, ast.Name) and d.id == "overload") or (isinstance(d, ast.Attribute) and d.attr == "overload"):
            return True
    return False


def docstring(nodes):
    """The docstring of the implementation (an overload stub's last)."""
    for n in sorted(nodes, key=lambda n: (is_overload(n), -n.lineno)):
        d = ast.get_docstring(n, clean=True)
        if d is not None:
            return d
    return None


def fingerprint(node):
    """The definition's code without its name and docstring: equal for a
    def moved to another class or renamed with its body unchanged."""
    clone = copy.deepcopy(node)
    clone.name = "_"
    body = clone.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:] or [ast.Pass()]
    clone.body = body
    return ast.dump(clone)


def added_and_removed(before, after):
    """The after-file's added line numbers (1-based) and the count of
    removed lines, by difflib's line diff."""
    sm = difflib.SequenceMatcher(None, before, after, autojunk=False)
    added, removed = set(), 0
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag in ("replace", "insert"):
            added.update(range(j1 + 1, j2 + 1))
        if tag in ("replace", "delete"):
            removed += i2 - i1
    return added, removed


def side(raw):
    if raw is None:
        return None
    return Text(decode(base64.b64decode(raw)))


def analyse(change):
    files = []
    parsed = []  # (result, before defs, after defs, after Text)
    for f in change.get("files") or []:
        res = {"path": f["path"], "added": 0, "removed": 0, "component_lines": 0, "components": []}
        files.append(res)
        try:
            before = side(f.get("before"))
        except FileError as e:
            before, res["error"] = None, "before the change: %s" % e
        try:
            after = side(f.get("after"))
        except FileError as e:
            after, res["error"] = None, "after the change: %s" % e
        if "error" in res:
            continue
        added, removed = added_and_removed(before.lines if before else [], after.lines if after else [])
        res["added"], res["removed"] = len(added), removed
        try:
            bdefs = definitions(parse(before.text)) if before else {}
        except FileError as e:
            res["error"] = "before the change: %s" % e
            continue
        try:
            adefs = definitions(parse(after.text)) if after else {}
        except FileError as e:
            res["error"] = "after the change: %s" % e
            continue
        parsed.append((res, bdefs, adefs, after, added))
    # Definitions that went away anywhere in the change, by fingerprint,
    # to tell a moved or renamed def from a new one.
    gone = {}
    for res, bdefs, adefs, _, _ in parsed:
        for qual, (kind, nodes) in bdefs.items():
            if qual not in adefs:
                for n in nodes:
                    try:
                        gone.setdefault(fingerprint(n), "%s::%s" % (res["path"], qual))
                    except (RecursionError, SyntaxError, ValueError):
                        pass
    for res, bdefs, adefs, after, added in parsed:
        counted = set()
        for qual, (kind, nodes) in adefs.items():
            if qual in bdefs:
                continue
            spans = sorted((first_line(n), n.end_lineno) for n in nodes)
            lines = set()
            for s, e in spans:
                lines.update(n for n in range(s, e + 1) if n in added)
            same = ""
            for n in nodes:
                try:
                    same = gone.get(fingerprint(n), "")
                except (RecursionError, SyntaxError, ValueError):
                    same = ""
                if same:
                    break
            sigs = []
            for n in sorted(nodes, key=lambda n: n.lineno):
                h = header(after, n)
                if h not in sigs:
                    sigs.append(h)
            comp = {
                "name": qual, "kind": kind, "signature": "\n".join(sigs),
                "docstring": docstring(nodes), "line": min(n.lineno for n in nodes),
                "spans": [list(s) for s in spans], "lines": len(lines),
            }
            if same:
                comp["same_as"] = same
            else:
                counted |= lines
            res["components"].append(comp)
        res["components"].sort(key=lambda c: (c["line"], c["name"]))
        res["component_lines"] = len(counted)
    return {"id": change.get("id", ""), "files": files}


def main(argv):
    if sys.version_info < (3, 9):
        sys.stderr.write("components: needs Python 3.9 or newer, not %s\n" % sys.version.split()[0])
        return 2
    if len(argv) != 2:
        sys.stderr.write("usage: components.py REQUEST.json\n")
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            req = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("%s: cannot read the request: %s\n" % (argv[1], e))
        return 2
    try:
        out = {"changes": [analyse(c) for c in req.get("changes") or []]}
    except (KeyError, TypeError, ValueError) as e:
        sys.stderr.write("%s: malformed request: %s\n" % (argv[1], e))
        return 2
    sys.stdout.write(json.dumps(out, ensure_ascii=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
