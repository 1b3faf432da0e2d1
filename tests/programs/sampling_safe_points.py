"""Straight-line functions, which have no safe point of their own (from 3.10 on the
interpreter looks for pending calls only where a function starts, at backward jumps and
after calls): where do samples of their time go?

    python sampling_safe_points.py tail|leaf [ROUNDS]

tail: `work` computes (no loop, no call) and ends by calling `cheap`; it takes about 70% of
      the time, `rest` (a loop) the other 30%.
leaf: the same, but `leaf` only computes and returns, and its caller then calls `cheap`.

Prints the share of the straight-line function's time (and what it calls) as the program
itself measured it (thread CPU time): WORK_SHARE <fraction>.
"""
import sys
import time


def cheap(x):
    return x


def work(a, b):
    c = a * b + a - b * 0.5 + a * a - b * b + 1.25 * a * b - a / 3.0 + b / 7.0
    d = c * c - a * c + b * c - c / 5.0 + a * b * c - 2.5 * c + a - b + c * 0.75
    e = d * 0.5 + c * 0.25 - d * a + d * b - c * d * 0.125 + a * d - b * c + 0.5
    f = e * e - d * e + c * e - e / 9.0 + a * e - b * e * 0.5 + e * 0.25 - d + c
    g = f * 0.5 + e * 0.25 - f * a + f * b - e * f * 0.125 + a * f - b * e + 0.5
    h = g * g - f * g + e * g - g / 9.0 + a * g - b * g * 0.5 + g * 0.25 - f + e
    return cheap(h)


def leaf(a, b):
    c = a * b + a - b * 0.5 + a * a - b * b + 1.25 * a * b - a / 3.0 + b / 7.0
    d = c * c - a * c + b * c - c / 5.0 + a * b * c - 2.5 * c + a - b + c * 0.75
    e = d * 0.5 + c * 0.25 - d * a + d * b - c * d * 0.125 + a * d - b * c + 0.5
    f = e * e - d * e + c * e - e / 9.0 + a * e - b * e * 0.5 + e * 0.25 - d + c
    g = f * 0.5 + e * 0.25 - f * a + f * b - e * f * 0.125 + a * f - b * e + 0.5
    h = g * g - f * g + e * g - g / 9.0 + a * g - b * g * 0.5 + g * 0.25 - f + e
    return h


def rest(n):
    total = 0
    for i in range(n):
        total += i
    return total


def tail_block(calls):
    for _ in range(calls):
        work(0.5, 0.25)


def leaf_block(calls):
    for i in range(calls):
        leaf(0.5, 0.25)
        cheap(i)


def rest_block(calls, n):
    for _ in range(calls):
        rest(n)


def timed(function, *args):
    start = time.thread_time()
    function(*args)
    return time.thread_time() - start


def main(mode, rounds):
    block = tail_block if mode == "tail" else leaf_block
    # rest(n) is sized to take 3/7 of the straight-line part's time.
    straight = min(timed(block, 1000) for _ in range(3))
    n = 20
    for _ in range(2):
        loop = min(timed(rest_block, 1000, n) for _ in range(3))
        n = max(1, round(n * straight * 3 / 7 / loop))
    # Interleaved, so that a busy machine slows both alike.
    spent = [0.0, 0.0]
    for _ in range(rounds):
        spent[0] += timed(block, 200)
        spent[1] += timed(rest_block, 200, n)
    return spent[0] / sum(spent)


mode = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
print("WORK_SHARE %.4f" % main(mode, rounds))
