"""Two code objects with the same name, file and line are one region; regions defined
after them must still be told apart in the trace (the unified ids are not the local ones)."""
exec(compile("def twin():\n    return 1\n", __file__, "exec"))
first = twin
exec(compile("def twin():\n    return 2\n", __file__, "exec"))


def after():
    return 3


for _ in range(3):
    first()
twin()
after()
after()
