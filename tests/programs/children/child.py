import sys


def child_work(n):
    return sum(range(n))


print("child", sys.argv[1], child_work(1000))
sys.exit(3)
