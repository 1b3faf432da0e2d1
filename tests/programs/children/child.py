import os
import sys


def child_work(n):
    return sum(range(n))


print("child", sys.argv[1], child_work(1000))
if os.environ.get("SET_BY_PUTENV"):  # env_stable.py: os.putenv reaches the children
    print("putenv", os.environ["SET_BY_PUTENV"])
sys.exit(3)
