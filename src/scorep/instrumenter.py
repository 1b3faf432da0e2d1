"""Switching automatic instrumentation (the recording of every Python call) on and off.

    with scorep.instrumenter.enable():      # or @scorep.instrumenter.enable()
        measured()
    with scorep.instrumenter.disable("io"): # a named section shows as user_instrumenter:io
        not_measured()

The switch is process-wide: it affects every thread, as sys.monitoring does.
"""

import functools
import sys

from scorep import _api, _native

__all__ = ["enable", "disable", "register", "unregister", "get_instrumenter",
           "has_c_instrumenter"]


def _caller_location(depth):
    frame = sys._getframe(depth + 1)
    file_name = frame.f_globals.get("__file__")
    # Made absolute in C: os.path.abspath here would itself be recorded as posixpath calls.
    return (file_name or None), frame.f_lineno


class Instrumenter:
    """The object get_instrumenter() returns, with the interface of the original bindings'
    instrumenter classes."""

    def register(self):
        if _native.running():
            _native.native().register()

    def unregister(self):
        native = _native.native()
        if native is not None:
            native.unregister()

    def get_registered(self):
        return _native.running() and _native.native().registered()

    def region_begin(self, module_name, function_name, file_name, line_number, code_object=None):
        if not _native.running():
            return
        native = _native.native()
        if code_object is not None:
            native.code_region_begin(code_object, module_name, function_name)
        else:
            native.region_begin("%s:%s" % (module_name, function_name), file_name, line_number)

    def region_end(self, module_name, function_name, code_object=None):
        if not _native.running():
            return
        native = _native.native()
        if code_object is not None:
            native.code_region_end(code_object)
        else:
            native.region_end("%s:%s" % (module_name, function_name))

    def rewind_begin(self, name, file_name=None, line_number=None):
        _api.rewind_begin(name, file_name, line_number)

    def rewind_end(self, name, value):
        _api.rewind_end(name, value)

    def user_enable_recording(self):
        _api.enable_recording()

    def user_disable_recording(self):
        _api.disable_recording()

    def user_parameter_int(self, name, val):
        _api.parameter_int(name, val)

    def user_parameter_uint(self, name, val):
        _api.parameter_uint(name, val)

    def user_parameter_string(self, name, string):
        _api.parameter_string(name, string)

    def force_finalize(self):
        _api.force_finalize()

    def reregister_exit_handler(self):
        _api.reregister_exit_handler()


_instrumenter = Instrumenter()


def get_instrumenter(bindings=None, enable_instrumenter=False, instrumenter_type="dummy"):
    """The process's instrumenter (the arguments of the original are accepted and ignored:
    the measurement decides the instrumenter type)."""
    return _instrumenter


def has_c_instrumenter():
    return True


def register():
    """Switch automatic instrumentation on (from here on every Python call is recorded)."""
    _instrumenter.register()


def unregister():
    """Switch automatic instrumentation off; user regions are still recorded."""
    _instrumenter.unregister()


class _Switch:
    """A context manager that is also a decorator: @enable(), @enable("name") and @enable."""

    def __init__(self, region_name=None):
        if callable(region_name):
            self._function = region_name
            self.region_name = None
            functools.update_wrapper(self, region_name)
        else:
            self._function = None
            self.region_name = region_name or None
        self._changed = False

    def __call__(self, *args, **kwargs):
        if self._function is not None:
            with type(self)():
                return self._function(*args, **kwargs)
        function = args[0]
        region_name = self.region_name
        switch = type(self)

        @functools.wraps(function)
        def switched(*inner_args, **inner_kwargs):
            with switch(region_name):
                return function(*inner_args, **inner_kwargs)

        return switched

    def _begin_region(self):
        if self.region_name and _native.running():
            file_name, line = _caller_location(2)
            _native.native().region_begin("user_instrumenter:%s" % self.region_name,
                                                 file_name, line)

    def _end_region(self):
        if self.region_name and _native.running():
            _native.native().region_end("user_instrumenter:%s" % self.region_name)


class enable(_Switch):
    """Automatic instrumentation on inside the block (it overrides --noinstrumenter)."""

    def __enter__(self):
        self._changed = not _instrumenter.get_registered() and _native.running()
        if self._changed:
            self._begin_region()
            _instrumenter.register()
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._changed:
            _instrumenter.unregister()
            self._end_region()
        return False


class disable(_Switch):
    """Automatic instrumentation off inside the block."""

    def __enter__(self):
        self._changed = _instrumenter.get_registered()
        if self._changed:
            _instrumenter.unregister()
            self._begin_region()
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._changed:
            self._end_region()
            _instrumenter.register()
        return False
