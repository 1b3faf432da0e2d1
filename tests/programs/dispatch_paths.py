"""Python code the interpreter enters by every route third-party code uses: subscripts,
special methods, descriptors, properties, generators, context managers, ... each many times,
so that the interpreter's specialising instructions take over the hot sites (3.11+).
Prints a checksum so that a run that changed the program's behaviour shows."""

import functools
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 3000


class Grid:
    """Subscript with a Python __getitem__ (3.11: BINARY_SUBSCR_GETITEM)."""

    def __init__(self, n):
        self.cells = list(range(n))

    def __getitem__(self, i):
        return self.cells[i]

    def __setitem__(self, i, value):
        self.cells[i] = value

    def __len__(self):
        return len(self.cells)

    def __contains__(self, value):
        return 0 <= value < len(self.cells)


class AdjacencyView:
    """networkx's Graph.__getitem__ shape: the subscript returns another mapping."""

    def __init__(self, adj):
        self._adj = adj

    def __getitem__(self, node):
        return self._adj[node]


class Graph:
    def __init__(self, n):
        self._adj = {i: {(i + 1) % n: 1, (i + 2) % n: 1} for i in range(n)}

    def __getitem__(self, node):
        return AdjacencyView(self._adj)[node]

    def __iter__(self):
        return iter(self._adj)


class Point:
    """__init__ through calls, properties, __eq__/__hash__, operators, __repr__."""

    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    @property
    def norm1(self):
        return abs(self.x) + abs(self.y)

    def __add__(self, other):
        return Point(self.x + other.x, self.y + other.y)

    def __eq__(self, other):
        return self.x == other.x and self.y == other.y

    def __hash__(self):
        return hash((self.x, self.y))


class Point3(Point):
    __slots__ = ("z",)

    def __init__(self, x, y, z=0):
        super().__init__(x, y)
        self.z = z


class Lazy:
    """__getattr__ for missing attributes, a descriptor's __get__/__set__."""

    def __getattr__(self, name):
        return len(name)


class Typed:
    def __set_name__(self, owner, name):
        self.name = "_" + name

    def __get__(self, obj, objtype=None):
        return getattr(obj, self.name, 0)

    def __set__(self, obj, value):
        setattr(obj, self.name, value)


class Record:
    size = Typed()

    def __getattribute__(self, name):
        return object.__getattribute__(self, name)


class Countdown:
    """__iter__/__next__ in Python."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return self

    def __next__(self):
        if self.n <= 0:
            raise StopIteration
        self.n -= 1
        return self.n


class Section:
    """with statements."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Adder:
    def __call__(self, a, b):
        return a + b


def numbers(n):
    for i in range(n):
        yield i


def relay(n):
    yield from numbers(n)


def accumulate():
    total = 0
    while True:
        value = yield total
        total += value


def leaf(a, b=1):
    return a + b


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def first(seq):
    return seq[0]


def main():
    checksum = 0
    grid = Grid(100)
    for i in range(N):
        checksum += grid[i % 100]
        grid[i % 100] = i % 7
        if i % 50 in grid:
            checksum += len(grid)
    graph = Graph(50)
    for i in range(N):
        checksum += len(graph[i % 50])
    for node in graph:
        checksum += node
    origin = Point(0, 0)
    seen = {}
    for i in range(N):
        p = Point3(i % 5, i % 3) + origin
        checksum += p.norm1
        seen[p] = i
    checksum += len(seen)
    lazy, record = Lazy(), Record()
    for i in range(N):
        checksum += lazy.abc
        record.size = i
        checksum += record.size
    for value in Countdown(N):
        checksum += value
    for value in numbers(N):
        checksum += value
    checksum += sum(numbers(N))
    checksum += sum(x for x in range(N))
    for value in relay(N // 10):
        checksum += value
    acc = accumulate()
    next(acc)
    for i in range(N):
        checksum += acc.send(i)
    add = Adder()
    inc = functools.partial(leaf, b=2)
    for i in range(N):
        with Section():
            checksum += add(i, 1) + leaf(i) + leaf(i, 2) + inc(i) + (lambda v: v)(i)
    checksum += fib(15)
    # One site that sees lists first, then a Grid: polymorphic subscripts.
    rows = [[i] for i in range(N)] + [Grid(3) for _ in range(N)]
    for row in rows:
        checksum += first(row)
    return checksum


if __name__ == "__main__":
    print(main())
    # The module level too: a subscript loop in the module's own frame.
    top = Grid(100)
    total = 0
    for i in range(N * 10):
        total += top[i % 100]
    print(total)
