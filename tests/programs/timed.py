"""Known times: slow() sleeps 30 ms, fast() 10 ms; varying() once 10 ms and once 30 ms;
a region with a parameter taking the values 0, 1, 2 (n % 3) over 6 iterations."""
import time

import scorep.user


def fast():
    time.sleep(0.01)


def slow():
    time.sleep(0.03)


def varying(seconds):
    time.sleep(seconds)


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
