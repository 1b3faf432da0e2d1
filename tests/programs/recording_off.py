"""Recording switched off twice: around a call (quiet: 40 ms), and from inside a function
that returns while recording stays off (the rest of the time off, 30 ms, is its caller's).
Prints its process id."""
import os
import time

import scorep.user


def work(n):
    return sum(range(n))


def quiet():
    work(1000)
    time.sleep(0.04)


def switch_off():
    scorep.user.disable_recording()


def main():
    work(10)
    scorep.user.disable_recording()
    quiet()
    scorep.user.enable_recording()
    work(10)
    switch_off()
    time.sleep(0.03)
    scorep.user.enable_recording()
    work(10)


main()
print(os.getpid())
