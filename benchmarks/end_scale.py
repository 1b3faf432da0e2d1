"""The end of an MPI run at rank 0, simulated with the real code at 10 to 10^4 ranks and
extrapolated to 10^5: one table of rank 0's CPU time and peak memory per step, the measured
counterpart of docs/SCALING.md's model.

    python3 benchmarks/end_scale.py [--ranks 10,100,1000,10000] [--target 100000]

Steps, each its own driver of benchmarks/scale/ (threads as ranks, tests/c/thread_ipc.h):
the unification along the tree (500 regions per rank, 90 % shared, 2 threads per rank), the
profile written as its rows arrive (1 000 call paths per thread, all shared: with call paths
of each rank's own the CUBE file grows as P^2, see docs/SCALING.md; default metrics; the
collection along the tree, the merge and the file), the wait-state analysis (20 000 trace
events per rank, about 2 000 MPI operations: the builder, the replay, the critical path and
the delay costs, as at the end of a traced run) and the clock offsets along the tree. Rank
0's peak is measured per rank (benchmarks/scale/rank_memory.h); the clock offsets' time in
the simulation is thread wake-ups on this machine's cores, so the 10^5 column models it
instead (8 rounds × 3 us × log2(P)^2). The last column fits each measure's growth
(y ~ P^k over the measured counts) and evaluates it at --target ranks. Not included: writing
the events.
"""

import argparse
import math
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale_common import build, exponent, run  # noqa: E402


def extrapolate(counts, values, target):
    k = exponent(counts, values)
    if math.isnan(k) or values[-1] <= 0:
        return float("nan")
    return values[-1] * (target / counts[-1]) ** k


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="10,100,1000,10000")
    parser.add_argument("--target", type=int, default=100000)
    args = parser.parse_args()
    counts = [int(x) for x in args.ranks.split(",")]
    rows = []  # (step, measure, unit, values)
    with tempfile.TemporaryDirectory(prefix="scorep-end-") as tmp:
        unify = build(tmp, "unify_driver")
        profile = build(tmp, "cube_driver")
        waits = build(tmp, "wait_states_driver")
        clock = build(tmp, "clock_driver")
        measured = {name: [] for name in ("unify", "profile", "waits", "clock")}
        for ranks in counts:
            measured["unify"].append(run(unify, ranks, 500, 90, 2, "tree"))
            out = tempfile.mkdtemp(prefix="scorep-end-cube-", dir=os.getcwd())
            try:
                measured["profile"].append(run(profile, ranks, 1000, 2, 100, "stream", out))
            finally:
                shutil.rmtree(out)
            measured["waits"].append(run(waits, ranks, 20000))
            measured["clock"].append(run(clock, ranks, 8, "tree"))
            print("measured %d ranks" % ranks, file=sys.stderr)
    u, p, w, c = (measured[k] for k in ("unify", "profile", "waits", "clock"))
    rows.append(("unification", "rank 0 cpu", "s", [r["root_cpu_seconds"] for r in u]))
    rows.append(("unification", "rank 0 peak", "MB", [r["root_peak_bytes"] / 1e6 for r in u]))
    rows.append(("profile + CUBE file", "rank 0 cpu", "s", [r["root_cpu_seconds"] for r in p]))
    rows.append(("profile + CUBE file", "rank 0 peak", "MB",
                 [r["root_peak_bytes"] / 1e6 for r in p]))
    rows.append(("wait states", "rank 0 cpu", "s", [r["root_cpu"] for r in w]))
    rows.append(("wait states", "rank 0 peak", "MB",
                 [r["root_peak_mb"] * 1.048576 for r in w]))
    rows.append(("clock offsets", "error bound", "us", [r["max_bound_us"] for r in c]))
    head = "%-20s %-12s %4s" % ("step", "measure", "unit") + "".join(
        " %11s" % ("P=%d" % n) for n in counts) + " %13s" % ("P=%d (fit)" % args.target)
    print(head)
    total_cpu = total_peak = 0.0
    for step, measure, unit, values in rows:
        at_target = extrapolate(counts, values, args.target)
        if step == "clock offsets":
            at_target = float("nan")
        elif measure == "rank 0 cpu":
            total_cpu += at_target
        else:
            total_peak = max(total_peak, at_target)
        print("%-20s %-12s %4s" % (step, measure, unit) +
              "".join(" %11.3f" % v for v in values) + " %13.3f" % at_target)
    levels = math.log2(args.target)
    print("%-20s %-12s %4s" % ("clock offsets", "modelled", "s") + " " * (12 * len(counts)) +
          " %13.3f" % (8 * 3e-6 * levels * levels))
    print("at P=%d: rank 0 cpu of the steps above ~%.1f s (the steps run one after the other); "
          "the largest rank 0 peak of one step ~%.0f MB" % (args.target, total_cpu, total_peak))


if __name__ == "__main__":
    main()
