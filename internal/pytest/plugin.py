"""featbench_pytest: the pytest plugin FeatBench's harness runs tests with.

Load it with ``-p featbench_pytest`` (this file, named featbench_pytest.py,
in a folder on PYTHONPATH). It does three things and changes no outcome:

1. Records into each test's JUnit XML <properties> (written for every
   junit_family) the exact node id (``featbench_nodeid``), and for every
   phase that raised, the exception's type name (``featbench_exc_setup``,
   ``featbench_exc_call``, ``featbench_exc_teardown``), plus the xfail reason
   (``featbench_wasxfail``) so that an unexpected pass, which JUnit writes
   as a plain pass, can be told apart. JUnit's classname/name pair cannot be
   turned back into a node id; the property makes matching exact.
2. Streams one JSON object a line to ``--featbench-jsonl=PATH`` (or the file
   named by $FEATBENCH_PYTEST_JSONL), flushed after each line: pytest writes
   its XML only when the session ends, so a run killed by a timeout keeps
   the results of the tests that finished only here.
3. ``--featbench-id=NODEID`` (repeatable) keeps exactly those tests and
   deselects the rest: with pytest's own positional node ids, one id that
   does not exist (a test the prediction renamed) stops the whole run.

Exception types are the class's __name__, with two refinements: a failure
raised by pytest-timeout is "Timeout" (it is pytest's Failed otherwise), and
a collection error is the type of the import error behind pytest's
CollectError. Python 3.9+, standard library and pytest only.
"""

import json
import os
import re
import sys
import types

import pytest

NODEID = "featbench_nodeid"
EXC = "featbench_exc_"
WASXFAIL = "featbench_wasxfail"
ENV_JSONL = "FEATBENCH_PYTEST_JSONL"
# A descriptor the harness opened (a pipe to a process the tests cannot
# reach): the stream goes there rather than to a file they could rewrite.
ENV_FD = "FEATBENCH_STREAM_FD"

# pytest-timeout's signal method ends a test with pytest.fail("Timeout >1.0s").
_TIMEOUT_MESSAGE = re.compile(r"Timeout >\d+(\.\d+)?s\Z")
_MAX_MESSAGE = 2000


def pytest_addoption(parser):
    group = parser.getgroup("featbench", "FeatBench evaluation")
    group.addoption(
        "--featbench-jsonl",
        dest="featbench_jsonl",
        default=None,
        metavar="PATH",
        help="write one JSON line per test report to PATH (default $%s)" % ENV_JSONL,
    )
    group.addoption(
        "--featbench-id",
        dest="featbench_ids",
        action="append",
        default=[],
        metavar="NODEID",
        help="run only the tests with exactly this node id (repeatable)",
    )


def pytest_configure(config):
    path = config.getoption("featbench_jsonl") or os.environ.get(ENV_JSONL) or None
    fd = os.environ.get(ENV_FD)
    rec = _Recorder(config, path, int(fd) if fd and fd.isdigit() else None)
    config.pluginmanager.register(rec, "featbench_recorder")
    rec._guard = getattr(config, "_featbench_guard", None)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    # pytest has imported its own modules; no conftest.py, and so no code of
    # the repository, has run yet: the snapshot of the machinery is clean.
    early_config._featbench_guard = _Guard(early_config.pluginmanager)
    yield


