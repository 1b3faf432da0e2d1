"""Two versions of one program for the diff: with argv[1] == "new", process() also calls
validate(), a function the first version does not have, which sleeps 30 ms: process is
the function that got slower, validate the new callee that made it so. main's own time is a
few microseconds in both versions, so its change is noise by construction (a sleep of its own
varied by milliseconds on a loaded machine, more than the noise bound of a 50 ms run)."""
import sys
import time


def compute(n):
    return sum(range(n))


def validate():
    time.sleep(0.03)


def process(new):
    for _ in range(20):
        compute(2000)
    if new:
        validate()


def main():
    process(len(sys.argv) > 1 and sys.argv[1] == "new")


main()
