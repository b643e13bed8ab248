"""Trace test files without pytest, for the host-Python tests of tracer.py:

    python3 runner.py TRACER_DIR ROOT OUT TEST_FILE...

It imports each test file under the tracer's hook (as pytest's collection
does) and calls its test_* functions and the test methods of its
unittest.TestCase classes (in name order; each is a test's start for the
tracer's event budget, as pytest_runtest_setup is), then writes the graph
trace_run returns. A
failing test is reported on stderr and makes the exit status 1.

FB_PRECALL=module:function imports the module before the run and calls
the function first in it, before any test file is imported, as code a
.pth file imported could run.
"""

import builtins
import importlib
import json
import os
import sys
import traceback
import unittest


def main(argv):
    tracer_dir, root, out, tests = argv[0], argv[1], argv[2], argv[3:]
    sys.path.insert(0, tracer_dir)
    import tracer

    sys.path.insert(0, root)
    precall = None
    if os.environ.get("FB_PRECALL"):
        mod, _, fn = os.environ["FB_PRECALL"].partition(":")
        precall = getattr(importlib.import_module(mod), fn)
    real_exec = builtins.exec

    def run():
        # exec without namespaces runs in its caller's, even before the
        # repository's first code (when exec is the tracer's).
        probe = 41
        exec("assert probe == 41 and __name__ == '__main__', 'exec lost its caller namespaces'")
        if precall is not None:
            precall()
        failed = 0
        for t in tests:
            mod = importlib.import_module(t[:-3].replace("/", "."))
            for name, obj in sorted(vars(mod).items()):
                if isinstance(obj, type) and issubclass(obj, unittest.TestCase):
                    tracer.test_started()
                    res = unittest.TextTestRunner(stream=sys.stderr, verbosity=0).run(
                        unittest.defaultTestLoader.loadTestsFromTestCase(obj))
                    failed += len(res.failures) + len(res.errors)
                elif name.startswith("test") and callable(obj) and getattr(obj, "__module__", None) == mod.__name__:
                    tracer.test_started()
                    try:
                        obj()
                    except Exception:
                        traceback.print_exc()
                        failed += 1
        return 1 if failed else 0

    result = tracer.trace_run(root, tests, tests, run)
    if builtins.exec is not real_exec:
        print("runner: trace_run left builtins.exec replaced", file=sys.stderr)
        return 3
    with open(out, "w", encoding="utf-8") as f:
        json.dump(result, f, sort_keys=True)
    return result["exit_code"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
