"""featbench_audit: what code under test does that a feature's code has no
business doing, recorded into the harness's stream as it happens.

The runner imports this module, as the tests' user, before pytest or any
code of the repository, and calls install(fd, root, paths): an audit hook
(sys.addaudithook, which nothing can remove) then sees every audited event
of the process. An event is the prediction's when the innermost frame
that is not the standard library's belongs to the repository's code (under
root, not a test file) or to a --path folder (level 2's installed agent
code); events of pytest, the environment's packages and the tests are not
recorded. Each record is one JSON line on the stream's descriptor, written
at once with the os.write taken here, so that what the code under test
does afterwards cannot take it back:

    {"event": "audit", "kind": KIND, "what": EVENT, "at": "FILE:LINE", "target": ...}

Kinds: frames (sys._getframe, tracebacks' and generators' frames, other
threads' frames), tracing (sys.settrace, setprofile, sys.monitoring), code
(code objects made, functions made from code), code-swap (a function's
__code__ or defaults replaced: "target" says whose, "test" when it is a
test's), test-file (a test file opened), process (fork, exec, spawn,
subprocess), signal, gc (the collector's object lists), ctypes. The
harness compares them with what the gold patch's run recorded; a test's
code swapped or a test file opened is tampering whatever gold did.
This is detection, not prevention: code in the process can evade it (by
reaching a frame through a library's code, say); canary tests are the
first line.
"""

import json
import os
import sys

_LIMIT = 200  # records a run writes at most
_EACH = 3  # records of one kind at one place

_KIND = {
    "sys._getframe": "frames",
    "sys._current_frames": "frames",
    "sys._current_exceptions": "frames",
    "sys.settrace": "tracing",
    "sys.setprofile": "tracing",
    "sys.monitoring.register_callback": "tracing",
    "code.__new__": "code",
    "function.__new__": "code",
    "os.fork": "process",
    "os.forkpty": "process",
    "os.posix_spawn": "process",
    "os.spawn": "process",
    "os.exec": "process",
    "os.system": "process",
    "subprocess.Popen": "process",
    "os.kill": "signal",
    "os.killpg": "signal",
    "signal.pthread_kill": "signal",
    "gc.get_objects": "gc",
    "gc.get_referrers": "gc",
    "gc.get_referents": "gc",
}
# Attributes whose reading reaches a frame or code (object.__getattr__).
_FRAME_ATTRS = frozenset(("tb_frame", "f_back", "gi_frame", "cr_frame", "ag_frame", "f_globals", "f_locals", "f_code"))
_SWAP_ATTRS = frozenset(("__code__", "__defaults__", "__kwdefaults__"))


def _is_test(path):
    base = os.path.basename(path)
    if base == "conftest.py" or base.startswith("test_") or base.endswith("_test.py"):
        return True
    parts = path.split(os.sep)
    return "tests" in parts or "test" in parts or "testing" in parts


def install(fd, root, paths):
    import sysconfig

    root = os.path.join(os.path.abspath(root), "")
    agents = tuple(os.path.join(os.path.abspath(p), "") for p in paths)
    stdlib = []
    for key in ("stdlib", "platstdlib"):
        try:
            stdlib.append(os.path.join(sysconfig.get_paths()[key], ""))
        except Exception:
            pass
    stdlib = tuple(stdlib)
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")
    classes = {}  # co_filename -> "std", "env", "test", "pred"

    def classify(fn):
        c = classes.get(fn)
        if c is not None:
            return c
        if fn.startswith("<frozen ") or fn.startswith(stdlib):
            c = "std"
        elif fn.startswith(agents):
            c = "pred"
        elif fn.startswith(root) and not fn.startswith(here):
            c = "test" if _is_test(fn[len(root):]) else "pred"
        elif fn.startswith("<"):
            # Code made from a string: whoever made it, not the environment.
            c = "pred"
        else:
            c = "env"  # site-packages, the harness: where the tests cannot write
        if len(classes) < 100000:
            classes[fn] = c
        return c

    state = {"busy": False, "n": 0, "seen": {}}
    write, dumps, getframe = os.write, json.dumps, sys._getframe

    def owner(frame):
        # The innermost frame that is not the standard library's decides.
        while frame is not None:
            fn = frame.f_code.co_filename
            c = classify(fn)
            if c != "std":
                return c, fn, frame.f_lineno
            frame = frame.f_back
        return "std", "", 0

    def record(kind, what, frame, target=None):
        c, fn, line = owner(frame)
        if c != "pred":
            return
        at = "%s:%d" % (fn[len(root) :] if fn.startswith(root) else fn, line)
        key = (kind, at)
        n = state["seen"].get(key, 0)
        if n >= _EACH or state["n"] >= _LIMIT:
            return
        state["seen"][key] = n + 1
        state["n"] += 1
        line = {"event": "audit", "kind": kind, "what": what, "at": at[:300]}
        if target is not None:
            line["target"] = target[:300]
        try:
            write(fd, (dumps(line, sort_keys=True) + "\n").encode("utf-8", "replace"))
        except Exception:
            pass

    def hook(event, args):
        if state["busy"]:
            return
        kind = _KIND.get(event)
        target = None
        if kind is None:
            if event == "open":
                path = args[0] if args else None
                if not isinstance(path, str) or not path.endswith(".py"):
                    return
                path = os.path.abspath(path)
                if not path.startswith(root) or not _is_test(path[len(root) :]):
                    return
                kind, target = "test-file", path[len(root) :]
            elif event == "object.__getattr__":
                if len(args) < 2 or args[1] not in _FRAME_ATTRS:
                    return
                kind = "frames"
            elif event == "object.__setattr__":
                if len(args) < 2 or args[1] not in _SWAP_ATTRS:
                    return
                kind = "code-swap"
                code = getattr(args[0], "__code__", None)
                fn = getattr(code, "co_filename", "")
                target = "%s.%s" % (getattr(args[0], "__module__", "?"), getattr(args[0], "__qualname__", "?"))
                if fn.startswith(root) and _is_test(fn[len(root) :]):
                    target = "test " + target
            elif event.startswith("ctypes."):
                kind = "ctypes"
            else:
                return
        state["busy"] = True
        try:
            record(kind, event, getframe(1), target)
        except Exception:
            pass
        finally:
            state["busy"] = False

    sys.addaudithook(hook)
