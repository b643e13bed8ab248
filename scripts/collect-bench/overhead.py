"""Tracing overhead: each test file's pytest run without and with the
tracer, alternating, in this container. Prints one line per file and the
totals as JSON on the last line.

    python3 overhead.py TRACER RUNS FILE...
"""

import json
import statistics
import subprocess
import sys
import time


def wall(argv):
    start = time.monotonic()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.monotonic() - start


def main(argv):
    tracer, runs, files = argv[0], int(argv[1]), argv[2:]
    rows = []
    for f in files:
        plain = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", f]
        traced = ["python3", tracer, "--root", "/testbed", "--out", "/tmp/trace.json", "--test", f, "--",
                  "-q", "-p", "no:cacheprovider", f]
        a, b = [], []
        for _ in range(runs):
            a.append(wall(plain))
            b.append(wall(traced))
        pa, pb = statistics.median(a), statistics.median(b)
        rows.append((f, pa, pb))
        print("%-50s untraced %6.2f s  traced %6.2f s  x%.2f" % (f, pa, pb, pb / pa), flush=True)
    ua = sum(r[1] for r in rows)
    ub = sum(r[2] for r in rows)
    ratios = [r[2] / r[1] for r in rows]
    print(json.dumps({"files": len(rows), "untraced": round(ua, 2), "traced": round(ub, 2),
                      "ratio": round(ub / ua, 2), "median_file_ratio": round(statistics.median(ratios), 2),
                      "max_file_ratio": round(max(ratios), 2)}))


if __name__ == "__main__":
    main(sys.argv[1:])
