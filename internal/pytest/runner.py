"""featbench_run: how FeatBench's harness starts pytest on code it does not trust.

Run as root with ``python3 -I featbench_run.py [options] -- PYTEST-ARGS``.
It forks; the child drops to an unprivileged user (it cannot change the
repository, pytest, the harness's files or this process), imports pytest,
the harness's plugin and the environment's own pytest plugins *before* the
working directory goes on sys.path (so files a prediction adds cannot
shadow them), and runs pytest with plugin autoloading off. The plugin's
stream goes to descriptor 3, a pipe this root process reads into a file
the child cannot open: what the plugin wrote cannot be taken back or
rewritten by the code under test. The exit status is the child's (128+N
for a signal).

Or, as root, ``python3 -I featbench_run.py --kill-user UID:GID``: kills
every process of that user, until none is left, and does nothing else.

Options:
  --user UID:GID      the unprivileged user the tests run as
  --stream PATH       where the plugin's stream is written (by this process)
  --cwd DIR           the working directory, put first on sys.path after the
                      imports, as ``python -m pytest`` would
  --path DIR          appended to sys.path (repeatable): after everything
                      else, so it cannot shadow a module
  --plugin-dir DIR    where featbench_pytest.py is
  --copy SRC DST      after pytest: copies the file SRC (the JUnit XML the
                      user wrote, in a folder engines cannot copy from) to
                      DST, never through a link, at most 64 MiB
  --audit ROOT        records what code of ROOT (the repository) or of a
                      --path folder does that code under test has no
                      business doing (featbench_audit.py, in --plugin-dir)

When pytest has exited, every process of the tests' user is killed (a
process the tests forked may hold the stream's pipe or rewrite the JUnit
XML), and only then is the rest of the stream read and the JUnit XML
copied. The stream's file ends with a line of this process's own, "end",
which counts the bytes the tests' side wrote before it, how pytest ended
(its exit status, or the signal that killed it) and how many processes
were left: nothing the tests write can come after it, or stand in for it.
"""

import json
import os
import signal
import sys
import threading
import time


def _parse(argv):
    opts = {"paths": [], "copy": []}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return opts, argv[i + 1 :]
        if i + 1 >= len(argv):
            break
        v = argv[i + 1]
        if a == "--user":
            uid, _, gid = v.partition(":")
            opts["uid"], opts["gid"] = int(uid), int(gid or uid)
        elif a == "--stream":
            opts["stream"] = v
        elif a == "--cwd":
            opts["cwd"] = v
        elif a == "--path":
            opts["paths"].append(v)
        elif a == "--plugin-dir":
            opts["plugin_dir"] = v
        elif a == "--audit":
            opts["audit"] = v
        elif a == "--copy" and i + 2 < len(argv):
            opts["copy"].append((v, argv[i + 2]))
            i += 1
        else:
            break
        i += 2
    sys.stderr.write("featbench_run: bad arguments %r\n" % (argv,))
    sys.exit(2)


def _child(opts, args, w):
    os.setgroups([])
    os.setgid(opts["gid"])
    os.setuid(opts["uid"])
    if w != 3:
        os.dup2(w, 3)
        os.close(w)
    # Not passed on to programs the tests start (a fork still has it: the
    # parent kills every process of the user once pytest has exited).
    os.set_inheritable(3, False)
    os.environ["FEATBENCH_STREAM_FD"] = "3"
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    os.environ.pop("PYTHONPATH", None)
    cwd = opts.get("cwd") or os.getcwd()
    os.chdir(cwd)
    # Only the standard library and site-packages are on sys.path now (-I):
    # what is imported here is the environment's, not the prediction's.
    sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != os.path.abspath(os.path.dirname(__file__))]
    if opts.get("plugin_dir"):
        sys.path.insert(0, opts["plugin_dir"])
    if opts.get("audit"):
        # Before pytest or any code of the repository is imported.
        import featbench_audit  # noqa: E402

        featbench_audit.install(3, opts["audit"], opts["paths"])
    import pytest  # noqa: E402

    import featbench_pytest  # noqa: E402

    plugins = [featbench_pytest]
    try:
        from importlib.metadata import entry_points

        eps = entry_points(group="pytest11")
    except Exception:  # pragma: no cover - very old importlib.metadata
        eps = []
    for ep in eps:
        try:
            plugins.append(ep.load())
        except Exception as e:  # an environment plugin that does not import
            sys.stderr.write("featbench_run: plugin %s does not load: %s\n" % (ep.name, e))
    if any(getattr(p, "__name__", "").startswith("pytest_cov") for p in plugins) and os.environ.get("COVERAGE_FILE"):
        # Said in the log: where the project's coverage goes instead.
        sys.stderr.write(
            "featbench_run: pytest-cov keeps its data in COVERAGE_FILE=%s (the tests' user cannot write %s)\n"
            % (os.environ["COVERAGE_FILE"], cwd)
        )
    if opts.get("plugin_dir"):
        sys.path.remove(opts["plugin_dir"])
    sys.path.insert(0, cwd)
    sys.path.extend(opts["paths"])
    sys.argv = ["pytest"] + args
    code = pytest.main(args, plugins=plugins)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(code))


