"""The command line: python -m scorep [options] [--] script.py [args] | -m module | -c code.

Command-line mistakes (unknown option, no or unreadable script) exit with status 2, like
python itself; a bad configuration value or an experiment directory that cannot be used
exits with status 1. Either way one line starting with "scorep:" goes to stderr.
Otherwise the measured program's own exit status, output and exceptions pass through.
"""

import importlib.machinery
import importlib.util
import os
import signal
import sys
import types

from scorep.measure import config as _config, session as _measurement, children as _processes
from scorep._errors import (ConfigError, HelpRequested, MeasurementError, ScorepError,
                            UsageError, run_tool)
from scorep._version import __version__
from scorep.measure.instrumenters import INSTRUMENTERS

USAGE = "Usage: python -m scorep [options] [--] script.py [args] | -m module [args] | -c code [args]"

HELP = USAGE + """

Measures a Python program: every Python function call (module[.Class]:function), user
regions (scorep.user), threads; writes a call-path profile (profile.cubex) and, with
SCOREP_ENABLE_TRACING=true, an OTF2 trace (traces.otf2) into the experiment directory.

options:
  -h, --help                 show this help and exit
  --version                  show scorep's version and exit
  -v, --verbose              report what the measurement does on stderr
  --noinstrumenter, --nopython
                             no automatic instrumentation until the program enables it
                             (scorep.instrumenter.enable() / register()); user regions work
  --instrumenter-type=TYPE   how Python calls are recorded:
                               monitoring  sys.monitoring (Python 3.12+): the fastest and
                                           the default there
                               eval        frame evaluation hook (PEP 523, Python before
                                           3.12): the fastest and the default there
                               cProfile    C-level profile hook (slower: it switches the
                                           interpreter into its tracing mode)
                               profile     same as cProfile
                               cTrace      C-level trace hook: the same events, slower
                               trace       same as cTrace
                               dummy       no automatic instrumentation at all
  --instrumenter-file=FILE   run FILE after sys.argv and sys.path[0] are set, before
                             instrumentation starts (e.g. to wrap functions with
                             scorep.user.region)
  --filter=FILE              leave out the regions a Score-P filter file excludes (sets
                             SCOREP_FILTERING_FILE; see scorep-score -g)
  --lines=PATTERNS           line-level profiles (hits and time per source line, written
                             to lines.json; scorep-report --lines shows them) of the
                             functions whose region names match the comma-separated
                             patterns, e.g. --lines='mymod:hot_*,__main__.Solver:step'
                             (sets SCOREP_PYTHON_LINES; see also scorep.user.lines)
  --sampling[=HZ]            sample the Python call stacks of every thread HZ times a
                             second (default 1000) instead of recording every call: a
                             call-path profile with estimated times and sample counts
                             (hits) at a fraction of the cost; user regions, MPI and I/O
                             stay recorded, in their calling contexts (sets
                             SCOREP_ENABLE_UNWINDING=true, SCOREP_SAMPLING_EVENTS=wall@US)
  --sampling-clock=wall|cpu  what a sample stands for: wall-clock time (the default;
                             waiting counts) or the thread's CPU time (implies --sampling)
  --native                   with --sampling: each sample also has the thread's C stack
                             (BLAS, C extensions: dgemm_ [libblas.so.3] under the Python
                             function that calls ndarray.dot), and threads that never run
                             Python are sampled too (sets SCOREP_SAMPLING_NATIVE=true)
  --summary                  print the end-of-run summary even when stderr is not a
                             terminal (it is printed when it is one)
  --c-calls, --no-c-calls    C functions called from Python (sorted, time.sleep,
                             ndarray.dot, numpy ufuncs) are regions of their own, or not
                             (their time is then their Python caller's); the default is
                             on for Python 3.12+, off before (sets SCOREP_PYTHON_C_CALLS)
  --no-children              do not measure the Python processes the program starts
                             (multiprocessing, subprocess, os.fork); sets
                             SCOREP_CHILDREN=false
  --keep-files               accepted for compatibility (nothing is generated to keep)
  --mpp=mpi                  record MPI calls and messages; all ranks write one
                             experiment (default under mpirun/srun: on when the program
                             imports mpi4py); --mpp=none switches it off
  --io=runtime:posix         record POSIX and ISO C I/O calls (sets SCOREP_IO_POSIX=true):
                             open/read/write/lseek/close/dup/fsync, fopen/fread/fwrite/...
                             of Python and of C libraries, with bytes per file and region
  --memory                   bytes allocated and freed by the Python allocators per region
                             (metrics python_allocated, python_freed), by malloc & co. of
                             extension modules and C libraries (native_allocated,
                             native_freed, native_peak) and garbage collections as
                             gc:collect regions (sets SCOREP_PYTHON_MEMORY,
                             SCOREP_NATIVE_MEMORY and SCOREP_PYTHON_GC)
  --thread=..., --io=..., --compiler, --nocompiler, --user, --nouser, ...
                             Score-P instrumenter flags, accepted for compatibility
  --                         end of options: the next argument is the script

environment (Score-P's names and defaults):
""" + "\n".join("  %-40s %s%s" % (name, description,
                                 " (default: %s)" % default if default else "")
                for name, (default, _parse, description) in _config.VARIABLES.items()) + """

Other SCOREP_* variables (Score-P's that this tool does not implement) get one warning line
each when set to a value that would change what Score-P records.

exit status: the program's own; 2 for command-line mistakes, 1 for no script and for
configuration problems.
"""

