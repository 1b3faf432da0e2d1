"""What programs nobody here wrote do and the measurement must not disturb, found by running
CPython's own regression tests under measurement (test_sys, test_signal, test_cprofile,
test_frame, test_subprocess): bytes that are not UTF-8 in arguments, paths and the working
directory; the signal dispositions a program reads and restores; cProfile run by the program
itself; subprocess's preexec_fn."""

import os
import signal
import subprocess
import sys

from conftest import Trace, program, run, run_scorep, scorep_env, python_version
from scorep import cube


def test_arguments_and_script_paths_that_are_not_utf8_are_measured(python, tmp_path):
    """An argument and a script directory with bytes that are not UTF-8 reach the program as
    plain python gives them (surrogates); the experiment names the file with U+FFFD."""
    folder = os.fsdecode(bytes(tmp_path) + b"/d\xff")
    os.mkdir(folder)
    script = os.path.join(folder, "args.py")
    with open(script, "w") as f:
        f.write("import sys\n"
                "def work(a):\n"
                "    return ascii(a)\n"
                "print(work(sys.argv[1]))\n")
    argument = os.fsdecode(b"x\xfe")
    plain = run([python, script, argument])
    exp = tmp_path / "exp"
    out = run_scorep(python, [script, argument], exp)
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout == plain.stdout == "'x\\udcfe'\n"
    p = cube.read(str(exp / "profile.cubex"))
    work, = [r for r in p.regions if r.name == "__main__:work"]
    # work's own visits (inclusive ones count its call of ascii too where C calls are regions)
    assert p.value("visits", next(c.id for c in p.cnodes if c.region is work),
                   p.locations[0].id, inclusive=False) == 1


def test_child_in_the_c_locale_under_a_utf8_named_directory_is_measured_silently(tmp_path):
    """test_sys runs children with LC_ALL=C in a directory named with UTF-8 bytes: Python
    decodes the path with surrogateescape there. The child is measured as any other and
    writes nothing of the tool's own into the output the test compares."""
    folder = os.fsdecode(bytes(tmp_path) + "/wörk".encode())
    os.mkdir(folder)
    (tmp_path / "parent.py").write_text(
        "import os, subprocess, sys\n"
        "env = dict(os.environ, LC_ALL='C', PYTHONCOERCECLOCALE='0', PYTHONUTF8='0')\n"
        "out = subprocess.run([sys.executable, '-c', 'import os; print(ascii(os.getcwd()[-5:]))'],\n"
        "                     env=env, cwd=%r, capture_output=True, text=True)\n"
        "print(out.stdout + out.stderr, end='')\n" % folder)
    exp = tmp_path / "exp"
    out = run_scorep(sys.executable, [tmp_path / "parent.py"], exp)
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout == "'w\\udcc3\\udcb6rk'\n"  # the child's own view, nothing else
    assert "process 1 (pid" in (exp / "MANIFEST.md").read_text()


def test_signal_dispositions_look_as_without_measurement(python, tmp_path):
    """getsignal says SIG_DFL for the signals the measurement handles, signal() returns it
    as the previous handler, and restoring it keeps the results written before the process
    ends by the signal, as plain python's default action ends it."""
    script = tmp_path / "sig.py"
    script.write_text(
        "import os, signal\n"
        "print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL,\n"
        "      signal.getsignal(signal.SIGHUP) is signal.SIG_DFL)\n"
        "def mine(signum, frame):\n"
        "    print('mine', signum)\n"
        "previous = signal.signal(signal.SIGHUP, mine)\n"
        "print(previous is signal.SIG_DFL, signal.getsignal(signal.SIGHUP) is mine)\n"
        "os.kill(os.getpid(), signal.SIGHUP)\n"
        "signal.signal(signal.SIGHUP, previous)\n"
        "print(signal.getsignal(signal.SIGHUP) is signal.SIG_DFL, flush=True)\n"
        "import _thread, sys\n"
        "if sys.version_info >= (3, 10):  # SIG_DFL: simulating the signal does nothing\n"
        "    _thread.interrupt_main(signal.SIGHUP)\n"
        "    _thread.interrupt_main(signal.SIGTERM)\n"
        "def work():\n"
        "    return 1\n"
        "work()\n"
        "os.kill(os.getpid(), signal.SIGHUP)\n"
        "print('not reached')\n")
    plain = run([python, script])
    exp = tmp_path / "exp"
    out = run_scorep(python, [script], exp, SCOREP_ENABLE_TRACING="true")
    assert plain.returncode == out.returncode == -signal.SIGHUP
    assert out.stdout == plain.stdout == "True True\nTrue True\nmine 1\nTrue\n"
    assert out.stderr == ""
    trace = Trace(exp)
    assert trace.enters("__main__:work") == 1
    end, = trace.of("ProgramEnd")
    assert end.attrs["exit_status"] == 128 + signal.SIGHUP


def test_cprofile_inside_a_measured_program(python, tmp_path):
    """A program that profiles itself with cProfile: on 3.12+ both are sys.monitoring tools,
    and cProfile needs the profiler's id."""
    script = tmp_path / "selfprofile.py"
    script.write_text(
        "import cProfile, pstats, io\n"
        "def work(n):\n"
        "    return sum(i * i for i in range(n))\n"
        "profiler = cProfile.Profile()\n"
        "profiler.enable()\n"
        "work(1000)\n"
        "profiler.disable()\n"
        "stats = pstats.Stats(profiler, stream=io.StringIO())\n"
        "print([k[2] for k in stats.stats if k[2] == 'work'])\n")
    exp = tmp_path / "exp"
    out = run_scorep(python, [script], exp)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "['work']\n" and out.stderr == ""
    p = cube.read(str(exp / "profile.cubex"))
    assert "__main__:work" in [r.name for r in p.regions]


def test_preexec_fn_children_are_no_lost_processes(python, tmp_path):
    """subprocess with preexec_fn forks in C and runs the at-fork handlers in the child
    before its exec: that child is no process of the program's own (nothing reported lost),
    and a Python program it execs is followed as usual."""
    script = tmp_path / "pre.py"
    script.write_text(
        "import os, subprocess, sys\n"
        "subprocess.run(['true'], preexec_fn=lambda: None)\n"
        "subprocess.run([sys.executable, '-c', 'print(1)'], preexec_fn=os.getpid)\n")
    exp = tmp_path / "exp"
    out = run_scorep(python, [script], exp)
    assert out.returncode == 0 and out.stdout == "1\n"
    assert out.stderr == ""
    manifest = (exp / "MANIFEST.md").read_text()
    assert "process 1 (pid" in manifest and "python -c" in manifest
    assert "process 2 (pid" not in manifest and "lost" not in manifest
