"""Tracing overhead: each test file's pytest run without and with the
tracer, alternating, in this container. Prints one line per file and the
totals as JSON on the last line.

    python3 overhead.py [--floor] TRACER RUNS FILE...

Wall time is the figure; CPU time (user and system, of the run's
processes) is printed beside it, steadier when other work shares the
machine (on a loaded machine a small file's wall time is mostly waiting
for a CPU). --floor adds a third run of each file under a hook that does
nothing, on the events the tracer's hook gets (FLOOR): the part of the
overhead that is the interpreter's, not the tracer's.
"""

import json
import resource
import statistics
import subprocess
import sys
import time

# pytest under a hook that does nothing, started as the tracer starts it
# (pytest imported first, unhooked), on the events the tracer's hook gets:
# sys.setprofile's on Python 3.11, sys.monitoring's PY_START, PY_RESUME and
# PY_THROW on 3.12 and later, where a location outside the repository is
# disabled after its first event as the tracer disables it. What is left
# is one call of a Python function per event of the repository's code (and
# on 3.11 per event of any code), which no hook written in Python avoids.
FLOOR_PROFILE = "import sys, pytest; sys.setprofile(lambda frame, event, arg: None); sys.exit(pytest.main(sys.argv[1:]))"
FLOOR_MONITORING = """import sys, pytest
m = sys.monitoring
D = m.DISABLE
def hook(code, offset, exc=None):
    fn = code.co_filename
    if exc is None and not (fn.startswith("/testbed/") and "/site-packages/" not in fn):
        return D
ev = (m.events.PY_START, m.events.PY_RESUME, m.events.PY_THROW)
m.use_tool_id(4, "floor")
for e in ev:
    m.register_callback(4, e, hook)
m.set_events(4, ev[0] | ev[1] | ev[2])
sys.exit(pytest.main(sys.argv[1:]))"""
FLOOR = FLOOR_MONITORING if hasattr(sys, "monitoring") else FLOOR_PROFILE


def run(argv):
    """Wall and CPU seconds of a command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv):
    floor = argv[:1] == ["--floor"]
    if floor:
        argv = argv[1:]
    tracer, runs, files = argv[0], int(argv[1]), argv[2:]
    rows = []
    for f in files:
        args = ["-q", "-p", "no:cacheprovider", f]
        variants = {"plain": ["python3", "-m", "pytest"] + args,
                    "traced": ["python3", tracer, "--root", "/testbed", "--out", "/tmp/trace.json", "--test", f, "--"] + args}
        if floor:
            variants["floor"] = ["python3", "-c", FLOOR] + args
        got = {k: [] for k in variants}
        for _ in range(runs):
            for k, cmd in variants.items():
                got[k].append(run(cmd))
        med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in got.items()}
        rows.append((f, med))
        (pa, ca), (pb, cb) = med["plain"], med["traced"]
        line = "%-50s untraced %6.2f s  traced %6.2f s  x%.2f  (CPU %.2f s, %.2f s: x%.2f)" % (f, pa, pb, pb / pa, ca, cb, cb / ca)
        if floor:
            line += "  no-op hook x%.2f (CPU x%.2f)" % (med["floor"][0] / pa, med["floor"][1] / ca)
        print(line, flush=True)

    def total(k, i):
        return sum(m[k][i] for _, m in rows)

    def ratios(k, i):
        return [m[k][i] / m["plain"][i] for _, m in rows]

    out = {"files": len(rows), "python": sys.version.split()[0],
           "untraced": round(total("plain", 0), 2), "traced": round(total("traced", 0), 2),
           "ratio": round(total("traced", 0) / total("plain", 0), 2),
           "median_file_ratio": round(statistics.median(ratios("traced", 0)), 2),
           "max_file_ratio": round(max(ratios("traced", 0)), 2),
           "cpu_untraced": round(total("plain", 1), 2), "cpu_traced": round(total("traced", 1), 2),
           "cpu_ratio": round(total("traced", 1) / total("plain", 1), 2),
           "cpu_median_file_ratio": round(statistics.median(ratios("traced", 1)), 2),
           "cpu_max_file_ratio": round(max(ratios("traced", 1)), 2)}
    if floor:
        out.update({"floor_ratio": round(total("floor", 0) / total("plain", 0), 2),
                    "floor_median_file_ratio": round(statistics.median(ratios("floor", 0)), 2),
                    "floor_max_file_ratio": round(max(ratios("floor", 0)), 2),
                    "floor_cpu_ratio": round(total("floor", 1) / total("plain", 1), 2),
                    "floor_cpu_max_file_ratio": round(max(ratios("floor", 1)), 2)})
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
