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
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from unify_scale import NATIVE, REPO, exponent  # noqa: E402


def build(tmp, name="profile_driver"):
    exe = os.path.join(tmp, name)
    sources = sorted(glob.glob(os.path.join(NATIVE, "core", "*.c")) +
                     glob.glob(os.path.join(NATIVE, "substrates", "*", "*.c")) +
                     [p for p in glob.glob(os.path.join(NATIVE, "adapters", "*", "*.c"))
                      if os.sep + "python" + os.sep not in p and os.sep + "mpi" + os.sep not in p])
    flags = subprocess.run(["otf2-config", "--cflags"], capture_output=True, text=True).stdout.split()
    libs = subprocess.run(["otf2-config", "--ldflags", "--libs"], capture_output=True,
                          text=True).stdout.split()
    cmd = (["gcc", "-std=c11", "-D_GNU_SOURCE", "-O2", "-I", NATIVE, "-I",
            os.path.join(REPO, "tests", "c")] + flags +
           ["-o", exe, os.path.join(HERE, "scale", name + ".c")] + sources + libs +
           ["-lpthread", "-lm"])
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("building the driver failed:\n" + out.stderr[-3000:])
    return exe


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="10,100,1000")
    parser.add_argument("--paths", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--modes", default="root,tree")
    args = parser.parse_args()
    counts = [int(x) for x in args.ranks.split(",")]
    with tempfile.TemporaryDirectory(prefix="scorep-profile-") as tmp:
        exe = build(tmp)
        print("%d call paths per location, %d locations per rank, 90%% shared" % (
            args.paths, args.threads))
        print("%7s %-5s %12s %14s %13s %13s" % ("ranks", "merge", "root cpu[s]",
                                                "root recv[MB]", "root held[MB]", "peak rss[MB]"))
        for mode in args.modes.split(","):
            cpu, received = [], []
            for ranks in counts:
                out = subprocess.run([exe, str(ranks), str(args.paths), str(args.threads), mode],
                                     capture_output=True, text=True)
                if out.returncode != 0:
                    raise SystemExit("driver failed: %s" % out.stderr)
                r = {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)", out.stdout)}
                cpu.append(r["root_cpu_seconds"])
                received.append(r["root_received_bytes"])
                print("%7d %-5s %12.3f %14.1f %13.1f %13.1f" % (
                    ranks, mode, r["root_cpu_seconds"], r["root_received_bytes"] / 1e6,
                    r["root_held_bytes"] / 1e6, r["peak_rss_kb"] / 1e3))
                sys.stdout.flush()
            print("        %-5s growth: root cpu ~ ranks^%.2f, root received ~ ranks^%.2f"
                  % (mode, exponent(counts, cpu), exponent(counts, received)))


if __name__ == "__main__":
    main()
