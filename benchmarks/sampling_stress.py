"""The sampler under stress, longer than the suite's test (tests/test_sampling_async.py):
tests/programs/sampling_stress.py (threads started and joined in batches, generators,
garbage collections of reference cycles and fork() every ten batches) for a minute, sampled
at a high rate with reads where the threads are. `make stress-asan` runs it with the
package built with AddressSanitizer.

    python3 benchmarks/sampling_stress.py [--python P ...] [--seconds S] [--hz HZ]
                                          [--read async|safepoint] [--pythonpath DIR]
                                          [--native]

Per interpreter: the program's results plain and measured (they must be equal), its exit
status (7 both times), the wall time of each run, and MANIFEST.md's count of the samples
read where the threads were, dropped and taken at a safe point (with --native, also its
native stack counts: every thread signalled and unwound at every tick, fork and thread
churn included; `make stress-asan-native`). Exits 1 when a run differs."""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

from overhead import SRC, default_pythons, version_of

# The program the suite's short test runs too.
PROGRAM = os.path.join(os.path.dirname(SRC), "tests", "programs", "sampling_stress.py")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", action="append")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--hz", type=float, default=10000.0)
    parser.add_argument("--read", choices=["async", "safepoint"], default="async")
    parser.add_argument("--pythonpath", default=SRC,
                        help="where the scorep package is imported from (the checkout's "
                        "src; `make stress-asan`: a copy built with AddressSanitizer)")
    parser.add_argument("--native", action="store_true",
                        help="sample the native stacks too (--sampling --native)")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="scorep-stress-")
    script = PROGRAM
    failed = False
    for python in args.python or default_pythons():
        env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREP_")}
        start = time.monotonic()
        plain = subprocess.run([python, script, str(args.seconds), "7"], env=env,
                               capture_output=True, text=True)
        plain_s = time.monotonic() - start
        exp = os.path.join(tmp, "exp-" + os.path.basename(python))
        env.update(PYTHONPATH=os.path.abspath(args.pythonpath), SCOREP_EXPERIMENT_DIRECTORY=exp,
                   SCOREP_SAMPLING_READ=args.read)
        start = time.monotonic()
        measured = subprocess.run([python, "-m", "scorep", "--sampling=%g" % args.hz] +
                                  (["--native"] if args.native else []) +
                                  [script, str(args.seconds), "7"], env=env,
                                  capture_output=True, text=True)
        measured_s = time.monotonic() - start
        # The first line: the workers' results (the second, the signal handlers, has the
        # tool's own for SIGINT & co. when measured).
        same = (measured.returncode, measured.stdout.split("\n")[0]) == \
            (plain.returncode, plain.stdout.split("\n")[0]) and plain.returncode == 7
        failed |= not same or bool(measured.stderr)
        counts = ""
        try:
            with open(os.path.join(exp, "MANIFEST.md")) as f:
                text = f.read()
                m = re.search(r"samples: .*", text)
                counts = m.group(0) if m else ""
                if args.native:
                    counts += "".join("\n  " + n.group(0) for n in
                                      re.finditer(r"native (stacks|frames between)[^;]*;[^;:]*", text))
        except OSError as error:
            counts = "no MANIFEST.md: %s" % error
        print("%s: plain %.1f s, measured %.1f s, exit %d/%d, output %s%s\n  %s" % (
            version_of(python), plain_s, measured_s, plain.returncode, measured.returncode,
            "the same" if same else "DIFFERENT", ", stderr: " + measured.stderr[-500:]
            if measured.stderr else "", counts))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
