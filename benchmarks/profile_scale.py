"""The profile's collection at the end of a run at 10 to 10^4 ranks, simulated: the real
code (substrates/profile/reduce.c, core/ipc.c) driven with synthetic call trees through an
in-process group of ranks (threads; tests/c/thread_ipc.h), gathered at the root or merged
along the binomial tree.

    python3 benchmarks/profile_scale.py [--ranks 10,100,1000] [--paths 1000] [--threads 2]

Each rank has --threads locations of --paths call paths (90 % of them the same on every
rank) with the metrics of a default run (visits, time, minimum and maximum time). Printed per
rank count and design: rank 0's CPU time for the collection, the bytes it received, the bytes
it holds at the end (every rank's trees, in both designs: the CUBE writer reads them), the
process's peak RSS (all simulated ranks together) and the fitted growth.
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale_common import build, exponent, run  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="10,100,1000")
    parser.add_argument("--paths", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--modes", default="root,tree")
    args = parser.parse_args()
    counts = [int(x) for x in args.ranks.split(",")]
    with tempfile.TemporaryDirectory(prefix="scorep-profile-") as tmp:
        exe = build(tmp, "profile_driver")
        print("%d call paths per location, %d locations per rank, 90%% shared" % (
            args.paths, args.threads))
        print("%7s %-5s %12s %14s %13s %14s %13s" % (
            "ranks", "merge", "root cpu[s]", "root recv[MB]", "root held[MB]", "root peak[MB]",
            "peak rss[MB]"))
        for mode in args.modes.split(","):
            cpu, received = [], []
            for ranks in counts:
                r = run(exe, ranks, args.paths, args.threads, mode)
                cpu.append(r["root_cpu_seconds"])
                received.append(r["root_received_bytes"])
                print("%7d %-5s %12.3f %14.1f %13.1f %14.1f %13.1f" % (
                    ranks, mode, r["root_cpu_seconds"], r["root_received_bytes"] / 1e6,
                    r["root_held_bytes"] / 1e6, r["root_peak_bytes"] / 1e6,
                    r["peak_rss_kb"] / 1e3))
                sys.stdout.flush()
            print("        %-5s growth: root cpu ~ ranks^%.2f, root received ~ ranks^%.2f"
                  % (mode, exponent(counts, cpu), exponent(counts, received)))


if __name__ == "__main__":
    main()
