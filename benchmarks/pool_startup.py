"""Starting a multiprocessing pool under measurement (issue 13: every child process joins
the experiment): Pool(4) start + 1 000 tiny tasks, plain against measured, and the cost per
call inside the workers against the parent's.

    python3 benchmarks/pool_startup.py [--repeat N] [--python PATH ...] [--method M ...]

For every interpreter and start method it runs, alternating, N times each:
  plain            python pool_startup.py
  scorep:parent    python -m scorep --no-children (the parent alone, as before issue 13)
  scorep:profile   python -m scorep (workers are measured: their profiles join the parent's)
  scorep:trace     the same with SCOREP_ENABLE_TRACING=true
and prints the best of each figure: the pool's start and tasks ("pool"), the end of the with
statement ("end": terminate(), and the workers writing their parts), the whole process from
exec to exit ("wall", with the final unification), the ratios to plain, and fib's extra ns
per call in a worker and in the parent (against plain's worker and parent).

No cProfile column: `python -m cProfile pool_startup.py` cannot run it (the script's functions
are not in a module __main__ there, so the pool cannot pickle them), and cProfile records no
child process anyway.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
WORKLOAD = os.path.join(HERE, "workloads", "pool_startup.py")
MODES = ["plain", "scorep:parent", "scorep:profile", "scorep:trace"]
FIB_CALLS = 28657  # fib(22): calls of fib


def command(python, mode, method, experiment):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREP_")}
    env.update(PYTHONPATH=SRC, SCOREP_EXPERIMENT_DIRECTORY=experiment)
    if mode == "plain":
        return [python, WORKLOAD, method], env
    if mode == "scorep:trace":
        env["SCOREP_ENABLE_TRACING"] = "true"
    if mode == "scorep:parent":
        return [python, "-m", "scorep", "--no-children", WORKLOAD, method], env
    return [python, "-m", "scorep", WORKLOAD, method], env


def run_once(python, mode, method, tmp):
    experiment = tempfile.mkdtemp(dir=tmp)
    os.rmdir(experiment)
    args, env = command(python, mode, method, experiment)
    start = time.perf_counter()
    out = subprocess.run(args, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit("benchmark run failed: %s\n%s" % (" ".join(args), out.stderr))
    figures = {name.lower(): float(value) for name, value in
               re.findall(r"^([A-Z_]+) ([0-9.e-]+)$", out.stdout, re.M)}
    figures["wall"] = wall
    if mode.startswith("scorep"):
        groups = subprocess.run(
            [sys.executable, "-c", "import sys; from scorep import cube; "
             "print(len(cube.read(sys.argv[1]).location_groups))",
             os.path.join(experiment, "profile.cubex")],
            env=dict(os.environ, PYTHONPATH=SRC), capture_output=True, text=True)
        figures["processes"] = int(groups.stdout.strip() or 0)
    subprocess.run(["rm", "-rf", experiment])
    return figures


def version_of(python):
    return subprocess.run([python, "-c", "import platform;print(platform.python_version())"],
                          capture_output=True, text=True).stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--python", action="append")
    parser.add_argument("--method", action="append",
                        choices=["fork", "spawn", "forkserver"])
    args = parser.parse_args()
    pythons = args.python or ["/usr/bin/python3"]
    methods = args.method or ["fork", "spawn", "forkserver"]
    tmp = tempfile.mkdtemp(prefix="scorep-bench-")
    print("%-7s %-10s %-15s %8s %7s %8s %7s %8s %7s %9s %9s %5s" % (
        "python", "method", "mode", "pool[s]", "x plain", "end[s]", "x plain", "wall[s]",
        "x plain", "child ns", "parent ns", "procs"))
    for python in pythons:
        version = version_of(python)
        for method in methods:
            best = {mode: {} for mode in MODES}
            for _ in range(args.repeat):
                for mode in MODES:  # alternating, so that drift hits all modes alike
                    for key, value in run_once(python, mode, method, tmp).items():
                        best[mode][key] = min(best[mode].get(key, float("inf")), value)
            plain = best["plain"]
            for mode in MODES:
                b = best[mode]
                # (unmeasured workers: their fib costs what plain's does)
                child_ns = (b["child_fib"] - plain["child_fib"]) / FIB_CALLS * 1e9
                parent_ns = (b["parent_fib"] - plain["parent_fib"]) / FIB_CALLS * 1e9
                print("%-7s %-10s %-15s %8.3f %7.2f %8.3f %7.2f %8.3f %7.2f %9.1f %9.1f %5s" % (
                    version, method, mode, b["pool_seconds"],
                    b["pool_seconds"] / plain["pool_seconds"], b["end_seconds"],
                    b["end_seconds"] / plain["end_seconds"], b["wall"], b["wall"] / plain["wall"],
                    child_ns, parent_ns, b.get("processes", "-")))
            sys.stdout.flush()
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
