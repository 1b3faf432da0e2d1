"""Overhead of scorep against the uninstrumented run and cProfile, measured in the same run.

    python3 benchmarks/overhead.py [--repeat N] [--python PATH ...] [--workload NAME ...]
                                   [--mode MODE ...] [--timer tsc|clock_gettime] [--scale F]

For every interpreter and workload it runs, alternating, R times each:
  plain            python workload.py
  cProfile         python -m cProfile -o /dev/null workload.py
  scorep:hooks     python -m scorep, profiling and tracing off: the instrumentation and the
                   core's call stack, nothing recorded
  scorep:profile   python -m scorep (profiling, the default; C functions called from
                   Python recorded too)
  scorep:profile-c scorep:profile with --no-c-calls: Python functions only
  scorep:trace     python -m scorep with SCOREP_ENABLE_TRACING=true, profiling off
  scorep:sampling  python -m scorep --sampling (1 kHz, wall-clock time; profile)
  scorep:sampling+trace   the same with tracing too (CallingContextSample records)
  scorep:sampling+native  scorep:sampling with --native (each sample's C stack too)
  scorep:profile+eval, scorep:profile+cProfile   scorep:profile with that instrumenter
                   (--instrumenter-type; eval only before 3.12): the instrumenters compared
and prints the best time of the work (measured inside the program, without interpreter
start-up and without writing results: by default the process's CPU time, all threads
counted, --clock=wall for the elapsed time), the ratio to plain and to cProfile, the extra ns per
call+return (calls counted by a traced run) and that extra time as a fraction of cProfile's.
After each interpreter, one line sums up the realistic object-oriented workloads
(oo_*): the geometric means of the instrumented modes' extra time as a fraction of
cProfile's, and of the sampling modes' overhead over plain.
"""

import argparse
import glob
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")

WORKLOADS = {
    # Sized so that each run takes 0.1-1 s: shorter runs are at the mercy of a noisy VM.
    "fib": ["fib.py", "27"],
    "tiny_loop": ["tiny_loop.py", "3000000"],
    "numeric_loop": ["numeric_loop.py", "3000000"],
    "realistic": ["realistic.py", "10"],
    # Object-oriented programs of our own in the spirit of pyperformance's richards,
    # raytrace, go and deltablue: classes, method calls, recursion, dict and list work.
    "oo_scheduler": ["oo_scheduler.py", "30"],
    "oo_raytrace": ["oo_raytrace.py", "70"],
    "oo_go": ["oo_go.py", "2"],
    "oo_constraints": ["oo_constraints.py", "1000"],
}
# The realistic object-oriented set: its geometric means are the summary line.
OO_WORKLOADS = ("oo_scheduler", "oo_raytrace", "oo_go", "oo_constraints")

MODES = ["plain", "cProfile", "scorep:hooks", "scorep:profile", "scorep:profile-c", "scorep:trace",
         "scorep:sampling", "scorep:sampling+trace", "scorep:sampling+native", "scorep:profile+eval",
         "scorep:profile+cProfile"]


def default_pythons():
    pythons = ["/usr/bin/python3"]
    for version in ("3.12", "3.13"):
        found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/%s.*/bin/python%s"
                                                    % (version, version))))
        if found:
            pythons.append(found[-1])
    return pythons


def command(python, mode, workload, experiment, timer=None):
    script = [os.path.join(HERE, "workloads", workload[0])] + workload[1:]
    env = dict(os.environ, PYTHONPATH=SRC, SCOREP_EXPERIMENT_DIRECTORY=experiment)
    for name in list(env):
        if name.startswith("SCOREP_") and name != "SCOREP_EXPERIMENT_DIRECTORY":
            del env[name]
    if timer:
        env["SCOREP_TIMER"] = timer
    if mode == "plain":
        return [python] + script, env
    if mode == "cProfile":
        return [python, "-m", "cProfile", "-o", os.devnull] + script, env
    if mode == "scorep:hooks":
        env.update(SCOREP_ENABLE_PROFILING="false", SCOREP_ENABLE_TRACING="false")
    elif mode == "scorep:profile":
        env.update(SCOREP_ENABLE_PROFILING="true", SCOREP_ENABLE_TRACING="false")
    elif mode == "scorep:profile-c":
        env.update(SCOREP_ENABLE_PROFILING="true", SCOREP_ENABLE_TRACING="false",
                   SCOREP_PYTHON_C_CALLS="false")
    elif mode == "scorep:trace":
        env.update(SCOREP_ENABLE_PROFILING="false", SCOREP_ENABLE_TRACING="true",
                   SCOREP_TOTAL_MEMORY="1G")
    elif mode.startswith("scorep:sampling"):
        env.update(SCOREP_ENABLE_TRACING="true" if mode.endswith("+trace") else "false",
                   SCOREP_TOTAL_MEMORY="1G")
        native = ["--native"] if mode.endswith("+native") else []
        return [python, "-m", "scorep", "--verbose", "--sampling"] + native + script, env
    elif mode.startswith("scorep:profile+"):
        env.update(SCOREP_ENABLE_PROFILING="true", SCOREP_ENABLE_TRACING="false")
        return [python, "-m", "scorep", "--verbose",
                "--instrumenter-type=" + mode.split("+", 1)[1]] + script, env
    return [python, "-m", "scorep", "--verbose"] + script, env


