"""Known calls and times for the report tests. With argv[1] = n (default 4): trunk once,
branch n times, leaf 3n times (all under trunk), recurse 6 times of which 1 is not
recursive, nap once for 20 ms. No comprehensions: each call here is one region."""
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


def nap():
    time.sleep(0.02)


if __name__ == "__main__":
    trunk(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
    recurse(5)
    nap()