def _copy(r, out, count):
    while True:
        try:
            chunk = os.read(r, 65536)
        except InterruptedError:
            continue
        except OSError:
            return
        if not chunk:
            return
        out.write(chunk)
        out.flush()
        count[0] += len(chunk)


def _user_pids(uid):
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat("/proc/" + name).st_uid == uid:
                pids.append(int(name))
        except OSError:
            pass
    return pids


def _kill_user(uid, gid):
    """Kills every process of the tests' user, as that user (kill -1 from
    inside reaches exactly the processes it may signal: its own), until
    none is left. Returns how many there were."""
    left = len(_user_pids(uid))
    for _ in range(50):
        if not _user_pids(uid):
            break
        pid = os.fork()
        if pid == 0:
            try:
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        while True:
            try:
                os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
            except ChildProcessError:
                break
        time.sleep(0.01)
    return left


def _full(d):
    try:
        st = os.statvfs(d)
    except OSError:
        return False
    return st.f_blocks > 0 and st.f_bavail * 100 < st.f_blocks


def _copy_file(src, dst, limit=64 << 20):
    # The user wrote src: a link there must not make root read elsewhere.
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        with open(dst, "wb") as out:
            left = limit
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                out.write(chunk)
                left -= len(chunk)
    finally:
        os.close(fd)


def main():
    if sys.argv[1:2] == ["--kill-user"] and len(sys.argv) == 3:
        # Only this: every process of the user, gone (the images need not
        # have a kill program; a shell's builtin kills once, not until
        # none is left).
        uid, _, gid = sys.argv[2].partition(":")
        sys.stdout.write("featbench_run: killed the %d processes of uid %s\n" % (_kill_user(int(uid), int(gid or uid)), uid))
        sys.exit(0)
    opts, args = _parse(sys.argv[1:])
    if "uid" not in opts or "stream" not in opts:
        sys.stderr.write("featbench_run: --user and --stream are required\n")
        sys.exit(2)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            _child(opts, args, w)
        except BaseException as e:  # never fall back into the parent's code
            try:
                sys.stderr.write("featbench_run: %s: %s\n" % (type(e).__name__, e))
                sys.stderr.flush()
            finally:
                os._exit(3)
    os.close(w)

    def forward(signum, _frame):
        try:
            os.kill(pid, signum)
        except OSError:
            pass

    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, forward)
    out = open(opts["stream"], "wb")
    count = [0]
    reader = threading.Thread(target=_copy, args=(r, out, count), daemon=True)
    reader.start()
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    # Nothing of the tests' user may outlive pytest: a process it forked
    # could hold the pipe, write lines after the end or rewrite the JUnit
    # XML once it is read. With every such process gone, the pipe's last
    # writer is gone and the stream is read to its end.
    left = _kill_user(opts["uid"], opts["gid"])
    reader.join(10)
    if reader.is_alive():
        sys.stderr.write("featbench_run: the stream did not end after the tests' processes were killed\n")
    # The stream's last line, root's: how many bytes the tests' side wrote
    # (a line the tests forged as this one is caught by its count), how
    # pytest ended, and whether the tests filled a folder they may write to.
    full = [d for d in ("/tmp", "/var/tmp", "/run/lock") if _full(d)]
    end = {
        "event": "end",
        "stream_bytes": count[0],
        "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "left": left,
        "disk_full": bool(full),
    }
    try:
        # On a line of its own even after a line the tests left unended.
        out.write(("\n" + json.dumps(end, sort_keys=True) + "\n").encode())
        out.flush()
    except ValueError:
        pass
    for src, dst in opts["copy"]:
        _copy_file(src, dst)
    sys.stdout.flush()
    if os.WIFSIGNALED(status):
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status))


if __name__ == "__main__":
    main()
