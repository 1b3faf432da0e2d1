"""Child processes: every Python process a measured program starts joins its experiment.

How a child gets measured:

- **fork** (os.fork, multiprocessing's fork start method, a fork server's children): the
  core stops measuring in the child at once (pthread_atfork); the at-fork hook below then
  starts a measurement of its own in the child, as a member of the parent's group.
- **a new interpreter** (multiprocessing's spawn, subprocess, os.system, os.exec*): the
  measured program's environment carries ``_SCOREP_PYTHON_CHILD`` (the group, the
  configuration, the user API's state) and ``PYTHONPATH`` starts with ``measure/child_site``, whose
  ``sitecustomize`` starts the measurement before the child's program runs (and then runs
  the interpreter's own ``sitecustomize``). Interpreters that are no Python, or one this
  scorep is not built for, are left alone (the latter says so in one line).
  The value in os.environ is set once, before the program's code runs, and never changed
  afterwards (a program that compares its environment before and after, as CPython's test
  runner does, sees no change: issue 29). What differs at the moment a child starts (the
  number reserved for it, how it was started, the user API's switches, the group once MPI
  agreed on it) goes into the environment the wrappers below give that child; os.system,
  whose shell reads the C library's environment, gets it there for the call only.
- multiprocessing's own helpers that outlive the program are not measured: the resource
  tracker, and the fork server itself (the processes it forks are).

A child ends its measurement at exit, on SIGTERM (pool.terminate()), in ``os._exit`` (pool
workers end that way) and before ``os.exec*``: it hands its part over to the root
(adapters/process in the C core), which waits for its children at its own end.
"""

# _signal's pthread_sigmask, not signal's: signal.pthread_sigmask is a Python function, and
# the tool's own calls of it (around every fork, at a child's start) were recorded as the
# program's.
import _signal
import _thread
import json
import os
import signal
import sys

from scorep import _api, _native
from scorep.measure import PACKAGE_DIR
from scorep.measure.instrumenters import for_child
from scorep.measure.signals import TERMINATING_SIGNALS, is_measurement_handler

ENV = "_SCOREP_PYTHON_CHILD"
SITE_DIR = os.path.join(PACKAGE_DIR, "measure", "child_site")


class _Inherited:
    """What this module keeps for the process and the children it forks: a forked child
    goes on with it as it is (the wrappers stay in place, at-fork hooks cannot be removed,
    a forkserver's children belong to its group)."""

    def __init__(self):
        # The functions wrapped while a measurement follows children: name -> original.
        self.originals = {}
        self.fork_hook_registered = False
        # The forkserver process: not measured itself, it starts a member in each child it
        # forks (the group it belongs to, from its environment).
        self.carrier = None
        self.python_name = None  # the pattern of interpreters' names, compiled once


class _ThisProcess:
    """What belongs to this process alone. A forked child replaces it whole by a new one
    (_State.reset_in_child, first thing in the child): a field added here is reset there
    without anyone having to remember it."""

    def __init__(self):
        # The environment before the root set it (restored when its measurement ends).
        self.saved_environ = None
        # A number reserved for the child of the fork in progress (the child finds it in
        # its parent's state, which reset_in_child hands it).
        self.reserved_for_fork = None
        # Threads running subprocess's fork_exec (a child forked there only execs).
        self.threads_in_fork_exec = set()
        # os.system calls running now, and the C environment's values they replaced (see
        # _system); a lock another thread held at the fork would never be released.
        self.system_lock = _thread.allocate_lock()
        self.system_running = 0
        self.system_replaced = {}
        # The forking thread's signal mask before a fork blocked TERMINATING (None: not
        # blocked).
        self.mask_before_fork = None


class _State:
    """The module's one state: `tree` inherited by forked children, `here` this process's."""

    def __init__(self):
        self.tree = _Inherited()
        self.here = _ThisProcess()

    def reset_in_child(self):
        """In a forked child: a fresh state of its own; returns its parent's, which tells
        what the fork left (the reserved number, fork_exec's threads, the signal mask)."""
        parent, self.here = self.here, _ThisProcess()
        return parent


