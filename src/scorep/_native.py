"""The one module that imports the measurement core's extension, scorep._bindings; the rest
of the package reaches the core through this module.

Under plain `python` (no measurement) the public API must work as cheap no-ops, even when
the core is not built for this interpreter: `native()` is then None and `running()` False.
What needs the core (starting a measurement, parsing a filter file, the constants the C
code defines) calls `load()`, which says in one line what is missing.
"""

import contextlib
import sys

from scorep._errors import MeasurementError

try:
    from scorep import _bindings as _module
    _import_error = None
except ImportError as error:  # not built for this interpreter
    _module = None
    _import_error = error


def native():
    """The extension module, or None when it is not built for this interpreter."""
    return _module


def running():
    return _module is not None and _module.running()


def load():
    """The extension module; MeasurementError (one line) when it is not built."""
    if _module is None:
        raise MeasurementError(
            "the measurement core is not built for this Python (%s %d.%d): %s; "
            "run 'make build PYTHON=%s' in the scorep checkout"
            % (sys.implementation.name, sys.version_info[0], sys.version_info[1],
               _import_error, sys.executable))
    return _module


def constant(name):
    """A size or limit the C code defines (record sizes, chunk sizes, limits), as the
    extension exports it: Python never repeats these by hand."""
    return getattr(load(), name)


@contextlib.contextmanager
def quiet():
    """The tool's own work on this thread (its messages, its files): while it runs nothing
    is recorded, neither calls nor I/O."""
    if _module is None:
        yield
        return
    _module.quiet_begin()
    try:
        yield
    finally:
        _module.quiet_end()


_warned = set()


def warn_once(key, message):
    """A problem in how the program calls the API: said once, never raised, so that a
    measured program behaves as it does unmeasured."""
    if key in _warned:
        return
    _warned.add(key)
    with quiet():
        sys.stderr.write("scorep: %s\n" % message)
        sys.stderr.flush()
