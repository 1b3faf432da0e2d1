"""CPython's own regression tests, run under measurement, must give the same results as
without it: the strongest test of an event path is code nobody here wrote.

`python -m scorep -m test -v MODULE` against `python -m test -v MODULE` on every interpreter
3.9-3.13 that ships its `test` package (Debian's python3 does not; pyenv's do): the same
tests with the same outcomes, no "env changed", no "Unraisable exception", and the test
module's own functions in the profile. The runner runs inside programs/regrtest_env.py,
which also says which variables of os.environ the whole program changed: the same as
without measurement (the runner's own check misses a change made before its first
snapshot, and -v starts a process then: issue 29). Quick modules run on every interpreter, profiling and
tracing; the long ones (itertools, threading, asyncio's task tests) on one interpreter and
mode each, rotating, so the whole file stays within about two minutes on two cores; a few with
every function's lines profiled (--lines='*'), a few sampled (--sampling=5000, traced).
"""

import glob
import importlib.util
import os
import re
import subprocess

import pytest

from conftest import MEASURED_PYTHONS, REPO, program, run_scorep, scorep_env
from scorep import cube

# The sweep (tools/stdlib_sweep.py) runs the same comparison on every module; it reads the
# runner's output, and this file reads it the same way.
_spec = importlib.util.spec_from_file_location("stdlib_sweep", REPO / "tools" / "stdlib_sweep.py")
stdlib_sweep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stdlib_sweep)
outcomes = stdlib_sweep.outcomes

QUICK = ["test_generators", "test_coroutines", "test_asyncgen", "test_contextlib",
         "test_sys_settrace", "test_exceptions", "test_descr", "test_class",
         # a program running cProfile itself (3.12+: both are sys.monitoring tools), and the
         # pure-Python profile module and profile hooks it installs (3.12+: sys.setprofile is
         # a sys.monitoring tool too, next to our CALL and C_RETURN events)
         "test_cprofile", "test_sys_setprofile"]
# (module, interpreter version, mode): each long module once, on a different interpreter.
LONG = [("test_itertools", (3, 10), "trace"), ("test_threading", (3, 11), "profile"),
        ("test_asyncio.test_tasks", (3, 12), "trace"), ("test_threading", (3, 13), "trace"),
        ("test_asyncio.test_tasks", (3, 9), "profile"), ("test_os", (3, 12), "io"),
        # signal dispositions the program reads and restores; children in the C locale
        # under a directory named with UTF-8 bytes; frames a garbage collection sees while
        # a function is being called (3.11+ makes frame objects only when asked).
        ("test_signal", (3, 12), "profile"), ("test_sys", (3, 10), "profile"),
        ("test_sys", (3, 13), "profile"), ("test_frame", (3, 11), "profile"),
        ("test_frame", (3, 12), "profile"), ("test_frame", (3, 13), "profile"),
        # audit hooks of the program's see nothing of the measurement's end; the os
        # functions the measurement wraps keep their signatures
        ("test_audit", (3, 12), "profile"), ("test_audit", (3, 13), "profile"),
        ("test_inspect", (3, 13), "profile"),
        # they start child processes (issue 29: each reported "env changed" under measurement)
        ("test_weakref", (3, 10), "profile"), ("test_weakref", (3, 13), "trace"),
        ("test_itertools", (3, 13), "profile"),
        # C functions called back and forth (partial, reduce, lru_cache, singledispatch)
        ("test_functools", (3, 12), "profile"), ("test_functools", (3, 13), "trace"),
        ("test_functools", (3, 11), "c-calls"),
        # the pure-Python profile module installed by the program while our profile hook
        # records C calls (before 3.12: "Bad return" on the return of sys.setprofile itself)
        # and its profile, which must not show our gc callback (a Python function once)
        ("test_profile", (3, 11), "c-calls"), ("test_profile", (3, 10), "metrics"),
        # collections at the recursion limit (the gc callback failed there when it was Python)
        ("test_exceptions", (3, 12), "metrics"),
        # the descriptors a measured child has (test_pass_fds_redirected lists them: a
        # member held an flock'ed one) and a preexec_fn's os.putenv reaching the child
        # (test_preexec: the child got an environment of its own); SELECTED below
        ("test_subprocess", (3, 9), "profile"), ("test_subprocess", (3, 11), "trace"),
        ("test_subprocess", (3, 13), "profile")]
# The tests of a module run (regrtest's -m patterns), where the whole module takes minutes.
SELECTED = {"test_subprocess": ["test_pass_fds*", "*preexec*", "test_close_fds*"]}
# With I/O recording (mode "io": tracing and SCOREP_IO_POSIX=true): the file object tests,
# which open, read, write, seek and close files and bad descriptors in every way.
QUICK_IO = ["test_fileio"]


def _interpreters():
    """version -> path of an interpreter with CPython's test package, one per version."""
    candidates = list(MEASURED_PYTHONS)
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    for minor in range(9, 14):
        candidates += sorted(glob.glob("%s/versions/3.%d.*/bin/python3.%d" % (root, minor, minor)))
    found = {}
    for path in candidates:
        out = subprocess.run([path, "-c", "import sys, test.test_generators;"
                              "print(*sys.version_info[:2])"], capture_output=True, text=True)
        if out.returncode == 0:
            found.setdefault(tuple(int(x) for x in out.stdout.split()), path)
    return found


