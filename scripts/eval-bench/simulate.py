#!/usr/bin/env python3
"""Simulates `eval run` on a swarm bigger than the one measured.

From the per-task costs measured on a small swarm (scripts/eval-bench.sh
-swarm writes them: one attempt's seconds in its container a line), it
plays N attempts over a cluster of nodes with a number of slots each (how
many containers admission lets a node hold: min(CPUs / eval.cpus, memory /
eval.memory)), the way internal/evaluate.Run and the swarm executor
schedule them:

- attempts are admitted in order, one per free slot;
- each admission goes through the manager, which creates the service and
  places its task one at a time: `dispatch` seconds of the manager's time
  per attempt, serial (eval-bench.sh -swarm measures it with internal/swarm's
  BenchmarkPlacement: placing a service and removing it, per service, when
  many are created at once);
- an attempt then holds its slot for `extra` seconds (the swarm's
  per-attempt overhead over a local container: the task's start on its
  node, adopting it, removing the service) plus a cost drawn from the
  measured ones.

It prints the wall time, the throughput and how busy the slots were.
Deterministic for a given --seed.

  simulate.py --costs FILE [--tasks 1000] [--nodes 10] [--slots 2]
              [--dispatch 0.2] [--extra 1.7] [--seed 0]
"""
import argparse
import heapq
import random
import statistics
import sys


def simulate(costs, tasks, nodes, slots, dispatch, extra, seed):
    rng = random.Random(seed)
    free = [0.0] * (nodes * slots)  # when each slot is next free
    heapq.heapify(free)
    manager = 0.0  # when the manager can place the next task
    busy = 0.0
    end = 0.0
    for _ in range(tasks):
        slot_free = heapq.heappop(free)
        start = max(slot_free, manager) + dispatch
        manager = start
        hold = extra + rng.choice(costs)
        busy += hold
        done = start + hold
        end = max(end, done)
        heapq.heappush(free, done)
    return end, busy / (end * nodes * slots) if end else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--costs", required=True, help="file: one attempt's seconds a line")
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--nodes", type=int, default=10)
    ap.add_argument("--slots", type=int, default=2, help="containers a node holds at once")
    ap.add_argument("--dispatch", type=float, default=0.2, help="manager seconds per attempt, serial")
    ap.add_argument("--extra", type=float, default=1.7, help="swarm seconds per attempt over a local container")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    costs = [float(x) for x in open(a.costs).read().split()]
    if not costs:
        sys.exit("simulate.py: no costs in " + a.costs)
    wall, util = simulate(costs, a.tasks, a.nodes, a.slots, a.dispatch, a.extra, a.seed)
    print("%d attempts, %d nodes x %d slots, dispatch %.4f s, extra %.2f s, cost p50 %.2f s (n=%d): "
          "wall %.0f s (%.1f min), %.1f attempts/min, slots %.0f%% busy"
          % (a.tasks, a.nodes, a.slots, a.dispatch, a.extra, statistics.median(costs), len(costs),
             wall, wall / 60, a.tasks * 60 / wall, util * 100))


if __name__ == "__main__":
    main()
