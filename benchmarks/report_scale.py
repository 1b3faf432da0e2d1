"""Scale of the reports on a big trace: events/s of the C reader (scorep._reader) and the
time and peak memory of `python -m scorep.report` on a trace of about 10 M events.

    python3 benchmarks/report_scale.py [--events N] [--experiment DIR] [--keep DIR]

Without --experiment it measures a generated program under scorep with tracing on
(N events: N/2 calls, 1 outer call per 4 inner ones), then prints:
  - the C reader: one pass over all events, bare and with everything the HTML report and
    the Chrome export gather (timeline, density, messages, call durations);
  - the OTF2 Python reader on the first 200 000 events, for comparison;
  - the report commands: terminal report, -o report.html, -o trace.json (refused above
    the default size cap, and written with a --min-duration cap), -o trace.pftrace and
    -o trace.speedscope.json (evented) with the same cap, each with wall time and peak
    RSS of the process.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "src")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

PROGRAM = """
import sys


def leaf():
    return None


def middle():
    leaf()
    leaf()
    leaf()
    leaf()


for _ in range(int(sys.argv[1])):
    middle()
"""


def env_for(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREP_")}
    env["PYTHONPATH"] = SRC
    env.update(extra)
    return env


def make_trace(directory, events):
    prog = os.path.join(directory, "calls_program.py")
    with open(prog, "w") as f:
        f.write(PROGRAM)
    exp = os.path.join(directory, "exp")
    loops = max(1, events // 10)  # 5 calls = 10 events per loop
    started = time.perf_counter()
    out = subprocess.run([PYTHON, "-m", "scorep", prog, str(loops)],
                         env=env_for(SCOREP_ENABLE_TRACING="true", SCOREP_TOTAL_MEMORY="2G",
                                     SCOREP_EXPERIMENT_DIRECTORY=exp),
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("measuring the program failed: %s" % out.stderr)
    print("measured %d calls of a generated program in %.1f s (includes writing the trace)"
          % (loops * 5, time.perf_counter() - started))
    return exp


def trace_bytes(exp):
    total = 0
    for root, _, files in os.walk(exp):
        for name in files:
            if name != "profile.cubex":
                total += os.path.getsize(os.path.join(root, name))
    return total


def c_reader(exp):
    sys.path.insert(0, SRC)
    from scorep import _reader
    trace = _reader.open(os.path.join(exp, "traces.otf2"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        variants = [
            ("bare pass (statistics, histogram)", dict(tree=False)),
            ("+ call tree", dict(tree=True)),
            ("+ timeline 250k, density, messages", dict(tree=True, timeline_limit=250000,
                                                      density_bins=1024, message_limit=20000,
                                                      flush_limit=10000)),
            ("+ call durations file (Chrome export)", dict(
                tree=True, timeline_limit=250000, density_bins=1024, message_limit=20000,
                flush_limit=10000, durations_path=os.path.join(tmp, "d"))),
        ]
        for label, kwargs in variants:
            best = None
            for _ in range(3):
                t0 = time.perf_counter()
                scan = trace.scan(**kwargs)
                dt = time.perf_counter() - t0
                best = dt if best is None else min(best, dt)
            events = scan.summary["events"]
            rows.append((label, events, best))
    print("\nC reader (scorep._reader), best of 3, page cache warm:")
    for label, events, secs in rows:
        print("  %-42s %12s events in %6.2f s = %6.1f M events/s (%.0f ns/event)"
              % (label, "{:,}".format(events), secs, events / secs / 1e6, secs / events * 1e9))
    return rows


def python_reader(exp, limit=200000):
    code = """
import time, otf2
n = 0
t0 = time.perf_counter()
with otf2.reader.open(%r) as r:
    for loc, ev in r.events:
        n += 1
        if n >= %d:
            break
print(n, time.perf_counter() - t0)
""" % (os.path.join(exp, "traces.otf2"), limit)
    out = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True)
    if out.returncode != 0:
        print("\nOTF2 Python reader: not available (%s)" % out.stderr.strip().splitlines()[-1:])
        return
    n, secs = out.stdout.split()
    n, secs = int(n), float(secs)
    print("\nOTF2 Python reader (python3-otf2), first %s events: %.2f s = %.2f us/event"
          % ("{:,}".format(n), secs, secs / n * 1e6))


def timed(args, label):
    """Runs one report command; prints its wall time and its own peak RSS (wait4)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        proc = subprocess.Popen([PYTHON, "-m", "scorep.report"] + args, env=env_for(),
                                stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        secs = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text = out.read().strip() or err.read().strip()
    print("  %-44s %6.2f s, exit %d, peak RSS %4.0f MB\n      %s"
          % (label, secs, proc.returncode, usage.ru_maxrss / 1024, text.splitlines()[0][:160]
             if text else ""))
    return secs


def reports(exp, directory):
    print("\npython -m scorep.report on the trace (one process per command):")
    timed([exp, "--source", "trace"], "terminal report, call tree from the trace")
    timed([exp], "terminal report, call tree from the profile")
    timed([exp, "-o", os.path.join(directory, "report.html")], "-o report.html")
    print("      report.html: %.1f MB" % (os.path.getsize(os.path.join(directory,
                                                                     "report.html")) / 1e6))
    timed([exp, "-o", os.path.join(directory, "trace.json")], "-o trace.json (default cap)")
    timed([exp, "-o", os.path.join(directory, "trace.json"), "--min-duration", "2us"],
          "-o trace.json --min-duration 2us")
    path = os.path.join(directory, "trace.json")
    if os.path.exists(path):
        print("      trace.json: %.1f MB" % (os.path.getsize(path) / 1e6))
    for name in ("trace.pftrace", "trace.speedscope.json"):
        path = os.path.join(directory, name)
        timed([exp, "-o", path, "--min-duration", "2us"], "-o %s --min-duration 2us" % name)
        if os.path.exists(path):
            print("      %s: %.1f MB" % (name, os.path.getsize(path) / 1e6))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--events", type=int, default=10_000_000)
    p.add_argument("--experiment", help="use this experiment directory instead")
    p.add_argument("--keep", help="make the trace and outputs here and keep them")
    args = p.parse_args()
    directory = args.keep or tempfile.mkdtemp(prefix="scorep-report-scale-")
    os.makedirs(directory, exist_ok=True)
    try:
        exp = args.experiment or make_trace(directory, args.events)
        print("trace: %.0f MB on disk" % (trace_bytes(exp) / 1e6))
        c_reader(exp)
        python_reader(exp)
        reports(exp, directory)
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
