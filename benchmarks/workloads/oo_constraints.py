"""Object-oriented workload in the spirit of pyperformance's deltablue: an incremental
constraint network (a spreadsheet) with a hierarchy of formula classes, cells that know their
dependants, change propagation in topological order, and plans that are built, executed
and thrown away for every edit.

    python oo_constraints.py [EDITS]
"""
import sys
import time


class Formula:
    """An expression over cells; subclasses evaluate and list what they read."""

    def evaluate(self, sheet):
        raise NotImplementedError

    def inputs(self):
        return ()


class Constant(Formula):
    def __init__(self, value):
        self.value = value

    def evaluate(self, sheet):
        return self.value


class Reference(Formula):
    def __init__(self, name):
        self.name = name

    def evaluate(self, sheet):
        return sheet.value(self.name)

    def inputs(self):
        return (self.name,)


class BinaryOperation(Formula):
    def __init__(self, left, right):
        self.left = left
        self.right = right

    def inputs(self):
        return self.left.inputs() + self.right.inputs()

    def evaluate(self, sheet):
        return self.combine(self.left.evaluate(sheet), self.right.evaluate(sheet))

    def combine(self, a, b):
        raise NotImplementedError


class Add(BinaryOperation):
    def combine(self, a, b):
        return a + b


class Scale(BinaryOperation):
    def combine(self, a, b):
        return a * b


class Clamp(BinaryOperation):
    def combine(self, a, b):
        return a if a < b else b


class Total(Formula):
    def __init__(self, names):
        self.names = tuple(names)

    def inputs(self):
        return self.names

    def evaluate(self, sheet):
        return sum(sheet.value(name) for name in self.names)


class Cell:
    __slots__ = ("name", "formula", "cached", "dependants", "stale")

    def __init__(self, name, formula):
        self.name = name
        self.formula = formula
        self.cached = None
        self.dependants = []
        self.stale = True


class Plan:
    """The cells an edit invalidates, in an order that computes every input first."""

    def __init__(self, sheet, changed):
        self.order = []
        seen = set()
        self.visit(sheet, changed, seen)
        self.order.reverse()

    def visit(self, sheet, name, seen):
        if name in seen:
            return
        seen.add(name)
        for dependant in sheet.cells[name].dependants:
            self.visit(sheet, dependant, seen)
        self.order.append(name)

    def execute(self, sheet):
        for name in self.order:
            sheet.cells[name].stale = True
        for name in self.order:
            sheet.value(name)


class Sheet:
    def __init__(self):
        self.cells = {}

    def define(self, name, formula):
        cell = Cell(name, formula)
        self.cells[name] = cell
        for source in formula.inputs():
            self.cells[source].dependants.append(name)

    def value(self, name):
        cell = self.cells[name]
        if cell.stale:
            cell.cached = cell.formula.evaluate(self)
            cell.stale = False
        return cell.cached

    def edit(self, name, value):
        self.cells[name].formula = Constant(value)
        Plan(self, name).execute(self)


def build(columns, rows):
    """Columns of running totals over a chain of scaled and clamped cells."""
    sheet = Sheet()
    for c in range(columns):
        sheet.define("in%d" % c, Constant(c + 1))
        previous = "in%d" % c
        for r in range(rows):
            name = "c%d_%d" % (c, r)
            sheet.define(name, Clamp(Add(Reference(previous), Scale(Reference("in%d" % c),
                                                                     Constant(0.5))),
                                     Constant(1e9)))
            previous = name
        sheet.define("total%d" % c, Total("c%d_%d" % (c, r) for r in range(0, rows, 3)))
    sheet.define("grand", Total("total%d" % c for c in range(columns)))
    return sheet


def main(edits):
    sheet = build(8, 60)
    sheet.value("grand")
    for i in range(edits):
        sheet.edit("in%d" % (i % 8), i % 13)
    return sheet.value("grand")


edits = int(sys.argv[1]) if len(sys.argv) > 1 else 100
start, cpu_start = time.perf_counter(), time.process_time()
main(edits)
print("WORK_SECONDS", time.perf_counter() - start)
print("CPU_SECONDS", time.process_time() - cpu_start)