_state = _State()



_measurement = _api.current

# The class of a measurement (scorep.measure.session.Measurement, which sits above this module
# and sets it when it is imported): what a child's member measurement is made of.
measurement_class = None


# ---- what a child inherits ----------------------------------------------------------------


def child_info(measurement, method="subprocess", reserved=None):
    """The environment value for a child started now (None: no child is followed). Its
    lineage is None while the group is not known yet (MPI, before the ranks agreed on the
    experiment directory): such a child is not measured."""
    native = measurement._native
    if native is None:
        return None
    lineage = native.process_lineage()
    config, reparse = {}, []
    for name, value in measurement.config.values.items():
        if value is None or isinstance(value, (bool, int, float, str)):
            config[name] = value
        else:  # a parsed object (a sampling event): its text, parsed again in the child
            config[name] = str(value)
            reparse.append(name)
    return json.dumps({
        "reserved": reserved,
        "lineage": lineage,
        "method": method,
        "config": config,
        "reparse": reparse,
        "instrumenter": measurement.instrumenter_choice,
        "register": bool(native.registered()),
        "recording": bool(native.recording()),
        "program": measurement.program_name,
        "package": os.path.dirname(PACKAGE_DIR),
    }, separators=(",", ":"))


def _pythonpath(current):
    parts = [p for p in (current or "").split(os.pathsep) if p]
    if parts and parts[0] == SITE_DIR:
        return current
    return os.pathsep.join([SITE_DIR] + [p for p in parts if p != SITE_DIR])


class _ToolCode:
    """`with _ToolCode():` the standard library code the tool runs in the program's threads
    (os.path, re, json) is not recorded as the program's."""

    def __enter__(self):
        self.native = _native.native()
        if self.native is not None:
            self.native.hold_events()

    def __exit__(self, *exc):
        if self.native is not None:
            self.native.release_events()



def _reserve():
    m = _measurement()
    if m is None or m.pid != os.getpid() or not m.follows_children or m._native is None:
        return None
    return m._native.process_reserve()


def _reserved_pid(number, pid):
    if number is not None and _native.native() is not None:
        _native.native().process_reserved_pid(number, pid)


def _unreserve(number):
    if number is not None and _native.native() is not None:
        _native.native().process_unreserve(number)


def _is_python(path):
    """Whether an executable is a Python interpreter (its child will join)."""
    if _state.tree.python_name is None:
        import re
        _state.tree.python_name = re.compile(r"^(python|pypy)[\d.]*(d|m|dm)?$")
    try:
        path = os.fsdecode(path)
    except TypeError:
        return False
    if _state.tree.python_name.match(os.path.basename(path)):
        return True
    try:
        return os.path.realpath(path) == os.path.realpath(sys.executable)
    except (OSError, ValueError):
        return False


def _follows(m):
    return m is not None and m.pid == os.getpid() and m.follows_children and \
        m._native is not None


def _forked(measurement):
    """A member forked from its parent: the program's code (the parent's copy) ran before
    its measurement started, so its os.environ stays as the parent left it."""
    return bool(measurement.member) and \
        measurement.member.get("method") in ("fork", "os.fork", "forkserver")


def _publish(measurement):
    """Puts what the children of this process inherit into os.environ: only before the
    program's code runs. The standard library code this runs (json, os.environ) is the
    tool's, not the program's: it is not recorded."""
    native = measurement._native
    native.hold_events()
    try:
        info = child_info(measurement)
        if info is not None:
            os.environ[ENV] = info
            os.environ["PYTHONPATH"] = _pythonpath(os.environ.get("PYTHONPATH"))
    finally:
        native.release_events()


def program_starts():
    """The program's code runs next (after the instrumenter was registered, or not, and
    recording switched off, or not): children inherit that state, published a last time."""
    m = _measurement()
    if _follows(m) and not _forked(m):
        _publish(m)


