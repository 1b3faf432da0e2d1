"""The cost of the wait-state analysis at the end of a traced MPI run (core/waitstates.c).

    python3 benchmarks/wait_states.py [--ranks 8] [--events 1000000] [--mpi-steps 20000]
    python3 benchmarks/wait_states.py --scale 10,100,1000,10000 [--scale-events 2000]

1. Simulated: the core's real replay driven with synthetic operations of RANKS ranks x
   EVENTS operations each (a ring exchange with late senders, Allreduce and Barrier), the
   ranks being threads of one process grouped by an in-process sp_ipc (tests/c/thread_ipc.h).
   Printed: the wall time of the replay (all ranks share this machine's cores: the slowest
   rank's time, waiting included), the busiest rank's CPU time, the process's peak RSS,
   the replay's input per rank (56 bytes an operation) and the bytes the ranks exchanged.
2. Real: a Python program under mpirun (RANKS ranks, --mpi-steps ring exchanges + an
   Allreduce every 16th) run plain, measured with tracing and the analysis, and measured
   with SCOREP_MPI_WAIT_STATES=false; printed: the wall times and the analysis' own time at
   the end on rank 0 (MANIFEST.md), against the run and against the trace's size.
3. --scale: the simulated replay at growing rank counts; printed per count: rank 0's replay
   time (waiting included) and CPU time, the most it held at once (its input included;
   benchmarks/scale/rank_memory.h), the bytes it received, the slowest rank's time.
"""

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scale_common  # noqa: E402
from scale_common import REPO  # noqa: E402

PROGRAM = """
import sys
import numpy as np
from mpi4py import MPI
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
out, got = np.ones(4), np.zeros(4)
for step in range(int(sys.argv[1])):
    req = comm.Irecv(got, source=(rank - 1) % size, tag=1)
    comm.Send(out, dest=(rank + 1) % size, tag=1)
    req.Wait()
    if step % 16 == 15:
        comm.Allreduce(out, got)
"""


def build(tmp):
    return scale_common.build(tmp, "wait_states_driver")


def simulated(ranks, events):
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(tmp)
        out = subprocess.run([exe, str(ranks), str(events)], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit("driver failed: %s" % out.stderr)
        values = dict(re.findall(r"(\w+)=([0-9.]+)", out.stdout))
    print("simulated replay, %s ranks x %s operations:" % (ranks, events))
    print("  replay wall time %.3f s (slowest rank, all ranks on this machine's cores), "
          "busiest rank's CPU %.3f s" % (float(values["wall"]), float(values["max_rank_cpu"])))
    print("  input %.1f MB per rank (the trace holds >= 64 bytes per MPI call: %.1f MB), "
          "exchanged %.1f MB in all, peak RSS of the process %.1f MB"
          % (float(values["input_mb_per_rank"]), events * 64 / 1048576.0,
             float(values["exchanged_mb"]), float(values["peak_rss_mb"])))


def mpirun(ranks, args, env):
    command = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks)] + args
    t0 = time.perf_counter()
    out = subprocess.run(command, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("mpirun failed: %s" % out.stderr[-2000:])
    return time.perf_counter() - t0


def real(ranks, steps):
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "ring.py")
        with open(prog, "w") as f:
            f.write(PROGRAM)
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "src"), OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", SCOREP_ENABLE_TRACING="true")
        plain = mpirun(ranks, [sys.executable, prog, str(steps)], env)
        times = {}
        for label, switch in (("with", "true"), ("without", "false")):
            exp = os.path.join(tmp, "exp-" + label)
            times[label] = mpirun(ranks, [sys.executable, "-m", "scorep", "--mpp=mpi", prog,
                                          str(steps)],
                                  dict(env, SCOREP_EXPERIMENT_DIRECTORY=exp,
                                       SCOREP_MPI_WAIT_STATES=switch))
        exp = os.path.join(tmp, "exp-with")
        with open(os.path.join(exp, "MANIFEST.md")) as f:
            manifest = f.read()
        found = re.search(r"at the end of the run in ([0-9.]+) ms on rank 0", manifest)
        analysis_ms = float(found.group(1)) if found else float("nan")
        trace_bytes = sum(os.path.getsize(p) for p in glob.glob(os.path.join(exp, "traces", "*")))
    calls = steps * 3 + steps // 16
    print("real run, %d ranks x %d MPI calls (mpi4py, under mpirun on this machine):"
          % (ranks, calls))
    print("  plain %.2f s, traced with the analysis %.2f s (%.2fx), traced without it %.2f s "
          "(%.2fx)" % (plain, times["with"], times["with"] / plain, times["without"],
                       times["without"] / plain))
    print("  the analysis at the end: %.1f ms on rank 0 (%.2f%% of the measured run); "
          "trace files %.1f MB" % (analysis_ms, 100 * analysis_ms / 1000 / times["with"],
                                   trace_bytes / 1048576.0))


def at_scale(counts, events):
    """The replay at growing rank counts: rank 0's time, CPU, memory and what it received."""
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(tmp)
        print("simulated replay at scale, %d operations per rank (ring exchange, Allreduce "
              "every 16th step, Barrier every 64th):" % events)
        print("%7s %12s %12s %14s %15s %12s" % ("ranks", "rank 0 [s]", "rank 0 cpu[s]",
                                                 "rank 0 peak[MB]", "rank 0 recv[MB]",
                                                 "slowest [s]"))
        cpu, peak = [], []
        for ranks in counts:
            r = scale_common.run(exe, ranks, events)
            cpu.append(r["root_cpu"])
            peak.append(r["root_peak_mb"])
            print("%7d %12.3f %12.3f %14.1f %15.1f %12.3f" % (
                ranks, r["root_wall"], r["root_cpu"], r["root_peak_mb"],
                r["root_received_mb"], r["wall"]))
            sys.stdout.flush()
        print("growth: rank 0 cpu ~ ranks^%.2f, rank 0 peak ~ ranks^%.2f" % (
            scale_common.exponent(counts, cpu), scale_common.exponent(counts, peak)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--events", type=int, default=1000000)
    ap.add_argument("--mpi-steps", type=int, default=20000)
    ap.add_argument("--scale", default="",
                    help="rank counts (e.g. 10,100,1000,10000): the replay at scale instead, "
                         "with --scale-events operations per rank")
    ap.add_argument("--scale-events", type=int, default=2000)
    args = ap.parse_args()
    if args.scale:
        at_scale([int(x) for x in args.scale.split(",")], args.scale_events)
        return
    simulated(args.ranks, args.events)
    if args.mpi_steps:
        real(args.ranks, args.mpi_steps)


if __name__ == "__main__":
    main()
