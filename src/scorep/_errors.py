"""The errors of scorep's own code: one root, ScorepError, whose subclasses carry the exit
status a command-line tool ends with when one reaches it.

A tool prints ``<tool>: <message>`` (one line, see :func:`one_line`) and exits with
``error.status``: 2 for command-line mistakes (as python and argparse do), 1 for everything
else (a bad configuration value, an unreadable or damaged input file, a measurement that
cannot start or cannot write its results). The measured program's own exceptions are never
wrapped in these.

Several classes also derive from the built-in exception callers used to catch before there
was a root (ConfigError from ValueError, MeasurementError from RuntimeError), so code that
catches those keeps working.
"""

__all__ = ["ScorepError", "UsageError", "HelpRequested", "ConfigError", "FilterError",
           "MeasurementError", "MPIError", "InputError", "CubeError", "one_line", "run_tool"]


class ScorepError(Exception):
    """Something that ends a scorep tool with one line on stderr and ``status``."""

    status = 1

    def __init__(self, message="", status=None):
        Exception.__init__(self, message)
        if status is not None:
            self.status = status


class UsageError(ScorepError):
    """A mistake on the command line: an unknown option, a missing or bad value."""

    status = 2


class HelpRequested(ScorepError):
    """-h/--help: not a failure; the caller prints its help (a library caller such as the
    kernel decides for itself)."""

    status = 0


class ConfigError(ScorepError, ValueError):
    """A configuration value that cannot be used; str() names the variable, the value and
    what it accepts."""


class FilterError(ConfigError):
    """A filter file that cannot be used; str() is "file:line: what was expected"."""


class MeasurementError(ScorepError, RuntimeError):
    """Something kept the measurement from starting or from writing its results."""


class MPIError(MeasurementError):
    """The MPI wrappers cannot be used."""


class InputError(ScorepError):
    """A file given to a tool that it cannot read; the message names the file and why."""


class CubeError(InputError):
    """A file that is not a readable CUBE4 profile."""


def one_line(error):
    """The error's message on one line (never empty: the class name stands in)."""
    return " ".join(str(error).split()) or type(error).__name__


def run_tool(prog, body, argv=None, usage_hint=False):
    """Runs the body of a command line (scorep, scorep-score, scorep-report) and returns its
    exit status. A ScorepError ends it with ``<prog>: <message>`` on one line and the error's
    status (a UsageError says where the help is when ``usage_hint``); a closed pipe (``| head``)
    and Ctrl-C end it quietly and with one line. Anything else is a bug of the tool and
    stays a traceback: damaged input is detected where it is read and raised as a
    ScorepError subclass there."""
    import sys
    try:
        return body(argv)
    except HelpRequested as error:
        return error.status
    except ScorepError as error:
        hint = " (see %s --help)" % prog if usage_hint and isinstance(error, UsageError) else ""
        sys.stderr.write("%s: %s%s\n" % (prog, one_line(error), hint))
        sys.stderr.flush()
        return error.status
    except BrokenPipeError:
        # The reader went away (`| head`): flushing at exit would fail again.
        sys.stdout = None
        return 0
    except OSError as error:
        # The file system's answer (a file that cannot be written, a full disk): no bug.
        where = " %s:" % error.filename if getattr(error, "filename", None) else ""
        sys.stderr.write("%s:%s %s\n" % (prog, where, error.strerror or error))
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("%s: interrupted\n" % prog)
        return 130