# Score-P instrumenter flags: accepted so that job scripts written for the original keep
# working. The ones with a value take it after "=".
SCOREP_FLAGS = {
    "--compiler", "--nocompiler", "--user", "--nouser", "--mpi", "--cuda", "--nocuda",
    "--opencl", "--noopencl", "--openacc", "--noopenacc", "--online-access",
    "--noonline-access", "--pomp", "--nopomp", "--preprocess", "--nopreprocess", "--memory",
    "--nomemory", "--kokkos", "--nokokkos", "--hip", "--nohip", "--openmp", "--noopenmp",
    "--static", "--dynamic",
}
SCOREP_VALUE_FLAGS = ("--thread", "--io", "--libwrap", "--instrument-filter",
                      "--memory", "--openmp")
OWN_FLAGS = ("-h", "--help", "-v", "--verbose", "--keep-files", "--noinstrumenter", "--nopython",
             "--instrumenter-type=TYPE", "--instrumenter-file=FILE", "--filter=FILE", "--lines=PATTERNS",
             "--sampling[=HZ]", "--sampling-clock=wall|cpu", "--native",
             "--summary", "--c-calls", "--no-c-calls", "--no-children", "--mpp=mpi|none", "--version", "-m", "-c", "--")

MAX_SAMPLING_HZ = 100000


# The original bindings exit with 1 when there is no script ("Did not find a script to run");
# other command-line mistakes exit with 2, as python's own do.
NO_SCRIPT_STATUS = 1

def io_runtime_posix(flags):
    """Whether the Score-P flags ask for POSIX I/O recording the old way
    (--io=runtime:posix, as job scripts for the original bindings have it)."""
    for flag in flags:
        name, _sep, value = flag.partition("=")
        if name == "--io" and any(v.strip() == "runtime:posix" for v in value.split(",")):
            return True
    return False


class VersionRequested(HelpRequested):
    """--version: the caller prints the version."""


class Options:
    def __init__(self):
        self.verbose = False
        self.instrument = True
        self.instrumenter = "default"
        self.instrumenter_file = None
        self.filter_file = None
        self.lines = None
        self.sampling = None  # samples per second; None: not asked for on the command line
        self.sampling_clock = None  # "wall" or "cpu"
        self.summary = False
        self.children = True
        self.c_calls = None  # SCOREP_PYTHON_C_CALLS decides
        self.native = False  # --native: SCOREP_SAMPLING_NATIVE=true
        self.mpp = None  # None: decided by the launcher environment
        self.spawned = None  # the parent's configuration (scorep.cfg text) in a spawned process
        self.mode = None  # "script", "module" or "code"
        self.target = None
        self.args = []
        self.scorep_flags = []