def _c_environ():
    """This process's C environment (b"NAME=value" entries): what a child started without an
    environment of its own gets (os.putenv changes it, not os.environ)."""
    return _native.native().environ()


def _with_state(env, method="subprocess", reserved=None, own=False):
    """`env` (a list of b"NAME=value" as _posixsubprocess takes it, or a mapping) for a child
    started now: ENV holds this moment's state, and, in this process's own environment
    (`own`), PYTHONPATH starts with measure/child_site (the program may have set PYTHONPATH). A new
    list or dict; None when nothing differs or the environment does not carry ENV (the
    program decided what its child sees)."""
    m = _measurement()
    if not _follows(m) or not _carries_us(env):
        return None
    info = child_info(m, method, reserved)
    if info is None:
        return None
    if isinstance(env, (list, tuple)):
        prefix, path_prefix = ENV.encode() + b"=", b"PYTHONPATH="
        wanted = prefix + info.encode()
        path_entries = [e for e in env if isinstance(e, bytes) and e.startswith(path_prefix)]
        path = os.fsdecode(path_entries[-1][len(path_prefix):]) if path_entries else None
        new_path = _pythonpath(path) if own else path
        if [e for e in env if isinstance(e, bytes) and e.startswith(prefix)] == [wanted] \
                and new_path == path:
            return None
        result = [e for e in env if not (isinstance(e, bytes) and (
            e.startswith(prefix) or (new_path != path and e.startswith(path_prefix))))]
        result.append(wanted)
        if new_path != path:
            result.append(path_prefix + os.fsencode(new_path))
        return result
    path = env.get("PYTHONPATH")
    new_path = _pythonpath(path) if own else path
    if env.get(ENV) == info and new_path == path:
        return None
    result = dict(env)
    result[ENV] = info
    if new_path != path:
        result["PYTHONPATH"] = new_path
    return result


def _as_mapping(entries):
    """b"NAME=value" entries as the mapping os.execve and os.posix_spawn take (a name may
    begin with "=")."""
    mapping = {}
    for entry in entries:
        equals = entry.find(b"=", 1)
        if equals > 0:
            mapping[entry[:equals]] = entry[equals + 1:]
    return mapping


def _carries_us(env):
    """Whether an environment given to a child explicitly (None: this process's) lets it
    join: a program that builds a child's environment of its own decides what the child
    sees, and scorep's variables are not added to it."""
    if env is None:
        return True
    if isinstance(env, (list, tuple)):  # _posixsubprocess: b"KEY=value" entries
        return any(entry.startswith(ENV.encode() + b"=") for entry in env
                   if isinstance(entry, bytes))
    try:
        return ENV in env
    except TypeError:
        return False


# ---- wrappers ----------------------------------------------------------------------------


# multiprocessing's helpers that outlive the program: they never join (see
# start_from_environment), so no number is reserved for them.
_HELPERS = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")


def _will_join(executables, argv):
    if not any(_is_python(e) for e in executables or ()):
        return False
    for arg in argv or ():
        try:
            text = os.fsdecode(arg)
        except TypeError:
            continue
        if any(helper in text for helper in _HELPERS):
            return False
    return True


def _given_environment(env):
    """The environment a child gets: `env` as the program gave it, or this process's own
    (None: the C environment; os.environ is what the program passes when it means its own).
    Returns (environment, own)."""
    if env is None:
        return (_c_environ() if _follows(_measurement()) else None), True
    return env, env is os.environ


# Where _posixsubprocess.fork_exec takes preexec_fn (3.11 added process_group before it).
_PREEXEC_ARG = 20 if sys.version_info < (3, 11) else 21


def _changed_entries(before, after):
    """The variables of ours (ENV, PYTHONPATH) whose values differ between two lists of
    b"NAME=value" entries: name -> (value before or None, value after)."""
    before, after = _as_mapping(before), _as_mapping(after)
    return {name: (before.get(name), value) for name, value in after.items()
            if name in (ENV.encode(), b"PYTHONPATH") and before.get(name) != value}


