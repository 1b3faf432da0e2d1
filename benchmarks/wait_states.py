"""The cost of the wait-state analysis at the end of a traced MPI run (core/waitstates.c).

    python3 benchmarks/wait_states.py [--ranks 8] [--events 1000000] [--mpi-steps 20000]

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
REPO = os.path.dirname(HERE)
NATIVE = os.path.join(REPO, "src", "scorep", "_native")

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
    exe = os.path.join(tmp, "wait_states_driver")
    cmd = ["gcc", "-std=c11", "-D_GNU_SOURCE", "-O2", "-I", NATIVE, "-I",
           os.path.join(REPO, "tests", "c"), "-o", exe,
           os.path.join(HERE, "scale", "wait_states_driver.c"),
           os.path.join(NATIVE, "core", "waitstates.c"), os.path.join(NATIVE, "core", "error.c"),
           os.path.join(NATIVE, "core", "serial.c"), os.path.join(NATIVE, "core", "ipc.c"),
           "-lpthread"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("building the driver failed:\n" + out.stderr[-3000:])
    return exe


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--events", type=int, default=1000000)
    ap.add_argument("--mpi-steps", type=int, default=20000)
    args = ap.parse_args()
    simulated(args.ranks, args.events)
    if args.mpi_steps:
        real(args.ranks, args.mpi_steps)


if __name__ == "__main__":
    main()
