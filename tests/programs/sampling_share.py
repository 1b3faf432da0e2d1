"""A function known to take about 70% of the time: `hot` does seven units of the same work
for every three that `cold` does, interleaved (so that a busy machine slows both alike).
Prints the share of hot's time as the program itself measured it (thread CPU time).

    python sampling_share.py [ROUNDS]
"""
import sys
import time


def spin(n):
    total = 0
    for i in range(n):
        total += i % 7
    return total


def hot(units):
    return spin(units * 7)


def cold(units):
    return spin(units * 3)


def main(rounds):
    spent = {"hot": 0.0, "cold": 0.0}
    for _ in range(rounds):
        for name, function in (("hot", hot), ("cold", cold)):
            start = time.thread_time()
            function(2000)
            spent[name] += time.thread_time() - start
    return spent["hot"] / (spent["hot"] + spent["cold"])


rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 100
print("HOT_SHARE %.4f" % main(rounds))