def run_once(python, mode, workload, tmp, clock, timer=None):
    experiment = tempfile.mkdtemp(dir=tmp)
    args, env = command(python, mode, workload, experiment, timer)
    out = subprocess.run(args, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("benchmark run failed: %s\n%s" % (" ".join(args), out.stderr))
    label = "CPU_SECONDS" if clock == "cpu" else "WORK_SECONDS"
    seconds = float(re.search(label + r" ([0-9.e-]+)", out.stdout).group(1))
    calls = re.search(r"(\d+) enter\(s\)", out.stderr)
    subprocess.run(["rm", "-rf", experiment])
    return seconds, int(calls.group(1)) if calls else None


def geometric_mean(values):
    # A negative extra time is noise (a mode cannot be faster than plain): counted as 0.01.
    values = [max(v, 0.01) for v in values]
    return math.exp(sum(math.log(v) for v in values) / len(values))


def version_of(python):
    return subprocess.run([python, "-c", "import platform;print(platform.python_version())"],
                          capture_output=True, text=True).stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--python", action="append")
    parser.add_argument("--workload", action="append", choices=sorted(WORKLOADS))
    parser.add_argument("--timer", choices=("tsc", "clock_gettime"),
                        help="SCOREP_TIMER for the scorep modes (default: the measurement's)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply each workload's size (longer runs: the sampler's "
                             "start and end weigh less)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="what is compared: the process's CPU time over the work (all its "
                             "threads, the sampler's too; the default: other processes on a "
                             "busy machine disturb it least) or the wall-clock time")
    parser.add_argument("--mode", action="append", choices=MODES[2:],
                        help="scorep modes to run (default: all); plain and cProfile always run")
    args = parser.parse_args()
    pythons = args.python or default_pythons()
    workloads = args.workload or list(WORKLOADS)
    modes = MODES[:2] + [m for m in MODES[2:] if not args.mode or m in args.mode]
    if args.scale <= 0:
        parser.error("--scale must be positive")
    if args.scale != 1.0:
        for name, workload in WORKLOADS.items():
            size = int(workload[1])
            if name == "fib":
                # fib(n) makes ~phi**n calls: the work scales by phi per step of n.
                size += int(round(math.log(args.scale) / math.log((1 + 5 ** 0.5) / 2)))
            else:
                size = int(round(size * args.scale))
            workload[1] = str(max(1, size))
    tmp = tempfile.mkdtemp(prefix="scorep-bench-")
    print("%-8s %-14s %9s %-21s %9s %8s %9s %9s %9s" % (
        "python", "workload", "calls", "mode", "best[s]", "x plain", "x cProf", "ns/call",
        "ovh/cProf"))
    for python in pythons:
        version = version_of(python)
        # The frame evaluation instrumenter exists before 3.12 only.
        modes_here = [m for m in modes if m != "scorep:profile+eval"
                      or tuple(int(x) for x in version.split(".")[:2]) < (3, 12)]
        fractions = {}  # mode -> [extra / cProfile's extra] over the oo_* workloads
        overheads = {}  # mode -> [time / plain] over the oo_* workloads
        for name in workloads:
            best = {mode: float("inf") for mode in modes_here}
            calls = None
            for _ in range(args.repeat):
                for mode in modes_here:  # alternating, so that drift hits all modes alike
                    seconds, counted = run_once(python, mode, WORKLOADS[name], tmp, args.clock,
                                                args.timer)
                    best[mode] = min(best[mode], seconds)
                    if counted and mode in ("scorep:trace", "scorep:profile",
                                            "scorep:profile+cProfile"):
                        calls = counted
            for mode in modes_here:
                ratio = best[mode] / best["plain"]
                vs_cprofile = best[mode] / best["cProfile"]
                extra = best[mode] - best["plain"]
                cprofile_extra = best["cProfile"] - best["plain"]
                # With a handful of calls the per-call figure and the overhead ratio are
                # noise over noise: only the ratios to plain and cProfile mean something.
                meaningful = calls is not None and calls >= 1000
                ns = "%.1f" % (extra / calls * 1e9) if meaningful else "-"
                overhead_ratio = "%.2f" % (extra / cprofile_extra) if meaningful else "-"
                print("%-8s %-14s %9s %-21s %9.4f %8.2f %9.2f %9s %9s" % (
                    version, name, calls or "?", mode, best[mode], ratio, vs_cprofile, ns,
                    overhead_ratio))
                if name in OO_WORKLOADS and mode.startswith("scorep"):
                    fractions.setdefault(mode, []).append(max(extra, 0.0) / cprofile_extra)
                    overheads.setdefault(mode, []).append(ratio)
            sys.stdout.flush()
        if fractions:
            print("%-8s summary of %s: geometric means: %s" % (version, ", ".join(
                w for w in workloads if w in OO_WORKLOADS), "; ".join(
                "%s %.2f of cProfile's extra time, %.3fx plain" % (
                    mode, geometric_mean(fractions[mode]), geometric_mean(overheads[mode]))
                for mode in modes_here if mode in fractions)))
            sys.stdout.flush()
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