INTERPRETERS = _interpreters()
# Tracing as well for the modules that stress the event path most.
TRACED = {"test_generators", "test_coroutines", "test_asyncgen", "test_sys_settrace"}
CASES = [(version, module, mode) for version in sorted(INTERPRETERS) for module in QUICK
         for mode in ("profile", "trace") if mode == "profile" or module in TRACED]
CASES += [(version, module, "io") for version in sorted(INTERPRETERS) for module in QUICK_IO]
CASES += [(version, module, mode) for module, version, mode in LONG if version in INTERPRETERS]
# Line-level profiles of every function (--lines='*'): line events and, before 3.12, our C
# trace function next to the tests' own sys.settrace tracers.
LINES = [("test_generators", (3, 9)), ("test_sys_settrace", (3, 9)),
         ("test_coroutines", (3, 10)), ("test_sys_settrace", (3, 11)),
         ("test_generators", (3, 12)), ("test_sys_settrace", (3, 13))]
CASES += [(version, module, "lines") for module, version in LINES if version in INTERPRETERS]
# Sampling (--sampling=5000 with tracing: calling-context samples and the calling contexts
# of the regions recorded as events): stacks read while threads come and go, generators and
# coroutines suspend and resume, and the tests' own tracers run.
SAMPLING = [("test_threading", (3, 9)), ("test_generators", (3, 10)),
            ("test_sys_settrace", (3, 11)), ("test_coroutines", (3, 12)),
            ("test_asyncgen", (3, 13)), ("test_threading", (3, 13)),
            # Reads where the threads are (the default): the tests' own signal handlers,
            # EINTR and SA_RESTART behaviour must stay theirs (the sampler sends no signal).
            ("test_signal", (3, 9)), ("test_signal", (3, 11)), ("test_signal", (3, 13)),
            ("test_generators", (3, 13)), ("test_threading", (3, 11))]
CASES += [(version, module, "sampling") for module, version in SAMPLING
          if version in INTERPRETERS]
# Native frames (--sampling --native): a signal goes to threads that run, never to one that
# waits in a call a signal would end early (test_itimer_real's signal.pause() returned at
# the first tick when every thread was signalled).
NATIVE = [("test_signal", (3, 11)), ("test_signal", (3, 13))]
CASES += [(version, module, "native") for module, version in NATIVE
          if version in INTERPRETERS]
# With metrics (mode "metrics": tracing, rusage and perf metrics at every enter and leave,
# --memory: the allocator hook and gc:collect regions from gc.callbacks), rotating over the
# interpreters; test_gc and test_tracemalloc meet the gc callback and the allocator hook.
METRICS = [("test_generators", (3, 9)), ("test_gc", (3, 10)), ("test_tracemalloc", (3, 11)),
           ("test_coroutines", (3, 12)), ("test_gc", (3, 13)), ("test_tracemalloc", (3, 13))]
CASES += [(version, module, "metrics") for module, version in METRICS
          if version in INTERPRETERS]

# Differences that are CPython's, not the measurement's (the same under cProfile), by module:
# version -> {(test, class): (outcome, what its message says)}. On 3.12+ every sys.monitoring
# event at a bytecode offset past 256 makes CPython create an int object for the offset
# (PyLong_FromSsize_t in call_instrumentation_vector, before any tool is called; freed when
# the tools have run), and tracemalloc counts that int in its peak. With C calls recorded
# (the default on 3.12+) the C_RETURN of clear_traces() and the CALL of get_traced_memory()
# come between the two: the peak is one int (28 bytes on 3.12, 32 on 3.13) where the test
# wants 0 (docs/limitations.md).
TRACED_OFFSET_INT = re.compile(r"Tuples differ: \(0, (\d+)\) != \(0, 0\)")
KNOWN = {"test_tracemalloc": lambda version, mode: {
    ("test_get_traced_memory", "test.test_tracemalloc.TestTracemallocEnabled"):
        ("FAIL", TRACED_OFFSET_INT)} if version >= (3, 12) else {}}

SETTRACE_RACE = ("Cannot install a trace function while another trace function is being "
                 "installed")


def environment_changes(stderr):
    """The variables programs/regrtest_env.py found changed at the program's end."""
    return re.findall(r"^environment changed: (.*)$", stderr, re.M)


@pytest.mark.skipif(not INTERPRETERS, reason="no interpreter with CPython's test package")
@pytest.mark.parametrize("version,module,mode", CASES,
                         ids=["py%d.%d-%s-%s" % (v[0], v[1], m, mode) for v, m, mode in CASES])
