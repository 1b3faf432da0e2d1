"""Known times: slow() sleeps 30 ms, fast() 10 ms; varying() once 10 ms and once 30 ms;
a region with a parameter taking the values 0, 1, 2 (n % 3) over 6 iterations. With the
argument --own-times it prints the seconds each call took as it measured them itself (a
sleep can last longer than asked on a loaded machine: the tests compare with these)."""
import json
import sys
import time

import scorep.user

OWN = {}


def took(name, started):
    OWN.setdefault(name, []).append(time.perf_counter() - started)


def fast():
    started = time.perf_counter()
    time.sleep(0.01)
    took("fast", started)


def slow():
    started = time.perf_counter()
    time.sleep(0.03)
    took("slow", started)


def varying(seconds):
    started = time.perf_counter()
    time.sleep(seconds)
    took("varying", started)


def loop():
    for n in range(6):
        with scorep.user.region("iteration"):
            scorep.user.parameter_int("n", n % 3)
            fast()


if __name__ == "__main__":
    fast()
    slow()
    varying(0.01)
    varying(0.03)
    loop()
    if "--own-times" in sys.argv:
        print(json.dumps(OWN))