class _Recorder:
    def __init__(self, config, path, fd=None):
        self._ids = set(config.getoption("featbench_ids") or ())
        self._out = None
        self._guard = None
        self._made = set()  # (nodeid, when) of the reports makereport made
        if fd is not None and not hasattr(config, "workerinput"):
            try:
                self._out = os.fdopen(fd, "w", encoding="utf-8", buffering=1, closefd=False)
            except OSError as e:
                sys.stderr.write("featbench_pytest: cannot write to descriptor %d: %s\n" % (fd, e))
        elif path and not hasattr(config, "workerinput"):  # xdist workers: the controller writes
            # Line-buffered and flushed by hand too, so every line reaches the
            # kernel as soon as it is written and survives a SIGKILL.
            try:
                self._out = open(path, "w", encoding="utf-8", buffering=1)
            except OSError as e:
                # The JUnit XML still has the results; do not fail the run.
                sys.stderr.write("featbench_pytest: cannot write %s: %s\n" % (path, e))

    def _emit(self, obj):
        if self._out is None:
            return
        try:
            self._out.write(json.dumps(obj, sort_keys=True) + "\n")
            self._out.flush()
        except (OSError, ValueError):
            self._out = None  # a full disk must not change the test outcomes

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session):
        if self._guard is not None:
            self._guard.hooks_now()
        self._emit(
            {
                "event": "sessionstart",
                "pytest": pytest.__version__,
                "python": "%d.%d.%d" % sys.version_info[:3],
                "rootdir": str(getattr(session.config, "rootpath", None) or session.config.rootdir),
            }
        )

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        if not self._ids:
            return
        keep = [item for item in items if item.nodeid in self._ids]
        drop = [item for item in items if item.nodeid not in self._ids]
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def pytest_exception_interact(self, node, call, report):
        # Only collectors need this: test phases are handled in makereport.
        # It runs before pytest_collectreport for the same report.
        if getattr(report, "when", None) == "collect" and call.excinfo is not None:
            exc = _unwrap(call.excinfo.value)
            report.featbench_exc_type = _type_name(exc)
            first = (str(exc).splitlines() or [""])[0]
            report.featbench_message = _cut(report.featbench_exc_type + (": " + first if first else ""))

    def pytest_collectreport(self, report):
        if report.passed:
            return
        self._emit(
            {
                "event": "collect",
                "nodeid": report.nodeid,
                "outcome": report.outcome,
                "exc_type": getattr(report, "featbench_exc_type", None),
                "message": getattr(report, "featbench_message", None) or _message(report),
            }
        )

    def pytest_runtest_logstart(self, nodeid, location):
        self._emit({"event": "start", "nodeid": nodeid})

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        if call.when == "setup" and not any(k == NODEID for k, _ in item.user_properties):
            # Before the report exists, so that it and every later one carry it.
            item.user_properties.append((NODEID, item.nodeid))
        outcome = yield
        rep = outcome.get_result()
        if self._guard is not None:
            self._made.add((rep.nodeid, rep.when))
            # The call raised, yet its report says it passed: something
            # between pytest's CallInfo and the report changed the outcome,
            # perhaps only for this one call.
            if call.excinfo is not None and rep.passed and not hasattr(rep, "wasxfail"):
                self._guard.seen.append("%s (%s): raised %s but reported passed" % (rep.nodeid, rep.when, call.excinfo.typename))
        added = []
        exc = _exc_type(call, rep)
        if exc:
            added.append((EXC + call.when, exc))
        if hasattr(rep, "wasxfail"):
            added.append((WASXFAIL, str(rep.wasxfail)))
        # JUnit writes the properties of the teardown report only, which
        # copies item.user_properties when it is made; the report made now
        # already holds its copy.
        rep.user_properties.extend(added)
        item.user_properties.extend(added)

    def pytest_runtest_logreport(self, report):
        if self._guard is not None and (report.nodeid, report.when) not in self._made:
            self._guard.seen.append("%s (%s): a report pytest's makereport did not make" % (report.nodeid, report.when))
        exc = None
        for k, v in report.user_properties:
            if k == EXC + report.when:
                exc = v
        line = {
            "event": "report",
            "nodeid": report.nodeid,
            "when": report.when,
            "outcome": report.outcome,
            "exc_type": exc,
            "duration": report.duration,
            "message": _message(report),
        }
        if hasattr(report, "wasxfail"):
            line["wasxfail"] = str(report.wasxfail)
        self._emit(line)

    def pytest_runtest_logfinish(self, nodeid, location):
        self._check()

    def _check(self):
        # After each test: outcomes streamed before an intact check can be
        # trusted even if the run is killed later.
        if self._guard is not None:
            problems = self._guard.problems()
            self._emit({"event": "check", "ok": not problems, "problems": problems[:20]})

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        self._emit({"event": "sessionfinish", "exitstatus": int(exitstatus)})

    def pytest_unconfigure(self, config):
        self._check()
        if self._out is not None:
            self._out.close()
            self._out = None


# Modules whose functions and classes make and report outcomes: code under
# test that replaces one of them is tampering with the grader.
_GUARDED = ("pytest", "_pytest", "pluggy", "featbench_pytest", "builtins", "sys", "os", "io", "json")


