"""300 generated functions g0..g299 (region ids beyond 255 take a byte more per event in
OTF2): each is called once, and g0 and g299 ten times more."""

SOURCE = "\n".join("def g%d():\n    return %d\n" % (i, i) for i in range(300))
# A file name of their own: code of the same name, file and line would be one region.
exec(compile(SOURCE, __file__ + "-generated", "exec"))

if __name__ == "__main__":
    functions = [globals()["g%d" % i] for i in range(300)]
    for f in functions:
        f()
    for _ in range(10):
        functions[0]()
        functions[299]()
    print("score_regions done")
