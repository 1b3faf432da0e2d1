"""Starting and finishing a measurement inside the running process.

Used by the command line (`python -m scorep`) and by the Jupyter kernel, which measures
cell after cell in one process. A measurement owns its experiment directory: it creates
it (moving an old one aside), writes scorep.cfg at the start, and MANIFEST.md plus
whatever the substrates produced at the end.
"""

import _signal
import _thread
import atexit
import datetime
import functools
import json
import os
import platform
import signal
import sys
import threading
import time

from scorep import _api, _native
from scorep.measure import config as _config, children as _processes
from scorep._errors import MeasurementError
from scorep._version import __version__

from scorep.measure import PACKAGE_DIR
from scorep.measure.instrumenters import eval_keeps_subscripts_generic, implementation
from scorep.measure.signals import TERMINATING_SIGNALS, is_measurement_handler, measurement_handler

def default_experiment_dir(cwd):
    stamp = datetime.datetime.now().strftime("%Y%m%d_%H%M")
    unique = "%d%d" % (time.time_ns() // 1000 % 10**9, os.getpid())
    return os.path.join(cwd, "scorep-%s_%s" % (stamp, unique))


def native_text(text):
    """`text` for the native side, which takes UTF-8: a name or argument that Python decoded
    with surrogateescape (bytes that are not valid in the locale's encoding, e.g. UTF-8 file
    names under LC_ALL=C) is its original bytes read as UTF-8, invalid bytes replaced."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "replace")


def native_path(path, what):
    """A path the native side writes to: its own bytes, which must be UTF-8."""
    try:
        return os.fsencode(path).decode("utf-8")
    except UnicodeDecodeError:
        raise MeasurementError("%s %r is not valid UTF-8: the measurement's paths must be; "
                               "set SCOREP_EXPERIMENT_DIRECTORY to one whose path is"
                               % (what, path)) from None


def lock_experiment_dir(path):
    """An exclusive flock on the directory itself, held while the measurement runs (and
    inherited by nothing it execs): no other run moves it aside or writes into it. Returns
    the descriptor, or None where the file system has no locks."""
    import fcntl
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise MeasurementError("experiment directory %s is in use by another running "
                               "measurement; set SCOREP_EXPERIMENT_DIRECTORY to another "
                               "directory" % path) from None
    except OSError:  # no locks on this file system (some network file systems)
        os.close(fd)
        return None
    return fd


def prepare_experiment_dir(path, overwrite):
    """Creates the experiment directory and locks it, by the core's one policy
    (core/experiment_dir.h, also rank 0's in an MPI run): an existing empty one is used as it
    is; a non-empty one is moved aside (renamed, never deleted) when overwriting is allowed;
    one a running measurement holds is an error. Returns (the path it was moved to or None,
    the descriptor holding the lock on the new directory or None)."""
    try:
        return _native.load().experiment_dir_prepare(native_path(path, "the experiment "
                                                                       "directory"), overwrite)
    except RuntimeError as error:
        raise MeasurementError(str(error)) from None


MANIFEST_ENTRIES = [
    ("scorep.cfg", "the configuration of this measurement (NAME=value, as Score-P writes it)"),
    ("traces.otf2", "OTF2 trace anchor: open this with Vampir, otf2-print or the otf2 Python reader"),
    ("traces.def", "OTF2 global definitions: regions, locations, strings, clock properties"),
    ("traces", "OTF2 event files, one <location>.evt (and .def) per thread"),
    ("monitoring.csv", "resources sampled while a notebook cell was measured (CPU per core, "
                       "the process's CPU, RSS, I/O; one row per interval, times in "
                       "CLOCK_MONOTONIC ns): see docs/jupyter.md in scorep's source"),
    ("lines.json", "line-level profiles (hits and time per line) of the functions chosen with "
                   "--lines or @scorep.user.lines: `scorep-report DIR --lines`"),
]


def write_manifest(path, profile_name="profile", notes=(), other_ranks=False, processes=()):
    lines = ["# Experiment directory overview", "",
             "Written by scorep %s, the Python measurement tool (Python %s)." % (
                 __version__, platform.python_version()), "", "## Files", ""]
    entries = [(profile_name + ".cubex",
                "call-path profile in CUBE4 format: open it with Cube, pycubexr, "
                "scorep-score or `python -m scorep.report`")] + MANIFEST_ENTRIES
    for name, description in entries:
        if os.path.exists(os.path.join(path, name)):
            lines.append("- `%s`: %s" % (name, description))
    lines.append("- `MANIFEST.md`: this overview")
    adopted = [p for p in processes if p["fate"] == "adopted"]
    if adopted:
        lines += ["", "## Child processes", "",
                  "Python processes the program started, each a location group of its own:", ""]
        lines += ["- process %d (pid %d, %s): started by %s, from process %d" % (
            p["number"], p["pid"], p["name"] or "unnamed", p["method"], p["parent"])
            for p in sorted(adopted, key=lambda p: p["number"])]
    if notes:
        lines += ["", "## Notes on this measurement", ""]
        if other_ranks:
            lines += ["(rank 0's; the other ranks print theirs on stderr)", ""]
        lines += ["- " + note for note in notes]
    with open(os.path.join(path, "MANIFEST.md"), "w") as out:
        out.write("\n".join(lines) + "\n")


def sampling_facts(counts):
    """How the samples were read (MANIFEST.md, not stderr: deferring a sample is normal)."""
    facts = _sample_reads(counts) + [_time_no_sample_stands_for(counts)]
    if counts.get("hook_waits"):
        facts.append("%d ticks at which the thread holding the GIL ran an audit hook or a trace "
                     "function: it was not asked to give the GIL up there (before 3.12 a "
                     "switch inside an audit hook can make another thread's sys.settrace "
                     "fail); the pass came at its next safe point" % counts["hook_waits"])
    return facts


def _time_no_sample_stands_for(counts):
    # Always written, zeros too: a reader of MANIFEST.md sees the time was counted.
    return ("time no sample stands for (it is the program root's in the profile): %.3f s owed "
            "by samples whose pass came early and dropped because a recorded region took the "
            "room of the samples that were to take it; %.3f s owed and never given back (the "
            "thread or the measurement ended first); %.3f s cut from %d long gaps in which "
            "the sampler did not run (beyond 100 periods, 8 when reading at safe points; "
            "each thread's samples lack it)"
            % (counts.get("owed_dropped_ns", 0) / 1e9, counts.get("owed_left_ns", 0) / 1e9,
               counts.get("gap_cut_ns", 0) / 1e9, counts.get("gaps", 0)))


def _sample_reads(counts):
    if counts.get("unavailable_errno"):
        return ["samples were read at safe points: reading the threads' stacks where they are "
                "needs process_vm_readv on this process, which failed here (%s; a container's "
                "seccomp profile may forbid it)" % os.strerror(counts["unavailable_errno"])]
    deferred = counts["unknown_code"] + counts["new_thread"] + counts["no_read"]
    facts = []
    if counts.get("native_stacks") or counts.get("native_missed"):
        facts.append("native stacks (--native): %d unwound at the ticks; %d times a thread had "
                     "not run its signal handler for the tick when the sample was recorded "
                     "(it waited for a CPU): a Python thread's sample then has no native "
                     "frames, a thread that never runs Python got its stack of the tick "
                     "before, or none"
                     % (counts["native_stacks"], counts["native_missed"]))
        facts.append("native frames between Python frames (--native): %d samples merged "
                     "whole (the C frames between two Python frames placed between them); "
                     "%d whose native stack had another number of evaluation calls than the "
                     "Python stack had (the thread moved between the two reads): those got "
                     "the C frames below their innermost Python frame only"
                     % (counts.get("native_merged", 0), counts.get("native_unmatched", 0)))
    if counts.get("native_blocked") or counts.get("native_interrupted"):
        facts.append("blocked threads (--native): %d samples of a thread waiting in a call "
                     "that a signal would end early (sleep, select, poll, pause, timed "
                     "waits), not signalled: their native frames are the call they wait in "
                     "only; %d times a signalled thread's handler found the call it "
                     "interrupted ended early (the thread was read as running and blocked "
                     "before the signal came, or another signal ended the call at that "
                     "moment)"
                     % (counts.get("native_blocked", 0), counts.get("native_interrupted", 0)))
    if counts.get("native_completed_writes"):
        facts.append("writes completed (--native): %d of the program's writes to a pipe, "
                     "socket or terminal were cut short by the sampler's signal and written "
                     "whole by its handler before the program saw them return"
                     % counts["native_completed_writes"])
    if not counts["async"] and not deferred and not counts["failed_check"]:
        return facts  # read at safe points (SCOREP_SAMPLING_READ=safepoint)
    return facts + ["samples: %d read where the thread was at the tick; %d dropped because the read "
            "failed its checks (the thread moved while it was read; the time went to the "
            "thread's next sample); %d taken at the next safe point instead (%d: a function "
            "not seen before, %d: a thread that started since the tick, %d: no read came "
            "with the pass)"
            % (counts["async"], counts["failed_check"], deferred, counts["unknown_code"],
               counts["new_thread"], counts["no_read"])]


def _describe(p):
    return "process %d (pid %d, %s, started by %s)" % (p["number"], p["pid"],
                                                      p["name"] or "unnamed", p["method"])


def child_process_notes(processes, timeout):
    """What became of child processes whose parts are not in the experiment."""
    notes = []
    for p in processes:
        if p["fate"] == "lost":
            lost = "its measurement of %.3f s is lost" % p["seconds"] if p["seconds"] else \
                "its measurement is lost"
            if p["lost_bytes"]:
                lost += " (with %d bytes of trace records it had flushed to disk)" % \
                    p["lost_bytes"]
            notes.append("%s ended without handing its results over (killed by SIGKILL or "
                         "crashed): %s" % (_describe(p), lost))
        elif p["fate"] == "late" and p["idle"]:
            notes.append("%s was still running, idle (waiting, not working: a resource "
                         "tracker, a server, a daemon), when the program ended: not waited "
                         "for; its results are not in this experiment; it writes them into "
                         "process-%d/ here when it ends" % (_describe(p), p["number"]))
        elif p["fate"] == "late":
            notes.append("%s was still running %g s (SCOREP_CHILDREN_TIMEOUT) after the "
                         "program ended: its results are not in this experiment; it writes "
                         "them into process-%d/ here when it ends"
                         % (_describe(p), timeout, p["number"]))
    return notes


def _hide_measurement_handlers():
    """The program sees the signal dispositions it would have without the measurement: its
    handler for SIGTERM, SIGHUP and SIGQUIT writes the results and then ends the process by
    the signal as the default action would, so `signal.getsignal` and the previous handler
    `signal.signal` returns say SIG_DFL, and setting SIG_DFL (e.g. restoring what it saved)
    keeps it; `_thread.interrupt_main` of such a signal does nothing, as for SIG_DFL. Once
    per process; a forked child keeps its parent's wrappers."""
    if getattr(signal.signal, "_scorep_original", None) is not None:
        return
    original_signal, original_getsignal = signal.signal, signal.getsignal

    def getsignal(signalnum):
        handler = original_getsignal(signalnum)
        return signal.SIG_DFL if is_measurement_handler(handler) else handler

    def set_signal(signalnum, handler):
        measurement = _api.current()
        # SIG_DFL as the enum member or the int 0; a handler object is never compared
        # with == (it may define equality in its own way)
        if isinstance(handler, int) and handler == signal.SIG_DFL and \
                signalnum in TERMINATING_SIGNALS and \
                measurement is not None and measurement.pid == os.getpid() and \
                measurement._handles_terminating_signals:
            previous = original_signal(signalnum, measurement._on_terminating_signal)
            measurement._watch_signal(signalnum)
        else:
            previous = original_signal(signalnum, handler)
        return signal.SIG_DFL if is_measurement_handler(previous) else previous

    original_interrupt_main = _thread.interrupt_main

    def interrupt_main(*args, **kwargs):
        # Simulating a signal whose disposition the program sees as SIG_DFL does nothing.
        signum = args[0] if args else kwargs.get("signum", signal.SIGINT)
        if signum in TERMINATING_SIGNALS and is_measurement_handler(original_getsignal(signum)):
            return None
        return original_interrupt_main(*args, **kwargs)

    for wrapper, original in ((getsignal, original_getsignal), (set_signal, original_signal),
                              (interrupt_main, original_interrupt_main)):
        functools.update_wrapper(wrapper, original)  # module, name, doc as the program knows
        signature = getattr(original, "__text_signature__", None)
        if signature is not None:
            wrapper.__text_signature__ = signature
        wrapper._scorep_original = original
    signal.getsignal, signal.signal = getsignal, set_signal
    _thread.interrupt_main = interrupt_main


class Measurement:
    """One measurement: start() once, finalize() once (explicitly, at exit, or on SIGTERM)."""

    def __init__(self, config, instrumenter="default", program_name="python", program_args=(),
                 all_threads=True, verbose_stream=None, exclude_dirs=(), summary=False,
                 mpi=False, program_path=None, member=None, spawned=False):
        self.config = config
        self.instrumenter_choice = instrumenter  # what child processes are told
        self.instrumenter = implementation(instrumenter)
        # As Score-P names a program: the root region is the base name, ProgramBegin gets
        # the path (program_path) and the program's own arguments (argv[1:]).
        self.program_name = program_name
        self.program_path = program_path or program_name
        self.program_args = list(program_args)
        self.all_threads = all_threads
        # Code under these directories is never recorded; scorep's own always.
        self.exclude_dirs = [PACKAGE_DIR] + [os.path.abspath(d) for d in exclude_dirs]
        self.verbose_stream = verbose_stream or sys.stderr
        self.experiment_dir = None
        self.moved_aside = None
        self.results = None
        self.exit_status = 0
        self.summary = summary  # print the end-of-run summary on stderr
        # MPI mode: rank 0 prepares the directory at MPI_Init and the ranks write one
        # experiment together at the end.
        self.mpi = mpi
        # Started by a measured parent with MPI_Comm_spawn: joins the parent's experiment.
        self.spawned = spawned
        self._native = None
        self._original_bootstrap = None
        self._lock = None  # the flock on the experiment directory while it runs
        self._main_thread_ident = threading.main_thread().ident
        self._finalizing = False
        self._deferred_signal = None  # a terminating signal that arrived during finalize
        self._handles_terminating_signals = False
        # Child processes (scorep.measure.children): this process follows the Python processes
        # it starts into its experiment; as a member (a child itself) it hands its part
        # over to its root: {"lineage": group, "method": how it was started}.
        self.member = member
        # A process started with MPI_Comm_spawn writes a part of its parent's experiment
        # (core/part.h) and follows no children of its own.
        self.follows_children = bool(config.values.get("SCOREP_CHILDREN", True)) and not spawned
        self.pid = os.getpid()
        self.speaker = True

    def log(self, message):
        if self.config.verbose:
            with _native.quiet():
                self.verbose_stream.write("scorep: %s\n" % message)
                self.verbose_stream.flush()

    def start(self, register=True):
        if _api.current() is not None:
            raise MeasurementError("a measurement is already running in this process")
        native = _native.load()
        cwd = os.getcwd()
        path = self.config["SCOREP_EXPERIMENT_DIRECTORY"] or default_experiment_dir(cwd)
        path = os.path.abspath(path)
        if not self.member:
            native_path(path, "the experiment directory")  # before anything is created
        real, real_cwd = os.path.realpath(path), os.path.realpath(cwd)
        if not self.member and (real_cwd == real or real_cwd.startswith(real.rstrip("/") + "/")):
            # An existing experiment directory is moved aside: never the user's own
            # working directory or one that contains it.
            raise MeasurementError(
                "SCOREP_EXPERIMENT_DIRECTORY=%r is the working directory or contains it; "
                "choose a directory of its own" % self.config["SCOREP_EXPERIMENT_DIRECTORY"])
        overwrite = self.config["SCOREP_OVERWRITE_EXPERIMENT_DIRECTORY"]
        if self.member:
            # The root's experiment: it prepared the directory and writes cfg and manifest.
            path = self.member["lineage"]["dir"]
        elif self.mpi:
            # Checked by every rank now (so none starts the program in vain), prepared by
            # rank 0 once MPI is initialized (a spawned process uses its parent's).
            if not self.spawned and os.path.isdir(path) and os.listdir(path) and not overwrite:
                raise MeasurementError(
                    "experiment directory %s exists and SCOREP_OVERWRITE_EXPERIMENT_DIRECTORY "
                    "is false" % path)
        else:
            from scorep.measure import mpi as _mpi
            rank, size = _mpi.launcher_rank(), _mpi.launcher_size()
            if self.config["SCOREP_EXPERIMENT_DIRECTORY"] and rank is not None and (size or 1) > 1:
                # Several processes of a launcher measuring without MPI (--mpp=none): one
                # directory each instead of one they would all write into.
                path = "%s-rank%d" % (path, rank)
            self.moved_aside, self._lock = prepare_experiment_dir(path, overwrite)
            if self.moved_aside:
                self.log("moved the existing %s aside to %s" % (path, self.moved_aside))
            self._write_cfg(path)
        self.experiment_dir = path
        # Samples replace the automatic instrumentation; without it (dummy) only the calling
        # contexts of recorded regions remain.
        sampling = self.config.sampling_event if self.instrumenter != "none" else None
        from scorep.measure import mpi as _mpi
        try:
            native.set_sampling_async(self.config["SCOREP_SAMPLING_READ"] == "async")
            native.set_sampling_native(bool(sampling) and self.config["SCOREP_SAMPLING_NATIVE"])
            # One dict whose fields are exactly those of native.start_defaults().
            native.start(dict(
                experiment_dir=native_path(path, "the experiment directory"),
                tracing=self.config.tracing,
                profiling=self.config.profiling,
                verbose=self.config.verbose,
                all_threads=self.all_threads,
                total_memory=self.config["SCOREP_TOTAL_MEMORY"],
                timer=self.config["SCOREP_TIMER"],
                max_callpath_depth=self.config["SCOREP_PROFILING_MAX_CALLPATH_DEPTH"],
                profile_base_name=self.config["SCOREP_PROFILING_BASE_NAME"],
                # 0 (rank 0 writes the rows alone) is the core's UINT64_MAX; its 0 is the default
                profile_write_slice=self.config["SCOREP_PROFILING_WRITE_SLICE"] or (1 << 64) - 1,
                program_name=native_text(self.program_name),
                program_path=native_text(self.program_path),
                program_args=[native_text(a) for a in self.program_args],
                machine_name=self.config["SCOREP_MACHINE_NAME"],
                node_name=_config.node_name(),
                creator="scorep (Python measurement tool)",
                exclude_dirs=[native_text(d) for d in self.exclude_dirs],
                cwd=native_text(cwd),
                instrumenter=self.instrumenter,
                thread_name=native_text(threading.current_thread().name),
                register=register,
                filter_file=self.config["SCOREP_FILTERING_FILE"] or None,
                mpi=self.mpi,
                overwrite=overwrite,
                mpi_timeout=float(self.config["SCOREP_MPI_FINALIZE_TIMEOUT"]),
                mpi_groups=self.config["SCOREP_MPI_ENABLE_GROUPS"],
                # Python processes the program starts with MPI_Comm_spawn run through the
                # tool with this configuration (the MPI wrappers rewrite the spawn).
                spawn_args=["--mpp=mpi", "--spawned=" + self.config.as_cfg()] if self.mpi else [],
                spawned=self.spawned,
                line_patterns=[spelling for pattern in self.line_patterns()
                               for spelling in _config.line_pattern_spellings(pattern)],
                io_posix=self.config["SCOREP_IO_POSIX"],
                unwinding=self.config["SCOREP_ENABLE_UNWINDING"],
                sampling_event=sampling.name if sampling else "",
                sampling_period_us=sampling.period_us if sampling else 0,
                sampling_cpu=bool(sampling and sampling.cpu),
                metrics=_config.metric_requests(self.config),
                memory=self.config["SCOREP_PYTHON_MEMORY"],
                c_calls=self.config["SCOREP_PYTHON_C_CALLS"],
                wait_states=self.config["SCOREP_MPI_WAIT_STATES"],
                # Under a launcher rank 0 says for the job what every rank would say.
                quiet=_mpi.launcher_rank() not in (None, 0),
            ))
        except RuntimeError as error:
            raise MeasurementError(str(error)) from None
        timeout = float(self.config["SCOREP_CHILDREN_TIMEOUT"])
        try:
            if self.member:
                lineage = self.member["lineage"]
                reserved = self.member.get("reserved")
                native.process_member(lineage["dir"], lineage["root"], lineage["parent"],
                                      lineage["base"], lineage["parent_pid"],
                                      self.member["method"], timeout,
                                      -1 if reserved is None else reserved)
                native.process_set_name(native_text(self.process_name()))
            elif self.follows_children:
                native.process_root(timeout)
        except RuntimeError as error:
            native.abandon()
            raise MeasurementError(str(error)) from None
        self._native = native
        _api.set_current(self)
        if self.mpi:
            native.set_abort_callback(self._after_mpi_abort)
        self._hook_threads()
        _processes.install_fork_hook()
        if self.follows_children:
            _processes.install(self)
        if self.config["SCOREP_PYTHON_GC"]:
            self._hook_gc()
        for note in self.config.notes:
            self.log(note)
        if sampling:
            how = "sampling %g Hz of %s time (%s)" % (
                sampling.hz, "CPU" if sampling.cpu else "wall-clock", sampling)
        elif self.config["SCOREP_ENABLE_UNWINDING"]:
            how = "instrumenter %s, calling contexts of recorded regions" % self.instrumenter
        else:
            how = "instrumenter %s" % self.instrumenter
            if self.instrumenter == "eval" and eval_keeps_subscripts_generic():
                how += (", subscripts left unspecialised (Python %d.%d.%d would run a Python "
                        "__getitem__ past the hook)" % sys.version_info[:3])
        self.log("measuring into %s (tracing %s, profiling %s, timer %s, %s%s)" % (
            path, "on" if self.config.tracing else "off",
            "on" if self.config.profiling else "off", self.config["SCOREP_TIMER"],
            how, ", POSIX and ISO C I/O recorded"
            if self.config["SCOREP_IO_POSIX"] else ""))
        return self

    def _write_cfg(self, path):
        with open(os.path.join(path, "scorep.cfg"), "w") as out:
            # A comment, as in a shell script: Score-P's readers skip it.
            out.write("# written by scorep %s (Python %s)\n" % (__version__,
                                                                platform.python_version()))
            out.write(self.config.as_cfg())

    def _prepare_without_mpi(self):
        """MPI mode, but MPI was never initialized: this process writes alone; under a
        launcher with several ranks each one in a directory of its own."""
        from scorep.measure import mpi as _mpi
        path = self.experiment_dir
        rank, size = _mpi.launcher_rank(), _mpi.launcher_size()
        if rank is not None and (size or 1) > 1:
            path = "%s-rank%d" % (path, rank)
        self.moved_aside, self._lock = prepare_experiment_dir(
            path, self.config["SCOREP_OVERWRITE_EXPERIMENT_DIRECTORY"])
        self.experiment_dir = path
        self._native.set_experiment_dir(native_path(path, "the experiment directory"))

    def process_name(self):
        """This process's name in the experiment: multiprocessing's name of the process in
        its children, else the program's."""
        process = sys.modules.get("multiprocessing.process")
        if process is not None:
            current = process.current_process()
            # A forked child holds its parent's copy until it bootstraps its own. A spawned
            # one is named before (spawn.prepare renames the main process object): it may
            # end there, a pool worker terminated while it starts.
            parent_pid = getattr(current, "_parent_pid", None)
            if parent_pid == os.getppid() or (parent_pid is None and
                                               current.name != "MainProcess"):
                return current.name
        return self.program_name

    def _hook_threads(self):
        """Threads started during the measurement are measured and named after their
        threading.Thread (the hook is removed again at the end)."""
        native = self._native
        original = threading.Thread._bootstrap

        # _bootstrap is the thread's outermost Python frame: after it returns no event of
        # the thread follows, so its buffers can go back to the budget for good.
        def _bootstrap(thread):
            native.thread_begin(native_text(thread._name))
            try:
                original(thread)
            finally:
                native.thread_rename(native_text(thread._name))
                native.thread_ended()

        self._original_bootstrap = original
        threading.Thread._bootstrap = _bootstrap

    def _hook_gc(self):
        """Garbage collections as regions `gc:collect` with the generation as a parameter,
        in the call path where they happen (gc.callbacks run on the collecting thread)."""
        import gc
        # A C callable called without a Python frame: a Python function here failed with
        # RecursionError when a collection came at the program's recursion limit.
        self._gc_callback = self._native.gc_callback()
        gc.callbacks.append(self._gc_callback)

    def _unhook_gc(self):
        callback = getattr(self, "_gc_callback", None)
        if callback is not None:
            import gc
            try:
                gc.callbacks.remove(callback)
            except ValueError:  # the program emptied gc.callbacks itself
                pass
            self._gc_callback = None

    def _unhook_threads(self):
        if self._original_bootstrap is not None:
            threading.Thread._bootstrap = self._original_bootstrap
            self._original_bootstrap = None

    def exclude_runpy(self):
        """`-m module` runs through runpy like python does (same tracebacks); its two frames
        are the tool's, not the program's."""
        import runpy
        for function in (runpy._run_module_as_main, runpy._run_code):
            self._native.exclude_code(function.__code__)

    def finalize_at_exit(self):
        """Finalize when the interpreter exits (after non-daemon threads ended and the
        program's own atexit handlers ran) and on SIGTERM."""
        atexit.register(self._finalize_at_exit)
        if threading.current_thread() is threading.main_thread():
            # The signals whose default action ends the process: the results are written
            # first, then the process ends by the same signal. Handlers the program set
            # itself stay; it may set its own later too.
            # (A forked child has its parent's measurement's handler: now this one's.)
            for signum in TERMINATING_SIGNALS:
                handler = _signal.getsignal(signum)
                if handler == signal.SIG_DFL or is_measurement_handler(handler):
                    _signal.signal(signum, self._on_terminating_signal)
                    self._watch_signal(signum)
            self._handles_terminating_signals = True
            _hide_measurement_handlers()

    def _watch_signal(self, signum):
        try:
            self._native.watch_signal(signum)
        except OSError:
            pass  # the Python handler alone then, as before

    def reregister_exit_handler(self):
        """The exit handler registered again (for programs that cleared atexit's)."""
        atexit.unregister(self._finalize_at_exit)
        atexit.register(self._finalize_at_exit)

    def _finalize_at_exit(self):
        if _api.current() is self:
            self._finalize_mpi_as_mpi4py_would()
            self.finalize(self.exit_status, report_errors=True)

    def _finalize_mpi_as_mpi4py_would(self):
        """mpi4py finalizes MPI after the interpreter's exit handlers, when the measurement
        is over: MPI_Finalize would be missing from the results. At exit it is called here
        instead, where mpi4py would call it (mpi4py then finds MPI finalized)."""
        mpi = sys.modules.get("mpi4py.MPI")
        rc = getattr(sys.modules.get("mpi4py"), "rc", None)
        if not self.mpi or mpi is None or rc is None:
            return
        if not getattr(rc, "initialize", True) or getattr(rc, "finalize", None) is False:
            return
        try:
            if mpi.Is_initialized() and not mpi.Is_finalized():
                self._native.set_exit_status(int(self.exit_status))
                mpi.Finalize()
        except Exception as error:  # MPI's own error: the results are still written
            self.log("MPI_Finalize at exit failed: %s" % error)

    @measurement_handler
    def _on_terminating_signal(self, signum, frame):
        native = _native.native()
        if native is not None:
            native.signal_handled()
        current = _api.current()
        if current is not self and current is not None and current.pid == os.getpid():
            # The handler a forked child inherited: its own measurement ends.
            return current._on_terminating_signal(signum, frame)
        if self._finalizing:
            # The results are being written: end by this signal once they are complete.
            self._deferred_signal = signum
            return
        self.finalize(128 + signum, report_errors=True)
        self._die_by(signum)

    @staticmethod
    def _die_by(signum):
        # No flush of sys.stdout: plain python dying by this signal does not flush either,
        # and a forked child (a pool worker) would write its parent's buffered output again.
        _signal.signal(signum, _signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    def _after_mpi_abort(self):
        """MPI_Abort: the core wrote this rank's part into rank-N/; scorep.cfg and
        MANIFEST.md go next to it before the job ends."""
        self._native.set_abort_callback(None)
        self.finalize(report_errors=True)

    def forget_in_child(self):
        """In a forked child: this is the parent's measurement, never to be written here
        (the core stopped it in the fork); the child may start one of its own."""
        if self._lock is not None:
            os.close(self._lock)  # closing (never unlocking) leaves the parent's lock held
            self._lock = None
        self._unhook_threads()
        if _api.current() is self and self._native is not None:
            self._native.abandon()
            _api.set_current(None)

    def finalize(self, exit_status=None, report_errors=False):
        if _api.current() is not self:
            return self.results
        if exit_status is not None:
            self.exit_status = exit_status
        # Before anything else: a terminating signal from here on waits for the results.
        self._finalizing = True
        _api.set_current(None)
        self._unhook_threads()
        if self.member and self._native is not None and self.process_name() != self.program_name:
            self._native.process_set_name(native_text(self.process_name()))
        _processes.uninstall(self)
        self._unhook_gc()
        started = time.perf_counter()
        # Ctrl-C during the write would leave half-written files: it waits too. The C-level
        # functions (_signal, _thread) because the measurement still records: the
        # signal module's Python wrappers would show up in the program's profile.
        previous_sigint = None
        if _thread.get_ident() == self._main_thread_ident:
            previous_sigint = _signal.signal(signal.SIGINT, self._on_terminating_signal)
        try:
            return self._finalize(report_errors, started)
        finally:
            self._finalizing = False
            if self._lock is not None:
                os.close(self._lock)
                self._lock = None
            if previous_sigint is not None:
                _signal.signal(signal.SIGINT, previous_sigint)
            if self._deferred_signal is not None:
                self._die_by(self._deferred_signal)

    def _finalize(self, report_errors, started):
        try:
            if self.mpi and self._native.running() and self._native.mpi_info() is None:
                self._prepare_without_mpi()
            if self.follows_children and not self.member and self._native.running():
                # Other threads may still serve the children (read their output): the
                # wait lets them run.
                self._native.process_wait()
            self.results = self._native.finalize(int(self.exit_status))
        except RuntimeError as error:
            if not report_errors:
                raise MeasurementError("writing the results failed: %s" % error) from None
            sys.stderr.write("scorep: writing the results into %s failed: %s\n"
                             % (self.experiment_dir, error))
            return None
        r = self.results
        self.experiment_dir = r["experiment_dir"]
        if r["process_member"]:
            # A child process handed its part over: its root writes and speaks for it.
            self.speaker = False
            return self.results
        if r.get("part_written"):
            # A spawned process: its part waits in the experiment for the root to adopt it.
            self.speaker = False
            self._report(self._notes())
            return self.results
        # In an MPI experiment rank 0 speaks for all; a rank that wrote its own part (not
        # all ranks reached the end) describes that part.
        self.speaker = r["mpi_rank"] <= 0 or not r["mpi_collective"]
        notes = self._notes()
        if self.speaker:
            if self.mpi or r["process_alone"]:
                self._write_cfg(self.experiment_dir)
            facts = []
            if r.get("spawned_ranks"):
                facts.append("%d process(es) started with MPI_Comm_spawn are part of this "
                             "experiment (location groups \"MPI Rank r (spawned k)\")"
                             % r["spawned_ranks"])
            if r.get("wait_states"):
                facts.append(
                    "the wait-state analysis (SCOREP_MPI_WAIT_STATES) replayed the ranks' MPI "
                    "events at the end of the run in %.1f ms on rank 0; its Scalasca metrics "
                    "(mpi_latesender, mpi_barrier_wait, ...) are in %s.cubex; %d message(s) "
                    "received before they were sent on rank 0's clock (clock condition "
                    "violations, not counted as waiting)"
                    % (r["wait_state_ns"] / 1e6, self.config["SCOREP_PROFILING_BASE_NAME"],
                       r["wait_state_violations"]))
            if r.get("metric_reads_ns"):
                # Measured, not a problem: the manifest says it, stderr does not.
                facts.append(
                    "reading the metrics at enters and leaves took this process's threads "
                    "%.1f ms of CPU time (calibrated at the start: %d ns per read of all "
                    "metrics); ru_utime, ru_stime, task-clock and cpu-clock do not count it"
                    % (r["metric_reads_ns"] / 1e6, r["metric_read_cost_ns"]))
            if self.config.sampling_event and self._native is not None:
                facts += sampling_facts(self._native.sampling_counts())
            write_manifest(self.experiment_dir, self.config["SCOREP_PROFILING_BASE_NAME"],
                           notes + facts, r["mpi_size"] > 1 and r["mpi_collective"],
                           r.get("child_processes", ()))
        if r.get("process_named") and not self.config.verbose:
            # A child that outlived the program, which named it on stderr with where its
            # results go: its notes are in its MANIFEST.md, not printed after the program's
            # end.
            notes = []
        self._report(notes)
        if self.summary and self.speaker:
            from scorep.measure import summary as _summary
            try:
                text = _summary.format_summary(self, time.perf_counter() - started)
            except Exception as error:  # the results are written; the summary is a courtesy
                text = "scorep: no summary: %s\n" % error
            sys.stderr.write(text)
            sys.stderr.flush()
        return self.results

    def _notes(self):
        """What the user must know about the results: data flushed, folded, dropped, lost.
        Written to stderr (never silent) and into MANIFEST.md, where the report finds it."""
        r = self.results
        notes = []
        if r["trace_flushes"]:
            # A flush is a pause inside the measured program.
            notes.append(
                "the trace buffers were flushed to disk %d time(s) during the run "
                "(SCOREP_TOTAL_MEMORY=%d bytes was used up); the flushes are marked in the "
                "trace. Raise SCOREP_TOTAL_MEMORY or filter regions to avoid them."
                % (r["trace_flushes"], self.config["SCOREP_TOTAL_MEMORY"]))
        if r["profile_folded_calls"]:
            notes.append(
                "%d call(s) deeper than SCOREP_PROFILING_MAX_CALLPATH_DEPTH=%d are summed up "
                "in COLLAPSE call paths of the profile (as Score-P does)"
                % (r["profile_folded_calls"], self.config["SCOREP_PROFILING_MAX_CALLPATH_DEPTH"]))
        if r["profile_dropped_calls"]:
            notes.append(
                "%d call(s) got no call path of their own in the profile: "
                "SCOREP_TOTAL_MEMORY=%d bytes was used up (their time counts in their callers)"
                % (r["profile_dropped_calls"], self.config["SCOREP_TOTAL_MEMORY"]))
        if r.get("profile_dropped_samples"):
            notes.append(
                "%d sample(s) got no call path in the profile: SCOREP_TOTAL_MEMORY=%d bytes was "
                "used up" % (r["profile_dropped_samples"], self.config["SCOREP_TOTAL_MEMORY"]))
        if r["profile_folded_parameters"]:
            notes.append(
                "%d parameter value(s) beyond %d distinct ones per call path were not "
                "split out in the profile" % (r["profile_folded_parameters"],
                                                 self._native.PROFILE_MAX_PARAMETER_VALUES))
        if r.get("trace_error"):
            notes.append("the trace could not be written: %s; its partial files were removed "
                         "(the profile is complete)" % r["trace_error"])
        if r.get("trace_spill_failures"):
            notes.append("%d trace buffer flush(es) during the run could not be written to "
                         "disk (%s): those buffers stayed in memory"
                         % (r["trace_spill_failures"], r["trace_spill_error"]))
        if r.get("memory_over_budget_bytes"):
            notes.append("the measurement needed %d bytes more than SCOREP_TOTAL_MEMORY=%d "
                         "(buffers that could not be written to disk or given back)"
                         % (r["memory_over_budget_bytes"], self.config["SCOREP_TOTAL_MEMORY"]))
        if r.get("parts_missing"):
            notes.append("the results of processes started with MPI_Comm_spawn did not arrive "
                         "within SCOREP_MPI_FINALIZE_TIMEOUT=%s s and are left out: %s"
                         % (self.config["SCOREP_MPI_FINALIZE_TIMEOUT"], r["parts_missing"]))
        if r.get("wait_state_error"):
            notes.append("the wait-state analysis did not run: %s (the profile has no wait-state "
                         "metrics)" % r["wait_state_error"])
        if r.get("wait_state_violations"):
            notes.append("%d message(s) were received before they were sent on the ranks' "
                         "common clock (clock condition violations): the wait-state analysis "
                         "did not count them" % r["wait_state_violations"])
        if r["trace_lost_records"]:
            notes.append("%d trace record(s) were lost: memory for trace buffers "
                         "could not be allocated" % r["trace_lost_records"])
        if r.get("process_trace_failures"):
            notes.append("the events of %d child process(es) could not be written (%s): "
                         "their locations are in the trace without events, the profile is "
                         "complete" % (r["process_trace_failures"], r["process_trace_error"]))
        notes += child_process_notes(r.get("child_processes", ()),
                                     self.config["SCOREP_CHILDREN_TIMEOUT"])
        notes += self._unmatched_line_patterns()
        return notes

    def line_patterns(self):
        return [p for p in self.config["SCOREP_PYTHON_LINES"].split(",") if p]

    def _unmatched_line_patterns(self):
        """A --lines pattern that chose no function of any process is said, not silently
        empty: lines.json (all processes' line profiles) names the functions chosen."""
        patterns = self.line_patterns()
        if not patterns or not self.speaker:  # the process that wrote lines.json speaks
            return []
        try:
            with open(os.path.join(self.experiment_dir, "lines.json"), encoding="utf-8") as f:
                names = [function["name"] for function in json.load(f)["functions"].values()]
        except FileNotFoundError:
            names = []
        except (OSError, ValueError, KeyError, TypeError):
            return []  # unreadable: the report says so; no guess here
        return ["--lines: %r matched no function that ran (patterns match region names, "
                "module[.Class]:function or pkg.mod.func, with * ? [...])" % p
                for p in _config.line_patterns_matching_nothing(patterns, names)]

    def _report(self, notes):
        r = self.results
        if r["mpi_size"] > 1:
            who = "scorep: rank %d: " % r["mpi_rank"]
        else:
            who = "scorep: "
        for note in notes:
            sys.stderr.write(who + note + "\n")
        if not self.config.verbose:
            return
        seconds = (r["end_time"] - r["start_time"]) / r["ticks_per_second"]
        self.log("measurement ended after %.3f s: %d location(s), %d region(s), %d enter(s), "
                 "%s deepest call stack %d" % (
                     seconds, r["locations"], r["regions"], r["enters"],
                     "%d sample(s), " % r["samples"] if self.config.sampling_event else "",
                     r["max_depth"]))
        self.log("trace buffer memory: peak %d bytes of %d" % (
            r["memory_peak_bytes"], self.config["SCOREP_TOTAL_MEMORY"]))
        if r["unmatched_leaves"]:
            self.log("%d return(s) of functions entered before instrumentation started were "
                     "ignored" % r["unmatched_leaves"])
        self.log("results are in %s" % self.experiment_dir)


# A child process's member measurement is made by scorep.measure.children, below this module.
_processes.measurement_class = Measurement
