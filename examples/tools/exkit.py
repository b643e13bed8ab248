#!/usr/bin/env python3
"""Helpers for the example dataset scripts (make-instances.sh,
verify-instances.sh, evaluate.sh). Standard library only; running tests needs
a Python with pytest, chosen by the scripts.

Subcommands:
  strip ROOT SPEC...             remove a feature from the tree at ROOT
  collect DIR                    print every test node id of the tree at DIR
  run DIR ID...                  run tests, print {"id": {"passed", "error"}}
  stats BASE COMPLETE PATCH      print the gold statistics of PATCH
  instance ...                   print one instances.jsonl line (see --help)
  ids INSTANCES [SPLIT]          print the instance ids, all or one split's
  get INSTANCES ID FIELD         print a field (lists one item a line)
  expect INSTANCES ID STAGE DIR  check test outcomes at a stage of verification
  result ...                     print one results.jsonl line (see --help)
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent
PYTHON = os.environ.get("PYTHON", "python3")


def die(msg: str) -> None:
    print(f"exkit: {msg}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------- strip

def strip(root: Path, specs: list[str]) -> None:
    """Apply REMOVE specs: "path" deletes a file, "path:a,b" deletes the
    top-level definitions a and b (with their decorators) from it."""
    for spec in specs:
        rel, _, names = spec.partition(":")
        path = root / rel
        if not path.is_file():
            die(f"{spec}: no file {path}")
        if not names:
            path.unlink()
            continue
        wanted = set(names.split(","))
        src = path.read_text(encoding="utf-8")
        lines = src.splitlines(keepends=True)
        drop: set[int] = set()
        for node in ast.parse(src).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in wanted:
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                drop.update(range(start - 1, node.end_lineno))
                wanted.discard(node.name)
        if wanted:
            die(f"{spec}: no top-level definition {sorted(wanted)} in {rel}")
        text = "".join(line for i, line in enumerate(lines) if i not in drop)
        text = re.sub(r"\n{4,}", "\n\n\n", text).rstrip("\n") + "\n"
        path.write_text(text, encoding="utf-8")


# ---------------------------------------------------------------- tests

def collect(root: Path) -> list[str]:
    out = subprocess.run(
        [PYTHON, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=root, env=_test_env(), capture_output=True, text=True)
    ids = [l for l in out.stdout.splitlines() if "::" in l and not l.startswith(" ")]
    if out.returncode != 0:
        die(f"collecting tests in {root} failed:\n{out.stdout}{out.stderr}")
    return ids


def _test_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(HERE)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_tests(root: Path, ids: list[str]) -> dict[str, dict]:
    """Run the tests, one pytest process per test file (so that a file that
    fails to import does not stop the others), as `pytest -rA <ids>`.
    A test passed when its call phase passed and no phase failed. "error" is
    the type of the exception that made it fail: raised by the test itself,
    its setup, or the import of its file."""
    by_file: dict[str, list[str]] = {}
    for i in ids:
        by_file.setdefault(i.split("::")[0], []).append(i)
    result: dict[str, dict] = {}
    for file, group in by_file.items():
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
            out_path = tmp.name
        env = _test_env()
        env["EXKIT_OUTCOMES"] = out_path
        subprocess.run([PYTHON, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "-p", "pytest_outcomes", *group],
                       cwd=root, env=env, capture_output=True, text=True)
        try:
            data = json.loads(Path(out_path).read_text() or "{}")
        except (OSError, json.JSONDecodeError):
            data = {}
        finally:
            os.unlink(out_path)
        outcomes, errors = data.get("outcomes", {}), data.get("errors", {})
        for i in group:
            phases = outcomes.get(i, {})
            passed = phases.get("call") == "passed" and "failed" not in phases.values()
            err = None if passed else (errors.get(i) or errors.get(file))
            result[i] = {"passed": passed, "error": err}
    return result


# ---------------------------------------------------------------- patches

def patch_files(patch: str) -> list[str]:
    return re.findall(r"^diff --git a/(\S+) b/", patch, flags=re.M)


def patch_lines(patch: str) -> int:
    """Added plus removed lines, headers excluded."""
    n, in_hunk = 0, False
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            in_hunk = False
        elif line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line[:1] in ("+", "-"):
            n += 1
    return n


def _defs(path: Path) -> tuple[list[str], list[str]]:
    """Qualified names of all functions, and names of the top-level
    functions and classes, in source order."""
    if not path.is_file():
        return [], []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    funcs: list[str] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                funcs.append(prefix + child.name)
                walk(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                walk(child, prefix + child.name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    top = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return funcs, top


def stats(base: Path, complete: Path, patch: str) -> dict:
    files = patch_files(patch)
    functions, top = 0, []
    for f in files:
        if not f.endswith(".py"):
            continue
        bf, bt = _defs(base / f)
        cf, ct = _defs(complete / f)
        functions += len([x for x in cf if x not in bf])
        top += [x for x in ct if x not in bt]
    return {"lines": patch_lines(patch), "files": len(files), "functions": functions, "top_objects": top}


# ---------------------------------------------------------------- instances

def read_instances(path: Path) -> list[dict]:
    return [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]


def find_instance(path: Path, iid: str) -> dict:
    for inst in read_instances(path):
        if inst["instance_id"] == iid:
            return inst
    die(f"no instance {iid} in {path}")


def cmd_instance(a: argparse.Namespace) -> None:
    patch = Path(a.patch).read_text(encoding="utf-8")
    test_patch = Path(a.test_patch).read_text(encoding="utf-8")
    base, complete, tests_base = Path(a.base), Path(a.complete), Path(a.tests_base)
    before = set(collect(base))
    all_tests = collect(complete)
    added = [t for t in all_tests if t not in before]
    on_base = run_tests(tests_base, all_tests)
    on_complete = run_tests(complete, all_tests)
    f2p = [t for t in all_tests if not on_base[t]["passed"] and on_complete[t]["passed"]]
    p2p = [t for t in all_tests if on_base[t]["passed"] and on_complete[t]["passed"]]
    if f2p != added:
        die(f"{a.id}: the tests the test patch adds {added} are not exactly the fail-to-pass tests {f2p}")
    if len(f2p) + len(p2p) != len(all_tests):
        die(f"{a.id}: some tests fail on the complete project or break on the base")
    st = stats(base, complete, patch)
    inst = {
        "instance_id": a.id,
        "repo": "featbench/textkit",
        "base_commit": a.base_commit,
        "level": a.level,
        "problem_statement": Path(a.problem).read_text(encoding="utf-8"),
        "patch": patch,
        "test_patch": test_patch,
        "FAIL_TO_PASS": f2p,
        "PASS_TO_PASS": p2p,
        "image_name": "featbench/textkit:base",
        "repo_settings": {"python": "3.11", "install": "pip install -e .", "test_cmd": "pytest -rA"},
        "created_at": a.created_at,
        "lines": st["lines"],
        "files": st["files"],
        "functions": st["functions"],
        "f2p_test_points": len(f2p),
        "p2p_test_points": len(p2p),
        "top_objects": st["top_objects"],
    }
    print(json.dumps(inst, ensure_ascii=False))


def cmd_expect(a: argparse.Namespace) -> None:
    """Stages: "base" = base with the test patch (F2P fail, P2P pass);
    "complete" = with the patch too (all pass, and they are all the tests)."""
    inst = find_instance(Path(a.instances), a.id)
    root = Path(a.dir)
    f2p, p2p = inst["FAIL_TO_PASS"], inst["PASS_TO_PASS"]
    res = run_tests(root, f2p + p2p)
    bad = []
    if a.stage == "base":
        bad += [f"F2P passes on the base: {t}" for t in f2p if res[t]["passed"]]
        bad += [f"P2P fails on the base: {t} ({res[t]['error']})" for t in p2p if not res[t]["passed"]]
        modes = sorted({res[t]["error"] or "?" for t in f2p})
        print(f"  base: {len(f2p)} F2P fail ({', '.join(modes)}), {sum(res[t]['passed'] for t in p2p)} P2P pass")
    else:
        bad += [f"fails with the patch: {t} ({res[t]['error']})" for t in f2p + p2p if not res[t]["passed"]]
        every = collect(root)
        if sorted(every) != sorted(f2p + p2p):
            bad.append(f"F2P + P2P is not every test of the project: {sorted(set(every) ^ set(f2p + p2p))}")
        st = stats(Path(a.base), root, inst["patch"])
        for k, v in st.items():
            if inst[k] != v:
                bad.append(f"{k} is {inst[k]!r}, the patch gives {v!r}")
        if inst["f2p_test_points"] != len(f2p) or inst["p2p_test_points"] != len(p2p):
            bad.append("f2p_test_points/p2p_test_points do not match the test lists")
        print(f"  complete: {sum(res[t]['passed'] for t in f2p + p2p)}/{len(f2p + p2p)} pass; statistics match")
    if bad:
        die(f"{a.id}:\n  " + "\n  ".join(bad))


def cmd_result(a: argparse.Namespace) -> None:
    inst = find_instance(Path(a.instances), a.id)
    f2p, p2p = inst["FAIL_TO_PASS"], inst["PASS_TO_PASS"]
    pred = Path(a.prediction).read_text(encoding="utf-8") if a.prediction else ""
    applied = a.applied == "yes"
    res = run_tests(Path(a.dir), f2p + p2p) if applied else {}
    passed = lambda t: res[t]["passed"]
    r: dict = {
        "instance_id": a.id,
        "resolved": False,
        "patch_applied": applied,
        "f2p_passed": [t for t in f2p if applied and passed(t)],
        "f2p_failed": [t for t in f2p if applied and not passed(t)],
        "p2p_passed": [t for t in p2p if applied and passed(t)],
        "p2p_failed": [t for t in p2p if applied and not passed(t)],
        "files_changed": len(patch_files(pred)) if applied else 0,
    }
    r["resolved"] = applied and not r["f2p_failed"] and not r["p2p_failed"]
    if a.usage:
        for line in Path(a.usage).read_text(encoding="utf-8").splitlines():
            cols = line.split()
            if cols and cols[0] == a.id:
                r["tokens_in"], r["tokens_out"], r["cost"] = int(cols[1]), int(cols[2]), float(cols[3])
    if not applied:
        r["failure_modes"] = ["PatchApplyError"]
    elif not r["resolved"]:
        r["failure_modes"] = sorted({res[t]["error"] or "Unknown" for t in r["f2p_failed"] + r["p2p_failed"]})
    print(json.dumps(r, ensure_ascii=False))


def cmd_ids(a: argparse.Namespace) -> None:
    ids = [i["instance_id"] for i in read_instances(Path(a.instances))]
    if a.split:
        import tomllib
        manifest = tomllib.loads((Path(a.instances).parent / "dataset.toml").read_text(encoding="utf-8"))
        ids = next(s["instances"] for s in manifest["splits"] if s["name"] == a.split)
    print("\n".join(ids))


def cmd_get(a: argparse.Namespace) -> None:
    v = find_instance(Path(a.instances), a.id)[a.field]
    if isinstance(v, list):
        print("\n".join(map(str, v)))
    elif isinstance(v, str):
        sys.stdout.write(v)
    else:
        print(json.dumps(v))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("strip"); s.add_argument("root"); s.add_argument("specs", nargs="+")
    s = sub.add_parser("collect"); s.add_argument("dir")
    s = sub.add_parser("run"); s.add_argument("dir"); s.add_argument("ids", nargs="+")
    s = sub.add_parser("stats"); s.add_argument("base"); s.add_argument("complete"); s.add_argument("patch")
    s = sub.add_parser("instance")
    for f in ("id", "base-commit", "problem", "patch", "test-patch", "base", "complete", "tests-base", "created-at"):
        s.add_argument("--" + f, required=True)
    s.add_argument("--level", type=int, required=True)
    s = sub.add_parser("ids"); s.add_argument("instances"); s.add_argument("split", nargs="?")
    s = sub.add_parser("get"); s.add_argument("instances"); s.add_argument("id"); s.add_argument("field")
    s = sub.add_parser("expect")
    s.add_argument("instances"); s.add_argument("id"); s.add_argument("stage", choices=["base", "complete"])
    s.add_argument("dir"); s.add_argument("--base", help="the base tree, for the statistics")
    s = sub.add_parser("result")
    for f in ("instances", "id", "dir", "applied"):
        s.add_argument("--" + f, required=True)
    s.add_argument("--prediction"); s.add_argument("--usage")
    a = p.parse_args()
    if a.cmd == "strip":
        strip(Path(a.root), a.specs)
    elif a.cmd == "collect":
        print("\n".join(collect(Path(a.dir))))
    elif a.cmd == "run":
        print(json.dumps(run_tests(Path(a.dir), a.ids), indent=1))
    elif a.cmd == "stats":
        print(json.dumps(stats(Path(a.base), Path(a.complete), Path(a.patch).read_text(encoding="utf-8"))))
    else:
        {"instance": cmd_instance, "ids": cmd_ids, "get": cmd_get, "expect": cmd_expect, "result": cmd_result}[a.cmd](a)


if __name__ == "__main__":
    main()
