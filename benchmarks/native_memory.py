"""The cost of recording native allocations (--memory's native_* metrics) on an
allocation-heavy numpy workload (benchmarks/workloads/numpy_alloc.py: four numpy
allocations and frees per step, one call per step).

    python3 benchmarks/native_memory.py [--python P] [--steps N] [--repeat R]

Prints the loop's time (glibc's heap trimming fixed, see run_once) (best of R, the program's own measurement, so start-up and the end
of the measurement are not in it) plain, under tracemalloc, and under scorep without
metrics, with the Python allocators' metrics only, with the native ones only and with
--memory (both, and gc:collect regions), and the extra time per step against plain.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
WORKLOAD = os.path.join(HERE, "workloads", "numpy_alloc.py")

CONFIGS = [
    ("plain", None, [], {}),
    ("tracemalloc", None, ["tracemalloc"], {}),
    ("scorep, no metrics", [], [], {}),
    ("scorep, SCOREP_PYTHON_MEMORY", [], [], {"SCOREP_PYTHON_MEMORY": "true"}),
    ("scorep, SCOREP_NATIVE_MEMORY", [], [], {"SCOREP_NATIVE_MEMORY": "true"}),
    ("scorep --memory", ["--memory"], [], {}),
]


def run_once(python, scorep_args, args, env_vars, steps, workdir):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREP_")}
    env["PYTHONPATH"] = SRC
    # glibc gives the top of the heap back to the kernel when a free leaves more than 128 kB
    # there, and the next step faults the pages in again: whether that happens each step
    # depends on where the tool's own blocks lie, which changed the loop's time by 3x
    # between configurations. A fixed heap keeps page faults out of the comparison.
    env["MALLOC_TRIM_THRESHOLD_"] = str(1 << 30)
    env["MALLOC_TOP_PAD_"] = str(64 << 20)
    env.update(env_vars)
    env["SCOREP_EXPERIMENT_DIRECTORY"] = os.path.join(workdir, "exp")
    command = [python] + (["-m", "scorep"] + scorep_args if scorep_args is not None else [])
    out = subprocess.run(command + [WORKLOAD, str(steps)] + args, env=env, cwd=workdir,
                         capture_output=True, text=True, check=True)
    subprocess.run(["rm", "-rf", env["SCOREP_EXPERIMENT_DIRECTORY"]], check=True)
    return float(re.search(r"WORK_SECONDS (\S+)", out.stdout).group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--steps", type=int, default=100000)
    parser.add_argument("--repeat", type=int, default=5)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        plain = None
        print("%-32s %10s %14s" % ("configuration", "time [s]", "extra/step"))
        for label, scorep_args, args, env_vars in CONFIGS:
            best = min(run_once(opts.python, scorep_args, args, env_vars, opts.steps, workdir)
                       for _ in range(opts.repeat))
            if plain is None:
                plain = best
            print("%-32s %10.3f %11.2f us" % (label, best, (best - plain) / opts.steps * 1e6))


if __name__ == "__main__":
    main()