def _putenv_first(preexec_fn, changed):
    """preexec_fn of a child that gets this process's C environment (env=None): the
    variables this moment's state changes go into the C environment of the forked child
    (os.putenv, before its exec), then the program's preexec_fn runs. Passing an
    environment of its own to the child instead would drop what the program's preexec_fn
    puts there with os.putenv (CPython's test_subprocess test_preexec does)."""
    def preexec():
        for name, value in changed.items():
            os.putenv(name, value)
        return preexec_fn()
    return preexec


def _fork_exec(*args, **kwargs):
    number = None
    with _ToolCode():
        if len(args) > 5:
            executables = args[1]
            env, own = _given_environment(args[5])
            number = _reserve() if _will_join(executables, args[0]) and \
                _carries_us(env) else None
            new = _with_state(env, reserved=number, own=own)
            preexec_fn = args[_PREEXEC_ARG] if len(args) > _PREEXEC_ARG else None
            if new is not None and args[5] is None and callable(preexec_fn):
                changed = {name: value for name, (_, value) in
                           _changed_entries(env, new).items()}
                args = args[:_PREEXEC_ARG] + (_putenv_first(preexec_fn, changed),) + \
                    args[_PREEXEC_ARG + 1:]
            elif new is not None:  # None: the child's environment as given carries this moment
                args = args[:5] + (new,) + args[6:]
    # Threads running fork_exec: a child forked there runs only preexec_fn before its exec.
    _state.here.threads_in_fork_exec.add(_thread.get_ident())
    try:
        pid = _state.tree.originals["fork_exec"](*args, **kwargs)
    except BaseException:
        with _ToolCode():
            _unreserve(number)
        raise
    finally:
        _state.here.threads_in_fork_exec.discard(_thread.get_ident())
    with _ToolCode():
        _reserved_pid(number, pid)
    return pid


def _posix_spawn_wrapper(name):
    def spawn(path, argv, env, *args, **kwargs):
        with _ToolCode():
            # None (Python 3.13): this process's environment.
            given, own = _given_environment(env)
            number = _reserve() if _will_join([path], argv) and _carries_us(given) else None
            new = _with_state(given, reserved=number, own=own)
            if new is not None:
                env = _as_mapping(new) if isinstance(new, list) else new
        try:
            pid = _state.tree.originals[name](path, argv, env, *args, **kwargs)
        except BaseException:
            with _ToolCode():
                _unreserve(number)
            raise
        with _ToolCode():
            _reserved_pid(number, pid)
        return pid
    return spawn


def _fork():
    """os.fork: the child's number is reserved first, so that the root waits for it even
    if it ends before the child could join."""
    with _ToolCode():
        number = _reserve()
    _state.here.reserved_for_fork = number
    try:
        pid = _state.tree.originals["fork"]()
    except BaseException:
        _state.here.reserved_for_fork = None
        with _ToolCode():
            _unreserve(number)
        raise
    if pid:
        _state.here.reserved_for_fork = None
        with _ToolCode():
            _reserved_pid(number, pid)
    return pid


def _system(command):
    """os.system's shell gets the C library's environment, not one of the child's own: when
    this moment's state differs from what is there, it is put there for the call only
    (os.putenv: os.environ never changes) and put back when the last concurrent call
    returns."""
    with _ToolCode():
        wanted = {}
        if _follows(_measurement()):
            entries = _c_environ()
            new = _with_state(entries, own=True)
            if new is not None:
                wanted = _changed_entries(entries, new)
        if wanted:
            with _state.here.system_lock:
                if not _state.here.system_running:
                    _state.here.system_replaced = {n: old for n, (old, _) in wanted.items()}
                _state.here.system_running += 1
                for name, (_, value) in wanted.items():
                    os.putenv(name, value)
    try:
        return _state.tree.originals["system"](command)
    finally:
        if wanted:
            with _ToolCode(), _state.here.system_lock:
                _state.here.system_running -= 1
                if not _state.here.system_running:
                    for name, old in _state.here.system_replaced.items():
                        if old is None:
                            os.unsetenv(name)
                        else:
                            os.putenv(name, old)
                    _state.here.system_replaced = {}


