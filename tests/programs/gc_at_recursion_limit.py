"""Garbage collections while the program runs at its recursion limit: a collection after
almost every allocation (threshold 1), in the deepest frames the limit allows. Prints what
the program's unraisable hook saw (an error of a gc callback arrives there) and whether
the recursion ended in RecursionError, as it must."""
import gc
import sys

seen = []
sys.unraisablehook = lambda unraisable: seen.append(type(unraisable.exc_value).__name__)


def recurse(n):
    garbage = [[]]
    garbage[0].append(garbage)  # a cycle: the collector has work at every depth
    return recurse(n + 1)


gc.set_threshold(1)
ended = "no error"
for attempt in range(3):
    try:
        recurse(0)
    except RecursionError:
        ended = "RecursionError"
gc.set_threshold(700)
print("ended:", ended)
print("unraisable:", sorted(set(seen)))
