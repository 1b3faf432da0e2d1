"""Recursion 50 deep, twice."""


def down(n):
    return 0 if n == 0 else 1 + down(n - 1)


print(down(49) + down(49))