def _has_nul(text):
    return (b"\0" if isinstance(text, bytes) else "\0") in text


def _exec_would_start(path, args, env=None):
    """Whether os.exec* will replace the process image, as far as can be known before: the
    checks CPython makes (arguments, environment) and an executable file. An exec that
    fails raises in a program that goes on (os.execvpe tries each entry of PATH): its
    measurement must go on too."""
    try:
        if not isinstance(path, int):
            path = os.fspath(path)
            if _has_nul(path) or not os.access(path, os.X_OK) or os.path.isdir(path):
                return False
        if not isinstance(args, (list, tuple)) or not args or not args[0]:
            return False
        if any(_has_nul(os.fspath(a)) for a in args):
            return False
        for key, value in (env.items() if env is not None else ()):
            key, value = os.fspath(key), os.fspath(value)
            equals = b"=" if isinstance(key, bytes) else "="
            if not key or equals in key[1:] or _has_nul(key) or _has_nul(value):
                return False
    except (TypeError, ValueError, AttributeError):
        return False
    return True


def _end_before_exec(path, args, env=None):
    """The process image ends: its measurement too (a child hands its part over); a Python
    that follows joins the group with the number reserved for it. Returns the environment
    for the new image when it differs from `env` as given (None: this process's own)."""
    m = _measurement()
    if m is None or m.pid != os.getpid() or not _exec_would_start(path, args, env):
        return None
    with _ToolCode():
        given, own = _given_environment(env)
        number = _reserve() if _is_python(path) and _carries_us(given) else None
        _reserved_pid(number, os.getpid())
        new = _with_state(given, "exec", number, own)  # while the group is still known
    m.finalize(0, report_errors=True)
    if isinstance(new, list):
        new = _as_mapping(new)
    return new


def _execv(path, args):
    env = _end_before_exec(path, args)
    if env is not None:
        return _state.tree.originals["execve"](path, args, env)
    return _state.tree.originals["execv"](path, args)


def _execve(path, args, env):
    new = _end_before_exec(path, args, env)
    return _state.tree.originals["execve"](path, args, env if new is None else new)


def _exit(status):
    """os._exit: how pool workers end. The results are written first."""
    m = _measurement()
    if m is not None and m.pid == os.getpid():
        try:
            code = int(status)
        except (TypeError, ValueError):
            code = 1
        m.finalize(code, report_errors=True)
    _state.tree.originals["_exit"](status)


def _install_wrappers():
    if "fork_exec" in _state.tree.originals:
        return
    import _posixsubprocess
    _state.tree.originals["fork_exec"] = _posixsubprocess.fork_exec
    _posixsubprocess.fork_exec = _looking_like(_fork_exec, _state.tree.originals["fork_exec"])
    subprocess = sys.modules.get("subprocess")
    if subprocess is not None and getattr(subprocess, "_fork_exec", None) is \
            _state.tree.originals["fork_exec"]:
        subprocess._fork_exec = _posixsubprocess.fork_exec  # bound by name at its import
    for name in ("posix_spawn", "posix_spawnp"):
        if hasattr(os, name):
            _state.tree.originals[name] = getattr(os, name)
            setattr(os, name, _looking_like(_posix_spawn_wrapper(name), _state.tree.originals[name]))
    for name, wrapper in (("system", _system), ("execv", _execv), ("execve", _execve),
                          ("fork", _fork)):
        _state.tree.originals[name] = getattr(os, name)
        setattr(os, name, _looking_like(wrapper, _state.tree.originals[name]))


