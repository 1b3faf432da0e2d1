"""os.fork: both sides work (the child calls leaf() 3 000 times, the parent 6 000)."""
import os
import sys


def leaf(i):
    return i


def work(n):
    return sum(leaf(i) for i in range(n))


work(2000)
pid = os.fork()
if pid == 0:
    work(3000)
    print("child done", flush=True)
    sys.exit(0)
work(4000)
_, status = os.waitpid(pid, 0)
print("parent done", status >> 8)
