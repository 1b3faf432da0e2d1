"""What recording an I/O call costs: N one-byte pwrite calls from Python (os.pwrite) and
from C (a loop in a small C library called through ctypes), against the uninstrumented
run, cProfile, and scorep without and with I/O recording; and what setting the recording
up costs at the start, against re-executing the interpreter with LD_PRELOAD (what the
original bindings do to get Score-P's I/O wrappers in).

    python3 benchmarks/io.py [--calls N] [--repeat R] [--python PATH ...]

"extra per I/O call" is scorep with I/O recording minus scorep without it, per call: the
wrapper, two clock reads, the call's enter and leave, its two I/O events and the handle
lookup. The files go to /dev/shm when it exists, so that the disk does not dominate.
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
sys.path.insert(0, HERE)
from overhead import default_pythons, version_of  # noqa: E402

NATIVE = r"""
#include <unistd.h>
void pwrite_loop(int fd, long n)
{
    char c = 'x';
    for (long i = 0; i < n; i++)
        if (pwrite(fd, &c, 1, 0) != 1)
            return;
}
"""

MODES = ["plain", "cProfile", "scorep", "scorep+io", "scorep+io+trace"]


def build_native(tmp):
    source = os.path.join(tmp, "loop.c")
    lib = os.path.join(tmp, "libloop.so")
    with open(source, "w") as out:
        out.write(NATIVE)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", lib, source], check=True)
    return lib


def env_for(tmp, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREP_")}
    env.update(PYTHONPATH=SRC, SCOREP_EXPERIMENT_DIRECTORY=tempfile.mkdtemp(dir=tmp))
    env.update(extra)
    return env


def run(python, mode, where, calls, tmp, data_dir, lib):
    script = os.path.join(HERE, "workloads", "io_loop.py")
    env = env_for(tmp)
    if mode == "plain":
        args = [python, script]
    elif mode == "cProfile":
        args = [python, "-m", "cProfile", "-o", os.devnull, script]
    else:
        args = [python, "-m", "scorep"] + (["--io=runtime:posix"] if "io" in mode else []) + \
            [script]
        if mode.endswith("trace"):
            env["SCOREP_ENABLE_TRACING"] = "true"
            env["SCOREP_TOTAL_MEMORY"] = "2G"
    out = subprocess.run(args + [str(calls), where, data_dir, lib], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("failed: %s\n%s" % (" ".join(args), out.stderr))
    return float(re.search(r"WORK_SECONDS ([0-9.e-]+)", out.stdout).group(1))


def startup(python, args, tmp, repeat, **extra):
    """Best wall time of a whole run of `args` (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        env = env_for(tmp, **extra)
        start = time.perf_counter()
        subprocess.run([python] + args, env=env, check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--python", action="append")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="scorep-io-bench-")
    data_dir = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else tmp)
    lib = build_native(tmp)
    print("%d one-byte pwrite calls; best of %d; files in %s" % (args.calls, args.repeat,
                                                                 data_dir))
    print("%-8s %-7s %-16s %9s %8s %8s %12s" % ("python", "loop", "mode", "best[s]", "x plain",
                                                "x cProf", "ns/call"))
    for python in args.python or default_pythons():
        for where in ("python", "native"):
            best = {m: float("inf") for m in MODES}
            for _ in range(args.repeat):
                for mode in MODES:
                    best[mode] = min(best[mode], run(python, mode, where, args.calls, tmp,
                                                     data_dir, lib))
            for mode in MODES:
                print("%-8s %-7s %-16s %9.4f %8.2f %8.2f %12.1f" % (
                    version_of(python), where, mode, best[mode], best[mode] / best["plain"],
                    best[mode] / best["cProfile"],
                    (best[mode] - best["plain"]) / args.calls * 1e9))
            print("%-8s %-7s extra per I/O call: %.0f ns (profile), %.0f ns (trace)" % (
                version_of(python), where,
                (best["scorep+io"] - best["scorep"]) / args.calls * 1e9,
                (best["scorep+io+trace"] - best["scorep"]) / args.calls * 1e9))
            sys.stdout.flush()
        # Setting up: GOT patching in this process against a re-exec with LD_PRELOAD.
        plain = startup(python, ["-c", "pass"], tmp, args.repeat)
        measured = startup(python, ["-m", "scorep", "-c", "pass"], tmp, args.repeat)
        with_io = startup(python, ["-m", "scorep", "--io=runtime:posix", "-c", "pass"], tmp,
                          args.repeat)
        print("%-8s start-up: python -c pass %.1f ms; scorep %.1f ms; scorep --io %.1f ms: "
              "patching costs %.1f ms, where a re-exec (LD_PRELOAD) would cost at least %.1f ms"
              % (version_of(python), plain * 1e3, measured * 1e3, with_io * 1e3,
                 (with_io - measured) * 1e3, plain * 1e3))
        sys.stdout.flush()
    subprocess.run(["rm", "-rf", tmp, data_dir])


if __name__ == "__main__":
    main()