def _looking_like(wrapper, builtin):
    """A wrapper of an os function that introspection takes for the function it wraps: name,
    module, documentation, signature (inspect follows __wrapped__; test_inspect checks that
    the os module's functions have text signatures)."""
    import functools
    functools.update_wrapper(wrapper, builtin)
    signature = getattr(builtin, "__text_signature__", None)
    if signature is not None:
        wrapper.__text_signature__ = signature
    return wrapper


# The signals a measured process handles to write its results before it ends (see
# Measurement.finalize_at_exit).
TERMINATING = TERMINATING_SIGNALS


def _before_fork():
    """A terminating signal sent to a child in the first moments of its life would be lost:
    CPython's fork clears the flags of signals that arrived "just before the fork", and in
    the child that includes a signal that arrived just after it, before its Python code
    ran. The child's Python handler (inherited, or its own measurement's) then never runs
    and the child lives on: a pool's terminate() waited for it forever (issue 13; the rare
    hang of Pool.__exit__ noted with issue 10). Blocked around the fork, the signal waits in
    the kernel until the child can handle it."""
    if _measurement() is not None or _state.tree.carrier is not None:
        _state.here.mask_before_fork = _signal.pthread_sigmask(signal.SIG_BLOCK, TERMINATING)


def _restore_mask(here=None):
    """After a fork: the mask _before_fork saved, in the parent (its own state) or in the
    child (`here`: its parent's state, which it has just replaced)."""
    here = here or _state.here
    if here.mask_before_fork is not None:
        mask, here.mask_before_fork = here.mask_before_fork, None
        _signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def install_fork_hook():
    """Once per process (at-fork hooks cannot be removed): a forked child never writes into
    its parent's measurement, and continues in a measurement of its own when children are
    followed."""
    if not _state.tree.fork_hook_registered:
        os.register_at_fork(before=_before_fork, after_in_parent=_restore_mask,
                            after_in_child=_after_fork_in_child)
        # os._exit ends a process without atexit: the results are written first (pool
        # workers end that way; so may the program).
        _state.tree.originals["_exit"] = os._exit
        os._exit = _looking_like(_exit, os._exit)
        _state.tree.fork_hook_registered = True


def install(measurement):
    """The measurement follows the children this process starts from now on."""
    install_fork_hook()
    _install_wrappers()
    if not measurement.member and _state.here.saved_environ is None:
        _state.here.saved_environ = (os.environ.get(ENV), os.environ.get("PYTHONPATH"))
    if not _forked(measurement):
        _publish(measurement)


def uninstall(measurement):
    """A root's measurement ended: the children this process starts later are not followed
    (a Jupyter kernel measures some cells only)."""
    if measurement.member or _state.here.saved_environ is None:
        return
    native = measurement._native
    native.hold_events()  # os.environ's code is the tool's here, not the program's
    try:
        for name, value in zip((ENV, "PYTHONPATH"), _state.here.saved_environ):
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    finally:
        native.release_events()
    _state.here.saved_environ = None


# ---- starting a member -------------------------------------------------------------------


def _warn(message):
    sys.stderr.write("scorep: process %d is not measured: %s\n" % (os.getpid(), message))
    sys.stderr.flush()


def start_member(info, lineage, method, program_name, program_args, register, recording,
                 name=None, reserved=None):
    """Measures this process as a member of the group `lineage` describes."""
    # A terminating signal (pool.terminate()) that arrives while the measurement starts
    # waits until it can write: the member is registered by then.
    blocked = _signal.pthread_sigmask(signal.SIG_BLOCK, TERMINATING)
    try:
        m = _start_member(info, lineage, method, program_name, program_args, recording, name,
                          reserved)
    finally:
        _signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    # Instrumentation last: the tool's own calls above (the mask's restoration among them,
    # a Python function of the signal module) are not the child's program.
    if m is not None:
        if register:
            _native.native().register()
        program_starts()
    return m