def parse_args(argv):
    opts = Options()
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            i += 1
            if i >= len(argv):
                raise UsageError("no script given after --", status=NO_SCRIPT_STATUS)
            opts.mode, opts.target, opts.args = "script", argv[i], argv[i + 1:]
            return opts
        if arg in ("-m", "-c"):
            if i + 1 >= len(argv):
                raise UsageError("%s needs an argument" % arg)
            opts.mode = "module" if arg == "-m" else "code"
            opts.target, opts.args = argv[i + 1], argv[i + 2:]
            return opts
        if not arg.startswith("-") or arg == "-":
            opts.mode, opts.target, opts.args = "script", arg, argv[i + 1:]
            return opts
        name, has_value, value = arg.partition("=")
        if arg in ("-h", "--help"):
            raise HelpRequested()
        elif arg == "--version":
            raise VersionRequested()
        elif arg in ("-v", "--verbose"):
            opts.verbose = True
        elif arg == "--keep-files":
            pass
        elif arg in ("--noinstrumenter", "--nopython"):
            opts.instrument = False
        elif arg == "--summary":
            opts.summary = True
        elif arg == "--no-children":
            opts.children = False
        elif arg in ("--c-calls", "--no-c-calls"):
            opts.c_calls = arg == "--c-calls"
        elif name == "--sampling":
            opts.sampling = parse_sampling_rate(value) if has_value else opts.sampling or 0
        elif arg == "--native":
            opts.native = True
        elif name == "--sampling-clock":
            if value not in ("wall", "cpu"):
                raise UsageError("unknown --sampling-clock=%s; valid: wall, cpu" % value)
            opts.sampling_clock = value
            if opts.sampling is None:
                opts.sampling = 0
        elif name in ("--instrumenter-type", "--instrumenter-file", "--filter", "--lines"):
            if not has_value:
                if i + 1 >= len(argv):
                    raise UsageError("%s needs a value" % name)
                i += 1
                value = argv[i]
            if name == "--filter":
                opts.filter_file = value
            elif name == "--lines":
                opts.lines = value
            elif name == "--instrumenter-type":
                if value not in INSTRUMENTERS:
                    raise UsageError("unknown instrumenter type %r; valid types: %s" % (
                        value, ", ".join(INSTRUMENTERS)))
                opts.instrumenter = value
            else:
                opts.instrumenter_file = value
        elif name == "--spawned" and has_value:
            # Given by the MPI wrappers to processes a measured program starts with
            # MPI_Comm_spawn: they join its experiment with its configuration.
            opts.spawned = value
            opts.mpp = "mpi"
        elif name == "--mpp" and has_value:
            if value not in ("mpi", "none"):
                raise UsageError("unknown --mpp=%s; valid: mpi, none" % value)
            opts.mpp = value
        elif arg == "--mpi":  # the first bindings' flag
            opts.mpp = "mpi"
        elif arg in SCOREP_FLAGS or (has_value and name in SCOREP_VALUE_FLAGS):
            opts.scorep_flags.append(arg)
        else:
            raise UsageError("unknown option %s; valid options: %s, and the Score-P flags %s" % (
                arg, " ".join(OWN_FLAGS), " ".join(sorted(SCOREP_FLAGS) +
                                                   ["%s=..." % f for f in SCOREP_VALUE_FLAGS])))
        i += 1
    raise UsageError("no script given (see python -m scorep --help)", status=NO_SCRIPT_STATUS)


def memory_requested(flags):
    """Whether the flags ask for memory recording (Score-P's --memory, also --memory=...)."""
    return any(flag.partition("=")[0] == "--memory" for flag in flags)


def parse_sampling_rate(text):
    try:
        rate = float(text)
    except ValueError:
        rate = 0.0
    if not 1 <= rate <= MAX_SAMPLING_HZ:
        raise UsageError("--sampling=%s: the sampling rate is a number of samples per second "
                         "from 1 to %d, e.g. --sampling=1000" % (text, MAX_SAMPLING_HZ))
    return rate


def sampling_overrides(opts, environ=None):
    """--sampling[=HZ] and --sampling-clock as Score-P's variables: unwinding on, and the
    sampling event from what the options give (the environment's event otherwise)."""
    if opts.sampling is None:
        return {}
    environ = os.environ if environ is None else environ
    overrides = {"SCOREP_ENABLE_UNWINDING": "true"}
    if not opts.sampling and not opts.sampling_clock and environ.get("SCOREP_SAMPLING_EVENTS"):
        return overrides  # --sampling alone: the event the environment chose
    try:
        configured = _config.parse_sampling_events(
            "SCOREP_SAMPLING_EVENTS", environ.get("SCOREP_SAMPLING_EVENTS", ""),
            environ.get("SCOREP_SAMPLING_SEP", ","))
    except ConfigError:
        configured = None  # replaced by what the options ask for
    clock = opts.sampling_clock or ("cpu" if configured and configured.cpu else "wall")
    if opts.sampling:
        period = max(_config.MIN_SAMPLING_PERIOD_US, int(round(1e6 / opts.sampling)))
    else:
        period = configured.period_us if configured else _config.DEFAULT_SAMPLING_PERIOD_US
    overrides["SCOREP_SAMPLING_EVENTS"] = "%s@%d" % (clock, period)
    return overrides


