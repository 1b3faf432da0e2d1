"""CPython's regression-test runner, as `python -m test ARGS` runs it, and the check it cannot
make for a measured run: which variables of os.environ differ at the program's end from its
start (the runner sets some itself: the test compares the names with a run without
measurement).

The runner compares the environment before and after each test module, but with -v it
first prints a header whose platform.processor() starts `uname -p`: a change that the
measurement made when the program started its first child came before the first snapshot
and went unseen (issue 29). One line on stderr, "environment changed: NAMES", when any did."""
import os
import runpy
import sys

before = dict(os.environ)
try:
    runpy.run_module("test", run_name="__main__", alter_sys=True)
finally:
    after = dict(os.environ)
    if after != before:
        names = sorted(n for n in set(before) | set(after) if before.get(n) != after.get(n))
        sys.stderr.write("environment changed: %s\n" % " ".join(names))
        sys.stderr.flush()
