"""Direct recursion (fib), mutual recursion (is_even/is_odd) and a helper called at every
level of a recursion (step): what cProfile counts with primitive calls and cumulative
time once per outermost activation."""


def step(n):
    return n - 1


def fib(n):
    return n if n < 2 else fib(step(n)) + fib(n - 2)


def is_even(n):
    return True if n == 0 else is_odd(step(n))


def is_odd(n):
    return False if n == 0 else is_even(n - 1)


def main():
    fib(12)
    for i in range(10):
        is_even(i)


main()