def config_overrides(opts):
    """What the options set that SCOREP_* variables could set too (the options win): the
    command line and the Jupyter kernel's measured cells (whose binding arguments are the
    same) both measure with these."""
    overrides = {}
    if io_runtime_posix(opts.scorep_flags):
        overrides["SCOREP_IO_POSIX"] = "true"
    if memory_requested(opts.scorep_flags):
        overrides["SCOREP_PYTHON_MEMORY"] = "true"
        overrides["SCOREP_NATIVE_MEMORY"] = "true"
        overrides["SCOREP_PYTHON_GC"] = "true"
    if opts.verbose:
        overrides["SCOREP_VERBOSE"] = "true"
    if opts.spawned is not None:
        overrides.update(_config.parse_cfg(opts.spawned))
    if opts.filter_file is not None:
        overrides["SCOREP_FILTERING_FILE"] = opts.filter_file
    if opts.lines is not None:
        overrides["SCOREP_PYTHON_LINES"] = opts.lines
    if not opts.children:
        overrides["SCOREP_CHILDREN"] = "false"
    if opts.c_calls is not None:
        overrides["SCOREP_PYTHON_C_CALLS"] = "true" if opts.c_calls else "false"
    overrides.update(sampling_overrides(opts))
    if opts.native:
        overrides["SCOREP_SAMPLING_NATIVE"] = "true"
    return overrides


def read_script(path):
    try:
        with open(path, "rb") as source_file:
            return source_file.read()
    except OSError as error:
        raise UsageError("can't open file %r: [Errno %d] %s"
                         % (path, error.errno, error.strerror)) from None


def _own_frame(tb):
    filename = tb.tb_frame.f_code.co_filename
    return filename.startswith(_measurement.PACKAGE_DIR + os.sep)


def report_uncaught(exc_type, exc, tb):
    """Shows an exception of the program as python would: through sys.excepthook, without
    the frames of this tool."""
    while tb is not None and _own_frame(tb):
        tb = tb.tb_next
    if exc is not None:
        exc.__traceback__ = tb  # what the default hook prints, whatever tb it is given
    sys.excepthook(exc_type, exc, tb)


def exit_code_of(system_exit):
    code = system_exit.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    return 1


def find_module(name):
    # Exit status 1, as python's -m (runpy) has for a module it cannot find; 2 is for usage.
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as error:
        raise ScorepError("Error while finding module specification for %r (%s: %s)" % (
            name, type(error).__name__, error)) from None
    if spec is None:
        raise ScorepError("No module named %s" % name)


def prepare_main(opts, parents_later=False):
    """Sets sys.argv, sys.path[0] and a fresh __main__ module the way python does for the
    script, module or code; returns (code object or None, module or None). With
    `parents_later` only the top-level package of a module is looked for: finding a
    submodule imports its parent packages, which is the program's work (mpi4py.futures
    initializes MPI) and must be measured."""
    if opts.mode == "script":
        source = read_script(opts.target)
        path = os.path.abspath(opts.target)
        code = compile(source, path, "exec", dont_inherit=True)
        sys.argv[:] = [opts.target] + opts.args
        sys.path[0] = os.path.dirname(os.path.realpath(opts.target))
        module = types.ModuleType("__main__")
        module.__file__ = path
        module.__cached__ = None
        module.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
        module.__spec__ = None
        module.__package__ = None
        module.__annotations__ = {}
        module.__builtins__ = __builtins__
        return code, module
    if opts.mode == "code":
        code = compile(opts.target, "<string>", "exec", dont_inherit=True)
        sys.argv[:] = ["-c"] + opts.args
        sys.path[0] = ""
        module = types.ModuleType("__main__")
        module.__loader__ = importlib.machinery.BuiltinImporter
        module.__spec__ = None
        module.__package__ = None
        module.__annotations__ = {}
        module.__builtins__ = __builtins__
        return code, module
    # -m module: found here so that a missing module fails before measuring
    find_module(opts.target.split(".")[0] if parents_later else opts.target)
    sys.argv[:] = [opts.target] + opts.args  # runpy puts the module's path in argv[0]
    # runpy fills the __main__ it finds in sys.modules: give it a pristine one, as python has.
    module = types.ModuleType("__main__")
    module.__annotations__ = {}
    module.__builtins__ = __builtins__
    return None, module


