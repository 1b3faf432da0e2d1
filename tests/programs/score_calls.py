"""Known call counts for scorep-score: hot() 20000 times (tiny and frequent: what -g must
exclude), medium() 300 times (microseconds each: all 300 stay far below slow's 120 ms even
on a loaded machine), slow() 3 times (sleeps 40 ms), a user region "tagged" 8 times with a
parameter k = i % 4, Box.area() twice (canonical name __main__:Box.area) and driver() once
around the hot loop."""
import time

import scorep.user


def hot():
    return None


def medium():
    return sum(range(500))


def slow():
    time.sleep(0.04)


class Box:
    def area(self):
        return 4


def driver(n):
    for _ in range(n):
        hot()


if __name__ == "__main__":
    driver(20000)
    for _ in range(300):
        medium()
    for _ in range(3):
        slow()
    Box().area()
    Box().area()
    for i in range(8):
        with scorep.user.region("tagged"):
            scorep.user.parameter_int("k", i % 4)
    print("score_calls done")
