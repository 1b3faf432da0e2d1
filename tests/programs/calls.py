"""Known call counts: leaf 12 times (3 x 4), Shape.area through a subclass, nested and
static functions, a lambda. Prints the argv it got and exits with the code in argv[1]."""
import sys


def leaf():
    return 1


def middle(n):
    return sum(leaf() for _ in range(0)) + sum([leaf() for _ in range(n)])


class Shape:
    def area(self):
        return 0

    @staticmethod
    def unit():
        return 1

    @classmethod
    def make(cls):
        return cls()


class Square(Shape):
    pass


def outer():
    def inner():
        return 2
    return inner()


if __name__ == "__main__":
    for _ in range(3):
        middle(4)
    Square.make().area()
    Shape.unit()
    outer()
    (lambda: None)()
    print("argv", sys.argv[1:])
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