def exit_by_sigint():
    """What python does after an uncaught KeyboardInterrupt: wait for the non-daemon threads,
    run the atexit handlers (the program's, then ours, which writes the results), then end
    by SIGINT so that the shell sees the interrupt."""
    import atexit
    import threading
    try:
        threading._shutdown()
    except KeyboardInterrupt:  # a second Ctrl-C stops waiting, as in python
        pass
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)


def run_instrumenter_file(path):
    source = read_script(path)
    namespace = {"__name__": "__scorep_instrumenter__", "__file__": os.path.abspath(path),
                 "__builtins__": __builtins__}
    exec(compile(source, os.path.abspath(path), "exec", dont_inherit=True), namespace)


def main(argv=None):
    """python -m scorep: the tool's own errors end it with one line (run_tool); the measured
    program's exit status, output and exceptions pass through unchanged."""
    status = run_tool("scorep", _main, sys.argv[1:] if argv is None else argv)
    if status:
        sys.exit(status)


def _main(argv):
    try:
        opts = parse_args(argv)
    except VersionRequested:
        sys.stdout.write("scorep %s\n" % __version__)
        sys.exit(0)
    except HelpRequested:
        sys.stdout.write(HELP)
        sys.exit(0)

    from scorep.measure import mpi as _mpi
    # Said once for a job, not once per rank.
    speaks = _mpi.launcher_rank() in (None, 0) and opts.spawned is None
    overrides = config_overrides(opts)
    if "SCOREP_IO_POSIX" in overrides:
        # In the environment too: the program's child processes see what Score-P's would.
        os.environ["SCOREP_IO_POSIX"] = overrides["SCOREP_IO_POSIX"]
    config = _config.from_environ(overrides=overrides)
    for warning in _config.unsupported_variables() if speaks else ():
        sys.stderr.write("scorep: %s\n" % warning)
    for note in config.notes if speaks and not opts.verbose else ():
        # A timer that could not be used as asked is said (with --verbose the measurement
        # logs every note).
        if note.endswith("using clock_gettime"):
            sys.stderr.write("scorep: %s\n" % note)

    mpi = opts.mpp == "mpi" or (opts.mpp is None and _mpi.under_launcher())
    parents_later = mpi and opts.mode == "module" and "." in (opts.target or "")
    try:
        code, module = prepare_main(opts, parents_later)
    except SyntaxError:
        exc_type, exc, tb = sys.exc_info()
        report_uncaught(exc_type, exc, None)
        sys.exit(1)

    # The program root is named like Score-P names the executable: its base name, with the
    # full path and the arguments in ProgramBegin and the root's canonical name.
    if opts.mode == "script":
        program_name = os.path.basename(opts.target)
        program_path = os.path.abspath(opts.target)
    elif opts.mode == "module":
        program_name = program_path = "python -m " + opts.target
    else:
        program_name = program_path = "python -c"
    try:
        if opts.mpp == "mpi":
            _mpi.load_wrappers()
        elif mpi:
            _mpi.load_on_import()
        summary = opts.summary or (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())
        measurement = _measurement.Measurement(config, opts.instrumenter, program_name,
                                               opts.args, summary=summary, mpi=mpi,
                                               program_path=program_path,
                                               spawned=opts.spawned is not None
                                               ).start(register=False)
    except OSError as error:
        raise MeasurementError(str(error)) from None
    measurement.finalize_at_exit()
    if parents_later:
        find_module(opts.target)  # its parent packages are imported under measurement now
    if opts.scorep_flags:
        measurement.log("accepted Score-P flags without effect: %s" % " ".join(opts.scorep_flags))

    from scorep import instrumenter
    try:
        if module is not None:
            sys.modules["__main__"] = module
        if opts.instrumenter_file:
            run_instrumenter_file(opts.instrumenter_file)
        if opts.instrument:
            instrumenter.register()
        # What the children inherit, with the state the program starts in: os.environ
        # changes no more once the program runs.
        _processes.program_starts()
        if code is not None:
            exec(code, module.__dict__)
        else:
            import runpy
            measurement.exclude_runpy()
            runpy._run_module_as_main(opts.target, alter_argv=True)
    except SystemExit as error:
        measurement.exit_status = exit_code_of(error)
        raise
    except KeyboardInterrupt:
        exc_type, exc, tb = sys.exc_info()
        report_uncaught(exc_type, exc, tb)
        del tb
        measurement.exit_status = 128 + signal.SIGINT
        exit_by_sigint()
    except BaseException:
        exc_type, exc, tb = sys.exc_info()
        measurement.exit_status = 1
        report_uncaught(exc_type, exc, tb)
        del tb
        sys.exit(1)