class _Guard:
    """What pytest's report machinery was when the session started.

    Code under test shares pytest's process, so replacing a report function,
    wrapping a hook or registering a plugin cannot be prevented, only seen:
    problems() compares the machinery with this snapshot. It sees a module
    of pytest, pluggy, this plugin or a few standard modules replaced in
    sys.modules; one of their functions, methods or classes replaced or its
    code swapped; a method added to one of their classes; a hook
    implementation added by anything but a conftest.py that pytest loaded
    itself, or changed; and import hooks added."""

    def __init__(self, pm):
        self._pm = pm
        self._modules = {}
        self._entries = []  # (holder, name, value, code)
        self._classes = []  # (class, names of its own attributes)
        for name, mod in list(sys.modules.items()):
            if mod is None or not _guarded(name):
                continue
            self._modules[name] = mod
            for k, v in list(vars(mod).items()):
                self._add(mod, k, v)
                if isinstance(v, type) and getattr(v, "__module__", None) == name:
                    self._classes.append((v, frozenset(vars(v))))
                    for ck, cv in list(vars(v).items()):
                        self._add(v, ck, cv)
        self._hooks = {}
        self.seen = []  # what the hooks saw go wrong as it happened
        self._meta = list(sys.meta_path)
        self._path_hooks = list(sys.path_hooks)

    def _add(self, holder, name, v):
        code = _code(v)
        if code is not None or isinstance(v, (type, types.BuiltinFunctionType)):
            self._entries.append((holder, name, v, code))

    def hooks_now(self):
        """Takes the hook implementations as they are when the session
        starts, to see later whether one was changed in place."""
        self._hooks = self._impls()

    def _impls(self):
        out = {}
        for name in dir(self._pm.hook):
            caller = getattr(self._pm.hook, name, None)
            if caller is None or not hasattr(caller, "get_hookimpls"):
                continue
            for impl in caller.get_hookimpls():
                fn = impl.function
                out[(name, id(impl.plugin), getattr(fn, "__name__", ""))] = (impl.plugin, fn, getattr(fn, "__code__", None))
        return out

    def _conftest(self, mod):
        # pytest's own conftest modules, loaded from files the harness put
        # back as the dataset has them, which the tests cannot change.
        f = getattr(mod, "__file__", None)
        if not f or os.path.basename(f) != "conftest.py":
            return False
        if mod not in getattr(self._pm, "_conftest_plugins", ()):
            return False
        return sys.modules.get(getattr(mod, "__name__", None)) is mod

    def _trusted(self, plugin):
        """A plugin may implement hooks when it is, or its class comes from,
        pytest, pluggy, this plugin, a package installed in the environment
        (site-packages, which the tests cannot write) or a conftest.py."""
        if isinstance(plugin, types.ModuleType):
            mod = plugin
            if sys.modules.get(mod.__name__) is not mod:
                return False
        else:
            cls = type(plugin)
            mod = sys.modules.get(getattr(cls, "__module__", None) or "")
            # A class that only claims a module (__module__ can be set) is
            # not that module's.
            if mod is None or _lookup(mod, cls.__qualname__) is not cls:
                return False
        if _guarded(mod.__name__) or self._conftest(mod):
            return True
        f = getattr(mod, "__file__", None) or ""
        return bool(f) and any(f.startswith(d) for d in _SITE)

    def problems(self):
        out = list(self.seen)
        for name, mod in self._modules.items():
            if sys.modules.get(name) is not mod:
                out.append("module %s replaced" % name)
        # pytest changes its own classes as it goes (legacypath's
        # properties, warning flags): a change is tampering when what it
        # put there is code from outside the environment's installed
        # packages and standard library.
        for holder, name, v, code in self._entries:
            now = holder.__dict__.get(name, _MISSING)
            if now is v and (code is None or _code(now) is code):
                continue
            if now is _MISSING or not _trusted_value(now):
                out.append("%s.%s replaced" % (getattr(holder, "__name__", "?"), name))
        for cls, names in self._classes:
            added = [n for n, v in list(vars(cls).items()) if n not in names and not _trusted_value(v)]
            if added:
                out.append("%s: %s added" % (cls.__qualname__, ", ".join(sorted(added))))
        now = self._impls()
        for key, (plugin, fn, code) in now.items():
            old = self._hooks.get(key)
            if old is not None and (old[1] is not fn or old[2] is not code):
                out.append("hook %s of %s changed" % (key[0], key[2]))
            if not self._trusted(plugin):
                out.append("hook %s implemented by %s, not a conftest.py" % (key[0], getattr(plugin, "__name__", type(plugin).__name__)))
        for key in self._hooks:
            if key not in now:
                out.append("hook %s of %s removed" % (key[0], key[2]))
        if any(not any(m is o for o in self._meta) for m in sys.meta_path):
            out.append("an import hook was added to sys.meta_path")
        if any(not any(h is o for o in self._path_hooks) for h in sys.path_hooks):
            out.append("an import hook was added to sys.path_hooks")
        return out


