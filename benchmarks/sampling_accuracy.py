"""How well a sampled profile agrees with the instrumented one: the top functions' shares of
the time.

    python3 benchmarks/sampling_accuracy.py [--python P ...] [--workload W ...] [--scale F]
                                            [--hz HZ] [--top N]

For every interpreter and workload it profiles the same program twice with scorep, once
instrumented (every call recorded) and once sampled (--sampling=HZ, wall-clock time), and
compares per function (region, summed over call paths and threads) its exclusive time as a
share of the program's total. It prints the instrumented profile's top N functions with both
shares and the difference in percentage points, and per workload the largest difference.

The instrumented profile is no ground truth either: its own cost per call lands in the
functions that make many short calls (their share grows), while a sample costs the same
wherever it hits. Longer runs (--scale) give the samples' statistics room: with S samples a
share p is known to about sqrt(p (1 - p) / S).
"""

import argparse
import os
import subprocess
import sys
import tempfile

from overhead import SRC, WORKLOADS, default_pythons, version_of

sys.path.insert(0, SRC)
from scorep import cube  # noqa: E402  (the checkout's reader)

HERE = os.path.dirname(os.path.abspath(__file__))
OO = ["oo_scheduler", "oo_raytrace", "oo_go", "oo_constraints"]


def profile_of(python, script, experiment, sampling_hz=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREP_")}
    env.update(PYTHONPATH=SRC, SCOREP_EXPERIMENT_DIRECTORY=experiment,
               SCOREP_TOTAL_MEMORY="1G")
    args = [python, "-m", "scorep"]
    if sampling_hz:
        args.append("--sampling=%g" % sampling_hz)
    out = subprocess.run(args + script, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("run failed: %s\n%s" % (" ".join(args + script), out.stderr))
    return cube.read(os.path.join(experiment, "profile.cubex"))


def shares(profile):
    """region name -> exclusive time / total time; and the number of samples (hits)."""
    excl = profile.values(profile.metric("time"), inclusive=False)
    by_region = {}
    for node in profile.cnodes:
        by_region[node.region.name] = by_region.get(node.region.name, 0.0) + sum(excl[node.id])
    total = sum(by_region.values()) or 1.0
    hits = 0
    if any(m.uniq_name == "hits" for m in profile.metrics):
        hits = sum(sum(row) for row in profile.values(profile.metric("hits"), inclusive=False))
    return {name: t / total for name, t in by_region.items()}, hits


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append")
    parser.add_argument("--workload", action="append", choices=sorted(WORKLOADS))
    parser.add_argument("--scale", type=float, default=4.0,
                        help="multiply each workload's size (default 4: runs of a few seconds)")
    parser.add_argument("--hz", type=float, default=1000.0)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    if args.scale <= 0:
        parser.error("--scale must be positive")
    tmp = tempfile.mkdtemp(prefix="scorep-accuracy-")
    for python in args.python or default_pythons():
        version = version_of(python)
        for name in args.workload or OO:
            script_name, size = WORKLOADS[name][0], int(WORKLOADS[name][1])
            size = max(1, int(round(size * args.scale))) if name != "fib" else size
            script = [os.path.join(HERE, "workloads", script_name), str(size)]
            instrumented, _ = shares(profile_of(python, script, os.path.join(tmp, "i")))
            sampled, samples = shares(profile_of(python, script, os.path.join(tmp, "s"),
                                                 args.hz))
            subprocess.run(["rm", "-rf", os.path.join(tmp, "i"), os.path.join(tmp, "s")])
            top = sorted(instrumented, key=instrumented.get, reverse=True)[:args.top]
            print("%s %s(%d), %d samples at %g Hz: exclusive time shares, instrumented / "
                  "sampled / difference (points)" % (version, name, size, samples, args.hz))
            worst = 0.0
            for region in top:
                a, b = instrumented[region], sampled.get(region, 0.0)
                worst = max(worst, abs(a - b))
                print("  %-50s %6.1f%% %6.1f%% %+6.1f" % (region[:50], 100 * a, 100 * b,
                                                         100 * (b - a)))
            print("%s %s: largest difference over the top %d: %.1f points" % (
                version, name, len(top), 100 * worst))
            sys.stdout.flush()
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
