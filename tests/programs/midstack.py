"""Automatic instrumentation switched on in the middle of a call stack and off again
inside a function that returns later (--noinstrumenter)."""
import scorep.instrumenter


def leaf():
    return 1


def starts_recording():
    scorep.instrumenter.register()
    leaf()


def stops_recording():
    leaf()
    scorep.instrumenter.unregister()


def outer():
    starts_recording()
    leaf()
    with scorep.instrumenter.disable():
        leaf()
    stops_recording()
    leaf()


outer()
with scorep.instrumenter.enable("section"):
    leaf()
print("midstack done")
