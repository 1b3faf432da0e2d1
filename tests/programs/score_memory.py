"""For the SCOREP_TOTAL_MEMORY model: 60 outer functions each calling the same 40 inner ones
(2,400 distinct call paths: two blocks of profile nodes), then 150,000 calls of tiny()
(about 300,000 raw trace records: 19 chunks)."""

SOURCE = "\n".join(["def inner%d():\n    return %d\n" % (j, j) for j in range(40)] +
                   ["def outer%d(functions):\n    for f in functions:\n        f()\n" % i
                    for i in range(60)])
# A file name of their own: code of the same name, file and line would be one region.
exec(compile(SOURCE, __file__ + "-generated", "exec"))


def tiny():
    return None


if __name__ == "__main__":
    inners = [globals()["inner%d" % j] for j in range(40)]
    for i in range(60):
        globals()["outer%d" % i](inners)
    for _ in range(150000):
        tiny()
    print("score_memory done")
