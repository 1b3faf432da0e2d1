"""The end of a run at 10 to 10^4 ranks, simulated: the core's real unification of
definitions (core/unify.c) driven with synthetic per-rank definitions through an in-process
group of ranks (threads; tests/c/thread_ipc.h), merged at the root alone or along a tree.

    python3 benchmarks/unify_scale.py [--ranks 10,100,1000,10000] [--regions N]

Two kinds of programs: ranks that share most definitions (90 % of their regions are the same
functions: one SPMD program) and ranks that differ (every region its own). Printed per rank
count and design: the root's CPU time (what it computes itself), the busiest rank's, the bytes
the root receives (its memory for the exchange), the wall time of the simulation (all ranks
share this machine's cores, so it is the sum of everybody's work, not the time a cluster would
take) and the fitted growth (time ~ ranks^k) of the root's CPU time and received bytes.
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale_common import build, exponent, run  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="10,100,1000,10000")
    parser.add_argument("--regions", type=int, default=500)
    args = parser.parse_args()
    counts = [int(x) for x in args.ranks.split(",")]
    with tempfile.TemporaryDirectory(prefix="scorep-unify-") as tmp:
        exe = build(tmp, "unify_driver")
        for shared, label in ((90, "ranks share 90% of their regions"),
                              (0, "every region a rank's own")):
            print("%d regions per rank, %s" % (args.regions, label))
            print("%7s %-5s %12s %12s %14s %14s %10s %11s" % (
                "ranks", "merge", "root cpu[s]", "busiest[s]", "root recv[MB]", "root peak[MB]",
                "wall[s]", "global regs"))
            for mode in ("root", "tree"):
                cpu, received = [], []
                for ranks in counts:
                    r = run(exe, ranks, args.regions, shared, 2, mode)
                    cpu.append(r["root_cpu_seconds"])
                    received.append(r["root_received_bytes"])
                    print("%7d %-5s %12.3f %12.3f %14.1f %14.1f %10.2f %11d" % (
                        ranks, mode, r["root_cpu_seconds"], r["busiest_cpu_seconds"],
                        r["root_received_bytes"] / 1e6, r["root_peak_bytes"] / 1e6,
                        r["wall_seconds"], r["global_regions"]))
                    sys.stdout.flush()
                print("        %-5s growth: root cpu ~ ranks^%.2f, root received ~ ranks^%.2f"
                      % (mode, exponent(counts, cpu), exponent(counts, received)))
            print()


if __name__ == "__main__":
    main()
