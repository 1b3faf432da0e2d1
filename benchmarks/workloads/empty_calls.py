"""Calibration: what one call and return of an empty function costs. Times, best of 5
rounds, a loop that calls an empty function N times and the same loop without the call,
and prints both per iteration in nanoseconds:

    python empty_calls.py [N]    ->   CALL_NS <ns per iteration>  LOOP_NS <ns per iteration>

Run plain and under a measurement, the difference of CALL_NS is the measurement's cost per
call+return (the loop without calls makes no events)."""
import sys
import time


def empty():
    pass


def calls(n):
    for _ in range(n):
        empty()


def loop(n):
    for _ in range(n):
        pass


def best(function, n, rounds=5):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function(n)
        times.append(time.perf_counter() - start)
    return min(times) / n * 1e9


n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
print("CALL_NS %.2f LOOP_NS %.2f" % (best(calls, n), best(loop, n)))