def test_cpython_regression_tests_unchanged(tmp_path, version, module, mode):
    python = INTERPRETERS[version]
    args = [program("regrtest_env.py"), "-v", module]
    for pattern in SELECTED.get(module, []):
        args += ["-m", pattern]
    # Both at once: much of these modules' time is spent waiting (timeouts, sleeps).
    plain_dir = tmp_path / "plain"
    plain_dir.mkdir()
    with subprocess.Popen([python] + args, env=scorep_env(), cwd=plain_dir, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        options = {"lines": ["--lines=*"], "metrics": ["--memory"],
                   "sampling": ["--sampling=5000"], "native": ["--sampling", "--native"],
                   "c-calls": ["--c-calls"]}.get(mode, [])
        metrics = {"SCOREP_METRIC_RUSAGE": "ru_utime,ru_minflt",
                   "SCOREP_METRIC_PERF": "page-faults"} if mode == "metrics" else {}
        measured = run_scorep(python, options + args,
                              tmp_path / "exp", cwd=tmp_path, timeout=600,
                              SCOREP_ENABLE_TRACING="true"
                              if mode in ("trace", "io", "metrics", "sampling") else "false",
                              SCOREP_IO_POSIX="true" if mode == "io" else "false", **metrics)
        stdout, stderr = process.communicate(timeout=600)
    plain = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    expected = outcomes(plain.stdout)
    # Some tests fail here even without measurement (test_threading's
    # test_import_from_another_thread on 3.11): what counts is the same outcome of each.
    assert len(expected) > 5, plain.stdout[-3000:]  # test_profile has 6
    known = KNOWN.get(module, lambda version, mode: {})(version, mode)
    for name, where, outcome in list(expected):
        if (name, where) in known and outcome == "ok":
            expected.remove((name, where, outcome))
            expected.append((name, where, known[(name, where)][0]))
            expected.sort()
            # The same failure, with the same message, under cProfile (a sys.monitoring tool
            # of CPython's own): it is CPython's, not ours.
            message = known[(name, where)][1]
            found = message.search(measured.stdout)
            assert found and 0 < int(found.group(1)) <= 32, measured.stdout[-3000:]
            cprofile = subprocess.run(
                [python, "-m", "cProfile", "-o", os.devnull] + args + ["-m", name],
                env=scorep_env(), cwd=plain_dir, capture_output=True, text=True, timeout=600)
            assert message.search(cprofile.stdout).group(0) == found.group(0), \
                cprofile.stdout[-3000:]
    if known and plain.returncode == 0:
        plain = subprocess.CompletedProcess(plain.args, 2, plain.stdout, plain.stderr)
    assert measured.returncode == plain.returncode, measured.stdout[-3000:] + measured.stderr
    assert outcomes(measured.stdout) == expected
    assert environment_changes(measured.stderr) == environment_changes(plain.stderr)
    # A known defect before 3.12 (docs/limitations.md, tests/test_sampling.py): a thread
    # test_threading starts (a threading.settrace hook is left set by one of its tests, and
    # regrtest installs an audit hook) can die in sys.settrace when the sampler's GIL switch
    # comes inside another thread's sys.settrace (once in 15 runs of 3.11 under load).
    if mode in ("sampling", "native") and version < (3, 12) and SETTRACE_RACE in \
            measured.stderr + measured.stdout:
        pytest.xfail("a thread died in sys.settrace: known defect before 3.12")
    # regrtest says what changed on stderr ("Warning -- ..."), apart from the verdict.
    warnings = "\n".join(line for line in (measured.stdout + measured.stderr).splitlines()
                         if line.startswith("Warning -- "))
    for text in (measured.stdout, measured.stderr):
        assert "env changed" not in text and "Unraisable exception" not in text, \
            warnings + "\n" + text[-3000:]
        assert "Exception ignored" not in text, warnings + "\n" + text[-3000:]
    profile = cube.read(str(tmp_path / "exp" / "profile.cubex"))
    # Samples see what ran long enough: the test package's code at least.
    test_module = "test" if mode in ("sampling", "native") else "test." + module
    assert any(r.name.startswith(test_module + ".") or r.name.startswith(test_module + ":")
               for r in profile.regions), "nothing of %s was recorded" % test_module
    if mode in ("trace", "io", "metrics"):
        assert (tmp_path / "exp" / "traces.otf2").exists()
    # C functions are regions: by default on 3.12+, asked for before.
    if (version >= (3, 12) and mode in ("profile", "trace")) or mode == "c-calls":
        assert any(r.name == "builtins:isinstance" and r.paradigm.startswith("compiler")
                   for r in profile.regions), "no C function was recorded"
    if mode in ("sampling", "native"):
        hits = profile.values("hits", inclusive=False)
        assert sum(sum(row) for row in hits) > 10, "hardly any samples"
    if mode == "lines":
        assert (tmp_path / "exp" / "lines.json").stat().st_size > 1000
    if mode == "metrics":
        names = [m.uniq_name for m in profile.metrics]
        assert "ru_utime" in names and "python_allocated" in names, names
        allocated = profile.values("python_allocated", inclusive=True)
        assert sum(allocated[profile.roots[0].id]) > 1000000
        if module == "test_gc":
            assert any(r.name == "gc:collect" for r in profile.regions)
    if mode == "io":
        moved = profile.values("io_bytes_written", inclusive=False)
        assert any(sum(row) for row in moved), "no I/O was recorded"
        assert any(r.paradigm == "io" and r.name == "write" for r in profile.regions)
