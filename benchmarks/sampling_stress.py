"""The sampler under stress, longer than the suite's test (tests/test_sampling_async.py):
threads started and joined in batches, generators, garbage collections of reference cycles
and fork() every few batches, sampled at a high rate with reads where the threads are.

    python3 benchmarks/sampling_stress.py [--python P ...] [--seconds S] [--hz HZ]
                                          [--read async|safepoint]

Per interpreter: the program's output plain and measured (they must be equal), its exit
status, the wall time of each run, and MANIFEST.md's count of the samples read where the
threads were, dropped and taken at a safe point."""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

from overhead import SRC, default_pythons, version_of

PROGRAM = r'''
import gc, os, sys, threading, time

def gen(n):
    for i in range(n):
        x = yield i * i
        if x:
            n += 1

def spin(n):
    return sum(i % 7 for i in range(n))

def worker(k):
    total = 0
    for v in gen(2000 + k):
        total += v
    return spin(3000) + total

end = time.monotonic() + float(sys.argv[1])
batches = 0
results = set()
while time.monotonic() < end:
    threads = [threading.Thread(target=lambda k=k: results.add(worker(k))) for k in range(6)]
    for t in threads:
        t.start()
    garbage = [[i] for i in range(2000)]
    for g in garbage:
        g.append(g)
    del garbage
    gc.collect()
    if batches % 10 == 0:
        pid = os.fork()
        if pid == 0:
            spin(20000)
            os._exit(3)
        _, st = os.waitpid(pid, 0)
        assert os.WEXITSTATUS(st) == 3
    for t in threads:
        t.join()
    batches += 1
print(sorted(results)[:3])
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--hz", type=float, default=10000.0)
    parser.add_argument("--read", choices=["async", "safepoint"], default="async")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="scorep-stress-")
    script = os.path.join(tmp, "stress.py")
    with open(script, "w") as f:
        f.write(PROGRAM)
    failed = False
    for python in args.python or default_pythons():
        env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREP_")}
        start = time.monotonic()
        plain = subprocess.run([python, script, str(args.seconds)], env=env,
                               capture_output=True, text=True)
        plain_s = time.monotonic() - start
        exp = os.path.join(tmp, "exp-" + os.path.basename(python))
        env.update(PYTHONPATH=SRC, SCOREP_EXPERIMENT_DIRECTORY=exp,
                   SCOREP_SAMPLING_READ=args.read)
        start = time.monotonic()
        measured = subprocess.run([python, "-m", "scorep", "--sampling=%g" % args.hz, script,
                                   str(args.seconds)], env=env, capture_output=True, text=True)
        measured_s = time.monotonic() - start
        same = (measured.returncode, measured.stdout) == (plain.returncode, plain.stdout)
        failed |= not same or bool(measured.stderr)
        counts = ""
        try:
            with open(os.path.join(exp, "MANIFEST.md")) as f:
                m = re.search(r"samples: .*", f.read())
                counts = m.group(0) if m else ""
        except OSError as error:
            counts = "no MANIFEST.md: %s" % error
        print("%s: plain %.1f s, measured %.1f s, exit %d/%d, output %s%s\n  %s" % (
            version_of(python), plain_s, measured_s, plain.returncode, measured.returncode,
            "the same" if same else "DIFFERENT", ", stderr: " + measured.stderr[-500:]
            if measured.stderr else "", counts))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
