"""The signals whose default action ends the process and that a user or a batch system sends
(Ctrl-C is KeyboardInterrupt, handled by the command line): a measured process writes its
results first, then ends by the same signal (session), and a fork blocks them for a moment
(children)."""

import signal

TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def measurement_handler(function):
    """Marks `function` as the measurement's handler of the terminating signals."""
    function.scorep_terminating_handler = True
    return function


def is_measurement_handler(handler):
    """Whether `handler` (what signal.getsignal returns) is a measurement's handler."""
    return getattr(getattr(handler, "__func__", handler), "scorep_terminating_handler", False)
