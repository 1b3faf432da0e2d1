"""The cost of the wait-state analysis at the end of a traced MPI run (core/waitstates.c).

    python3 benchmarks/wait_states.py [--ranks 8] [--events 1000000] [--repeat 3]
                                      [--before 018f291] [--mpi-steps 20000]
    python3 benchmarks/wait_states.py --scale 10,100,1000,10000 [--scale-events 20000]

1. Simulated: what a traced run does at its end (core/substrates.h): each of RANKS ranks holds
   its trace as the trace substrate's raw records, EVENTS events of an mpi4py ring program
   (enter and leave of Python functions, mpi4py's methods and the MPI calls: 6 a call; a ring
   exchange Irecv/Send/Wait per step, an Allreduce every 16th, a Barrier every 64th;
   benchmarks/scale/wait_states_driver.c), reads them into the core's builder (operations,
   call paths, timelines) and runs sp_ws_run (the replay, the critical path and the delay
   costs) with the others; the ranks are threads of one process grouped by an in-process
   sp_ipc (tests/c/thread_ipc.h). Printed (median of --repeat runs): the busiest rank's CPU
   time (build, engine, both), the wall time (8 threads taking turns on this machine's
   cores), the trace's size per rank and the most the analysis held at once beside it
   (measured per rank: benchmarks/scale/rank_memory.h). --before COMMIT: that commit's
   driver built against its C sources too (018f291: before the critical path and the delay
   costs), side by side. Checked: the driver's digest of every result value (bit for bit)
   is the same in every run, and the same as the other commit's when its driver has one
   (19ddcea on: a change of the data layout must not move a value).
2. Real: a Python program under mpirun (RANKS ranks, --mpi-steps ring exchanges + an
   Allreduce every 16th) run plain, measured with tracing and the analysis, and measured
   with SCOREP_MPI_WAIT_STATES=false; printed: the wall times and the analysis' own time at
   the end on rank 0 (MANIFEST.md), against the run and against the trace's size.
3. --scale: the simulated analysis at growing rank counts; printed per count: rank 0's time
   (waiting included) and CPU time, the most it held at once (its trace included), the bytes
   it received, the slowest rank's time.
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


def build(tmp, commit=None):
    """The driver against this tree's C sources, or `commit`'s driver against its sources
    (both taken out with git archive into `tmp`)."""
    native, scale_dir = scale_common.NATIVE, None
    if commit:
        out = subprocess.run("git -C %s archive %s src/scorep/_native benchmarks/scale | tar -x -C %s"
                             % (REPO, commit, tmp), shell=True, capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit("cannot take %s's sources: %s" % (commit, out.stderr.strip()))
        native = os.path.join(tmp, "src", "scorep", "_native")
        scale_dir = os.path.join(tmp, "benchmarks", "scale")
    with open(os.path.join(native, "core", "waitstates.h")) as f:
        timelines = "piece_count" in f.read()
    exe_dir = os.path.join(tmp, "driver")
    os.makedirs(exe_dir, exist_ok=True)
    return scale_common.build(exe_dir, "wait_states_driver", native=native,
                              defines=["WS_TIMELINES=%d" % timelines], scale_dir=scale_dir)


def run_driver(exe, ranks, events):
    """The driver's measurements (floats), and its digest of every result value, bit for
    bit (None from a driver that has none)."""
    out = subprocess.run([exe, str(ranks), str(events)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("driver failed: %s" % out.stderr)
    values = {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)(?=\s|$)", out.stdout)}
    found = re.search(r"results_digest=([0-9a-f]+)", out.stdout)
    return values, found.group(1) if found else None


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def simulated(ranks, events, repeat, before):
    trees = [("this tree", None)] + ([("at " + before, before)] if before else [])
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        exes = []
        for i, (label, commit) in enumerate(trees):
            d = os.path.join(tmp, str(i))
            os.makedirs(d)
            exes.append(build(d, commit))
        runs = [[] for _ in trees]
        digests = [set() for _ in trees]
        for _ in range(repeat):  # alternated, so that the machine's load falls on both
            for i, exe in enumerate(exes):
                values, digest = run_driver(exe, ranks, events)
                runs[i].append(values)
                digests[i].add(digest)
        for r in runs:
            results.append({k: median([x[k] for x in r]) for k in r[0]})
    # The same input gives the same results, bit for bit, run after run; and, when the
    # other tree's driver has a digest, the same as there (a change of the data layout
    # must not move a value).
    if len(digests[0]) != 1:
        raise SystemExit("the results differ from run to run: %s" % sorted(digests[0]))
    if len(trees) == 2 and None not in digests[1] and digests[1] != digests[0]:
        raise SystemExit("the results differ from %s's: %s against %s"
                         % (before, sorted(digests[0]), sorted(digests[1])))
    first = results[0]
    same = ("the same as at %s" % before if len(trees) == 2 and None not in digests[1]
            else "%s not compared" % before if len(trees) == 2 else "")
    print("results digest %s%s" % (next(iter(digests[0])), " (%s)" % same if same else ""))
    print("simulated end of a traced run, %d ranks x %d trace events (%d MPI calls, %d enter/"
          "leave), %.1f MB of raw trace records per rank; median of %d runs:"
          % (ranks, first["events_per_rank"], first["mpi_ops_per_rank"],
             first["enter_leave_per_rank"], first["trace_mb_per_rank"], repeat))
    for (label, _), v in zip(trees, results):
        print("  %s: busiest rank's CPU %.3f s (build %.3f s, engine %.3f s), wall %.2f s; "
              "held beside its trace: at most %.1f MB on a rank (%.2fx the trace), on the "
              "ranks other than 0 at most %.1f MB, of which the built input %.1f MB; "
              "exchanged %.1f MB, rank 0 received %.1f MB; waiting %.3f s, critical path "
              "%.3f s (all ranks)"
              % (label, v["max_rank_cpu"], v["max_build_cpu"], v["max_run_cpu"], v["wall"],
                 v["analysis_peak_mb"], v["analysis_per_trace"], v["other_peak_mb"],
                 v["built_mb"],
                 v["exchanged_mb"], v["root_received_mb"], v["waiting_s"],
                 v["critical_path_s"]))
    if len(results) == 2:
        a, b = results
        print("  this tree / %s: CPU %.2fx, held memory %.2fx"
              % (trees[1][1], a["max_rank_cpu"] / b["max_rank_cpu"],
                 a["analysis_peak_mb"] / b["analysis_peak_mb"]))


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
        print("simulated analysis at scale, %d trace events per rank (ring exchange, Allreduce "
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
    ap.add_argument("--events", type=int, default=1000000,
                    help="trace events per rank (enter, leave and MPI records)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--before", default="",
                    help="a commit whose C sources to measure side by side (e.g. 018f291)")
    ap.add_argument("--mpi-steps", type=int, default=20000)
    ap.add_argument("--scale", default="",
                    help="rank counts (e.g. 10,100,1000,10000): the analysis at scale "
                         "instead, with --scale-events trace events per rank")
    ap.add_argument("--scale-events", type=int, default=20000)
    args = ap.parse_args()
    if args.scale:
        at_scale([int(x) for x in args.scale.split(",")], args.scale_events)
        return
    simulated(args.ranks, args.events, args.repeat, args.before)
    if args.mpi_steps:
        real(args.ranks, args.mpi_steps)


if __name__ == "__main__":
    main()
