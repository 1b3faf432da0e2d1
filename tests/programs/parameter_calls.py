"""work() is called 10 times and records an integer parameter inside each call: the
profile splits work's call path by the parameter's values, and every report must still
count 10 visits (a parameter's node is a split, not a call)."""
import scorep.user


def work(i):
    scorep.user.parameter_int("size", i % 3)
    return sum(range(1000 * (i % 3 + 1)))


for i in range(10):
    work(i)
