"""What the simulations at scale share (unify_scale.py, cube_scale.py, clock_scale.py,
wait_states.py): building a driver of benchmarks/scale/ against the real C sources, running it
and reading the key=value line it prints, and fitting the growth of a measure."""

import glob
import math
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
NATIVE = os.path.join(REPO, "src", "scorep", "_native")


def build(tmp, name, native=NATIVE, defines=(), scale_dir=None):
    """benchmarks/scale/<name>.c (or of `scale_dir`: another tree's benchmarks/scale) linked
    with the core, the substrates and the adapters that need neither Python nor MPI (of
    `native`: another tree's src/scorep/_native to compare with; `defines`: -D options);
    the path of the executable."""
    scale_dir = scale_dir or os.path.join(HERE, "scale")
    exe = os.path.join(tmp, name)
    sources = sorted(glob.glob(os.path.join(native, "core", "*.c")) +
                     glob.glob(os.path.join(native, "substrates", "*", "*.c")) +
                     [p for p in glob.glob(os.path.join(native, "adapters", "*", "*.c"))
                      if os.sep + "python" + os.sep not in p and os.sep + "mpi" + os.sep not in p])
    flags = subprocess.run(["otf2-config", "--cflags"], capture_output=True, text=True).stdout.split()
    libs = subprocess.run(["otf2-config", "--ldflags", "--libs"], capture_output=True,
                          text=True).stdout.split()
    cmd = (["gcc", "-std=c11", "-D_GNU_SOURCE", "-O2", "-I", native, "-I",
            os.path.join(REPO, "tests", "c")] + ["-D" + d for d in defines] + flags +
           ["-o", exe, os.path.join(scale_dir, name + ".c")] + sources + libs +
           ["-lpthread", "-lm"])
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("building the driver failed:\n" + out.stderr[-3000:])
    return exe


def run(exe, *args):
    """The driver's key=value measurements, as floats."""
    out = subprocess.run([exe] + [str(a) for a in args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("driver failed: %s" % out.stderr)
    return {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)", out.stdout)}


def exponent(xs, ys):
    """k of y ~ x^k, least squares in log-log."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if y > 0]
    n = len(pts)
    if n < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / n
    my = sum(p[1] for p in pts) / n
    return (sum((p[0] - mx) * (p[1] - my) for p in pts) /
            sum((p[0] - mx) ** 2 for p in pts))
