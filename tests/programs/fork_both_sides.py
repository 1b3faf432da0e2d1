"""Both sides of os.fork() keep working while the trace spills to disk; the child exits
normally (flushing whatever stdio buffers it inherited)."""
import os
import sys


def work(n):
    return sum(leaf(i) for i in range(n))


def leaf(i):
    return i


work(100000)
pid = os.fork()
if pid == 0:
    work(50000)
    print("child done", flush=True)
    sys.exit(0)
work(100000)
_, status = os.waitpid(pid, 0)
print("parent done, child status", os.waitstatus_to_exitcode(status) if hasattr(
    os, "waitstatus_to_exitcode") else status >> 8)
