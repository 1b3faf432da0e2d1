def fail():
    raise RuntimeError("boom")


fail()
