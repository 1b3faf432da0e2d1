"""Known calls and times for the report tests. argv: n (default 4), s (default 0.02): trunk
once, branch n times, leaf 3n times (all under trunk), recurse 6 times of which 1 is not
recursive, nap once for s seconds. No comprehensions: each call here is one region."""
import sys
import time


def leaf():
    return 1


def branch(k):
    total = 0
    for _ in range(k):
        total += leaf()
    return total


def trunk(n):
    for _ in range(n):
        branch(3)


def recurse(depth):
    return 0 if depth == 0 else recurse(depth - 1) + 1


def nap(seconds):
    time.sleep(seconds)


if __name__ == "__main__":
    trunk(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
    recurse(5)
    nap(float(sys.argv[2]) if len(sys.argv) > 2 else 0.02)
