"""What the public API (scorep.user, the compatibility scorep.instrumenter) and the measurement
share, below all of them: the running measurement of this process (current()), and the calls
that user.py offers and the original bindings' instrumenter objects offer as methods.

Every function is a cheap no-op when the program runs without measurement.
"""

import sys

from scorep import _native

_running = _native.running

# The running measurement of this process (scorep.measure.session.Measurement), or None. One
# place: a forked child replaces it (set_current) when it drops its parent's measurement.
_current = None


def current():
    """The measurement running in this process, or None."""
    return _current


def set_current(measurement):
    global _current
    _current = measurement


def location(file_name, line_number, depth):
    if file_name is None or line_number is None:
        frame = sys._getframe(depth + 1)
        file_name = frame.f_globals.get("__file__")
        line_number = frame.f_lineno
    # Made absolute in C: os.path.abspath here would itself be recorded as posixpath calls.
    # A path that is not UTF-8 (surrogate-escaped bytes) is recorded with U+FFFD for them.
    if file_name:
        file_name = str(file_name).encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return (file_name or None), line_number


def unrecordable(what, text):
    """Why `text` cannot be recorded (a definition is UTF-8), warned once; None when fine."""
    try:
        str(text).encode("utf-8")
    except UnicodeEncodeError:
        _native.warn_once((what, str(text)), "%s %r is not valid Unicode text (it holds "
                                 "lone surrogates); not recorded" % (what, text))
        return True
    return False


def rewind_begin(name, file_name=None, line_number=None):
    """Begin a rewind region: rewind_end(name, True) discards everything recorded since."""
    if not _running() or unrecordable("rewind region name", name):
        return
    file_name, line_number = location(file_name, line_number, 1)
    _native.native().rewind_begin(name, file_name, line_number)


def rewind_end(name, value):
    """End the rewind region; a truthy value discards what it recorded (the trace then shows
    the measurement switched off for that span)."""
    if _running() and not unrecordable("rewind region name", name):
        _native.native().rewind_end(name, value)


def enable_recording():
    """Record events again (all threads)."""
    if _running():
        _native.native().set_recording(True)


def disable_recording():
    """Stop recording events (all threads) until enable_recording(); open regions still close."""
    if _running():
        _native.native().set_recording(False)


def _parameter(kind, name, value, check):
    if not _running():
        return
    if not isinstance(name, str):
        _native.warn_once((kind, "name"), "parameter_%s: the name must be a str, not %s; "
                                 "not recorded" % (kind, type(name).__name__))
        return
    if unrecordable("parameter name", name) or \
            (isinstance(value, str) and unrecordable("parameter value", value)):
        return
    problem = check(value)
    if problem:
        _native.warn_once((kind, name), "parameter_%s(%r, %r): %s; not recorded"
                                 % (kind, name, value, problem))
        return
    getattr(_native.native(), "parameter_" + kind)(name, value)


def _int_problem(value, low, high):
    if isinstance(value, bool) or not isinstance(value, int):
        return "the value must be an int"
    if not low <= value <= high:
        return "the value must lie in [%d, %d]" % (low, high)
    return None


def parameter_int(name, val):
    """Record the signed 64-bit parameter <name> (each name is its own parameter)."""
    _parameter("int", name, val, lambda v: _int_problem(v, -2**63, 2**63 - 1))


def parameter_uint(name, val):
    """Record the unsigned 64-bit parameter <name>."""
    _parameter("uint", name, val, lambda v: _int_problem(v, 0, 2**64 - 1))


def parameter_string(name, string):
    """Record the string parameter <name>."""
    _parameter("string", name, string,
               lambda v: None if isinstance(v, str) else "the value must be a str")


def force_finalize():
    """Write the results now; later events are not recorded."""
    measurement = current()
    if measurement is not None:
        measurement.finalize(report_errors=True)


def reregister_exit_handler():
    """Register the exit handler that writes the results again (for programs that cleared
    the atexit handlers)."""
    measurement = current()
    if measurement is not None:
        measurement.reregister_exit_handler()
