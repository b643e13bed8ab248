"""pytest plugin used by exkit.py: records each test's outcome and the type
of the exception behind every failure or collection error.

Load it with ``-p pytest_outcomes`` (this folder on PYTHONPATH); it writes
JSON to the file named by the EXKIT_OUTCOMES environment variable.
"""

import json
import os

_outcomes = {}  # nodeid -> {"when": outcome}
_errors = {}    # nodeid (test or module) -> exception type name


def pytest_runtest_logreport(report):
    _outcomes.setdefault(report.nodeid, {})[report.when] = report.outcome


def pytest_exception_interact(node, call, report):
    if call.excinfo is None:
        return
    exc = call.excinfo.value
    # A test file that fails to import is reported as a CollectError raised
    # from the real exception (ModuleNotFoundError, SyntaxError, ...).
    while type(exc).__name__ == "CollectError" and exc.__cause__ is not None:
        exc = exc.__cause__
    _errors.setdefault(node.nodeid, type(exc).__name__)


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("EXKIT_OUTCOMES")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"outcomes": _outcomes, "errors": _errors, "exitstatus": int(exitstatus)}, f)
