"""scorep: performance measurement for Python programs.

Run a program under measurement with `python -m scorep [options] script.py`; see
`python -m scorep --help`. Inside the program, `scorep.user` marks regions and parameters
and `scorep.instrumenter` switches automatic instrumentation on and off. Without
measurement (plain `python`) all of it costs next to nothing.
"""

from scorep import instrumenter, user
from scorep._version import __version__
from scorep.jupyter.magics import load_ipython_extension  # noqa: F401  (%load_ext scorep)

__all__ = ["user", "instrumenter", "register", "__version__"]


def register():
    """Switch automatic instrumentation on (the original bindings' scorep.register())."""
    instrumenter.register()


# The flat names of the first version of the bindings.
user_region_begin = user.region_begin
user_region_end = user.region_end
user_enable_recording = user.enable_recording
user_disable_recording = user.disable_recording
user_parameter_int = user.parameter_int
user_parameter_uint = user.parameter_uint
user_parameter_string = user.parameter_string
