"""What a filtered function costs: a tiny function called 10^7 times, left out by a filter
file, against the uninstrumented run, cProfile, and scorep recording it.

    python3 benchmarks/filtered.py [--calls N] [--repeat R] [--python PATH ...]

On 3.12+ a filtered function's sys.monitoring events are switched off at its first call,
so it should run at nearly the uninstrumented speed; before 3.12 every call still passes
the frame evaluation hook, which finds the decision in the code object's cache.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
sys.path.insert(0, HERE)
from overhead import default_pythons, version_of  # noqa: E402

FILTER = """SCOREP_REGION_NAMES_BEGIN
  EXCLUDE __main__:tiny
SCOREP_REGION_NAMES_END
"""


def run(python, mode, calls, tmp, filter_file):
    script = os.path.join(HERE, "workloads", "tiny_loop.py")
    env = dict(os.environ, PYTHONPATH=SRC, SCOREP_EXPERIMENT_DIRECTORY=tempfile.mkdtemp(dir=tmp))
    if mode == "plain":
        args = [python, script]
    elif mode == "cProfile":
        args = [python, "-m", "cProfile", "-o", os.devnull, script]
    elif mode == "scorep":
        args = [python, "-m", "scorep", script]
    else:
        args = [python, "-m", "scorep", "--filter=" + filter_file, script]
    out = subprocess.run(args + [str(calls)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("failed: %s\n%s" % (" ".join(args), out.stderr))
    # The process's CPU time over the loop: other processes on a busy machine disturb it
    # least (see overhead.py).
    return float(re.search(r"CPU_SECONDS ([0-9.e-]+)", out.stdout).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--python", action="append")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="scorep-filter-bench-")
    filter_file = os.path.join(tmp, "tiny.filter")
    with open(filter_file, "w") as out:
        out.write(FILTER)
    modes = ["plain", "cProfile", "scorep", "scorep+filter"]
    print("%-8s %-14s %9s %8s %9s %9s" % ("python", "mode", "best[s]", "x plain", "x cProf",
                                           "ns/call"))
    for python in args.python or default_pythons():
        best = {m: float("inf") for m in modes}
        for _ in range(args.repeat):
            for mode in modes:
                best[mode] = min(best[mode], run(python, mode, args.calls, tmp, filter_file))
        for mode in modes:
            print("%-8s %-14s %9.3f %8.2f %9.2f %9.1f" % (
                version_of(python), mode, best[mode], best[mode] / best["plain"],
                best[mode] / best["cProfile"], (best[mode] - best["plain"]) / args.calls * 1e9))
        sys.stdout.flush()
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
