"""A loop sending values to a generator N times (default 3 000 000): the generator runs a
few dozen nanoseconds at a time, resumed from C (send() is a method of the generator), so
that from 3.12 on a frame of the C stack's is between it and the loop while it runs."""
import sys


def tiny():
    x = 0
    while True:
        x = yield x


def loop(n):
    g = tiny()
    next(g)
    for i in range(n):
        g.send(i)


loop(int(sys.argv[1]) if len(sys.argv) > 1 else 3000000)
