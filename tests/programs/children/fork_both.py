"""os.fork: both sides work (the child calls leaf() 30 000 times, the parent 50 000)."""
import os
import sys


def leaf(i):
    return i


def work(n):
    return sum(leaf(i) for i in range(n))


work(10000)
pid = os.fork()
if pid == 0:
    work(30000)
    print("child done", flush=True)
    sys.exit(0)
work(40000)
_, status = os.waitpid(pid, 0)
print("parent done", status >> 8)
