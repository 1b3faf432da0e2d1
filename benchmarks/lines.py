"""Line-level profiles: scorep --lines against line_profiler on the same function, measured
in the same run, and the cost left on functions that are not chosen.

    python3 benchmarks/lines.py [--python P ...] [--repeat N] [--size N]

The workload calls `hot` (chosen) and then `other` (the same body, not chosen); each prints
its own time. Modes, alternating, best of N:
  plain            python workload.py
  line_profiler    line_profiler's LineProfiler wrapping hot (where line_profiler is installed:
                   Debian's python3-line-profiler, for /usr/bin/python3)
  scorep           python -m scorep (no line profiles)
  scorep --lines   python -m scorep --lines=__main__:hot
Printed: each mode's time for hot and for other, the extra ns per line event of hot (line
events counted from scorep's lines.json), and scorep's extra as a fraction of line_profiler's.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

WORKLOAD = '''
import sys, time

def hot(n):
    total = 0
    for i in range(n):
        total += i * i
        if i % 3 == 0:
            total -= 1
    return total

def other(n):
    total = 0
    for i in range(n):
        total += i * i
        if i % 3 == 0:
            total -= 1
    return total

def timed(f, n):
    start = time.perf_counter()
    f(n)
    return time.perf_counter() - start

n = int(sys.argv[1])
if len(sys.argv) > 2 and sys.argv[2] == "line_profiler":
    from line_profiler import LineProfiler
    profiler = LineProfiler()
    hot = profiler(hot)
print("HOT", timed(hot, n))
print("OTHER", timed(other, n))
'''

MODES = ["plain", "line_profiler", "scorep", "scorep --lines"]


def default_pythons():
    pythons = ["/usr/bin/python3"]
    for version in ("3.12", "3.13"):
        found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/%s.*/bin/python%s"
                                                    % (version, version))))
        if found:
            pythons.append(found[-1])
    return pythons


def has_line_profiler(python):
    return subprocess.run([python, "-c", "import line_profiler"],
                          capture_output=True).returncode == 0


def run(python, mode, script, size, tmp):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREP_")}
    env["PYTHONPATH"] = SRC
    experiment = os.path.join(tmp, "exp")
    env["SCOREP_EXPERIMENT_DIRECTORY"] = experiment
    if mode == "plain":
        args = [python, script, str(size)]
    elif mode == "line_profiler":
        args = [python, script, str(size), "line_profiler"]
    elif mode == "scorep":
        args = [python, "-m", "scorep", script, str(size)]
    else:
        args = [python, "-m", "scorep", "--lines=__main__:hot", script, str(size)]
    out = subprocess.run(args, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("benchmark run failed: %s\n%s" % (" ".join(args), out.stderr))
    hot = float(re.search(r"HOT ([0-9.e-]+)", out.stdout).group(1))
    other = float(re.search(r"OTHER ([0-9.e-]+)", out.stdout).group(1))
    events = None
    if mode == "scorep --lines":
        with open(os.path.join(experiment, "lines.json")) as f:
            data = json.load(f)
        events = sum(hits for loc in data["locations"] for _, _, hits, _ in loc["lines"])
    shutil.rmtree(experiment, ignore_errors=True)
    return hot, other, events


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--size", type=int, default=300000)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="scorep-lines-bench-")
    script = os.path.join(tmp, "workload.py")
    with open(script, "w") as f:
        f.write(WORKLOAD)
    print("%-8s %-15s %10s %10s %12s %14s" % ("python", "mode", "hot[s]", "other[s]",
                                               "ns/line", "extra/lprof"))
    for python in args.python or default_pythons():
        version = subprocess.run([python, "-c", "import platform;print(platform.python_version())"],
                                 capture_output=True, text=True).stdout.strip()
        modes = [m for m in MODES if m != "line_profiler" or has_line_profiler(python)]
        best = {m: [float("inf"), float("inf")] for m in modes}
        events = None
        for _ in range(args.repeat):
            for mode in modes:
                hot, other, counted = run(python, mode, script, args.size, tmp)
                best[mode] = [min(best[mode][0], hot), min(best[mode][1], other)]
                events = counted or events
        base = best["plain"][0]
        for mode in modes:
            extra = (best[mode][0] - base) / events * 1e9
            versus = ""
            if "line_profiler" in best and mode != "plain":
                lp_extra = best["line_profiler"][0] - base
                versus = "%.2f" % ((best[mode][0] - base) / lp_extra)
            print("%-8s %-15s %10.4f %10.4f %12.1f %14s" % (version, mode, best[mode][0],
                                                             best[mode][1], extra, versus))
        print("%-8s %d line events in hot; 'other' is not chosen: compare its time across modes"
              % (version, events))
        sys.stdout.flush()
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
