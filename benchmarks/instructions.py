"""Instructions per call under callgrind: a repeatable measure of the event path's cost,
for A/B comparisons on a noisy machine (time varies between runs; instruction counts do not).

    PYTHONHASHSEED=0 python3 benchmarks/instructions.py [--python P ...] [--workload W]
        [--size N] [--src DIR ...] [--mode M ...] [--cache-sim] [--env NAME=VALUE ...]

For every interpreter it counts the instructions (valgrind --tool=callgrind) of the same
workload run plain, under cProfile, and under scorep (profiling, tracing, a filtered run
of tiny_loop, sampling), and prints the extra instructions per call+return and that extra as
a fraction of cProfile's. Start-up and the end of the measurement cancel out: each count is
that of the workload minus that of the same command with the workload's size 0 -- except
for the trace, whose OTF2 encoding at the end grows with the events (it is counted: it is
work the measurement does, though not while the program runs). With --cache-sim the
simulated first-level data cache misses per call are printed too (`D1mr+D1mw`).

With several --src (checkouts' src/ folders, e.g. a baseline and a change) scorep is counted
once per checkout, side by side. --env sets variables for the scorep runs, e.g. the extra
instructions of a metric: --env SCOREP_METRIC_RUSAGE=ru_utime against a run without it.
Run with PYTHONHASHSEED=0: string hashing then does not vary between runs, and neither do
the counts.
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

# Sizes small enough for valgrind (it runs ~50x slower).
WORKLOADS = {"fib": ("fib.py", 20), "tiny_loop": ("tiny_loop.py", 20000),
             "oo_scheduler": ("oo_scheduler.py", 2), "oo_raytrace": ("oo_raytrace.py", 12),
             "oo_go": ("oo_go.py", 1), "oo_constraints": ("oo_constraints.py", 60)}
# Calls (and returns) each workload makes beyond the interpreter's start-up, where it is
# known in closed form; the others are counted by a measured run.
CALLS = {"fib": lambda n: _fib_calls(n), "tiny_loop": lambda n: n}

MODES = {
    "profile": {},
    "trace": {"SCOREP_ENABLE_TRACING": "true", "SCOREP_ENABLE_PROFILING": "false",
              "SCOREP_TOTAL_MEMORY": "1G"},
    "filtered": {"filter": "__main__:tiny"},
    "sampling": {"args": ["--sampling"]},
    # C functions as regions, on and off whatever the interpreter's default, and before 3.12
    # through the profile hook alone (no frame-evaluation hook beside it).
    "c-calls": {"args": ["--c-calls"]},
    "no-c-calls": {"args": ["--no-c-calls"]},
    "c-calls-hook": {"args": ["--c-calls", "--instrumenter-type=cProfile"]},
}


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


def count(args, env, cache_sim):
    """(instructions, D1 misses) of one run."""
    options = ["--cache-sim=yes"] if cache_sim else []
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
                         + options + args, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("run failed: %s\n%s" % (" ".join(args), out.stderr[-2000:]))
    instructions = int(re.search(r"Collected : (\d+)", out.stderr).group(1))
    misses = 0
    if cache_sim:
        # "D1  misses: read + write" in callgrind's summary
        match = re.search(r"D1\s+misses:\s+([\d,]+)", out.stderr)
        misses = int(match.group(1).replace(",", "")) if match else 0
    return instructions, misses


def environment(src, experiment, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREP_")}
    env.update(PYTHONPATH=src, SCOREP_EXPERIMENT_DIRECTORY=experiment, **extra)
    return env


def measured_calls(python, program, src, experiment):
    out = subprocess.run([python, "-m", "scorep", "--verbose"] + program,
                         env=environment(src, experiment), capture_output=True, text=True)
    shutil.rmtree(experiment, ignore_errors=True)
    match = re.search(r"(\d+) enter\(s\)", out.stderr)
    if not match:
        raise SystemExit("could not count the calls:\n" + out.stderr[-2000:])
    return int(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append")
    parser.add_argument("--workload", default="fib", choices=sorted(WORKLOADS))
    parser.add_argument("--size", type=int)
    parser.add_argument("--src", action="append")
    parser.add_argument("--mode", action="append", choices=sorted(MODES),
                        help="scorep modes (default: profile and trace)")
    parser.add_argument("--cache-sim", action="store_true",
                        help="also print simulated L1 data cache misses per call")
    parser.add_argument("--env", action="append", default=[],
                        help="NAME=VALUE for the scorep runs (e.g. SCOREP_METRIC_RUSAGE=ru_utime)")
    args = parser.parse_args()
    env_settings = dict(item.split("=", 1) for item in args.env)
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind is needed (apt-get install valgrind)")
    script, size = WORKLOADS[args.workload]
    size = args.size or size
    program = [os.path.join(HERE, "workloads", script), str(size)]
    empty = [os.path.join(HERE, "workloads", script), "0"]
    sources = args.src or [SRC]
    modes = args.mode or ["profile", "trace"]
    tmp = tempfile.mkdtemp(prefix="scorep-instr-")
    filter_path = os.path.join(tmp, "filter.txt")
    experiment = os.path.join(tmp, "exp")
    print("%s(%d): extra instructions per call+return (fraction of cProfile's)%s"
          % (args.workload, size, ", D1 misses per call" if args.cache_sim else ""))
    for python in args.python or default_pythons():
        version = subprocess.run([python, "-c", "import platform;print(platform.python_version())"],
                                 capture_output=True, text=True).stdout.strip()
        if args.workload in CALLS:
            calls = CALLS[args.workload](size)
        else:
            calls = measured_calls(python, program, sources[0], experiment)

        def extra_per_call(prefix, env):
            """(instructions with the workload - without it) beyond plain Python's, per call."""
            work = count(prefix + program, env, args.cache_sim)
            base = count(prefix + empty, env, args.cache_sim)
            shutil.rmtree(experiment, ignore_errors=True)
            return ((work[0] - base[0] - plain_work[0]) / calls,
                    (work[1] - base[1] - plain_work[1]) / calls)

        def show(label, value):
            misses = " %5.1f" % value[1] if args.cache_sim else ""
            return "%s %6.0f%s (%.2f)" % (label, value[0], misses, value[0] / cprofile[0])

        plain_env = environment(sources[0], experiment)
        w, b = count([python] + program, plain_env, args.cache_sim), count([python] + empty,
                                                                            plain_env,
                                                                            args.cache_sim)
        plain_work = (w[0] - b[0], w[1] - b[1])
        cprofile = extra_per_call([python, "-m", "cProfile", "-o", os.devnull],
                                  environment(sources[0], experiment))
        row = ["%-7s %d calls, cProfile %6.0f%s" % (
            version, calls, cprofile[0], " %5.1f" % cprofile[1] if args.cache_sim else "")]
        for src in sources:
            label = os.path.basename(os.path.dirname(os.path.abspath(src))) if len(
                sources) > 1 else "scorep"
            for mode in modes:
                settings = dict(MODES[mode])
                options = list(settings.pop("args", []))
                if "filter" in settings:
                    with open(filter_path, "w") as out:
                        out.write("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE %s\n"
                                  "SCOREP_REGION_NAMES_END\n" % settings.pop("filter"))
                    options.append("--filter=" + filter_path)
                per_call = extra_per_call([python, "-m", "scorep"] + options,
                                          environment(src, experiment,
                                                      **dict(env_settings, **settings)))
                row.append(show("%s %s" % (label, mode), per_call))
        print("  ".join(row))
        sys.stdout.flush()
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