def _start_member(info, lineage, method, program_name, program_args, recording, name, reserved):
    from scorep.measure import config as _config
    from scorep._errors import ScorepError
    # the fastest of this interpreter (it may be another version) when the parent's was
    choice = for_child(info.get("instrumenter", "default"))
    try:
        values = dict(info["config"])
        for variable in info.get("reparse", ()):
            values[variable] = _config.VARIABLES[variable][1](variable, values[variable])
        config = _config.Config(values)
        m = measurement_class(config, choice, program_name, program_args,
                        member={"lineage": lineage, "method": method, "reserved": reserved})
        m.start(register=False)  # the tool's own start-up is not the program's
    except ScorepError as error:
        _warn(str(error))
        return None
    except Exception as error:  # never break the child because of the measurement
        _warn("%s: %s" % (type(error).__name__, error))
        return None
    _watch_exit_status(m)
    native = _native.native()
    if name:
        native.process_set_name(name)
    if not recording:
        native.set_recording(False)
    m.finalize_at_exit()
    _name_multiprocessing_processes()
    return m


def _watch_exit_status(measurement):
    """A child's program runs as plain python runs it, not under `python -m scorep`: its
    exit status, for ProgramEnd, is seen where it is decided (sys.exit, an uncaught
    exception; os._exit has its own wrapper)."""
    original_exit, original_hook = sys.exit, sys.excepthook

    def exit(status=None):
        if measurement is _measurement():
            if status is None:
                measurement.exit_status = 0
            elif isinstance(status, int):
                measurement.exit_status = status
            else:
                measurement.exit_status = 1
        original_exit(status)

    def excepthook(exc_type, exc, tb):
        if measurement is _measurement() and not issubclass(exc_type, SystemExit):
            measurement.exit_status = 1
        original_hook(exc_type, exc, tb)

    sys.exit = exit
    if sys.excepthook is sys.__excepthook__:
        sys.excepthook = excepthook


def _name_multiprocessing_processes():
    """multiprocessing names a process when it bootstraps it (in the child): the member's
    name follows. Only where multiprocessing runs already."""
    process = sys.modules.get("multiprocessing.process")
    if process is None or getattr(process.BaseProcess._bootstrap, "_scorep", False):
        return
    original = process.BaseProcess._bootstrap
    native = _native.native()

    def _bootstrap(self, *args, **kwargs):
        # self._name, not the property: nothing of the tool's own is recorded
        if native.running() and isinstance(self._name, str):
            native.process_set_name(self._name)
        return original(self, *args, **kwargs)

    _bootstrap._scorep = True
    process.BaseProcess._bootstrap = _bootstrap


def _fork_method(frame):
    module = frame.f_globals.get("__name__", "") if frame is not None else ""
    if module == "multiprocessing.popen_fork":
        return "fork"
    if module == "multiprocessing.forkserver":
        return "forkserver"
    return "os.fork"


def _fork_process_name(frame):
    """multiprocessing's name of the Process being forked (Popen._launch(process_obj))."""
    process_obj = frame.f_locals.get("process_obj") if frame is not None else None
    name = getattr(process_obj, "name", None)
    return name if isinstance(name, str) else None


def _after_fork_in_child():
    """In the child of os.fork (and of multiprocessing's fork): the core stopped measuring
    in the fork; the child continues measuring in a location group of its own. A
    terminating signal that arrived meanwhile is handled once this is done."""
    frame = sys._getframe(1)
    # The program's frame that forked (not this module's os.fork wrapper).
    while frame is not None and frame.f_code.co_filename.startswith(PACKAGE_DIR + os.sep):
        frame = frame.f_back
    inherited = _state.reset_in_child()
    try:
        _continue_in_child(frame, inherited)
    finally:
        _restore_mask(inherited)


