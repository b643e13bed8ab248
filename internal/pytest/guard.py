"""featbench_guard: puts a repository's test infrastructure back as its last
commit has it, before the harness runs pytest on a prediction.

Run as root with ``python3 -I featbench_guard.py ROOT [TEST-FILE ...]``
(the instance's test files, whatever their names), in a repository
whose HEAD is the task's starting point (the harness commits it). Every file
pytest or Python reads before or besides the code under test is the
dataset's: each conftest.py, pytest configuration (pytest.ini, .pytest.ini,
tox.ini, setup.cfg, pyproject.toml), test file, file under a test folder,
sitecustomize.py, usercustomize.py and .pth file, and any top-level module
named like a module of the standard library or of site-packages (the
working directory comes first on sys.path, so such a file would shadow it).
Ones the commit has are restored when changed, removed or replaced by a
link; ones it lacks are removed. Compiled files (__pycache__) go too: a
prediction could ship one that does not match its source. Prints one line
per path it restored or removed.
"""

import hashlib
import os
import pkgutil
import shutil
import site
import subprocess
import sys

CONFIG = {
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "sitecustomize.py",
    "usercustomize.py",
}
TEST_DIRS = {"tests", "test"}
PROTECTED = {"pytest", "_pytest", "pluggy", "py", "featbench_pytest", "featbench_run", "featbench_guard"}


def shadowed_names():
    names = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names) | PROTECTED
    for m in pkgutil.iter_modules(site.getsitepackages()):
        names.add(m.name)
    return names


def infra(path, shadow, tracked_tops, tests):
    if path in tests:
        return True
    parts = path.split("/")
    base = parts[-1]
    if base in CONFIG or base.endswith(".pth") or "__pycache__" in parts:
        return True
    if base.endswith(".py") and (base.startswith("test_") or base.endswith("_test.py")):
        return True
    if any(p in TEST_DIRS for p in parts[:-1]):
        return True
    # A new top-level module named like one Python would otherwise import;
    # the repository's own top-level names are its code.
    top = parts[0]
    if top in tracked_tops:
        return False
    if top.endswith(".py"):
        top = top[:-3]
    return top in shadow


def git(root, *args, data=None):
    env = dict(os.environ, GIT_LITERAL_PATHSPECS="1")
    return subprocess.run(["git", "-C", root] + list(args), input=data, stdout=subprocess.PIPE, check=True, env=env).stdout


def blob(path):
    with open(path, "rb") as f:
        data = f.read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def main():
    root = sys.argv[1]
    tests = set(sys.argv[2:])
    shadow = shadowed_names()
    head = {}
    for entry in git(root, "ls-tree", "-r", "-z", "HEAD").split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        mode, _, sha = meta.decode().split(" ")
        head[name.decode("utf-8", "surrogateescape")] = (mode, sha)
    tops = {p.split("/")[0] for p in head}

    def is_infra(rel):
        return infra(rel, shadow, tops, tests)
    restore, remove = [], []
    for dirpath, dirs, files in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        if rel_dir == "":
            dirs[:] = [d for d in dirs if d != ".git"]
        for d in list(dirs):
            full = os.path.join(dirpath, d)
            rel = rel_dir + d
            if os.path.islink(full) or d == "__pycache__":
                # A link to a folder is walked by nobody else; a link under
                # the repository could point pytest anywhere.
                dirs.remove(d)
                remove.append(rel)
                if os.path.islink(full) and rel in head:
                    restore.append(rel)
        for name in files:
            rel = rel_dir + name
            full = os.path.join(dirpath, name)
            if not is_infra(rel):
                continue
            want = head.get(rel)
            if want is None:
                remove.append(rel)
            elif os.path.islink(full) or want[0] not in ("100644", "100755") or blob(full) != want[1]:
                remove.append(rel)
                restore.append(rel)
    for rel, (mode, _) in head.items():
        if is_infra(rel) and not os.path.lexists(os.path.join(root, rel)):
            restore.append(rel)
    for rel in remove:
        full = os.path.join(root, rel)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full)
        else:
            os.unlink(full)
        if rel not in restore:
            print("removed %s" % rel)
    if restore:
        git(root, "checkout", "-q", "HEAD", "--pathspec-from-file=-", "--pathspec-file-nul",
            data="\0".join(restore).encode("utf-8", "surrogateescape"))
        for rel in restore:
            print("restored %s" % rel)


if __name__ == "__main__":
    main()
