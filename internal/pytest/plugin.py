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

import pytest

NODEID = "featbench_nodeid"
EXC = "featbench_exc_"
WASXFAIL = "featbench_wasxfail"
ENV_JSONL = "FEATBENCH_PYTEST_JSONL"

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
    config.pluginmanager.register(_Recorder(config, path), "featbench_recorder")


class _Recorder:
    def __init__(self, config, path):
        self._ids = set(config.getoption("featbench_ids") or ())
        self._out = None
        if path and not hasattr(config, "workerinput"):  # xdist workers: the controller writes
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

    def pytest_sessionstart(self, session):
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

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        self._emit({"event": "sessionfinish", "exitstatus": int(exitstatus)})

    def pytest_unconfigure(self, config):
        if self._out is not None:
            self._out.close()
            self._out = None


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
