"""Which instrumenter records the calls: the names of the original bindings, and the rule of
which one is the fastest on which interpreter (one place: the measurement, a child process
started by another interpreter version and the command line all ask here)."""

import sys

from scorep._errors import MeasurementError

# The instrumenter names of the original bindings map onto our implementations.
INSTRUMENTERS = {
    "monitoring": "monitoring",  # sys.monitoring, 3.12+: the fastest there
    "eval": "eval",              # frame evaluation (PEP 523), before 3.12: the fastest there
    "cProfile": "profile",       # C-level profile hook
    "profile": "profile",
    "cTrace": "trace",           # C-level trace hook: same events, slower (line events)
    "trace": "trace",
    "dummy": "none",             # nothing automatic; user regions only
}
# The fastest of an interpreter: one of these chosen in a parent means "the fastest" in a
# child, which may run another version.
FASTEST = ("monitoring", "eval")


def default_instrumenter():
    return "monitoring" if sys.version_info >= (3, 12) else "eval"


def implementation(choice):
    """The implementation of the instrumenter `choice` ("default" or a key of INSTRUMENTERS)
    on this interpreter; MeasurementError when this interpreter has no such instrumenter."""
    name = default_instrumenter() if choice == "default" else choice
    chosen = INSTRUMENTERS[name]
    if chosen == "monitoring" and sys.version_info < (3, 12):
        raise MeasurementError("--instrumenter-type=monitoring needs Python 3.12 or newer "
                               "(use eval, the fastest before 3.12)")
    if chosen == "eval" and sys.version_info >= (3, 12):
        raise MeasurementError("--instrumenter-type=eval is for Python before 3.12 "
                               "(use monitoring, the fastest from 3.12 on)")
    return chosen


def for_child(choice):
    """What a child process (perhaps another interpreter version) is told to use."""
    return "default" if INSTRUMENTERS.get(choice) in (None,) + FASTEST else choice


def eval_keeps_subscripts_generic(version=None):
    """Whether the frame evaluation instrumenter keeps the measured code's subscripts
    unspecialised on this interpreter: CPython 3.11.0-3.11.3 run a subscript whose class has a
    Python __getitem__, once specialised (BINARY_SUBSCR_GETITEM), by pushing the frame past
    the PEP 523 hook, which would miss the call; 3.11.4 fixed it (gh-104405). Every other
    route into a Python frame on 3.11 goes through the hook (the native side decides the same
    from the running version: adapters/python/eval_frame.c)."""
    version = tuple(sys.version_info[:3] if version is None else version[:3])
    return (3, 11, 0) <= version < (3, 11, 4)
