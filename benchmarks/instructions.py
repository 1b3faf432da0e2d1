"""Instructions per call under callgrind: a repeatable measure of the event path's cost,
for A/B comparisons on a noisy machine (time varies between runs; instruction counts do not).

    python3 benchmarks/instructions.py [--python P ...] [--workload fib|tiny_loop]
                                       [--size N] [--src DIR ...] [--env NAME=VALUE ...]

For every interpreter it counts the instructions (valgrind --tool=callgrind) of the same
workload run plain, under cProfile, and under scorep with profiling and with tracing, and
prints the extra instructions per call+return and that extra as a fraction of cProfile's.
With several --src (checkouts' src/ folders, e.g. a baseline and a change) scorep is counted
once per checkout, side by side. --env sets variables for the scorep runs, e.g. the extra
instructions of a metric: --env SCOREP_METRIC_RUSAGE=ru_utime against a run without it.
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

WORKLOADS = {"fib": ("fib.py", 20), "tiny_loop": ("tiny_loop.py", 20000)}
# Calls (and returns) each workload makes beyond the interpreter's start-up.
CALLS = {"fib": lambda n: _fib_calls(n), "tiny_loop": lambda n: n}


def _fib_calls(n):
    a, b = 1, 1  # calls of fib(0), fib(1)
    for _ in range(n - 1):
        a, b = b, a + b + 1
    return b


def default_pythons():
    pythons = ["/usr/bin/python3"]
    for version in ("3.12", "3.13"):
        found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/%s.*/bin/python%s"
                                                    % (version, version))))
        if found:
            pythons.append(found[-1])
    return pythons


def count(args, env):
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
                         + args, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("run failed: %s\n%s" % (" ".join(args), out.stderr[-2000:]))
    match = re.search(r"Collected : (\d+)", out.stderr)
    return int(match.group(1))


def environment(src, experiment, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREP_")}
    env.update(PYTHONPATH=src, SCOREP_EXPERIMENT_DIRECTORY=experiment, **extra)
    return env


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append")
    parser.add_argument("--workload", default="fib", choices=sorted(WORKLOADS))
    parser.add_argument("--size", type=int)
    parser.add_argument("--src", action="append")
    parser.add_argument("--env", action="append", default=[],
                        help="NAME=VALUE for the scorep runs (e.g. SCOREP_METRIC_RUSAGE=ru_utime)")
    args = parser.parse_args()
    settings = dict(item.split("=", 1) for item in args.env)
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind is needed (apt-get install valgrind)")
    script, size = WORKLOADS[args.workload]
    size = args.size or size
    calls = CALLS[args.workload](size)
    program = [os.path.join(HERE, "workloads", script), str(size)]
    sources = args.src or [SRC]
    tmp = tempfile.mkdtemp(prefix="scorep-instr-")
    print("%s(%d): %d calls; extra instructions per call+return (fraction of cProfile's)"
          % (args.workload, size, calls))
    for python in args.python or default_pythons():
        version = subprocess.run([python, "-c", "import platform;print(platform.python_version())"],
                                 capture_output=True, text=True).stdout.strip()
        experiment = os.path.join(tmp, "exp")
        empty = [os.path.join(HERE, "workloads", script), "0"]

        def extra_per_call(prefix, env):
            """(instructions with the workload - without it) beyond plain Python's, per call:
            start-up and the end of the measurement cancel out."""
            work = count(prefix + program, env) - count(prefix + empty, env)
            shutil.rmtree(experiment, ignore_errors=True)
            return (work - plain_work) / calls

        plain_work = (count([python] + program, environment(sources[0], experiment)) -
                      count([python] + empty, environment(sources[0], experiment)))
        cprofile = extra_per_call([python, "-m", "cProfile", "-o", os.devnull],
                                  environment(sources[0], experiment))
        row = ["%-7s cProfile %6.0f" % (version, cprofile)]
        for src in sources:
            label = os.path.basename(os.path.dirname(os.path.abspath(src))) if len(
                sources) > 1 else "scorep"
            for mode, extra in (("profile", {}), ("trace", {"SCOREP_ENABLE_TRACING": "true",
                                                             "SCOREP_ENABLE_PROFILING": "false",
                                                             "SCOREP_TOTAL_MEMORY": "1G"})):
                per_call = extra_per_call([python, "-m", "scorep"],
                                          environment(src, experiment, **settings, **extra))
                row.append("%s %s %6.0f (%.2f)" % (label, mode, per_call, per_call / cprofile))
        print("  ".join(row))
        sys.stdout.flush()
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
