"""Clock offsets at 10 to 10^4 simulated ranks: the core's sp_ipc_clock_offsets along the
binomial tree (each parent with its children, composed) and directly (rank 0 with every
rank), through an in-process group of ranks (threads; tests/c/thread_ipc.h) whose clocks are
the machine's shifted by known amounts (up to +-1 ms).

    python3 benchmarks/clock_scale.py [--ranks 10,100,1000] [--rounds 8]

Printed per rank count and method: the simulation's wall time (its round trips are thread
wake-ups on a shared 2-core machine, 10-100 us, not a network's 1-3 us), the largest and mean
error of the offsets against the known shifts, and the largest error bound the measurement
itself reports (half the shortest round trip, summed over the hops from rank 0).
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale_common import build, run  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="10,100,1000")
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scorep-clock-") as tmp:
        exe = build(tmp, "clock_driver")
        print("%7s %-7s %9s %15s %16s %15s" % ("ranks", "method", "wall[s]", "max error[us]",
                                               "mean error[us]", "max bound[us]"))
        for method in ("direct", "tree"):
            for ranks in [int(x) for x in args.ranks.split(",")]:
                r = run(exe, ranks, args.rounds, method)
                print("%7d %-7s %9.3f %15.1f %16.1f %15.1f" % (
                    ranks, method, r["wall_seconds"], r["max_error_us"], r["mean_error_us"],
                    r["max_bound_us"]))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
