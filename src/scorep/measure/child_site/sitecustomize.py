# scorep: measures a Python process that a measured program started (subprocess, os.system,
# os.exec*, multiprocessing's spawn start method) as part of the program's experiment.
# Measured programs have this directory first in PYTHONPATH; every interpreter they start
# imports this file at start-up. Written in syntax any Python accepts (a Python 2 child
# must not fail here); it runs the interpreter's own sitecustomize, if there is one, then,
# with scorep's environment variable, starts the measurement.
import os
import sys


def _scorep_start():
    if not os.environ.get("_SCOREP_PYTHON_CHILD"):
        return
    if sys.version_info < (3, 9):
        sys.stderr.write("scorep: process %d (Python %d.%d) is not measured: scorep measures "
                         "Python 3.9 and newer\n" % ((os.getpid(),) + tuple(sys.version_info[:2])))
        return
    try:
        import scorep.measure.session  # noqa: F401 (what a child's measurement is made of)
        import scorep.measure.children as processes
    except ImportError:
        # Another interpreter than the measured program's: scorep from where that one has it.
        import json
        try:
            package = json.loads(os.environ["_SCOREP_PYTHON_CHILD"])["package"]
        except (ValueError, KeyError):
            return
        sys.path.append(package)
        try:
            import scorep.measure.session  # noqa: F401 (what a child's measurement is made of)
            import scorep.measure.children as processes
        finally:
            sys.path.remove(package)
    processes.start_from_environment()


def _scorep_chain():
    """The sitecustomize this one hides (Debian's python3 has one), run as it would be;
    this directory leaves sys.path (the child's environment keeps it for its children)."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    if sys.version_info < (3, 4):
        return
    import importlib.machinery
    import importlib.util
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module  # what `import sitecustomize` returns
    spec.loader.exec_module(module)


# The interpreter's own sitecustomize first: it is start-up, as in the measured program's own
# process, where it ran before `python -m scorep` started; a child's profile showed Debian's
# sitecustomize import as the program's.
_scorep_chain()
try:
    _scorep_start()
except Exception as _scorep_error:  # a measurement problem never stops the child's program
    sys.stderr.write("scorep: process %d is not measured: %s\n" % (os.getpid(), _scorep_error))