def _continue_in_child(frame, inherited):
    """`inherited`: the parent's _ThisProcess at the fork."""
    native = _native.native()
    parent = _measurement()
    if native is None or (parent is None and _state.tree.carrier is None):
        return
    if _thread.get_ident() in inherited.threads_in_fork_exec:
        # subprocess's child running the program's preexec_fn before it execs (at-fork
        # handlers run only then): no process of the program's own, nothing to hand over.
        # What it execs is followed, or not, as any other command.
        if parent is not None:
            parent.forget_in_child()
        _default_signal_handlers()
        return
    if parent is not None:
        lineage = native.process_forked_lineage()
        register, recording = bool(native.registered()), bool(native.recording())
        info = {"config": parent.config.values, "instrumenter": parent.instrumenter_choice}
        follow = parent.follows_children
        program, args = parent.program_name, parent.program_args
        parent.forget_in_child()
    else:
        info = _state.tree.carrier
        lineage = info["lineage"]
        register, recording = info["register"], info["recording"]
        follow = True
        program, args = info.get("program", "python"), list(sys.argv)
    reserved = inherited.reserved_for_fork if parent is not None else None
    if lineage is None or not follow or start_member(
            info, lineage, _fork_method(frame), program, args, register, recording,
            name=_fork_process_name(frame), reserved=reserved) is None:
        _default_signal_handlers()


def _default_signal_handlers():
    """A forked child that measures nothing ends by these signals as plain python does."""
    for signum in TERMINATING:
        if is_measurement_handler(_signal.getsignal(signum)):
            _signal.signal(signum, _signal.SIG_DFL)


# ---- a new interpreter (sitecustomize) ---------------------------------------------------


def _command_line():
    """This interpreter's whole command line (the -c code is not in sys.argv)."""
    argv = getattr(sys, "orig_argv", None)
    if argv:
        return list(argv)
    try:
        with open("/proc/self/cmdline", "rb") as f:
            return [os.fsdecode(a) for a in f.read().split(b"\0")[:-1]]
    except OSError:
        return list(sys.argv)


def _program(command_line):
    """The name and arguments of the program this interpreter runs."""
    if "-c" in command_line[1:]:
        return "python -c", list(sys.argv)
    if "-m" in command_line[1:]:
        i = command_line.index("-m")
        if i + 1 < len(command_line):
            return "python -m " + command_line[i + 1], list(sys.argv)
    if sys.argv and sys.argv[0]:
        return os.path.basename(sys.argv[0]), list(sys.argv)
    return "python", list(sys.argv)


def start_from_environment():
    """Called by child_site/sitecustomize.py in every interpreter started with our
    environment."""
    text = os.environ.get(ENV)
    if not text:
        return
    try:
        info = json.loads(text)
    except ValueError:
        return
    if not info.get("lineage"):
        # Started before the group was known (an MPI rank whose ranks had not agreed on
        # the experiment directory yet): not measured.
        return
    reserved = info.pop("reserved", None)
    if reserved is not None:  # this process's number only: not its children's
        os.environ[ENV] = json.dumps(info, separators=(",", ":"))
    command_line = _command_line()
    code = ""
    if "-c" in command_line[1:]:
        i = command_line.index("-c")
        code = command_line[i + 1] if i + 1 < len(command_line) else ""
    if "-m" in command_line[1:]:
        module = command_line[command_line.index("-m") + 1:][:1]
        if module and (module[0] == "scorep" or module[0].startswith("scorep.")):
            return  # python -m scorep measures into an experiment of its own
    if _HELPERS[0] in code:
        return  # it outlives the program: no part of its experiment
    if _HELPERS[1] in code:
        # It outlives the program too; the processes it forks are the program's.
        _state.tree.carrier = info
        install_fork_hook()
        return
    if "multiprocessing.spawn" in code or "--multiprocessing-fork" in sys.argv:
        method, (program, args) = "spawn", (info.get("program", "python"), list(sys.argv))
    else:
        method, (program, args) = info.get("method", "subprocess"), _program(command_line)
    start_member(info, info["lineage"], method, program, args, info.get("register", True),
                 info.get("recording", True), reserved=reserved)
    if "multiprocessing" in code:
        import multiprocessing.process  # noqa: F401 (it runs next anyway)
        _name_multiprocessing_processes()
