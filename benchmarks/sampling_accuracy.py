"""How well a sampled profile agrees with the instrumented one: the top functions' shares of
the time.

    python3 benchmarks/sampling_accuracy.py [--python P ...] [--workload W ...] [--scale F]
                                            [--hz HZ] [--top N] [--read async|safepoint]

For every interpreter and workload it profiles the same program twice with scorep, once
instrumented (every call recorded) and once sampled (--sampling=HZ, wall-clock time), and
compares per function (region, summed over call paths and threads) its exclusive time as a
share of the program's total. It prints the instrumented profile's top N functions with
their shares and the differences in percentage points, and per workload the largest
differences.

The instrumented profile is no ground truth either: its own cost per call lands in the
functions that make many short calls, and in short functions called often (their shares
grow), while a sample costs the same wherever it hits. So each function is also given an
overhead-corrected instrumented share: its exclusive time minus its visits times the part
of scorep's cost per call+return that lands in the callee, minus the calls it makes times
the part that lands in the caller, as a share of the corrected total. The cost is measured
on each interpreter in the same run (workloads/empty_calls.py: a loop calling an empty
function, timed plain and under scorep; the empty function's exclusive time per visit in
scorep's profile is the callee's part, the rest of the difference the caller's). The
correction is an estimate (the cost per call varies with the program: caches, call-tree
depth), printed next to the uncorrected share, never instead of it:

    instr      the instrumented profile's share, as recorded
    corrected  the same with scorep's estimated cost per call taken out
    sampled    the sampled profile's share
    s-i, s-c   sampled minus instr, sampled minus corrected (percentage points)
    hits, h-i  the share of the samples (counts, not times), minus instr

and then the inclusive shares (the function and what it calls; recursion counted once) of
the top N functions below the program's top level, instrumented/sampled, with the largest
difference: from 3.10 on a function with neither a loop nor a call counts in its caller
when sampled (see the README's Sampling section), which moves exclusive time but leaves
the callers' inclusive time where it was.

Longer runs (--scale) give the samples' statistics room: with S samples a share p is known
to about sqrt(p (1 - p) / S).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from overhead import SRC, WORKLOADS, default_pythons, version_of

# Big functions without a loop or a call inside: the instrumented shares are exact to ~1%,
# and the program times each function itself (its second argument: a file for the times),
# so the sampled run is also compared with its own clock. The suite's program
# (tests/test_sampling_async.py runs it too).
WORKLOADS = dict(WORKLOADS, straight_line=["straight_line.py", "5000"])
OWN_CLOCK = {"straight_line"}
PROGRAMS = {"straight_line": os.path.join(os.path.dirname(SRC), "tests", "programs")}

sys.path.insert(0, SRC)
from scorep import cube  # noqa: E402  (the checkout's reader)

HERE = os.path.dirname(os.path.abspath(__file__))
OO = ["oo_scheduler", "oo_raytrace", "oo_go", "oo_constraints"]


def profile_of(python, script, experiment, sampling_hz=None, read="async"):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREP_")}
    env.update(PYTHONPATH=SRC, SCOREP_EXPERIMENT_DIRECTORY=experiment,
               SCOREP_TOTAL_MEMORY="1G", SCOREP_SAMPLING_READ=read)
    args = [python, "-m", "scorep"]
    if sampling_hz:
        args.append("--sampling=%g" % sampling_hz)
    out = subprocess.run(args + script, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("run failed: %s\n%s" % (" ".join(args + script), out.stderr))
    return cube.read(os.path.join(experiment, "profile.cubex"))


def shares(profile, cost=None):
    """region name -> exclusive time / total time; and the number of samples (hits). With
    `cost` (seconds per call landing in the callee, in the caller), each call path's
    exclusive time is first reduced by its visits times the callee's part and by its
    children's visits times the caller's part."""
    excl = profile.values(profile.metric("time"), inclusive=False)
    visits = profile.values(profile.metric("visits"), inclusive=False) if cost else None
    by_region = {}
    for node in profile.cnodes:
        time = sum(excl[node.id])
        if cost:
            time -= cost[0] * sum(visits[node.id])
            time -= cost[1] * sum(sum(visits[child.id]) for child in node.children)
        by_region[node.region.name] = by_region.get(node.region.name, 0.0) + time
    by_region = {name: max(t, 0.0) for name, t in by_region.items()}
    total = sum(by_region.values()) or 1.0
    hits = 0
    if any(m.uniq_name == "hits" for m in profile.metrics):
        hits = sum(sum(row) for row in profile.values(profile.metric("hits"), inclusive=False))
    return {name: t / total for name, t in by_region.items()}, hits


def hit_shares(profile):
    """region name -> the share of the samples whose innermost frame it was: on a loaded
    machine steadier than the estimated times, each of which weighs its sample by the time
    since the previous one (a sampler thread kept from running makes that uneven)."""
    hits = profile.values(profile.metric("hits"), inclusive=False)
    by_region = {}
    for node in profile.cnodes:
        by_region[node.region.name] = by_region.get(node.region.name, 0.0) + sum(hits[node.id])
    total = sum(by_region.values()) or 1.0
    return {name: h / total for name, h in by_region.items()}


def inclusive_shares(profile):
    """region name -> inclusive time / total time: the time of the call paths of the region
    that have no caller of the same region (recursion counted once)."""
    incl = profile.values(profile.metric("time"), inclusive=True)
    by_region, total = {}, 0.0
    for node in profile.cnodes:
        time = sum(incl[node.id])
        if node.parent is None:
            total += time
        outer, above = True, node.parent
        while above is not None:
            if above.region.name == node.region.name:
                outer = False
                break
            above = above.parent
        if outer:
            by_region[node.region.name] = by_region.get(node.region.name, 0.0) + time
    return {name: t / (total or 1.0) for name, t in by_region.items()}


def call_cost(python, experiment, repeat=3):
    """scorep's cost of one call+return of an empty function on this interpreter, in
    seconds: (the part in the callee's exclusive time, the part in the caller's). Plain and
    measured runs alternate, the best of each counts (a busy machine only adds time)."""
    script = os.path.join(HERE, "workloads", "empty_calls.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREP_")}
    env.update(PYTHONPATH=SRC, SCOREP_EXPERIMENT_DIRECTORY=experiment)

    def call_ns(out):
        return float(re.search(r"CALL_NS ([0-9.]+)", out).group(1))

    plain, measured, callee = [], [], []
    for _ in range(repeat):
        out = subprocess.run([python, script], capture_output=True, text=True, check=True)
        plain.append(call_ns(out.stdout))
        out = subprocess.run([python, "-m", "scorep", script], env=env, capture_output=True,
                             text=True, check=True)
        measured.append(call_ns(out.stdout))
        profile = cube.read(os.path.join(experiment, "profile.cubex"))
        excl = profile.values(profile.metric("time"), inclusive=False)
        visits = profile.values(profile.metric("visits"), inclusive=False)
        (empty,) = [n for n in profile.cnodes if n.region.name == "__main__:empty"]
        callee.append(sum(excl[empty.id]) / sum(visits[empty.id]))
        subprocess.run(["rm", "-rf", experiment])
    total = max(min(measured) - min(plain), 0.0) * 1e-9
    in_callee = min(min(callee), total)
    return in_callee, total - in_callee


def own_clock(version, name, own_file, sampled, by_hits):
    """The sampled run against the program's own clock in the same run: each timed
    function's share of the time of all of them, as the median call's time times the calls
    ("typical": a call that a busy machine preempted counts the wait wherever it was) and as
    the sum of the calls' times ("total"), against its share of the sampled time and of the
    samples among them."""
    with open(own_file) as f:
        own = json.load(f)
    typical, total = own["typical"], own["total"]
    names = ["__main__:" + function for function in typical]
    inside = sum(sampled.get(n, 0.0) for n in names) or 1.0
    inside_hits = sum(by_hits.get(n, 0.0) for n in names) or 1.0
    print("  %-40s %7s %6s %7s %6s %6s %6s %6s" % (
        "against its own clock", "typical", "total", "sampled", "s-t", "s-tot", "hits", "h-t"))
    worst = {}
    for function, n in zip(typical, names):
        t = typical[function] / (sum(typical.values()) or 1)
        tot = total[function] / (sum(total.values()) or 1)
        b, h = sampled.get(n, 0.0) / inside, by_hits.get(n, 0.0) / inside_hits
        for key, value in (("s-t", b - t), ("s-tot", b - tot), ("h-t", h - t),
                           ("h-tot", h - tot)):
            worst[key] = max(worst.get(key, 0.0), abs(value))
        print("  %-40s %6.1f%% %5.1f%% %6.1f%% %+6.1f %+6.1f %5.1f%% %+6.1f" % (
            n, 100 * t, 100 * tot, 100 * b, 100 * (b - t), 100 * (b - tot), 100 * h,
            100 * (h - t)))
    print("%s %s: against the program's own clock, largest difference over the %d timed "
          "functions: sampled time %.1f points (typical), %.1f (total); samples (hits) %.1f "
          "(typical), %.1f (total); the timed functions have %.0f%% of the sampled time" % (
              version, name, len(typical), 100 * worst["s-t"], 100 * worst["s-tot"],
              100 * worst["h-t"], 100 * worst["h-tot"],
              100 * sum(sampled.get(n, 0.0) for n in names)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append")
    parser.add_argument("--workload", action="append", choices=sorted(WORKLOADS))
    parser.add_argument("--scale", type=float, default=4.0,
                        help="multiply each workload's size (default 4: runs of a few seconds)")
    parser.add_argument("--hz", type=float, default=1000.0)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--read", choices=["async", "safepoint"], default="async",
                        help="SCOREP_SAMPLING_READ of the sampled runs: where each thread is "
                             "at the tick (default) or at the next safe point")
    args = parser.parse_args()
    if args.scale <= 0:
        parser.error("--scale must be positive")
    tmp = tempfile.mkdtemp(prefix="scorep-accuracy-")
    for python in args.python or default_pythons():
        version = version_of(python)
        cost = call_cost(python, os.path.join(tmp, "c"))
        print("%s: scorep's cost per call+return %.0f ns, %.0f ns of it in the callee's "
              "exclusive time, %.0f ns in the caller's (workloads/empty_calls.py)"
              % (version, 1e9 * sum(cost), 1e9 * cost[0], 1e9 * cost[1]))
        for name in args.workload or OO:
            script_name, size = WORKLOADS[name][0], int(WORKLOADS[name][1])
            size = max(1, int(round(size * args.scale))) if name != "fib" else size
            folder = PROGRAMS.get(name, os.path.join(HERE, "workloads"))
            script = [os.path.join(folder, script_name), str(size)]
            profile = profile_of(python, script, os.path.join(tmp, "i"))
            instrumented, _ = shares(profile)
            corrected, _ = shares(profile, cost)
            instrumented_incl = inclusive_shares(profile)
            own_file = os.path.join(tmp, "own.json")
            sampled_profile = profile_of(python, script + ([own_file] if name in OWN_CLOCK
                                                            else []),
                                         os.path.join(tmp, "s"), args.hz, args.read)
            sampled, samples = shares(sampled_profile)
            by_hits = hit_shares(sampled_profile)
            sampled_incl = inclusive_shares(sampled_profile)
            subprocess.run(["rm", "-rf", os.path.join(tmp, "i"), os.path.join(tmp, "s")])
            top = sorted(instrumented, key=instrumented.get, reverse=True)[:args.top]
            print("%s %s(%d), %d samples at %g Hz: exclusive time shares" % (
                version, name, size, samples, args.hz))
            print("  %-50s %6s %9s %7s %6s %6s %6s %6s" % ("", "instr", "corrected", "sampled",
                                                             "s-i", "s-c", "hits", "h-i"))
            worst = worst_corrected = worst_hits = 0.0
            for region in top:
                a, c = instrumented[region], corrected.get(region, 0.0)
                b = sampled.get(region, 0.0)
                h = by_hits.get(region, 0.0)
                worst = max(worst, abs(a - b))
                worst_corrected = max(worst_corrected, abs(c - b))
                worst_hits = max(worst_hits, abs(a - h))
                print("  %-50s %5.1f%% %8.1f%% %6.1f%% %+6.1f %+6.1f %5.1f%% %+6.1f" % (
                    region[:50], 100 * a, 100 * c, 100 * b, 100 * (b - a), 100 * (b - c),
                    100 * h, 100 * (h - a)))
            print("%s %s: largest difference over the top %d: %.1f points against the "
                  "instrumented shares, %.1f against the corrected ones; the samples' counts "
                  "(hits) %.1f points from the instrumented shares" % (
                      version, name, len(top), 100 * worst, 100 * worst_corrected,
                      100 * worst_hits))
            if name in OWN_CLOCK:
                own_clock(version, name, own_file, sampled, by_hits)
            # Inclusive time (the function and what it calls) of the functions below the
            # program's top level: where a sampled call path's time comes from.
            deep = [r for r in sorted(instrumented_incl, key=instrumented_incl.get,
                                      reverse=True) if instrumented_incl[r] < 0.95]
            worst_incl = max([abs(instrumented_incl[r] - sampled_incl.get(r, 0.0))
                              for r in deep[:args.top]] or [0.0])
            print("%s %s: inclusive time shares of the top %d below 95%%: largest difference "
                  "%.1f points (%s)" % (
                      version, name, len(deep[:args.top]), 100 * worst_incl, ", ".join(
                          "%s %.1f/%.1f" % (r.replace("__main__.", "").replace("__main__:", ""),
                                            100 * instrumented_incl[r],
                                            100 * sampled_incl.get(r, 0.0))
                          for r in deep[:args.top])))
            sys.stdout.flush()
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
