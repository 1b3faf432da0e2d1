"""User instrumentation: named regions, parameters, recording on/off, rewind.

Every function here is a cheap no-op when the program runs without measurement (plain
`python`), so instrumented code runs unchanged everywhere.
"""

import functools
import types

from scorep import _native
from scorep import instrumenter as _instrumenter
from scorep._api import (disable_recording, enable_recording, force_finalize, location as _location,
                         parameter_int, parameter_string, parameter_uint, reregister_exit_handler,
                         rewind_begin, rewind_end, unrecordable as _unrecordable)

__all__ = ["region_begin", "region_end", "region", "instrument_function", "instrument_module",
           "rewind_begin", "rewind_end", "oa_region_begin", "oa_region_end",
           "enable_recording", "disable_recording", "parameter_int", "parameter_uint",
           "parameter_string", "force_finalize", "reregister_exit_handler", "lines"]

_running = _native.running


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


def oa_region_begin(name, file_name=None, line_number=None):
    """Online-access phases of the original bindings, recorded as the region <name>."""
    if not _running() or _unrecordable("region name", name):
        return
    file_name, line_number = _location(file_name, line_number, 1)
    _native.native().region_begin(name, file_name, line_number)


def oa_region_end(name):
    if _running() and not _unrecordable("region name", name):
        _native.native().region_end(name)



# Keep the names of the instrumenter module reachable as in the original's user module.
instrumenter = _instrumenter
