"""Measurement configuration: Score-P's environment variables, their defaults and checks.

Every variable is read once, when a measurement starts. An invalid value is a
`ConfigError` whose message names the variable, the value and what it accepts.
"""

import os
import re
import socket
import sys

from scorep._errors import ConfigError, FilterError, MeasurementError

__all__ = ["ConfigError", "Config", "VARIABLES", "parse_bool", "parse_memory", "from_environ",
           "metric_requests"]

_TRUE = {"true", "yes", "on", "1", "t", "y"}
_FALSE = {"false", "no", "off", "0", "f", "n", ""}


def parse_sampling_read(name, text):
    value = text.strip().lower()
    if value not in ("async", "safepoint"):
        raise ConfigError("%s=%r: use async or safepoint" % (name, text))
    return value


def parse_bool(name, text):
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ConfigError("%s=%r is not a boolean (use true/false, yes/no, on/off or 1/0)" % (name, text))


_MEMORY = re.compile(r"^\s*(\d+)\s*([kmgt]?)b?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
MIN_TOTAL_MEMORY = 1 << 20
# Far beyond any machine, far below what would wrap the core's 64-bit byte counts.
MAX_TOTAL_MEMORY = 1 << 50


def parse_memory(name, text):
    match = _MEMORY.match(text)
    if not match:
        raise ConfigError(
            "%s=%r is not a memory size (a number with an optional k, M, G or T suffix, e.g. 16000k)"
            % (name, text))
    value = int(match.group(1)) * _UNITS[match.group(2).lower()]
    if value < MIN_TOTAL_MEMORY:
        raise ConfigError("%s=%r is too small: the measurement needs at least 1M" % (name, text))
    if value > MAX_TOTAL_MEMORY:
        raise ConfigError("%s=%r is too large: at most 1024T" % (name, text))
    return value


def parse_slice(name, text):
    """A size in bytes (k, M, G, T suffixes) of at most 1T, or 0."""
    match = _MEMORY.match(text)
    if not match:
        raise ConfigError(
            "%s=%r is not a size (a number with an optional k, M, G or T suffix, e.g. 64k, or 0)"
            % (name, text))
    value = int(match.group(1)) * _UNITS[match.group(2).lower()]
    if value > 1 << 40:
        raise ConfigError("%s=%r is too large: at most 1T" % (name, text))
    return value


def bounded_int(maximum):
    """A parser of integers in [1, maximum] (what the core can hold without wrapping)."""

    def parse(name, text):
        try:
            value = int(text.strip())
        except ValueError:
            value = 0
        if value <= 0:
            raise ConfigError("%s=%r is not a positive integer" % (name, text))
        if value > maximum:
            raise ConfigError("%s=%r is too large: at most %d" % (name, text, maximum))
        return value

    return parse


parse_positive_int = bounded_int(2**31 - 1)


def parse_file_name(name, text):
    """A plain file name (no directory part): outputs stay inside the experiment directory."""
    if not text or text in (".", "..") or "/" in text or "\0" in text:
        raise ConfigError("%s=%r is not a plain file name (no '/', not '.' or '..')"
                          % (name, text))
    _check_utf8(name, text)
    return text


def _check_utf8(name, text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError("%s=%r is not valid UTF-8" % (name, text)) from None


def parse_utf8_text(name, text):
    _check_utf8(name, text)
    return text


def parse_timer(name, text):
    value = text.strip().lower()
    if value in ("tsc", "clock_gettime"):
        return value
    if value == "gettimeofday":  # Score-P's name for its wall-clock timer
        return "clock_gettime"
    raise ConfigError("%s=%r is not a timer (use tsc or clock_gettime)" % (name, text))


def parse_line_patterns(name, text):
    """Comma-separated region-name patterns (fnmatch: *, ?, [...]); empty parts are refused."""
    _check_utf8(name, text)
    if not text.strip():
        return ""
    patterns = [p.strip() for p in text.split(",")]
    if not all(patterns):
        raise ConfigError("%s=%r has an empty pattern (comma-separated region names such as "
                          "mymod:hot_*,__main__:f)" % (name, text))
    return ",".join(patterns)


def line_pattern_spellings(pattern):
    """The patterns that stand for one --lines pattern. Region names are module[.Class]:function;
    a pattern without ':' is also taken in the dotted spelling of cProfile and line_profiler
    users (pkg.mod.func, pkg.mod.Class.method): each of its dots in turn may be the ':'. A
    variant with a literal ':' matches only where the region's ':' is, so it matches exactly
    the regions whose dotted name the pattern matches (wildcards match ':' as they match '.')."""
    if ":" in pattern:
        return [pattern]
    parts = pattern.split(".")
    return [pattern] + [".".join(parts[:i]) + ":" + ".".join(parts[i:])
                        for i in range(1, len(parts))]


def line_patterns_matching_nothing(patterns, region_names):
    """The patterns (as given) that match none of region_names, with the spellings above
    and fnmatch's rules (the C side matches with fnmatch(3) and no flags: the same)."""
    import fnmatch
    return [p for p in patterns
            if not any(fnmatch.fnmatchcase(name, spelling)
                       for spelling in line_pattern_spellings(p) for name in region_names)]


# Sampling events (SCOREP_SAMPLING_EVENTS): Score-P's interval timer ("timer", which counts
# the process's CPU time), and wall-clock and CPU time by their own names. Periods are in
# microseconds, as Score-P's timer period.
SAMPLING_CLOCKS = {"wall": "wall", "cpu": "cpu", "timer": "cpu"}
DEFAULT_SAMPLING_PERIOD_US = 1000
MIN_SAMPLING_PERIOD_US = 10
MAX_SAMPLING_PERIOD_US = 60 * 1000000


class SamplingEvent:
    """One sampling event: its name as given, whether it counts CPU time (else wall-clock
    time), and its period in microseconds."""

    def __init__(self, name, period_us):
        self.name = name
        self.cpu = SAMPLING_CLOCKS[name] == "cpu"
        self.period_us = period_us

    def __str__(self):
        return "%s@%d" % (self.name, self.period_us)

    @property
    def hz(self):
        return 1e6 / self.period_us


def parse_sampling_events(name, text, separator=","):
    """SCOREP_SAMPLING_EVENTS: none (empty) or one `<event>[@<period in us>]`."""
    events = [e.strip() for e in text.split(separator)] if separator else [text.strip()]
    events = [e for e in events if e]
    if not events:
        return None
    if len(events) > 1:
        raise ConfigError("%s=%r names %d events; one sampling event at a time is supported "
                          "(wall@US, cpu@US or timer@US)" % (name, text, len(events)))
    event, _sep, period = events[0].partition("@")
    if event not in SAMPLING_CLOCKS:
        raise ConfigError("%s=%r: %r is not a sampling event of this tool; use wall@US "
                          "(wall-clock time), cpu@US or Score-P's timer@US (CPU time), US the "
                          "period in microseconds (hardware counter events are not "
                          "supported)" % (name, text, event))
    if not period:
        return SamplingEvent(event, DEFAULT_SAMPLING_PERIOD_US)
    try:
        period_us = int(period)
    except ValueError:
        period_us = 0
    if not MIN_SAMPLING_PERIOD_US <= period_us <= MAX_SAMPLING_PERIOD_US:
        raise ConfigError("%s=%r: the period is a number of microseconds from %d to %d, e.g. "
                          "%s@1000 for 1000 samples a second"
                          % (name, text, MIN_SAMPLING_PERIOD_US, MAX_SAMPLING_PERIOD_US, event))
    return SamplingEvent(event, period_us)


def parse_separator(name, text):
    _check_utf8(name, text)
    return text


def parse_filter_file(name, text):
    """An absolute path to a filter file that parses (checked now, before anything runs)."""
    if not text.strip():
        return ""
    path = os.path.abspath(text)
    from scorep.measure import filter as _filter
    try:
        _filter.Filter(path)
    except FilterError:
        raise
    except MeasurementError:
        return path  # no core for this interpreter: the measurement will say so
    return path


def parse_metric_list(name, text):
    """A list of metric names as Score-P reads it: the names between separators (its
    SCOREP_METRIC_*_SEP, a comma by default; checked when the measurement starts, where an
    unknown name stops the run as it stops Score-P)."""
    _check_utf8(name, text)
    return text.strip()


def parse_separator(name, text):
    if not text:
        raise ConfigError("%s=%r is empty: a separator of metric names is needed (default ,)"
                          % (name, text))
    return text


def metric_names(text, separator):
    """The names of a SCOREP_METRIC_* value split at any of the separator's characters (as
    Score-P's strtok does), without empty ones."""
    names = [text]
    for sep in separator or ",":
        names = [part for name in names for part in name.split(sep)]
    return [n.strip() for n in names if n.strip()]


# The metric sources: the variable's suffix and the core's name of the source.
METRIC_SOURCES = (("RUSAGE", "rusage"), ("PERF", "perf"), ("PAPI", "papi"))


def metric_requests(config):
    """(source, name, per_process) of every metric the configuration asks for, in Score-P's
    order: rusage before perf before PAPI, every location's before the per-process ones."""
    requests = []
    for suffix, source in METRIC_SOURCES:
        sep = config["SCOREP_METRIC_%s_SEP" % suffix]
        for per_process in (False, True):
            name = "SCOREP_METRIC_%s%s" % (suffix, "_PER_PROCESS" if per_process else "")
            text = config[name]
            if suffix == "RUSAGE" and text.strip().lower() == "all":
                requests.append((source, "all", per_process))
                continue
            for metric in metric_names(text, sep):
                # Score-P lowercases rusage names; perf and PAPI names are case-sensitive.
                requests.append((source, metric.lower() if suffix == "RUSAGE" else metric,
                                 per_process))
    if config["SCOREP_PYTHON_MEMORY"]:
        requests += [("python", "python_allocated", False), ("python", "python_freed", False)]
    if config["SCOREP_NATIVE_MEMORY"]:
        requests += [("native", name, False)
                     for name in ("native_allocated", "native_freed", "native_peak")]
    return requests


# Score-P's MPI function groups (SCOREP_MPI_ENABLE_GROUPS); "default" is cg, coll, env, io,
# p2p, rma, topo and xnonblock.
MPI_GROUPS = ("all", "default", "none", "cg", "coll", "env", "err", "ext", "io", "misc", "p2p",
              "perf", "rma", "spawn", "topo", "type", "xnonblock", "xreqtest")


def parse_mpi_groups(name, text):
    """Group names separated by commas or blanks, any case, quotes ignored (as in a
    scorep.cfg); "~group" removes one. Returns the normalized list, e.g. "cg,coll"."""
    words = [w for w in re.split(r"[\s,;:'\"]+", text) if w]
    for word in words:
        if word.lstrip("~").lower() not in MPI_GROUPS:
            raise ConfigError("%s=%r: unknown MPI group %r (valid: %s)"
                              % (name, text, word, ", ".join(MPI_GROUPS)))
    return ",".join(w.lower() for w in words) or "default"


# name -> (default, parser, description). The defaults are Score-P's, except where noted.
VARIABLES = {
    "SCOREP_ENABLE_PROFILING": ("true", parse_bool, "write the call-path profile (profile.cubex)"),
    "SCOREP_ENABLE_TRACING": ("false", parse_bool, "write the OTF2 event trace (traces.otf2)"),
    "SCOREP_VERBOSE": ("false", parse_bool, "report what the measurement does on stderr"),
    "SCOREP_TOTAL_MEMORY": ("16000k", parse_memory,
                            "memory for trace buffers and profile call paths; when used up, trace buffers are flushed to disk"),
    "SCOREP_EXPERIMENT_DIRECTORY": ("", parse_utf8_text,
                                    "where results go (default scorep-YYYYMMDD_HHMM_<unique>)"),
    "SCOREP_OVERWRITE_EXPERIMENT_DIRECTORY": (
        "true", parse_bool, "move an existing experiment directory aside instead of stopping"),
    "SCOREP_MACHINE_NAME": ("Linux", parse_utf8_text, "the machine's name in the system tree"),
    "SCOREP_TIMER": ("", parse_timer, "tsc or clock_gettime (default: tsc where it is invariant)"),
    # Score-P's default is 30; Python call stacks run deeper (a framework, the program and
    # its libraries easily exceed 60 frames), so the profile keeps up to 128.
    "SCOREP_PROFILING_MAX_CALLPATH_DEPTH": (
        "128", bounded_int(65535), "deepest call path the profile keeps; deeper calls fold "
        "into it"),
    "SCOREP_PROFILING_BASE_NAME": ("profile", parse_file_name, "file name of the profile, without .cubex"),
    # Not a Score-P variable: MPI ranks write the rows of profile.cubex together when each
    # writer's slice of a row is at least this large on average (0: rank 0 writes alone).
    "SCOREP_PROFILING_WRITE_SLICE": (
        "64k", parse_slice, "MPI runs: the least bytes of each row of profile.cubex one writing "
        "rank writes on average for the ranks to write its rows together (0: rank 0 alone)"),
    # Not a Score-P variable: how long the ranks wait for each other at the end before each
    # writes its own part (a rank may have died or hang).
    "SCOREP_MPI_FINALIZE_TIMEOUT": (
        "60", bounded_int(7 * 24 * 3600), "seconds MPI ranks wait for each other at the end"),
    # Not Score-P variables: child processes (multiprocessing, subprocess, os.fork) join
    # the experiment; how long the program's process waits for them at its end.
    "SCOREP_CHILDREN": ("true", parse_bool,
                        "measure the Python processes the program starts (multiprocessing, "
                        "concurrent.futures, subprocess, os.fork) into the same experiment"),
    "SCOREP_CHILDREN_TIMEOUT": (
        "60", bounded_int(7 * 24 * 3600), "seconds the program's process waits at its end for "
        "its child processes to hand their results over"),
    "SCOREP_MPI_ENABLE_GROUPS": (
        "default", parse_mpi_groups, "the MPI function groups recorded (Score-P's: cg, coll, "
        "env, err, ext, io, misc, p2p, perf, rma, spawn, topo, type, xnonblock, xreqtest, all; "
        "default: cg,coll,env,io,p2p,rma,topo,xnonblock)"),
    # Not a Score-P variable (Scalasca's trace analysis is a job of its own there): the ranks
    # of a traced MPI run compute Scalasca's wait states themselves at the end.
    "SCOREP_MPI_WAIT_STATES": ("true", parse_bool,
                               "wait-state analysis of traced MPI runs at the end (Late Sender, "
                               "Wait at Barrier, ...: Scalasca's metrics in the profile)"),
    "SCOREP_FILTERING_FILE": ("", parse_filter_file,
                              "filter file: regions and files to leave out (Score-P syntax)"),
    # Not a Score-P variable: --lines.
    "SCOREP_PYTHON_LINES": ("", parse_line_patterns,
                            "line-level profiles (lines.json) of the functions whose region "
                            "names match these comma-separated patterns"),
    # Not a variable of Score-P itself (its POSIX I/O recording is chosen when the program
    # is instrumented, --io=posix, or at run time with --io=runtime:posix): the original
    # bindings' --io=runtime:posix sets it.
    "SCOREP_IO_POSIX": ("false", parse_bool,
                        "record POSIX and ISO C I/O calls (open, read, write, fopen, ...)"),
    # Score-P's metric sources: names separated by ..._SEP, read at every enter and leave.
    "SCOREP_METRIC_RUSAGE": ("", parse_metric_list,
                             "resource usage metrics of every thread (ru_utime,ru_stime,"
                             "ru_minflt,... or all; man getrusage)"),
    "SCOREP_METRIC_RUSAGE_PER_PROCESS": ("", parse_metric_list,
                                         "resource usage metrics of the whole process, "
                                         "recorded by its first thread"),
    "SCOREP_METRIC_RUSAGE_SEP": (",", parse_separator,
                                 "separator of the names in SCOREP_METRIC_RUSAGE*"),
    "SCOREP_METRIC_PERF": ("", parse_metric_list,
                           "perf events of every thread (perf list: page-faults,task-clock,"
                           "cycles,...)"),
    "SCOREP_METRIC_PERF_PER_PROCESS": ("", parse_metric_list,
                                       "perf events recorded by the first thread"),
    "SCOREP_METRIC_PERF_SEP": (",", parse_separator,
                               "separator of the names in SCOREP_METRIC_PERF*"),
    "SCOREP_METRIC_PAPI": ("", parse_metric_list,
                           "PAPI events of every thread (PAPI_TOT_INS,PAPI_L2_TCM,...; "
                           "libpapi is loaded when asked)"),
    "SCOREP_METRIC_PAPI_PER_PROCESS": ("", parse_metric_list,
                                       "PAPI events recorded by the first thread"),
    "SCOREP_METRIC_PAPI_SEP": (",", parse_separator,
                               "separator of the names in SCOREP_METRIC_PAPI*"),
    # Not Score-P's: --c-calls / --no-c-calls set it. On by default where sys.monitoring
    # reports C calls (3.12+); before 3.12 only the profile hook does, which costs about as
    # much as cProfile (README, Benchmarks).
    "SCOREP_PYTHON_C_CALLS": ("true" if sys.version_info >= (3, 12) else "false", parse_bool,
                              "C functions called from Python (builtins, methods of C types, "
                              "numpy ufuncs on 3.12+) are regions of their own, as cProfile "
                              "shows them (default: true on 3.12+, false before)"),
    # Not Score-P's: --memory sets the three.
    "SCOREP_PYTHON_MEMORY": ("false", parse_bool,
                             "bytes allocated and freed by the Python allocators per region "
                             "(metrics python_allocated, python_freed)"),
    "SCOREP_NATIVE_MEMORY": ("false", parse_bool,
                             "bytes allocated and freed by malloc & co. in extension modules "
                             "and C libraries per region, and the rise of the peak of live "
                             "native bytes (metrics native_allocated, native_freed, "
                             "native_peak)"),
    "SCOREP_PYTHON_GC": ("false", parse_bool,
                         "garbage collections as gc:collect regions with their generation"),
    # Score-P's sampling: --sampling sets both.
    "SCOREP_ENABLE_UNWINDING": (
        "false", parse_bool, "sample the Python call stacks of every thread instead of "
        "recording every call (SCOREP_SAMPLING_EVENTS says how often); user regions, MPI and "
        "I/O stay recorded, each in its Python calling context"),
    "SCOREP_SAMPLING_EVENTS": (
        "wall@%d" % DEFAULT_SAMPLING_PERIOD_US, parse_sampling_events,
        "with SCOREP_ENABLE_UNWINDING: wall@US (wall-clock time), cpu@US or timer@US (the "
        "thread's CPU time), a sample every US microseconds; empty: no samples, only the "
        "calling contexts of recorded regions"),
    "SCOREP_SAMPLING_SEP": (",", parse_separator, "separator of SCOREP_SAMPLING_EVENTS"),
    "SCOREP_SAMPLING_READ": (
        "async", parse_sampling_read,
        "where a sample reads the Python stacks: async (where each thread is at the tick, "
        "read by the sampler thread without the GIL) or safepoint (at the interpreter's next "
        "safe point, the GIL held: later, and so sometimes in a later function)"),
    "SCOREP_SAMPLING_NATIVE": (
        "false", parse_bool,
        "with sampling (--native): each sample also has the thread's native (C) stack, "
        "unwound with libunwind, and threads that never run Python are sampled too, each a "
        "location of its own"),
}

# Score-P variables that only tune a mechanism this tool does not have, or that act only
# together with another variable: whatever their value, nothing is asked that is not done.
# (Sourcing a scorep.cfg that Score-P wrote, as its manual suggests, sets all of them.)
_HARMLESS = {
    "SCOREP_PAGE_SIZE", "SCOREP_PROFILING_TASK_EXCHANGE_NUM",
    "SCOREP_PROFILING_ENABLE_CLUSTERING", "SCOREP_PROFILING_CLUSTER_COUNT",
    "SCOREP_PROFILING_CLUSTERING_MODE", "SCOREP_TRACING_MAX_PROCS_PER_SION_FILE",
    "SCOREP_MPI_MAX_COMMUNICATORS", "SCOREP_MPI_MAX_WINDOWS", "SCOREP_MPI_MAX_EPOCHS",
    "SCOREP_MPI_MAX_ACCESS_EPOCHS", "SCOREP_MPI_MAX_GROUPS", "SCOREP_CUDA_BUFFER",
    "SCOREP_CUDA_BUFFER_CHUNK", "SCOREP_OPENCL_BUFFER_QUEUE", "SCOREP_ONLINEACCESS_REG_PORT",
    "SCOREP_ONLINEACCESS_REG_HOST", "SCOREP_ONLINEACCESS_BASE_PORT",
    "SCOREP_ONLINEACCESS_APPL_NAME", "SCOREP_FORCE_CFG_FILES", "SCOREP_EXECUTABLE",
    "SCOREP_NM_SYMBOLS",
    # set by the original bindings for their own re-exec
    "SCOREP_PYTHON_BINDINGS_INITIALISED", "SCOREP_PYTHON_BINDINGS_INITALISED",
}
# The Jupyter kernel's own settings (scorep.jupyter.results.KERNEL_VARIABLES): read and
# checked by the kernel, nothing the command line is asked to do.
_KERNEL_PREFIX = "SCOREP_JUPYTER_"
# Values that ask for nothing (a feature off, nothing listed, Score-P's default).
_NOTHING_ASKED = {"", "false", "no", "off", "0", "none", "default"}
# Values that ask for what this tool does anyway.
_DONE_ANYWAY = {"SCOREP_PROFILING_FORMAT": {"cube4"}}
_HINTS = {
    "SCOREP_PROFILING_FORMAT": "the profile is always CUBE4 (profile.cubex)",
    "SCOREP_SELECTIVE_CONFIG_FILE": "use scorep.user.enable_recording()/disable_recording() "
                                    "or a filter file (SCOREP_FILTERING_FILE)",
    "SCOREP_TRACING_CONVERT_CALLING_CONTEXT_EVENTS": "the trace keeps Score-P's calling-context "
                                                    "events (CallingContextEnter/Leave/Sample)",
}


def unsupported_variables(environ=None):
    """One warning line (without the "scorep: " prefix) per SCOREP_* variable in the
    environment that asks for something this tool does not do: a Score-P variable it does
    not implement (or a misspelt name), set to a value that would change what Score-P
    records. Nothing for the variables above, for tuning knobs of mechanisms it does not
    have, and for values that ask for nothing."""
    environ = os.environ if environ is None else environ
    lines = []
    for name in sorted(environ):
        if not name.startswith("SCOREP_") or name in VARIABLES or name in _HARMLESS or \
                name.startswith(("SCOREP_TOPOLOGY_", _KERNEL_PREFIX)) or name.endswith("_SEP"):
            continue
        value = environ[name]
        normal = value.strip().strip("'\"").lower()
        if normal in _NOTHING_ASKED or normal in _DONE_ANYWAY.get(name, ()):
            continue
        if name.startswith("SCOREP_METRIC_"):
            hint = ("the metric sources are SCOREP_METRIC_RUSAGE, SCOREP_METRIC_PERF and "
                    "SCOREP_METRIC_PAPI (metric plugins are not supported)")
        else:
            hint = _HINTS.get(name)
        lines.append("%s=%r is not supported by this tool and has no effect%s"
                     % (name, value, "; " + hint if hint else ""))
    return lines


class Config:
    """The resolved configuration of one measurement."""

    def __init__(self, values, notes=()):
        self.values = dict(values)
        # What the user should know about how the settings were taken (a timer that could not
        # be used as asked): warnings when the timer was not, verbose lines otherwise.
        self.notes = list(notes)

    def __getitem__(self, name):
        return self.values[name]

    @property
    def tracing(self):
        return self.values["SCOREP_ENABLE_TRACING"]

    @property
    def profiling(self):
        return self.values["SCOREP_ENABLE_PROFILING"]

    @property
    def verbose(self):
        return self.values["SCOREP_VERBOSE"]

    @property
    def sampling_event(self):
        """The sampling event (SamplingEvent) when Python functions are sampled, else None."""
        if not self.values["SCOREP_ENABLE_UNWINDING"]:
            return None
        return self.values["SCOREP_SAMPLING_EVENTS"]

    def as_cfg(self):
        """The configuration in Score-P's scorep.cfg format (NAME=value, strings quoted)."""
        lines = []
        for name in VARIABLES:
            value = self.values[name]
            if isinstance(value, bool):
                text = "true" if value else "false"
            elif isinstance(value, int):
                text = str(value)
            elif name == "SCOREP_TIMER":
                text = value
            elif name == "SCOREP_SAMPLING_EVENTS":
                text = "'%s'" % (value or "")
            else:
                text = "'%s'" % str(value).replace("'", "'\\''")
            lines.append("%s=%s" % (name, text))
        return "\n".join(lines) + "\n"


def parse_cfg(text):
    """The NAME=value lines of a scorep.cfg (as Config.as_cfg writes them: strings in single
    quotes, ' written as '\\''), for the variables this tool knows: {name: text}."""
    values = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if not sep or name not in VARIABLES:
            continue
        if len(value) >= 2 and value[0] == "'" and value[-1] == "'":
            value = value[1:-1].replace("'\\''", "'")
        values[name] = value
    return values


def default_timer():
    from scorep import _native
    if _native.native() is None:
        return "clock_gettime"
    usable, _why = _native.native().tsc_usable()
    return "tsc" if usable else "clock_gettime"


# How long the start-up check of the CPUs' TSCs may take (SCOREP_TIMER=tsc where the kernel
# does not use the TSC itself); its answer is kept for the process (a kernel measures cell
# after cell).
TSC_CHECK_BUDGET_MS = 50
_tsc_checked = {}


def checked_tsc():
    """SCOREP_TIMER=tsc asked for explicitly: (timer, note). The TSC where the kernel uses it
    as its clocksource; where it does not but the TSC is invariant, after checking that the
    TSCs of the CPUs this process may run on agree (TSC reads handed between CPUs never go
    back); otherwise clock_gettime, with a note saying why."""
    from scorep import _native
    native = _native.native()
    if native is None:
        return "clock_gettime", None
    usable, why = native.tsc_usable()
    if usable:
        return "tsc", None
    if not native.tsc_invariant():
        return "clock_gettime", "SCOREP_TIMER=tsc: %s; using clock_gettime" % why
    if "result" not in _tsc_checked:
        _tsc_checked["result"] = native.tsc_synchronized(TSC_CHECK_BUDGET_MS)
    agree, hand_overs, resolution_ns, reason = _tsc_checked["result"]
    if not agree:
        return "clock_gettime", ("SCOREP_TIMER=tsc: %s (the kernel does not use the TSC either); "
                                 "using clock_gettime" % reason)
    return "tsc", ("SCOREP_TIMER=tsc although %s: the TSCs of this process's CPUs agreed in %d "
                   "hand-overs (to within %d ns)" % (why, hand_overs, resolution_ns))


def from_environ(environ=None, overrides=None):
    """Reads every SCOREP_* variable this tool knows; `overrides` (from command line options)
    win over the environment. Raises ConfigError for the first invalid value."""
    environ = os.environ if environ is None else environ
    values = {}
    notes = []
    for name, (default, parse, _description) in VARIABLES.items():
        if overrides and name in overrides:
            text = overrides[name]
        else:
            text = environ.get(name, default)
        if name == "SCOREP_TIMER" and not text.strip():
            values[name] = default_timer()
            continue
        if name == "SCOREP_TIMER" and parse(name, text) == "tsc":
            values[name], note = checked_tsc()
            if note:
                notes.append(note)
            continue
        if name == "SCOREP_SAMPLING_EVENTS":
            separator = (overrides or {}).get("SCOREP_SAMPLING_SEP",
                                              environ.get("SCOREP_SAMPLING_SEP", ","))
            values[name] = parse_sampling_events(name, text, separator)
            continue
        values[name] = parse(name, text)
    if values["SCOREP_ENABLE_UNWINDING"] and values["SCOREP_SAMPLING_EVENTS"] and \
            values["SCOREP_PYTHON_LINES"]:
        raise ConfigError("line-level profiles (--lines, SCOREP_PYTHON_LINES) need every call "
                          "recorded: they cannot be combined with sampling "
                          "(--sampling, SCOREP_ENABLE_UNWINDING)")
    if values["SCOREP_SAMPLING_NATIVE"] and not (values["SCOREP_ENABLE_UNWINDING"] and
                                                 values["SCOREP_SAMPLING_EVENTS"]):
        raise ConfigError("native frames (--native, SCOREP_SAMPLING_NATIVE) are read with the "
                          "samples: they need sampling (--sampling, or SCOREP_ENABLE_UNWINDING "
                          "with SCOREP_SAMPLING_EVENTS)")
    if values["SCOREP_SAMPLING_NATIVE"] and values["SCOREP_SAMPLING_READ"] != "async":
        raise ConfigError("native frames (--native, SCOREP_SAMPLING_NATIVE) are read at the "
                          "tick, with SCOREP_SAMPLING_READ=async only")
    return Config(values, notes)


def node_name():
    return socket.gethostname() or "localhost"
