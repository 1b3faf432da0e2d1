"""Access to the measurement core for the public API modules.

Under plain `python` (no measurement) the public API must work as cheap no-ops, even when
the core is not built for this interpreter; `native()` is then None or not running.
"""

try:
    from scorep import _bindings as _native
except ImportError:  # not built for this interpreter: the API stays usable as no-ops
    _native = None


def native():
    return _native


def running():
    return _native is not None and _native.running()


_warned = set()


def warn_once(key, message):
    """A problem in how the program calls the API: said once, never raised, so that a
    measured program behaves as it does unmeasured."""
    if key in _warned:
        return
    _warned.add(key)
    import sys
    sys.stderr.write("scorep: %s\n" % message)
    sys.stderr.flush()
