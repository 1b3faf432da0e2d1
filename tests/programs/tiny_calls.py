"""A loop calling a tiny function N times (default 3 000 000): the thread's innermost frame
changes every few dozen nanoseconds, and often is one being set up."""
import sys


def tiny(x):
    return x


def loop(n):
    for i in range(n):
        tiny(i)


loop(int(sys.argv[1]) if len(sys.argv) > 1 else 3000000)
