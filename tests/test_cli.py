"""The command line of python -m scorep: what the measured program sees, what passes through,
errors, configuration, the experiment directory, exits by exception and signal."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import PROGRAMS, Trace, otf2_print, program, run, run_scorep, scorep_env


def plain(python, args, cwd):
    return run([python] + list(args), env=scorep_env(), cwd=cwd)


def test_help_lists_options_and_fastest_instrumenter(tmp_path):
    out = run_scorep("python3", ["--help"], cwd=tmp_path)
    assert out.returncode == 0 and out.stderr == ""
    # The original's test checks the capital U.
    assert out.stdout.startswith("Usage: python -m scorep [options] [--] script.py")
    assert "--instrumenter-type" in out.stdout and "--noinstrumenter" in out.stdout
    assert re.search(r"monitoring .*the fastest", out.stdout)
    assert "SCOREP_TOTAL_MEMORY" in out.stdout
    assert not list(tmp_path.iterdir())  # nothing measured, nothing created


@pytest.mark.parametrize("args,message", [
    ([], "scorep: no script given (see python -m scorep --help)\n"),
    (["-v", "--"], "scorep: no script given after --\n"),
])
def test_no_script_exits_1_as_the_original(tmp_path, args, message):
    out = run_scorep("python3", args, cwd=tmp_path)
    assert (out.returncode, out.stdout, out.stderr) == (1, "", message)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("args,message", [
    (["--frobnicate", "x.py"], None),
    (["--instrumenter-type=fast", "x.py"], None),
    (["/nonexistent/x.py"], "scorep: can't open file '/nonexistent/x.py': "
                            "[Errno 2] No such file or directory\n"),
    (["--mpp=shmem", "x.py"], "scorep: unknown --mpp=shmem; valid: mpi, none\n"),
])
def test_usage_errors(tmp_path, args, message):
    out = run_scorep("python3", args, cwd=tmp_path)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("scorep: ")
    if message:
        assert out.stderr == message
    if args and args[0] == "--frobnicate":
        assert "unknown option --frobnicate; valid options:" in out.stderr
        assert "--noinstrumenter" in out.stderr and "--mpp=mpi|none" in out.stderr
    if args and args[0].startswith("--instrumenter-type"):
        assert "valid types: monitoring, eval, cProfile, profile, cTrace, trace, dummy" in out.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("args,message", [
    (["/nonexistent/x.py"], "scorep: can't open file '/nonexistent/x.py': "
                            "[Errno 2] No such file or directory\n"),
    (["-m", "no_such_module_here"], "scorep: No module named no_such_module_here\n"),
    (["-m", "json.no_such_submodule"], "scorep: No module named json.no_such_submodule\n"),
    (["-m", ".relative"], None),
])
def test_a_missing_program_exits_as_python_does(tmp_path, args, message):
    """The exit status python itself gives (2 for a script it cannot open, 1 for a module it
    cannot find); job scripts test for it."""
    plain = run(["python3"] + args, cwd=tmp_path)
    out = run_scorep("python3", args, cwd=tmp_path)
    assert out.returncode == plain.returncode != 0
    assert out.stdout == ""
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("scorep: ")
    if message:
        assert out.stderr == message
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("variable,value,expected", [
    ("SCOREP_TOTAL_MEMORY", "lots", "scorep: SCOREP_TOTAL_MEMORY='lots' is not a memory size"),
    ("SCOREP_TOTAL_MEMORY", "10k", "scorep: SCOREP_TOTAL_MEMORY='10k' is too small"),
    ("SCOREP_ENABLE_TRACING", "maybe", "scorep: SCOREP_ENABLE_TRACING='maybe' is not a boolean"),
    ("SCOREP_TIMER", "sundial", "scorep: SCOREP_TIMER='sundial' is not a timer (use tsc or "
                                "clock_gettime)"),
    ("SCOREP_PROFILING_MAX_CALLPATH_DEPTH", "-3", "scorep: SCOREP_PROFILING_MAX_CALLPATH_DEPTH="),
    # Values that used to wrap around in the core's integers.
    ("SCOREP_PROFILING_MAX_CALLPATH_DEPTH", "4294967296",
     "scorep: SCOREP_PROFILING_MAX_CALLPATH_DEPTH='4294967296' is too large: at most 65535"),
    ("SCOREP_TOTAL_MEMORY", "18446744073709551617",
     "scorep: SCOREP_TOTAL_MEMORY='18446744073709551617' is too large: at most 1024T"),
    ("SCOREP_MPI_FINALIZE_TIMEOUT", "99999999999999999999",
     "scorep: SCOREP_MPI_FINALIZE_TIMEOUT='99999999999999999999' is too large"),
    ("SCOREP_PROFILING_WRITE_SLICE", "2T",
     "scorep: SCOREP_PROFILING_WRITE_SLICE='2T' is too large: at most 1T"),
    ("SCOREP_PROFILING_WRITE_SLICE", "-1", "scorep: SCOREP_PROFILING_WRITE_SLICE='-1' is not a "
                                           "size"),
    # Outputs stay inside the experiment directory.
    ("SCOREP_PROFILING_BASE_NAME", "../../x",
     "scorep: SCOREP_PROFILING_BASE_NAME='../../x' is not a plain file name"),
    ("SCOREP_PROFILING_BASE_NAME", "a/b", "scorep: SCOREP_PROFILING_BASE_NAME='a/b' is not a "
                                          "plain file name"),
    # Moving these aside would move the user's own working directory.
    ("SCOREP_EXPERIMENT_DIRECTORY", ".", "scorep: SCOREP_EXPERIMENT_DIRECTORY='.' is the working "
                                         "directory or contains it"),
    ("SCOREP_EXPERIMENT_DIRECTORY", "..", "scorep: SCOREP_EXPERIMENT_DIRECTORY='..' is the "
                                          "working directory or contains it"),
])
def test_invalid_configuration(tmp_path, variable, value, expected):
    work = tmp_path / "work"
    work.mkdir()
    out = run_scorep("python3", [program("calls.py")], cwd=work, **{variable: value})
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr.startswith(expected) and out.stderr.count("\n") == 1
    assert [p.name for p in tmp_path.iterdir()] == ["work"] and not list(work.iterdir())


def test_paths_that_are_not_utf8_are_refused_in_one_line(tmp_path):
    """os.environ and os.getcwd() carry such bytes as surrogates: one line, no traceback."""
    bad = os.fsdecode(bytes(tmp_path) + b"/exp\xff")
    out = run_scorep("python3", [program("calls.py")], cwd=tmp_path,
                     SCOREP_EXPERIMENT_DIRECTORY=bad)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("scorep: SCOREP_EXPERIMENT_DIRECTORY=") and \
        out.stderr.endswith("is not valid UTF-8\n") and out.stderr.count("\n") == 1
    # The default experiment directory goes into the working directory: refused before
    # anything is created there.
    work = os.fsdecode(bytes(tmp_path) + b"/d\xfe")
    os.mkdir(work)
    out = run_scorep("python3", [program("calls.py")], cwd=work)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("scorep: the experiment directory ") and \
        "is not valid UTF-8" in out.stderr and out.stderr.count("\n") == 1
    assert not os.listdir(work)


def test_api_text_that_is_not_unicode_is_not_recorded(python, tmp_path):
    """Lone surrogates in region names and parameters: warned once, never raised into the
    program; everything else is recorded as usual."""
    script = tmp_path / "surrogates.py"
    script.write_text(
        "import scorep.user as u\n"
        "u.region_begin('\\udcff'); u.region_end('\\udcff')\n"
        "u.parameter_string('s', '\\udcff'); u.parameter_string('\\udcff', 'x')\n"
        "with u.region('fine'):\n"
        "    u.parameter_int('n', 3)\n"
        "print('program continues')\n")
    out = run_scorep(python, [script], tmp_path / "exp", SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0 and out.stdout == "program continues\n"
    assert out.stderr.splitlines() == [
        "scorep: region name '\\udcff' is not valid Unicode text (it holds lone surrogates); "
        "not recorded",
        "scorep: parameter value '\\udcff' is not valid Unicode text (it holds lone "
        "surrogates); not recorded",
        "scorep: parameter name '\\udcff' is not valid Unicode text (it holds lone "
        "surrogates); not recorded"]
    trace = Trace(tmp_path / "exp")
    assert trace.enters("user:fine") == 1 and trace.leaves("user:fine") == 1
    assert not trace.of("Enter", "error_region")
    assert not any("\ufffd" in name or "\udcff" in name for name in trace.regions)


def test_script_sees_what_plain_python_gives(python, tmp_path):
    (tmp_path / "sub").mkdir()
    script = tmp_path / "sub" / "probe.py"
    script.write_text((PROGRAMS / "probe.py").read_text())
    expected = plain(python, ["sub/probe.py", "a", "-v", "--x"], tmp_path)
    measured = run_scorep(python, ["sub/probe.py", "a", "-v", "--x"], tmp_path / "exp",
                          cwd=tmp_path)
    assert measured.returncode == expected.returncode == 0
    assert measured.stdout == expected.stdout
    assert "main is me True" in measured.stdout
    assert measured.stderr == ""


def test_double_dash_ends_options(python, tmp_path):
    script = tmp_path / "-odd.py"
    script.write_text("import sys\nprint(sys.argv)\n")
    out = run_scorep(python, ["--verbose", "--", "-odd.py", "--help"], tmp_path / "exp",
                     cwd=tmp_path)
    assert out.returncode == 0
    assert out.stdout == "['-odd.py', '--help']\n"


def test_module_and_code_modes_match_python(python, tmp_path):
    (tmp_path / "probe.py").write_text((PROGRAMS / "probe.py").read_text())
    expected = plain(python, ["-m", "probe", "x"], tmp_path)
    measured = run_scorep(python, ["-m", "probe", "x"], tmp_path / "exp1", cwd=tmp_path)
    assert measured.stdout == expected.stdout and measured.returncode == 0, measured.stderr
    code = "import sys; print(sys.argv, repr(sys.path[0]), __name__, sorted(globals()))"
    expected = plain(python, ["-c", code, "y"], tmp_path)
    measured = run_scorep(python, ["-c", code, "y"], tmp_path / "exp2", cwd=tmp_path)
    assert measured.stdout == expected.stdout and measured.returncode == 0, measured.stderr


def test_exception_traceback_and_status_pass_through(python, tmp_path):
    for script in ("raises.py", "syntax_error.py"):
        expected = plain(python, [program(script)], tmp_path)
        measured = run_scorep(python, [program(script)], tmp_path / ("exp-" + script),
                              cwd=tmp_path)
        assert measured.returncode == expected.returncode == 1
        assert measured.stdout == expected.stdout
        assert measured.stderr == expected.stderr
    assert "RuntimeError: boom" in measured.stderr or "SyntaxError" in measured.stderr


def test_exit_status_and_output(python, tmp_path):
    out = run_scorep(python, [program("calls.py"), "3"], tmp_path / "exp", cwd=tmp_path,
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 3
    assert out.stdout == "argv ['3']\n"
    assert out.stderr == ""


def test_pickle_and_multiprocessing_of_main(python, tmp_path):
    for method in ("fork", "spawn"):
        exp = tmp_path / ("exp-" + method)
        out = run_scorep(python, [program("picklable.py"), method], exp, cwd=tmp_path,
                         SCOREP_ENABLE_TRACING="true")
        assert out.returncode == 0, out.stderr
        assert out.stdout == "True 3 16\n[0, 1, 4, 9, 16]\n"
        trace = Trace(exp)  # the workers are processes of their own in it
        trace.check_nesting()
        assert trace.enters("__main__.Point:__init__") == 1
        assert len(trace.location_groups) == 3


def test_instrumenter_file_runs_before_the_script(python, tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep(python, ["--noinstrumenter", "--instrumenter-file=" + program("external.py"),
                              program("uses_helper.py")], exp, cwd=tmp_path,
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0 and out.stdout == "42\n", out.stderr
    trace = Trace(exp)
    assert trace.enters("user:wrapped") == 1
    assert trace.enters("helper:twice") == 0  # --noinstrumenter


def test_score_p_flags_are_accepted(tmp_path):
    out = run_scorep("python3", ["--mpp=mpi", "--thread=pthread", "--io=posix",
                                 "--nocompiler", "--compiler", "--user", "--keep-files",
                                 program("calls.py")], tmp_path / "exp", cwd=tmp_path)
    assert out.returncode == 0 and out.stderr == "" and out.stdout == "argv []\n"


def test_io_runtime_posix_sets_scorep_io_posix(tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep("python3", ["--io=runtime:posix", "-c",
                                 "import os; print(os.environ['SCOREP_IO_POSIX'])"],
                     exp, cwd=tmp_path)
    # As the original bindings: silently (their test_io wants an empty stderr).
    assert out.returncode == 0 and out.stdout == "true\n" and out.stderr == ""
    assert "SCOREP_IO_POSIX=true" in (exp / "scorep.cfg").read_text().splitlines()
    # Set by the user, the variable is taken silently and recorded.
    out = run_scorep("python3", [program("calls.py")], exp, cwd=tmp_path, SCOREP_IO_POSIX="yes")
    assert out.returncode == 0 and out.stderr == ""
    assert "SCOREP_IO_POSIX=true" in (exp / "scorep.cfg").read_text().splitlines()


def test_unsupported_score_p_variables_get_one_warning_line_each(tmp_path):
    out = run_scorep("python3", [program("calls.py")], tmp_path / "exp", cwd=tmp_path,
                     SCOREP_PROFILING_FORMAT="tau_snapshot", SCOREP_SELECTIVE_CONFIG_FILE="sel.cfg",
                     SCOREP_METRIC_PLUGINS="Metricq", SCOREP_ENABLE_TRACNG="true",
                     # nothing asked: a feature off, Score-P's default, a tuning knob
                     SCOREP_TRACING_USE_SION="false", SCOREP_METRIC_RUSAGE="",
                     SCOREP_PAGE_SIZE="8K", SCOREP_TOPOLOGY_PLATFORM="true")
    assert out.returncode == 0 and out.stdout == "argv []\n"
    assert out.stderr.splitlines() == [
        "scorep: SCOREP_ENABLE_TRACNG='true' is not supported by this tool and has no effect",
        "scorep: SCOREP_METRIC_PLUGINS='Metricq' is not supported by this tool and has no "
        "effect; the metric sources are SCOREP_METRIC_RUSAGE, SCOREP_METRIC_PERF and "
        "SCOREP_METRIC_PAPI (metric plugins are not supported)",
        "scorep: SCOREP_PROFILING_FORMAT='tau_snapshot' is not supported by this tool and has "
        "no effect; the profile is always CUBE4 (profile.cubex)",
        "scorep: SCOREP_SELECTIVE_CONFIG_FILE='sel.cfg' is not supported by this tool and has "
        "no effect; use scorep.user.enable_recording()/disable_recording() or a filter file "
        "(SCOREP_FILTERING_FILE)"]
    # A scorep.cfg Score-P wrote, sourced as its manual suggests: only what it asks for and
    # this tool does not do (PAPI counters) is said; its MPI groups are honoured.
    cfg = {}
    with open(os.path.join(os.path.dirname(__file__), "data", "cube-samples",
                           "kripke.p8.d2.g32.r1", "scorep.cfg")) as f:
        for line in f:
            name, _sep, value = line.strip().partition("=")
            cfg[name] = value.replace("'", "")
    cfg.update(SCOREP_EXPERIMENT_DIRECTORY=str(tmp_path / "exp2"), SCOREP_MACHINE_NAME="m")
    out = run_scorep("python3", [program("calls.py")], cwd=tmp_path, **cfg)
    assert out.returncode == 0
    lines = out.stderr.splitlines()
    # The PAPI counters it asks for are recorded where they can be: here (a virtual
    # machine) each is one line saying why not, and the run goes on; its MPI groups are
    # honoured without a word.
    papi = [line for line in lines if line.startswith("scorep: SCOREP_METRIC_PAPI: ")]
    assert len(papi) == 5 and all("' is not recorded: " in line for line in papi), lines
    assert [line for line in lines if line not in papi] == [], lines
    # Under a launcher rank 0 says it for the job, the other ranks keep quiet.
    for rank, lines in (("0", 1), ("1", 0)):
        out = run_scorep("python3", ["--mpp=none", "--io=runtime:posix", program("calls.py")],
                         tmp_path / "exp3", cwd=tmp_path, OMPI_COMM_WORLD_RANK=rank,
                         OMPI_COMM_WORLD_SIZE="2", SCOREP_METRIC_PAPI="PAPI_TOT_INS")
        assert out.returncode == 0 and len(out.stderr.splitlines()) == lines, out.stderr


def test_noinstrumenter_midstack_enable_is_balanced(python, tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep(python, ["--noinstrumenter", program("midstack.py")], exp, cwd=tmp_path,
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0 and out.stdout == "midstack done\n", out.stderr
    trace = Trace(exp)
    trace.check_nesting()
    # Registered inside starts_recording: its leaf() and the two in outer() after it
    # (minus the one under disable()) and the one in stops_recording().
    assert trace.enters("__main__:leaf") == 4
    assert trace.enters("__main__:outer") == 0
    assert trace.enters("user_instrumenter:section") == 1


def test_force_finalize(python, tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep(python, [program("finalize_early.py")], exp, cwd=tmp_path,
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0 and out.stdout == "before\nafter\n", out.stderr
    trace = Trace(exp)
    trace.check_nesting()
    assert trace.enters("__main__:before") == 1
    assert trace.enters("__main__:after") == 0


def test_plain_python_api_is_a_silent_noop(python, tmp_path):
    for script in ("user_api.py", "midstack.py", "finalize_early.py"):
        out = plain(python, [program(script)], tmp_path)
        assert out.returncode == 0 and out.stderr == "", out.stderr
    assert not list(tmp_path.iterdir())


def test_experiment_directory_default_name_cfg_and_manifest(tmp_path):
    out = run_scorep("python3", [program("calls.py")], None, cwd=tmp_path)
    assert out.returncode == 0 and out.stderr == ""
    dirs = list(tmp_path.iterdir())
    assert len(dirs) == 1 and re.fullmatch(r"scorep-\d{8}_\d{4}_\d+", dirs[0].name)
    cfg = (dirs[0] / "scorep.cfg").read_text().splitlines()
    assert "SCOREP_ENABLE_PROFILING=true" in cfg
    assert "SCOREP_ENABLE_TRACING=false" in cfg
    assert "SCOREP_TOTAL_MEMORY=16384000" in cfg
    assert "SCOREP_OVERWRITE_EXPERIMENT_DIRECTORY=true" in cfg
    assert any(re.fullmatch(r"SCOREP_TIMER=(tsc|clock_gettime)", line) for line in cfg)
    manifest = (dirs[0] / "MANIFEST.md").read_text()
    assert "`scorep.cfg`" in manifest and "`profile.cubex`" in manifest
    assert "traces.otf2" not in manifest  # tracing is off by default


def test_existing_experiment_directory_is_moved_aside(tmp_path):
    exp = tmp_path / "exp"
    exp.mkdir()
    (exp / "old-result.txt").write_text("keep me")
    out = run_scorep("python3", [program("calls.py")], exp, cwd=tmp_path,
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0 and out.stderr == ""
    moved = [p for p in tmp_path.iterdir() if p.name.startswith("exp-")]
    assert len(moved) == 1 and (moved[0] / "old-result.txt").read_text() == "keep me"
    assert (exp / "traces.otf2").exists() and not (exp / "old-result.txt").exists()
    # An empty directory is simply used.
    empty = tmp_path / "empty"
    empty.mkdir()
    out = run_scorep("python3", [program("calls.py")], empty, cwd=tmp_path)
    assert out.returncode == 0 and (empty / "scorep.cfg").exists()
    assert len([p for p in tmp_path.iterdir() if p.name.startswith("empty")]) == 1


def test_move_aside_renames_with_the_modification_time_and_never_deletes(tmp_path):
    from scorep._files import move_aside
    assert move_aside(str(tmp_path / "absent")) is None
    made = []
    for content in ("first", "second", "third"):
        path = tmp_path / "initial_scorep.filter"
        path.write_text(content)
        os.utime(path, (1700000000, 1700000000))
        made.append(move_aside(str(path)))
        assert not path.exists()
    stamp = time.strftime("%Y%m%d_%H%M%S", time.localtime(1700000000))
    base = str(tmp_path / "initial_scorep.filter-") + stamp
    assert made == [base, base + "-2", base + "-3"]
    assert [open(p).read() for p in made] == ["first", "second", "third"]
    # A symbolic link is moved, not what it points to.
    target = tmp_path / "target"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target)
    moved = move_aside(str(link))
    assert os.path.islink(moved) and target.is_dir() and not os.path.lexists(link)


def test_existing_experiment_directory_without_overwrite_is_an_error(tmp_path):
    exp = tmp_path / "exp"
    exp.mkdir()
    (exp / "old").write_text("x")
    out = run_scorep("python3", [program("calls.py")], exp, cwd=tmp_path,
                     SCOREP_OVERWRITE_EXPERIMENT_DIRECTORY="false")
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr == ("scorep: experiment directory %s exists and "
                          "SCOREP_OVERWRITE_EXPERIMENT_DIRECTORY is false\n" % exp)
    assert sorted(p.name for p in exp.iterdir()) == ["old"]


def test_verbose_reports_on_stderr_only(tmp_path):
    out = run_scorep("python3", ["-v", program("calls.py")], tmp_path / "exp", cwd=tmp_path)
    assert out.returncode == 0 and out.stdout == "argv []\n"
    lines = out.stderr.splitlines()
    assert lines and all(line.startswith("scorep: ") for line in lines)
    assert any("results are in %s" % (tmp_path / "exp") in line for line in lines)


def test_memory_budget_flushes_are_marked_and_reported(python, tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep(python, [program("many_calls.py")], exp, cwd=tmp_path,
                     SCOREP_ENABLE_TRACING="true", SCOREP_TOTAL_MEMORY="1M")
    assert out.returncode == 0 and out.stdout == "done\n"
    assert re.fullmatch(r"scorep: the trace buffers were flushed to disk \d+ time\(s\) during "
                        r"the run \(SCOREP_TOTAL_MEMORY=1048576 bytes was used up\); .*\n",
                        out.stderr)
    trace = Trace(exp)
    trace.check_nesting()
    assert trace.enters("__main__:tiny") == 200000  # nothing dropped
    flushes = trace.of("BufferFlush")
    assert flushes and all(f.attrs["stop_time"] >= f.time for f in flushes)


def _run_until_ready(python, tmp_path, exp):
    env = scorep_env(exp, SCOREP_ENABLE_TRACING="true")
    proc = subprocess.Popen([python, "-m", "scorep", program("signals.py")], env=env,
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline() == "ready\n"
    time.sleep(0.2)
    return proc


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP,
                                    signal.SIGQUIT])
def test_signals_leave_a_readable_experiment(python, tmp_path, signum):
    exp = tmp_path / "exp"
    proc = _run_until_ready(python, tmp_path, exp)
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == -signum  # the process still ends by the signal
    if signum == signal.SIGINT:
        assert "KeyboardInterrupt" in stderr
    else:
        assert stderr == ""
    trace = Trace(exp)
    trace.check_nesting()
    assert trace.enters("__main__:spin") > 0
    end, = trace.of("ProgramEnd")
    assert end.attrs["exit_status"] == 128 + signum
    otf2_print(str(exp / "traces.otf2"))
    assert "traces.otf2" in (exp / "MANIFEST.md").read_text()


def test_ctrl_c_waits_for_threads_and_atexit_as_python_does(python, tmp_path):
    """Plain python prints the KeyboardInterrupt, joins the non-daemon threads, runs the
    atexit handlers, then ends by SIGINT; the thread's output and files appear."""
    script = tmp_path / "ctrl_c.py"
    script.write_text(
        "import atexit, os, signal, threading, time\n"
        "def worker():\n"
        "    time.sleep(0.5)\n"
        "    print('worker finished', flush=True)\n"
        "    open('worker.done', 'w').write('done')\n"
        "atexit.register(lambda: print('program atexit', flush=True))\n"
        "threading.Thread(target=worker, name='Worker').start()\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "time.sleep(10)\n")
    expected = plain(python, [script], tmp_path)
    assert expected.returncode == -signal.SIGINT
    assert expected.stdout == "worker finished\nprogram atexit\n"
    (tmp_path / "worker.done").unlink()
    out = run_scorep(python, [script], tmp_path / "exp", cwd=tmp_path,
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == -signal.SIGINT
    assert out.stdout == expected.stdout
    assert out.stderr.endswith("KeyboardInterrupt\n")
    assert (tmp_path / "worker.done").read_text() == "done"
    trace = Trace(tmp_path / "exp")
    trace.check_nesting()
    assert trace.enters("__main__:worker", location="Worker") == 1
    end, = trace.of("ProgramEnd")
    assert end.attrs["exit_status"] == 128 + signal.SIGINT


def test_sigterm_during_the_final_write_still_completes_it(python, tmp_path):
    """The signal is held until the results (MANIFEST.md last) are written, then the process
    ends by it. Wherever it lands, the experiment is complete."""
    exp = tmp_path / "exp"
    script = tmp_path / "long_write.py"
    script.write_text("def f():\n    pass\n"
                      "for _ in range(300000):\n    f()\n"
                      "print('ending', flush=True)\n")
    env = scorep_env(exp, SCOREP_ENABLE_TRACING="true", SCOREP_TOTAL_MEMORY="64M")
    proc = subprocess.Popen([python, "-m", "scorep", str(script)], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ending\n"
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode in (0, -signal.SIGTERM), stderr
    manifest = (exp / "MANIFEST.md").read_text()
    assert "profile.cubex" in manifest and "traces.otf2" in manifest
    assert Trace(exp).enters("__main__:f") == 300000


def test_sigkill_leaves_a_directory_that_says_what_was_lost(tmp_path):
    """SIGKILL ends the process before anything can be written; the report says so and
    names the raw spill files left behind instead of "holds nothing"."""
    exp = tmp_path / "exp"
    script = tmp_path / "killed.py"
    script.write_text("import os, signal\n"
                      "def f():\n    pass\n"
                      "for _ in range(200000):\n    f()\n"
                      "os.kill(os.getpid(), signal.SIGKILL)\n")
    out = run_scorep("python3", [script], exp, cwd=tmp_path, SCOREP_ENABLE_TRACING="true",
                     SCOREP_TOTAL_MEMORY="1M")
    assert out.returncode == -signal.SIGKILL
    spills = [p for p in exp.iterdir() if p.name.startswith(".scorep-spill-")]
    assert spills and sum(p.stat().st_size for p in spills) > 1000000
    report = run(["python3", "-m", "scorep.report", exp], env=scorep_env())
    assert report.returncode == 1 and report.stdout == ""
    assert report.stderr.count("\n") == 1
    assert "the measurement did not finish" in report.stderr
    assert "1 spill file(s) with %d bytes" % spills[0].stat().st_size in report.stderr


def test_file_size_limit_while_writing_the_trace(python, tmp_path):
    """A full disk or `ulimit -f` used to crash the process inside OTF2 (SIGSEGV) and lose
    everything. Now: the program's exit status, one line saying the trace could not be
    written, no half-written trace files, and the (small) profile still complete."""
    import resource

    exp = tmp_path / "exp"
    script = tmp_path / "many_calls.py"
    script.write_text("def f():\n    pass\nfor _ in range(200000):\n    f()\n"
                      "print('program done')\n")

    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY))

    env = scorep_env(exp, SCOREP_ENABLE_TRACING="true", SCOREP_TOTAL_MEMORY="1M")
    out = subprocess.run([python, "-m", "scorep", str(script)], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120,
                         preexec_fn=limit_file_size)
    assert out.returncode == 0 and out.stdout == "program done\n", out.stderr
    failures = [line for line in out.stderr.splitlines() if "could not be written:" in line]
    assert len(failures) == 1 and "File is too large" in failures[0], out.stderr
    assert sorted(p.name for p in exp.iterdir()) == ["MANIFEST.md", "profile.cubex",
                                                     "scorep.cfg"]
    assert "the trace could not be written" in (exp / "MANIFEST.md").read_text()
    from scorep import cube
    profile = cube.read(str(exp / "profile.cubex"))
    visits = profile.values(profile.metric("visits"), inclusive=False)
    assert sum(sum(visits[c.id]) for c in profile.cnodes
               if c.region.name == "__main__:f" and not c.parameters) == 200000


def test_running_experiment_directory_is_never_moved_or_written_by_another_run(tmp_path):
    """Run B with the same SCOREP_EXPERIMENT_DIRECTORY used to move run A's directory aside
    while A ran; A's finalize then failed and rewrote B's files."""
    exp = tmp_path / "exp"
    first = subprocess.Popen([sys.executable, "-m", "scorep", program("signals.py")],
                             env=scorep_env(exp, SCOREP_ENABLE_TRACING="true"), cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert first.stdout.readline() == "ready\n"
    second = run_scorep(sys.executable, [program("calls.py")], exp, cwd=tmp_path)
    assert second.returncode == 1 and second.stdout == ""
    assert second.stderr == ("scorep: experiment directory %s is in use by another running "
                             "measurement; set SCOREP_EXPERIMENT_DIRECTORY to another "
                             "directory\n" % exp)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exp"]
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=60)
    trace = Trace(exp)
    assert trace.enters("__main__:spin") > 0 and trace.enters("__main__:leaf") == 0
    # Once A has ended, the directory is an old experiment like any other: moved aside.
    third = run_scorep(sys.executable, [program("calls.py")], exp, cwd=tmp_path)
    assert third.returncode == 0, third.stderr
    assert len(list(tmp_path.iterdir())) == 2
