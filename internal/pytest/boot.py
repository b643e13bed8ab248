"""featbench_boot: run as root before every pytest run, given inline (-c).

    python3 -I -c BOOT --root DIR PATH=SHA256 [PATH=SHA256 ...] -- RUNNER-ARGS

Root is about to run the harness's runner, and the runner has the tests'
user import the harness's plugin: neither may be something the tests' user
could have written. So, before anything runs, every entry under DIR (the
harness's folder) must be a file or folder owned by root that no other user
may write, with no symbolic link anywhere; each PATH (the runner first, then
the plugin) must hash to its SHA256. Then the runner's bytes that were
hashed, not the file again, are run as __main__ with RUNNER-ARGS. Anything
else exits 86 (pytest never exits so) with one line saying what was found.
This code is given on the command line, so nothing in the container can
change it.
"""

import hashlib
import os
import stat
import sys


def _bad(msg):
    sys.stderr.write("featbench_boot: the harness's files were changed: %s\n" % msg)
    sys.stderr.flush()
    os._exit(86)


def _owned(path, st):
    if stat.S_ISLNK(st.st_mode):
        _bad("%s is a symbolic link" % path)
    if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
        _bad("%s is neither a file nor a folder" % path)
    if st.st_uid != 0:
        _bad("%s is owned by uid %d, not root" % (path, st.st_uid))
    if st.st_mode & 0o022:
        _bad("%s may be written by users other than root (mode %o)" % (path, stat.S_IMODE(st.st_mode)))


def _check_tree(root):
    _owned(root, os.lstat(root))
    for d, dirs, files in os.walk(root):
        for name in dirs + files:
            p = os.path.join(d, name)
            _owned(p, os.lstat(p))


def _read(path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as e:
        _bad("%s: %s" % (path, e.strerror))
    try:
        st = os.fstat(fd)
        _owned(path, st)
        chunks = []
        while True:
            c = os.read(fd, 1 << 20)
            if not c:
                break
            chunks.append(c)
        return b"".join(chunks)
    finally:
        os.close(fd)


def main():
    args = sys.argv[1:]
    if "--" not in args or len(args) < 4 or args[0] != "--root":
        _bad("bad arguments %r" % (args,))
    sep = args.index("--")
    root, wants, rest = args[1], args[2:sep], args[sep + 1 :]
    try:
        _check_tree(root)
    except OSError as e:
        _bad("%s: %s" % (root, e))
    runner = None
    for w in wants:
        path, _, want = w.rpartition("=")
        data = _read(path)
        if hashlib.sha256(data).hexdigest() != want:
            _bad("%s does not have the harness's content" % path)
        if runner is None:
            runner = (path, data)
    if runner is None:
        _bad("no runner given")
    path, data = runner
    sys.argv = [path] + rest
    code = compile(data, path, "exec")
    exec(code, {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__})


main()
