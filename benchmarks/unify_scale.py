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
import glob
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
NATIVE = os.path.join(REPO, "src", "scorep", "_native")


def build(tmp):
    exe = os.path.join(tmp, "unify_driver")
    sources = sorted(glob.glob(os.path.join(NATIVE, "core", "*.c")) +
                     glob.glob(os.path.join(NATIVE, "substrates", "*", "*.c")) +
                     [p for p in glob.glob(os.path.join(NATIVE, "adapters", "*", "*.c"))
                      if os.sep + "python" + os.sep not in p and os.sep + "mpi" + os.sep not in p])
    flags = subprocess.run(["otf2-config", "--cflags"], capture_output=True, text=True).stdout.split()
    libs = subprocess.run(["otf2-config", "--ldflags", "--libs"], capture_output=True,
                          text=True).stdout.split()
    cmd = (["gcc", "-std=c11", "-D_GNU_SOURCE", "-O2", "-I", NATIVE, "-I",
            os.path.join(REPO, "tests", "c")] + flags + ["-o", exe,
                                                         os.path.join(HERE, "scale", "unify_driver.c")]
           + sources + libs + ["-lpthread", "-lm"])
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("building the driver failed:\n" + out.stderr[-3000:])
    return exe


def run(exe, ranks, regions, shared, mode):
    out = subprocess.run([exe, str(ranks), str(regions), str(shared), "2", mode],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("driver failed: %s" % out.stderr)
    return {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)", out.stdout)}


def exponent(xs, ys):
    """k of y ~ x^k, least squares in log-log."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if y > 0]
    n = len(pts)
    if n < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / n
    my = sum(p[1] for p in pts) / n
    return (sum((p[0] - mx) * (p[1] - my) for p in pts) /
            sum((p[0] - mx) ** 2 for p in pts))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="10,100,1000,10000")
    parser.add_argument("--regions", type=int, default=500)
    args = parser.parse_args()
    counts = [int(x) for x in args.ranks.split(",")]
    with tempfile.TemporaryDirectory(prefix="scorep-unify-") as tmp:
        exe = build(tmp)
        for shared, label in ((90, "ranks share 90% of their regions"),
                              (0, "every region a rank's own")):
            print("%d regions per rank, %s" % (args.regions, label))
            print("%7s %-5s %12s %12s %14s %10s %11s" % (
                "ranks", "merge", "root cpu[s]", "busiest[s]", "root recv[MB]", "wall[s]",
                "global regs"))
            for mode in ("root", "tree"):
                cpu, received = [], []
                for ranks in counts:
                    r = run(exe, ranks, args.regions, shared, mode)
                    cpu.append(r["root_cpu_seconds"])
                    received.append(r["root_received_bytes"])
                    print("%7d %-5s %12.3f %12.3f %14.1f %10.2f %11d" % (
                        ranks, mode, r["root_cpu_seconds"], r["busiest_cpu_seconds"],
                        r["root_received_bytes"] / 1e6, r["wall_seconds"],
                        r["global_regions"]))
                    sys.stdout.flush()
                print("        %-5s growth: root cpu ~ ranks^%.2f, root received ~ ranks^%.2f"
                      % (mode, exponent(counts, cpu), exponent(counts, received)))
            print()


if __name__ == "__main__":
    main()
