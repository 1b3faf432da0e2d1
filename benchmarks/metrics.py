"""The cost of metrics per region: each enabled metric is read at every enter and leave.

    python3 benchmarks/metrics.py [--python P ...] [--size N] [--repeat R]

For every interpreter, fib(N) plain, under cProfile, and under scorep (profiling) without
metrics and with each metric configuration below; prints the workload's time (best of R), the
extra ns per call+return against the run without metrics, and per metric, and the ratios to
the plain run and to cProfile. The time is the program's own measurement
of fib (WORK_SECONDS), so start-up and the end of the measurement are not in it.
"""

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
FIB = os.path.join(HERE, "workloads", "fib.py")

# (label, variables, number of metrics read at each event)
CONFIGS = [
    ("no metrics", {}, 0),
    ("rusage ru_utime", {"SCOREP_METRIC_RUSAGE": "ru_utime"}, 1),
    ("rusage ru_utime,ru_stime,ru_minflt", {"SCOREP_METRIC_RUSAGE": "ru_utime,ru_stime,ru_minflt"}, 3),
    ("perf page-faults", {"SCOREP_METRIC_PERF": "page-faults"}, 1),
    ("perf page-faults,task-clock", {"SCOREP_METRIC_PERF": "page-faults,task-clock"}, 2),
    ("--memory (python_allocated, python_freed)", {"SCOREP_PYTHON_MEMORY": "true"}, 2),
]


def calls_of(n):
    a, b = 1, 1
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


def work_seconds(python, env, size, runner=("-m", "scorep")):
    out = subprocess.run([python, *runner, FIB, str(size)], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("run failed: %s" % out.stderr[-2000:])
    return float(re.search(r"WORK_SECONDS (\S+)", out.stdout).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append")
    parser.add_argument("--size", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    calls = calls_of(args.size)
    tmp = tempfile.mkdtemp(prefix="scorep-metrics-bench-")
    print("fib(%d): %d calls; best of %d; extra ns per call+return against no metrics "
          "(per metric)" % (args.size, calls, args.repeat))
    for python in args.python or default_pythons():
        version = subprocess.run([python, "-c", "import platform;print(platform.python_version())"],
                                 capture_output=True, text=True).stdout.strip()
        base = None
        clean = {k: v for k, v in os.environ.items() if not k.startswith("SCOREP_")}
        plain = min(work_seconds(python, clean, args.size, ()) for _ in range(args.repeat))
        cprofile = min(work_seconds(python, clean, args.size,
                                    ("-m", "cProfile", "-o", os.path.join(tmp, "prof")))
                       for _ in range(args.repeat))
        print("%-7s %-44s %7.3f s" % (version, "plain", plain))
        print("%-7s %-44s %7.3f s  x%.1f plain" % (version, "cProfile", cprofile,
                                                    cprofile / plain))
        for label, variables, count in CONFIGS:
            env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREP_")}
            env.update(PYTHONPATH=SRC, SCOREP_EXPERIMENT_DIRECTORY=os.path.join(tmp, "exp"),
                       **variables)
            best = min(work_seconds(python, env, args.size) for _ in range(args.repeat))
            if base is None:
                base = best
                print("%-7s %-44s %7.3f s  x%.1f plain  x%.2f cProfile"
                      % (version, label, best, best / plain, best / cprofile))
                continue
            extra = (best - base) * 1e9 / calls
            print("%-7s %-44s %7.3f s  x%.1f plain  x%.2f cProfile  %+7.0f ns  (%+.0f ns per "
                  "metric)" % (version, label, best, best / plain, best / cprofile, extra,
                               extra / count))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
