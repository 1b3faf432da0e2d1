"""Cost of the end of an MPI measurement: from the program's last statement to the
experiment being complete, against the number of events per rank and the number of ranks.

    python3 benchmarks/mpi_finalize.py [--ranks 2,4,8] [--calls 1000,100000,1000000]

Each rank calls a tiny function N times (2 N events) and then exits; the time from the
end of the program's work to the end of mpirun is what the measurement adds at the end
(agreeing, clock sync, unifying definitions, encoding and writing the trace and profile).
The same run without scorep gives the baseline (interpreter and MPI shutdown).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

# mpi4py is Debian's: the interpreter that has it, not the python3 first on PATH.
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

PROGRAM = r'''
import sys, time
from mpi4py import MPI

def tiny():
    return None

n = int(sys.argv[1])
MPI.COMM_WORLD.Barrier()
for _ in range(n):
    tiny()
MPI.COMM_WORLD.Barrier()
if MPI.COMM_WORLD.Get_rank() == 0:
    print("WORK_DONE", time.time(), flush=True)
'''


def run(ranks, calls, measured, tmp):
    script = os.path.join(tmp, "app.py")
    with open(script, "w") as out:
        out.write(PROGRAM)
    env = dict(os.environ, PYTHONPATH=SRC, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", SCOREP_ENABLE_TRACING="true",
               SCOREP_TOTAL_MEMORY="1G", SCOREP_EXPERIMENT_DIRECTORY=os.path.join(tmp, "exp"))
    command = ["mpirun", "--oversubscribe", "-np", str(ranks), PYTHON]
    command += ["-m", "scorep", "--mpp=mpi", script] if measured else [script]
    out = subprocess.run(command + [str(calls)], env=env, capture_output=True, text=True)
    ended = time.time()
    if out.returncode != 0:
        raise SystemExit("run failed: %s\n%s" % (" ".join(command), out.stderr))
    work_done = float([l for l in out.stdout.splitlines() if l.startswith("WORK_DONE")][0].split()[1])
    size = 0
    for root, _dirs, files in os.walk(os.path.join(tmp, "exp")):
        size += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    shutil.rmtree(os.path.join(tmp, "exp"), ignore_errors=True)
    return ended - work_done, size


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", default="2,4,8")
    parser.add_argument("--calls", default="1000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="scorep-mpi-bench-")
    print("%6s %10s %12s %12s %12s %14s %12s" % (
        "ranks", "calls/rank", "events/rank", "plain end[s]", "scorep end[s]",
        "extra end[s]", "written[MB]"))
    for ranks in [int(r) for r in args.ranks.split(",")]:
        for calls in [int(c) for c in args.calls.split(",")]:
            plain = min(run(ranks, calls, False, tmp)[0] for _ in range(args.repeat))
            best, size = float("inf"), 0
            for _ in range(args.repeat):
                seconds, size = run(ranks, calls, True, tmp)
                best = min(best, seconds)
            print("%6d %10d %12d %12.3f %12.3f %14.3f %12.1f" % (
                ranks, calls, 2 * calls, plain, best, best - plain, size / 1e6))
            sys.stdout.flush()
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
