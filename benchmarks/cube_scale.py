"""profile.cubex at the end of a run at 10 to 10^4 ranks, simulated: the real writer (the
streamed one, substrates/profile/stream.c, and the flat one, write.c) driven with synthetic
call trees through an in-process group of ranks (threads; tests/c/thread_ipc.h).

    python3 benchmarks/cube_scale.py [--ranks 10,100,1000,10000] [--paths 1000] [--threads 2]
                                     [--shared 100] [--modes stream,parallel,flat]
                                     [--write-bytes 65536] [--flat-max 1000]

Writers: "stream" is the streamed writer with rank 0 writing every row ("alone"), "parallel"
the same with the rows written by several ranks at their offsets when a row's slice per writer
is on average at least --write-bytes (the default of a run: 64 KB; below that rank 0 writes
alone, so "parallel" equals "stream" there), "flat" the gather to rank 0.

Each rank has --threads locations of --paths call paths (--shared percent of them the same on
every rank: 100 is an SPMD program whose call paths all ranks share; below 100 the file grows
as ranks^2, see docs/SCALING.md) with the metrics of a default run. Printed per rank count and
writer: rank 0's CPU time for the whole (collection, merge, file), the most rank 0 held at once
(measured per rank, its own trees included), the bytes it received, the file's size, the
simulation's wall time and peak RSS (all simulated ranks), the ranks that wrote rows, the
most CPU time one rank took (a writer's, or rank 0's) and all ranks' CPU time together, and the
fitted growth. The flat
writer runs up to --flat-max ranks (at 10^4 it needs ~4 GB at rank 0). The files are written
into a temporary directory on the disk of the working directory.
"""

import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scale_common import build, exponent, run  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="10,100,1000,10000")
    parser.add_argument("--paths", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--shared", type=int, default=100)
    parser.add_argument("--modes", default="stream,parallel,flat")
    parser.add_argument("--write-bytes", type=int, default=65536)
    parser.add_argument("--flat-max", type=int, default=1000)
    args = parser.parse_args()
    counts = [int(x) for x in args.ranks.split(",")]
    with tempfile.TemporaryDirectory(prefix="scorep-cube-") as tmp, \
            tempfile.TemporaryDirectory(prefix="scorep-cube-out-", dir=os.getcwd()) as out:
        exe = build(tmp, "cube_driver")
        print("%d call paths per location, %d locations per rank, %d%% shared" % (
            args.paths, args.threads, args.shared))
        print("%7s %-8s %12s %14s %14s %11s %9s %13s %8s %11s %13s" % (
            "ranks", "writer", "root cpu[s]", "root peak[MB]", "root recv[MB]", "file[MB]",
            "wall[s]", "peak rss[MB]", "writers", "max cpu[s]", "total cpu[s]"))
        for mode in args.modes.split(","):
            done, cpu, peak = [], [], []
            for ranks in counts:
                if mode == "flat" and ranks > args.flat_max:
                    continue
                d = os.path.join(out, "%s-%d" % (mode, ranks))
                os.mkdir(d)
                extra = {"stream": ["alone"], "parallel": [args.write_bytes]}.get(mode, [])
                r = run(exe, ranks, args.paths, args.threads, args.shared,
                        "flat" if mode == "flat" else "stream", d, *extra)
                shutil.rmtree(d)
                done.append(ranks)
                cpu.append(r["root_cpu_seconds"])
                peak.append(r["root_peak_bytes"])
                print("%7d %-8s %12.3f %14.1f %14.1f %11.1f %9.2f %13.1f %8d %11.3f %13.2f" % (
                    ranks, mode, r["root_cpu_seconds"], r["root_peak_bytes"] / 1e6,
                    r["root_received_bytes"] / 1e6, r["file_bytes"] / 1e6, r["wall_seconds"],
                    r["peak_rss_kb"] / 1e3, r["writers"], r["max_cpu_seconds"],
                    r["total_cpu_seconds"]))
                sys.stdout.flush()
            if len(done) > 1:
                print("        %-8s growth: root cpu ~ ranks^%.2f, root peak ~ ranks^%.2f"
                      % (mode, exponent(done, cpu), exponent(done, peak)))


if __name__ == "__main__":
    main()