_MISSING = object()

try:
    import site as _site_mod

    _SITE = tuple(os.path.join(d, "") for d in _site_mod.getsitepackages())
except Exception:  # a virtualenv without getsitepackages
    _SITE = ()
try:
    import sysconfig as _sysconfig

    _TRUSTED_DIRS = _SITE + (os.path.join(_sysconfig.get_paths()["stdlib"], ""),)
except Exception:
    _TRUSTED_DIRS = _SITE


def _lookup(mod, qualname):
    obj = mod
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _guarded(name):
    return any(name == g or name.startswith(g + ".") for g in _GUARDED)


def _trusted_value(v):
    """Whether v, found in pytest's machinery, is the environment's own:
    plain data, or code whose file is in site-packages or the standard
    library (where the tests cannot write)."""
    code = _code(v)
    if code is not None:
        return code.co_filename.startswith(_TRUSTED_DIRS)
    if isinstance(v, type):
        f = getattr(sys.modules.get(v.__module__), "__file__", None) or ""
        return f.startswith(_TRUSTED_DIRS)
    if isinstance(v, types.BuiltinFunctionType):
        return True
    # Any other callable or descriptor could stand in for a method.
    return not (callable(v) or hasattr(type(v), "__get__"))


def _code(v):
    """The code object behind a function, method or property, else None."""
    if isinstance(v, (classmethod, staticmethod)):
        v = v.__func__
    elif isinstance(v, property):
        v = v.fget
    if isinstance(v, types.FunctionType):
        return v.__code__
    return None


def _exc_type(call, rep):
    """The type name behind a failed (or xfailed) phase, else None."""
    if rep.passed or (rep.skipped and not hasattr(rep, "wasxfail")):
        return None
    if call.excinfo is None:
        # A strict xfail that passed fails with a string longrepr, no exception.
        if str(rep.longrepr or "").startswith("[XPASS(strict)]"):
            return "XPASS(strict)"
        return None
    return _type_name(_unwrap(call.excinfo.value))


def _unwrap(exc):
    """The exception behind pytest's CollectError, which wraps import errors
    of a test module, raised "from None" (ImportError) or "from e"
    (SyntaxError): the type behind it is what failure-mode charts need."""
    for _ in range(10):
        if type(exc).__name__ != "CollectError":
            break
        inner = exc.__cause__ or exc.__context__
        if inner is None:
            break
        exc = inner
    return exc


def _type_name(exc):
    name = type(exc).__name__
    if name == "Failed" and _TIMEOUT_MESSAGE.match(str(getattr(exc, "msg", "") or "")):
        return "Timeout"
    return name


def _message(report):
    """One short line about why the report is not a plain pass."""
    if report.passed and not hasattr(report, "wasxfail"):
        return None
    if hasattr(report, "wasxfail") and report.outcome != "failed":
        text = str(report.wasxfail)
    else:
        longrepr = report.longrepr
        crash = getattr(longrepr, "reprcrash", None)
        if crash is not None:
            text = crash.message
        elif isinstance(longrepr, tuple) and len(longrepr) == 3:
            text = str(longrepr[2])  # a skip: (path, line, reason)
        else:
            text = str(longrepr or "")
    return _cut(text)


def _cut(text):
    if len(text) > _MAX_MESSAGE:
        return text[:_MAX_MESSAGE] + "..."
    return text
