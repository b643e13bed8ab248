"""List the definitions of Python sources: functions, classes, methods.

Run as ``python3 -I pydefs.py REQUEST.json``; prints a JSON result on
stdout. The request is {"files": [{"key": str, "source": str}]}; the result
is {"files": [{"key": str, "error": str, "defs": [...]}]}, one entry per
request file in the same order. A definition is a def, async def or class
at module level or in a class body, including those under if, try, with,
for, while and match blocks; what a function defines inside itself is part
of that function. Each is

    {"name": "Outer.Inner.method", "kind": "function" | "method" | "class",
     "start": first line (its first decorator's), "end": last line,
     "line": the line of the def or class keyword,
     "signature": "def method(self, n: int = 1) -> str",
     "docstring": str or null, "hash": a digest of its syntax tree}

The hash covers the whole definition (decorators, signature, body) without
line numbers, so two versions of a definition have the same hash exactly
when their code is the same. Standard library only.
"""

import ast
import copy
import hashlib
import json
import sys


def signature(node):
    """The definition's header as Python writes it, without its body."""
    head = copy.copy(node)
    head.decorator_list = []
    head.body = [ast.Pass()]
    text = ast.unparse(head)
    first = text.split("\n", 1)[0]
    return first[:-1] if first.endswith(":") else first


def walk(body, prefix, in_class, out):
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = prefix + node.name
            if isinstance(node, ast.ClassDef):
                kind = "class"
            else:
                kind = "method" if in_class else "function"
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            out.append({
                "name": name,
                "kind": kind,
                "start": start,
                "end": node.end_lineno,
                "line": node.lineno,
                "signature": signature(node),
                "docstring": ast.get_docstring(node),
                "hash": hashlib.sha256(ast.dump(node).encode()).hexdigest()[:24],
            })
            if isinstance(node, ast.ClassDef):
                walk(node.body, name + ".", True, out)
            continue
        # Blocks that run where they stand: their definitions are the
        # enclosing scope's.
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                walk([n for n in inner if isinstance(n, ast.AST)], prefix, in_class, out)


def defs(source):
    tree = ast.parse(source)
    out = []
    walk(tree.body, "", False, out)
    return out


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        request = json.load(f)
    result = []
    for item in request["files"]:
        entry = {"key": item["key"], "error": "", "defs": []}
        try:
            entry["defs"] = defs(item["source"])
        except SyntaxError as e:
            entry["error"] = "line %s: %s" % (e.lineno, e.msg)
        except (ValueError, RecursionError, MemoryError) as e:
            entry["error"] = "%s: %s" % (type(e).__name__, e)
        result.append(entry)
    json.dump({"files": result}, sys.stdout)


if __name__ == "__main__":
    main()
