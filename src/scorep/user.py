"""User instrumentation: named regions, parameters, recording on/off, rewind.

Every function here is a cheap no-op when the program runs without measurement (plain
`python`), so instrumented code runs unchanged everywhere.
"""

import functools
import sys
import types

from scorep import _native
from scorep import instrumenter as _instrumenter

__all__ = ["region_begin", "region_end", "region", "instrument_function", "instrument_module",
           "rewind_begin", "rewind_end", "oa_region_begin", "oa_region_end",
           "enable_recording", "disable_recording", "parameter_int", "parameter_uint",
           "parameter_string", "force_finalize", "reregister_exit_handler", "lines"]

_running = _native.running


def _location(file_name, line_number, depth):
    if file_name is None or line_number is None:
        frame = sys._getframe(depth + 1)
        file_name = frame.f_globals.get("__file__")
        line_number = frame.f_lineno
    # Made absolute in C: os.path.abspath here would itself be recorded as posixpath calls.
    # A path that is not UTF-8 (surrogate-escaped bytes) is recorded with U+FFFD for them.
    if file_name:
        file_name = str(file_name).encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return (file_name or None), line_number


def _unrecordable(what, text):
    """Why `text` cannot be recorded (a definition is UTF-8), warned once; None when fine."""
    try:
        str(text).encode("utf-8")
    except UnicodeEncodeError:
        _native.warn_once((what, str(text)), "%s %r is not valid Unicode text (it holds "
                                 "lone surrogates); not recorded" % (what, text))
        return True
    return False


def region_begin(name, file_name=None, line_number=None):
    """Begin the user region user:<name>; file and line default to the caller's."""
    if not _running() or _unrecordable("region name", name):
        return
    file_name, line_number = _location(file_name, line_number, 1)
    _native.native().region_begin("user:%s" % name, file_name, line_number)


def region_end(name):
    """End the user region user:<name>. An end without a begin is recorded as error_region."""
    if _running() and not _unrecordable("region name", name):
        _native.native().region_end("user:%s" % name)


class region:
    """A user region as context manager or decorator:

        with region("name"): ...       # user:name
        @region("name")                # user:name around every call
        @region() / @region            # the function under its own name (module:function),
                                       # recorded once even when instrumentation is on
    """

    def __new__(cls, region_name=""):
        if callable(region_name):  # bare @region
            return cls()._decorate(region_name)
        return super().__new__(cls)

    def __init__(self, region_name=""):
        self.func = None
        self.region_name = region_name
        self._code_region = False

    def __call__(self, func):
        return self._decorate(func)

    def _decorate(self, func):
        name = self.region_name

        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            context = region(name)
            if not name:
                context.func = func
            with context:
                return func(*args, **kwargs)

        return wrapped

    def __enter__(self):
        if self.region_name:
            if _running() and not _unrecordable("region name", self.region_name):
                file_name, line_number = _location(None, None, 1)
                _native.native().region_begin("user:%s" % self.region_name, file_name,
                                                     line_number)
        elif callable(self.func):
            code = getattr(self.func, "__code__", None)
            # While the instrumenter records, it records this function itself.
            self._code_region = code is not None and _running() and \
                not _native.native().registered()
            if self._code_region:
                _native.native().code_region_begin(
                    code, getattr(self.func, "__module__", None) or "unknown",
                    getattr(self.func, "__qualname__", code.co_name))
        else:
            raise RuntimeError("A region name needs to be specified.")
        return self

    def __exit__(self, exc_type, exc, tb):
        if self.region_name:
            if _running() and not _unrecordable("region name", self.region_name):
                _native.native().region_end("user:%s" % self.region_name)
        elif self._code_region:
            self._code_region = False
            if _running():
                _native.native().code_region_end(self.func.__code__)
        return False


def lines(func):
    """@scorep.user.lines: a line-level profile of the decorated function (hits and time per
    source line, written to lines.json; see scorep-report --lines) whenever it runs measured,
    in this measurement and later ones. The function itself is returned unchanged, so it costs
    nothing unmeasured; decorators below it are looked through (functools.wraps), and
    staticmethod/classmethod objects work too."""
    target = getattr(func, "__func__", func)  # staticmethod, classmethod
    seen = set()  # inspect.unwrap without importing inspect (slow to import)
    while hasattr(target, "__wrapped__") and id(target) not in seen:
        seen.add(id(target))
        target = target.__wrapped__
    code = getattr(target, "__code__", None)
    if code is None:
        raise TypeError("scorep.user.lines decorates a Python function, not %r" % (func,))
    module = _native.native()
    if module is not None:
        module.lines_code(code)
    return func


def instrument_function(fun, instrumenter_fun=region):
    """fun wrapped so that every call is recorded as a region (also without instrumenter)."""
    return instrumenter_fun()(fun)


def instrument_module(module, instrumenter_fun=region):
    """Every function defined at module level of `module` wrapped as by instrument_function."""
    for name, value in list(vars(module).items()):
        if isinstance(value, types.FunctionType):  # (inspect.isfunction; inspect is slow to import)
            setattr(module, name, instrument_function(value, instrumenter_fun))


def rewind_begin(name, file_name=None, line_number=None):
    """Begin a rewind region: rewind_end(name, True) discards everything recorded since."""
    if not _running() or _unrecordable("rewind region name", name):
        return
    file_name, line_number = _location(file_name, line_number, 1)
    _native.native().rewind_begin(name, file_name, line_number)


def rewind_end(name, value):
    """End the rewind region; a truthy value discards what it recorded (the trace then shows
    the measurement switched off for that span)."""
    if _running() and not _unrecordable("rewind region name", name):
        _native.native().rewind_end(name, value)


def oa_region_begin(name, file_name=None, line_number=None):
    """Online-access phases of the original bindings, recorded as the region <name>."""
    if not _running() or _unrecordable("region name", name):
        return
    file_name, line_number = _location(file_name, line_number, 1)
    _native.native().region_begin(name, file_name, line_number)


def oa_region_end(name):
    if _running() and not _unrecordable("region name", name):
        _native.native().region_end(name)


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
    if _unrecordable("parameter name", name) or \
            (isinstance(value, str) and _unrecordable("parameter value", value)):
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
    from scorep.measure import session as _measurement
    measurement = _measurement.Measurement.current
    if measurement is not None:
        measurement.finalize(report_errors=True)


def reregister_exit_handler():
    """Register the exit handler that writes the results again (for programs that cleared
    the atexit handlers)."""
    from scorep.measure import session as _measurement
    measurement = _measurement.Measurement.current
    if measurement is not None:
        import atexit
        atexit.unregister(measurement._finalize_at_exit)
        atexit.register(measurement._finalize_at_exit)


# Keep the names of the instrumenter module reachable as in the original's user module.
instrumenter = _instrumenter
