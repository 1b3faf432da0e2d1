"""Child processes in one experiment (issue 13): multiprocessing with each start method,
concurrent.futures, subprocess and os.system, os.fork, children that end by SIGTERM,
os._exit, an exception or SIGKILL, nested pools, a child that outlives the program, and
--no-children. Real processes; the results are read back with the OTF2 library's reader
(python3-otf2), the CUBE reader and scorep-score."""

import collections
import os
import re
import subprocess
import sys
import time

import pytest

from conftest import (PROGRAMS, SRC, Trace, assert_metric_instances_per_group, otf2_print, run,
                      run_scorep)

from scorep import cube

CHILDREN = PROGRAMS / "children"


def child_program(name):
    return str(CHILDREN / name)


class Groups:
    """The location groups of a trace: name, creating group and properties."""

    def __init__(self, experiment_dir):
        import otf2
        with otf2.reader.open(str(experiment_dir / "traces.otf2")) as reader:
            defs = reader.definitions
            self.names = [g.name for g in defs.location_groups]
            self.creator = {g.name: (g.creating_location_group.name
                                     if g.creating_location_group is not None else None)
                            for g in defs.location_groups}
            self.properties = collections.defaultdict(dict)
            for p in defs.location_group_properties:
                self.properties[p.location_group.name][p.name] = p.value

    def children(self):
        return [n for n in self.names if self.creator[n] is not None]


def enters_per_group(trace, region):
    counts = collections.Counter()
    for e in trace.of("Enter", region):
        counts[e.group] += 1
    return counts


def visits_per_group(profile, region):
    """A region's visits summed per location group of a CUBE profile."""
    visits = profile.values("visits", inclusive=False)
    counts = collections.Counter()
    for cnode in profile.cnodes:
        if cnode.region.name != region:
            continue
        for location in profile.locations:
            if visits[cnode.id][location.id]:
                counts[location.group.name] += visits[cnode.id][location.id]
    return counts


def no_group_files_left(experiment_dir):
    assert not (experiment_dir / ".scorep-processes").exists()


PROCESS_NAME = re.compile(r"^Process (\d+) \(pid (\d+), (.+)\)$")


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_pool_with_each_start_method(python, tmp_path, method):
    """Every task's call ran in some worker; the calls of all processes add up to the tasks,
    each worker is a process of its own named after multiprocessing's name, started by the
    pool's method, created by the program's process. The pool ends with terminate()."""
    exp = tmp_path / "exp"
    # The pool's threads poll while they wait, and how often depends on the machine's load:
    # a loaded CI machine filled the 16 MB default once (a flush warning on stderr), so the
    # buffers are sized for the worst case seen, to keep stderr's check exact.
    out = run_scorep(python, [child_program("pool_methods.py"), method, "40"], exp,
                     SCOREP_ENABLE_TRACING="true", SCOREP_TOTAL_MEMORY="128M", timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == "%d\n" % sum(x * x for x in range(40))
    assert out.stderr == ""
    otf2_print(str(exp / "traces.otf2"))  # the OTF2 reader has nothing to complain about
    trace = Trace(exp)
    trace.check_nesting()
    groups = Groups(exp)
    root = groups.names[0]
    assert PROCESS_NAME.match(root).group(3) == "main"
    per_group = enters_per_group(trace, "__main__:square")
    assert sum(per_group.values()) == 40
    assert root not in per_group  # the program's process ran no task
    for name in per_group:
        number, pid, label = PROCESS_NAME.match(name).groups()
        assert groups.creator[name] == root
        assert groups.properties[name]["started by"] == method
        assert groups.properties[name]["parent pid"] == PROCESS_NAME.match(root).group(2)
        assert re.match(r"(Fork|Spawn|ForkServer)PoolWorker-\d+$", label), label
    profile = cube.read(str(exp / "profile.cubex"))
    assert sum(visits_per_group(profile, "__main__:square").values()) == 40
    assert [g.name for g in profile.location_groups] == groups.names
    # A child's start-up is not its program: the interpreter's own sitecustomize (Debian's
    # python3 has one) ran before its measurement started, as in the program's process.
    assert not visits_per_group(profile, "sitecustomize:<module>")
    # nor is the tool's own work around forks and a child's start: the workers' programs call
    # no signal function
    assert set(visits_per_group(profile, "signal:pthread_sigmask")) <= {root}
    no_group_files_left(exp)
    # One clock: every child's events lie within the program's own.
    program_events = [e.time for e in trace.events if e.group == root]
    first, last = min(program_events), max(program_events)
    assert all(first <= e.time <= last for e in trace.events)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_process_pool_executor_with_a_task_that_raises(python, tmp_path, method):
    exp = tmp_path / "exp"
    out = run_scorep(python, [child_program("executor.py"), method, "30"], exp,
                     SCOREP_ENABLE_TRACING="true", timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == "%d\nraised: task 7 failed\n" % sum(x ** 3 for x in range(30))
    trace = Trace(exp)
    trace.check_nesting()
    assert sum(enters_per_group(trace, "__main__:cube").values()) == 30
    assert sum(enters_per_group(trace, "__main__:fail").values()) == 1
    assert len(Groups(exp).children()) >= 1
    no_group_files_left(exp)


def test_subprocess_and_os_system_of_python(python, tmp_path):
    """A Python child is measured whatever started it, with its own program as its name;
    a program that is no Python (echo) is left alone."""
    exp = tmp_path / "exp"
    out = run_scorep(python, [child_program("run_child.py")], exp,
                     SCOREP_ENABLE_TRACING="true", timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == ("child run 499500 3\nchild system 499500\nsystem 3\nnot python\n"
                          "child isolated 499500 3 []\n")
    assert out.stderr == ""
    groups = Groups(exp)
    children = groups.children()
    assert len(children) == 2 and len(groups.names) == 3
    for name in children:
        assert PROCESS_NAME.match(name).group(3) == "child.py"
        assert groups.properties[name]["started by"] == "subprocess"
    trace = Trace(exp)
    trace.check_nesting()
    assert sorted(enters_per_group(trace, "__main__:child_work").values()) == [1, 1]
    # Each process ends with its own exit status.
    ends = {e.group: e.attrs["exit_status"] for e in trace.of("ProgramEnd")}
    assert sorted(ends.values()) == [0, 3, 3]
    profile = cube.read(str(exp / "profile.cubex"))
    assert len(profile.location_groups) == 3
    # One call tree: the children's programs hang from the program's root.
    assert [c.region.name for c in profile.roots] == ["run_child.py"]


def test_the_programs_environment_never_changes(python, tmp_path):
    """Issue 29: children inherit the user API's state of the moment they start (subprocess
    and os.system, recording switched off and on again) through an environment of their
    own; the program's os.environ and the C library's environment stay as they were when
    the program began, and what the program put there with os.putenv reaches every child."""
    exp = tmp_path / "exp"
    out = run_scorep(python, [child_program("env_stable.py")], exp,
                     SCOREP_ENABLE_TRACING="true", timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    # os.posix_spawn with os.environ: what os.environ holds (no SET_BY_PUTENV), as plain
    # python does
    assert out.stdout == (
        "child recorded 499500\nputenv kept\nchild off 499500\nputenv kept\n"
        "child off-dict 499500\nputenv dict\nchild off-spawn 499500\n"
        "child off-system 499500\nputenv kept\nchild recorded-system 499500\nputenv kept\n"
        "environ unchanged True True\n")
    assert out.stderr == ""
    groups = Groups(exp)
    assert len(groups.children()) == 6
    trace = Trace(exp)
    trace.check_nesting()
    # The children started while recording was off recorded nothing of their program.
    assert sorted(enters_per_group(trace, "__main__:child_work").values()) == [1, 1]


def test_a_child_sees_no_descriptor_of_the_measurement(python, tmp_path):
    """CPython's test_subprocess (test_pass_fds_redirected, test_preexec): a measured child
    has the descriptors it has without measurement (a member held an flock'ed descriptor
    while it lived), a child that closes every descriptor (daemon code) and works on after
    the program's end is still waited for and adopted (it was reported killed), and a
    preexec_fn's os.putenv reaches a measured child (the child got an environment of its
    own, which dropped it). The program prints the same as without measurement."""
    program = child_program("descriptors.py")
    plain = run([python, program], timeout=120)
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout == ("subprocess sees True\nforked child's own descriptors []\n"
                            "preexec apple 499500 0\ndone\n")
    exp = tmp_path / "exp"
    out = run_scorep(python, [program], exp, SCOREP_ENABLE_TRACING="true", timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == plain.stdout
    assert out.stderr == ""
    groups = Groups(exp)
    names = [PROCESS_NAME.match(n).group(3) for n in groups.children()]
    assert names == ["descriptors.py"] * 4
    assert [groups.properties[n]["started by"] for n in groups.children()] == \
        ["subprocess", "os.fork", "subprocess", "subprocess"]
    trace = Trace(exp)
    trace.check_nesting()
    # Every process's child_work, the daemon's many times.
    calls = enters_per_group(trace, "__main__:child_work")
    assert len(calls) == 4 and sorted(calls.values())[:3] == [1, 1, 1]
    assert sorted(calls.values())[3] > 10
    assert "lost" not in (exp / "MANIFEST.md").read_text()
    no_group_files_left(exp)


def test_fork_both_sides_recorded(python, tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep(python, [child_program("fork_both.py")], exp,
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == "child done\nparent done 0\n"
    trace = Trace(exp)
    trace.check_nesting()
    groups = Groups(exp)
    assert len(groups.names) == 2
    child = groups.names[1]
    assert groups.properties[child]["started by"] == "os.fork"
    per_group = enters_per_group(trace, "__main__:leaf")
    assert per_group == {groups.names[0]: 6000, child: 3000}
    profile = cube.read(str(exp / "profile.cubex"))
    assert visits_per_group(profile, "__main__:leaf") == per_group


def test_forked_child_starts_with_fresh_process_state(python, tmp_path):
    """The children module's state of this process is one object, replaced whole in a
    forked child: what the parent had in flight (an os.system call holding its lock, the
    threads in fork_exec, the environment to restore) is none of the child's."""
    out = run_scorep(python, [child_program("fork_state.py")], tmp_path / "exp")
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == "child True True True\nparent True 1\n"


def test_children_module_keeps_no_state_outside_its_state_object():
    """No `global` in measure/children.py: whatever it keeps lives in _state (inherited
    by forked children, or this process's and reset in the child)."""
    import ast
    tree = ast.parse((SRC / "scorep" / "measure" / "children.py").read_text())
    assert [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Global)] == []


def test_children_that_end_by_kill_os_exit_and_an_exception(python, tmp_path):
    """SIGKILL loses that child's own data only, and MANIFEST.md says which process and
    how much; os._exit and an uncaught exception lose nothing."""
    exp = tmp_path / "exp"
    out = run_scorep(python, [child_program("killed.py")], exp, SCOREP_ENABLE_TRACING="true",
                     SCOREP_TOTAL_MEMORY="1M", timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == "-9 5 1\n"
    assert "RuntimeError: the child fails" in out.stderr
    lost = re.search(r"scorep: process (\d+) \(pid (\d+), Process-1, started by fork\) ended "
                     r"without handing its results over \(killed by SIGKILL or crashed\): its "
                     r"measurement of [\d.]+ s is lost \(with (\d+) bytes of trace records it "
                     r"had flushed to disk\)", out.stderr)
    assert lost, out.stderr
    assert int(lost.group(3)) > 0
    manifest = (exp / "MANIFEST.md").read_text()
    assert lost.group(0)[len("scorep: "):] in manifest
    listed = re.findall(r"^- process (\d+) \(pid \d+, (Process-\d)\): started by fork, from "
                        r"process 0$", manifest, re.M)
    assert [name for _, name in listed] == ["Process-2", "Process-3"]
    otf2_print(str(exp / "traces.otf2"))  # a killed process's number leaves no gap
    groups = Groups(exp)
    names = [PROCESS_NAME.match(n).group(3) for n in groups.names]
    assert names == ["main", "Process-2", "Process-3"]
    trace = Trace(exp)
    trace.check_nesting()
    ends = {PROCESS_NAME.match(e.group).group(3): e.attrs["exit_status"]
            for e in trace.of("ProgramEnd")}
    assert ends == {"main": 0, "Process-2": 5, "Process-3": 1}
    assert sorted(enters_per_group(trace, "__main__:busy").values()) == [1, 1]
    no_group_files_left(exp)


def test_nested_pools(python, tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep(python, [child_program("nested.py"), "fork"], exp,
                     SCOREP_ENABLE_TRACING="true", timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == "[6, 10]\n"
    groups = Groups(exp)
    trace = Trace(exp)
    trace.check_nesting()
    assert sum(enters_per_group(trace, "__main__:inner").values()) == 3 + 4
    assert sum(enters_per_group(trace, "__main__:outer").values()) == 2
    # The inner pools' workers were created by the outer workers.
    outer = {n for n in groups.names if re.search(r", ForkProcess-\d\)$", n)}
    inner = [n for n in groups.names if re.search(r", ForkPoolWorker-\d:\d\)$", n)]
    assert len(outer) == 2 and inner
    assert all(groups.creator[n] in outer for n in inner)
    no_group_files_left(exp)


@pytest.mark.parametrize("switch", [["--no-children"], ["SCOREP_CHILDREN=false"]],
                         ids=["option", "variable"])
def test_children_not_followed(python, tmp_path, switch):
    exp = tmp_path / "exp"
    env = dict(s.split("=", 1) for s in switch if "=" in s)
    args = [s for s in switch if "=" not in s]
    out = run_scorep(python, args + [child_program("run_child.py")], exp,
                     SCOREP_ENABLE_TRACING="true", **env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert Groups(exp).names == ["Process"]
    trace = Trace(exp)
    assert trace.enters("__main__:child_work") == 0


def test_children_inherit_the_filter_and_the_recording_state(python, tmp_path):
    program = tmp_path / "inherit.py"
    program.write_text(
        "import multiprocessing, sys\n"
        "import scorep.user\n"
        "def kept(x):\n    return hidden(x)\n"
        "def hidden(x):\n    return x\n"
        "def unrecorded(x):\n    return x\n"
        "if __name__ == '__main__':\n"
        "    with multiprocessing.get_context(sys.argv[1]).Pool(1) as pool:\n"
        "        pool.map(kept, range(5))\n"
        "    scorep.user.disable_recording()\n"
        "    with multiprocessing.get_context(sys.argv[1]).Pool(1) as pool:\n"
        "        pool.map(unrecorded, range(5))\n")
    filter_file = tmp_path / "filter.txt"
    filter_file.write_text("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE __main__:hidden\n"
                           "SCOREP_REGION_NAMES_END\n")
    for method in ("fork", "spawn"):
        exp = tmp_path / ("exp-" + method)
        out = run_scorep(python, ["--filter=%s" % filter_file, str(program), method], exp,
                         SCOREP_ENABLE_TRACING="true", timeout=180)
        assert out.returncode == 0, out.stderr[-3000:]
        trace = Trace(exp)
        assert trace.enters("__main__:kept") == 5
        assert trace.enters("__main__:hidden") == 0
        assert trace.enters("__main__:unrecorded") == 0
        assert len(Groups(exp).names) == 3


def wait_for_own_experiment(alone):
    """A child that outlived the program writes its own experiment when it ends."""
    deadline = time.time() + 30
    while not (alone / "MANIFEST.md").exists() and time.time() < deadline:
        time.sleep(0.1)
    assert (alone / "MANIFEST.md").exists()


def wait_for_no_group_files(exp):
    deadline = time.time() + 10
    while (exp / ".scorep-processes").exists() and time.time() < deadline:
        time.sleep(0.1)
    no_group_files_left(exp)


def test_a_child_that_outlives_the_program(python, tmp_path):
    """The program waits SCOREP_CHILDREN_TIMEOUT for its children that still work, then
    writes without the one still running, which writes its own experiment into process-N/
    when it ends."""
    program = tmp_path / "outlive.py"
    program.write_text(
        "import subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import time\\n"
        "def lingering():\\n    t = time.process_time()\\n"
        "    while time.process_time() - t < 2.5:\\n        pass\\nlingering()'])\n"
        "print('parent ends')\n")
    exp = tmp_path / "exp"
    out = run_scorep(python, [str(program)], exp, SCOREP_CHILDREN_TIMEOUT="1",
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr[-3000:]
    note = re.search(r"process (\d+) \(pid (\d+), python -c, started by subprocess\) was still "
                     r"running 1 s \(SCOREP_CHILDREN_TIMEOUT\) after the program ended", out.stderr)
    assert note, out.stderr
    assert note.group(0) in (exp / "MANIFEST.md").read_text()
    alone = exp / ("process-%s" % note.group(1))
    wait_for_own_experiment(alone)
    assert Trace(alone).enters("__main__:lingering") == 1
    assert (alone / "scorep.cfg").exists()
    wait_for_no_group_files(exp)


# A child that waits for the program's end, as joblib's (loky's) resource tracker does: it
# reads a pipe until EOF, which comes when the program's process ends and closes its end.
WAITS_FOR_THE_END = """\
import os, subprocess, sys
r, w = os.pipe()
code = ("import os, sys\\n"
        "def tracker(fd):\\n"
        "    n = 0\\n"
        "    while os.read(fd, 4096):\\n"
        "        n += 1\\n"
        "    return n\\n"
        "tracker(int(sys.argv[1]))\\n")
subprocess.Popen([sys.executable, '-c', code, str(r)], pass_fds=[r])
os.close(r)
os.write(w, b"register\\n")
print("parent ends")
"""

IDLE_NOTE = (r"process (\d+) \(pid \d+, python -c, started by %s\) was still running, idle "
             r"\(waiting, not working: a resource tracker, a server, a daemon\), when the "
             r"program ended: not waited for; its results are not in this experiment; it "
             r"writes them into process-(\d+)/ here when it ends")


def timed(function, *args, **kwargs):
    started = time.monotonic()
    result = function(*args, **kwargs)
    return result, time.monotonic() - started


def test_a_child_that_waits_for_the_programs_end_is_not_waited_for(python, tmp_path):
    """Issue 30: a child that ends only after the program (it reads a pipe until the
    program's exit closes it) made the end wait SCOREP_CHILDREN_TIMEOUT (60 s). Idle, it is
    not waited for: one line names it, and its part is written into process-N/ when it
    ends."""
    program = tmp_path / "tracker.py"
    program.write_text(WAITS_FOR_THE_END)
    plain, plain_seconds = timed(run, [python, str(program)])
    exp = tmp_path / "exp"
    out, seconds = timed(run_scorep, python, [str(program)], exp, SCOREP_ENABLE_TRACING="true")
    assert (out.returncode, out.stdout) == (plain.returncode, plain.stdout) == (0, "parent ends\n")
    assert "waiting up to" not in out.stderr
    note = re.search(IDLE_NOTE % "subprocess", out.stderr)
    assert note and note.group(1) == note.group(2), out.stderr
    assert [line for line in out.stderr.splitlines()] == [note.group(0).join(["scorep: ", ""])]
    assert note.group(0) in (exp / "MANIFEST.md").read_text()
    # Not the 60 s of SCOREP_CHILDREN_TIMEOUT (a loose bound: the machine may be busy).
    assert seconds < plain_seconds + 30, (seconds, plain_seconds)
    # Its data is accounted for: its own experiment, once the program's end let it end.
    alone = exp / ("process-%s" % note.group(1))
    wait_for_own_experiment(alone)
    assert Trace(alone).enters("__main__:tracker") == 1
    # The program's experiment holds the program's process alone.
    assert Groups(exp).names == ["Process"]
    wait_for_no_group_files(exp)


def test_a_child_that_works_after_the_program_ended_is_waited_for(python, tmp_path):
    """A child the program did not wait for, still computing at the program's end, ends on
    its own: it is waited for and its part is in the experiment."""
    program = tmp_path / "works_on.py"
    program.write_text(
        "import subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import time\\n"
        "def works():\\n    t = time.process_time()\\n"
        "    while time.process_time() - t < 1.0:\\n        pass\\nworks()'])\n"
        "print('parent ends')\n")
    exp = tmp_path / "exp"
    out = run_scorep(python, [str(program)], exp, SCOREP_ENABLE_TRACING="true")
    assert (out.returncode, out.stdout) == (0, "parent ends\n"), out.stderr[-3000:]
    assert "still running" not in out.stderr and "process-" not in out.stderr, out.stderr
    groups = Groups(exp)
    assert len(groups.names) == 2
    child = groups.children()[0]
    assert PROCESS_NAME.match(child).group(3) == "python -c"
    assert enters_per_group(Trace(exp), "__main__:works") == {child: 1}
    no_group_files_left(exp)


SHARED_MEMORY = """\
import multiprocessing, sys
from multiprocessing import shared_memory
def fill(name, i):
    block = shared_memory.SharedMemory(name=name)
    block.buf[i] = i + 1
    block.close()
if __name__ == "__main__":
    ctx = multiprocessing.get_context(sys.argv[1])
    block = shared_memory.SharedMemory(create=True, size=4)
    lock = ctx.Lock()  # a named semaphore: the resource tracker follows it too
    workers = [ctx.Process(target=fill, args=(block.name, i)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print(list(block.buf))
    block.close()
    block.unlink()
"""


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_multiprocessing_resource_tracker_does_not_hold_up_the_end(python, tmp_path, method):
    """multiprocessing's resource tracker (shared memory, semaphores) lives until the
    program's end: the end does not wait for it, nothing is said about it, and the workers
    are in the experiment."""
    program = tmp_path / "shm.py"
    program.write_text(SHARED_MEMORY)
    plain, plain_seconds = timed(run, [python, str(program), method])
    exp = tmp_path / "exp"
    out, seconds = timed(run_scorep, python, [str(program), method], exp)
    assert (out.returncode, out.stdout, out.stderr) == \
        (plain.returncode, plain.stdout, plain.stderr) == (0, "[1, 2, 3, 4]\n", "")
    assert seconds < plain_seconds + 30, (seconds, plain_seconds)
    profile = cube.read(str(exp / "profile.cubex"))
    assert sum(visits_per_group(profile, "__main__:fill").values()) == 4
    no_group_files_left(exp)


JOBLIB = """\
import math
from joblib import Parallel, delayed
def root(i):
    return math.sqrt(i)
print(round(sum(Parallel(n_jobs=2)(delayed(root)(i) for i in range(100))), 6))
"""

SKLEARN = """\
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
X, y = load_iris(return_X_y=True)
scores = cross_val_score(LogisticRegression(max_iter=1000), X, y, cv=3, n_jobs=2)
print(len(scores))
"""


@pytest.mark.parametrize("module,code,expected", [
    ("joblib", JOBLIB, "661.462947\n"), ("sklearn", SKLEARN, "3\n")], ids=["joblib", "sklearn"])
def test_joblib_resource_tracker_does_not_hold_up_the_end(python, tmp_path, module, code,
                                                          expected):
    """Issue 30: joblib's loky resource tracker (started with python -c) reads a pipe until
    the program's end: the end waited 60 s for it. Now one line names it, its part goes into
    process-N/ once it ends, and loky's workers are in the experiment."""
    probe = run([python, "-c", "import " + module])
    if probe.returncode != 0:
        pytest.skip("%s is not installed for %s (Debian: python3-%s)"
                    % (module, python, "joblib" if module == "joblib" else "sklearn"))
    program = tmp_path / "uses_joblib.py"
    program.write_text(code)
    plain, plain_seconds = timed(run, [python, str(program)], timeout=300)
    exp = tmp_path / "exp"
    out, seconds = timed(run_scorep, python, [str(program)], exp, timeout=300)
    assert (out.returncode, out.stdout) == (plain.returncode, plain.stdout) == (0, expected), \
        out.stderr[-3000:]
    assert "waiting up to" not in out.stderr
    notes = re.findall(IDLE_NOTE % r"\w+", out.stderr)
    assert len(notes) == 1 and notes[0][0] == notes[0][1], out.stderr
    # Named once: the tracker, writing its part after the program's end, says nothing more.
    assert "ended before this one" not in out.stderr
    assert seconds < plain_seconds + 30, (seconds, plain_seconds)
    names = [PROCESS_NAME.match(n).group(3) for n in Groups(exp).names] \
        if (exp / "traces.otf2").exists() else \
        [PROCESS_NAME.match(g.name).group(3) for g in cube.read(str(exp / "profile.cubex"))
         .location_groups]
    assert names[0] == "main" and any(n.startswith("LokyProcess-") for n in names), names
    wait_for_own_experiment(exp / ("process-%s" % notes[0][0]))
    wait_for_no_group_files(exp)


def test_scorep_score_ranks_lists_each_process(python, tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep(python, [child_program("pool_methods.py"), "fork", "20"], exp)
    assert out.returncode == 0, out.stderr[-3000:]
    profile = cube.read(str(exp / "profile.cubex"))
    names = [g.name for g in profile.location_groups]
    score = run([sys.executable, "-m", "scorep.score", "--ranks", "-r", str(exp)],
                env=dict(os.environ, PYTHONPATH=str(SRC)))
    assert score.returncode == 0, score.stderr
    lines = score.stdout.splitlines()
    assert lines[0] == "Exclusive time per process of each region, over %d processes:" % len(
        names)
    assert lines[1:1 + len(names)] == ["  %d = %s" % (i, n) for i, n in enumerate(names)]
    square = [l for l in lines if l.endswith("  __main__:square")]
    assert len(square) == 1 and square[0].split()[-2] == "20"


def test_an_interpreter_scorep_cannot_measure_runs_unmeasured(tmp_path):
    """A Python older than 3.9 started by the program: one line, its program unharmed."""
    old = [p for p in ("/root/.pyenv/versions/3.8.18/bin/python3.8",) if os.path.exists(p)]
    old += sorted(str(p) for p in __import__("pathlib").Path(
        os.path.expanduser("~/.pyenv/versions")).glob("3.8*/bin/python3.8"))
    if not old:
        pytest.skip("no Python 3.8 here")
    program = tmp_path / "old.py"
    program.write_text("import subprocess\n"
                       "out = subprocess.run([%r, '-c', 'print(6 * 7)'], capture_output=True, "
                       "text=True)\nprint(out.stdout.strip(), repr(out.stderr))\n" % old[0])
    out = run_scorep(sys.executable, [str(program)], tmp_path / "exp")
    assert out.returncode == 0, out.stderr
    assert re.fullmatch(r"42 'scorep: process \d+ \(Python 3\.8\) is not measured: scorep "
                        r"measures Python 3\.9 and newer\\n'\n", out.stdout), out.stdout


@pytest.mark.skipif(__import__("shutil").which("mpirun") is None, reason="no mpirun")
def test_mpi_ranks_with_pools(tmp_path):
    """Ranks stay ranks; the workers of rank r are processes created by rank r, under its
    system tree node; MPI's communicators and messages are unharmed."""
    from conftest import scorep_env
    env = scorep_env(tmp_path / "exp", SCOREP_ENABLE_TRACING="true")
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    out = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", sys.executable, "-m", "scorep",
                          "--mpp=mpi", child_program("mpi_pool.py")], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == "%d\n" % (sum(range(10)) * 3)
    exp = tmp_path / "exp"
    groups = Groups(exp)
    ranks = [n for n in groups.names if n.startswith("MPI Rank ")]
    assert sorted(ranks) == ["MPI Rank 0", "MPI Rank 1"]
    children = groups.children()
    assert len(children) + 2 == len(groups.names)
    assert {groups.creator[c] for c in children} <= set(ranks)
    trace = Trace(exp)
    trace.check_nesting()
    per_rank = collections.Counter()
    for group, calls in enters_per_group(trace, "__main__:scaled").items():
        per_rank[groups.creator[group]] += calls
    assert per_rank == {"MPI Rank 0": 10, "MPI Rank 1": 10}
    mpi_calls = collections.Counter(e.group for e in trace.of("Enter")
                                    if e.region.startswith("MPI_"))
    assert set(ranks) <= set(mpi_calls)
    # The workers' only MPI calls are their own: MPI_Comm_rank in scaled (Score-P's group
    # cg, recorded by default), once per task, in the processes each rank created.
    worker_calls = collections.Counter((groups.creator[e.group], e.region)
                                       for e in trace.of("Enter")
                                       if e.region.startswith("MPI_") and e.group in children)
    assert worker_calls == {("MPI Rank 0", "MPI_Comm_rank"): 10,
                            ("MPI Rank 1", "MPI_Comm_rank"): 10}
    otf2_print(str(exp / "traces.otf2"))  # no complaint of the reader about anything
    definitions = otf2_print(str(exp / "traces.otf2"), "-G")
    nodes = re.findall(r"LOCATION_GROUP .*Parent: \"(node::[^\"]+)\"", definitions)
    assert len(nodes) == len(groups.names) and len(set(nodes)) == 1
    profile = cube.read(str(exp / "profile.cubex"))
    assert sorted(g.name for g in profile.location_groups) == sorted(groups.names)
    no_group_files_left(exp)


def test_os_exit_of_the_program_writes_the_results(python, tmp_path):
    """os._exit skips atexit: the measurement writes before the process ends (as pool
    workers end, so may the program's own process)."""
    program = tmp_path / "quits.py"
    program.write_text("import os\ndef work():\n    return 1\nwork()\nos._exit(4)\n")
    exp = tmp_path / "exp"
    out = run_scorep(python, [str(program)], exp, SCOREP_ENABLE_TRACING="true")
    assert (out.returncode, out.stdout, out.stderr) == (4, "", "")
    trace = Trace(exp)
    assert trace.enters("__main__:work") == 1
    assert [e.attrs["exit_status"] for e in trace.of("ProgramEnd")] == [4]
    assert (exp / "MANIFEST.md").exists()


def test_children_record_metrics_under_their_own_process(tmp_path):
    """Metrics travel with the configuration into the children: their metric sums reach the
    profile and their per-process metrics are recorded under their own location group's
    metric instance (the events each child encoded itself)."""
    exp = tmp_path / "exp"
    out = run_scorep(sys.executable, [child_program("pool_methods.py"), "fork", "20"], exp,
                     SCOREP_ENABLE_TRACING="true", SCOREP_METRIC_RUSAGE="ru_utime,ru_minflt",
                     SCOREP_METRIC_RUSAGE_PER_PROCESS="ru_maxrss", timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    otf2_print(str(exp / "traces.otf2"))
    groups = Groups(exp).names
    assert len(groups) == 3
    assert_metric_instances_per_group(exp, groups)
    p = cube.read(str(exp / "profile.cubex"))
    minflt = p.values(p.metric("ru_minflt"), inclusive=True)
    root = [c for c in p.cnodes if c.parent is None][0]
    per_group = collections.Counter()
    for i, loc in enumerate(p.locations):
        per_group[loc.group.name] += minflt[root.id][i]
    assert all(per_group[g] > 0 for g in groups), per_group


def test_a_child_that_ends_while_multiprocessing_starts_it_has_its_name(python, tmp_path):
    exp = tmp_path / "exp"
    out = run_scorep(python, [child_program("ends_while_starting.py")], exp,
                     SCOREP_ENABLE_TRACING="true", timeout=180)
    assert (out.returncode, out.stdout, out.stderr) == (0, "0\n", ""), out.stderr[-3000:]
    names = [PROCESS_NAME.match(n).group(3) for n in Groups(exp).names]
    assert names == ["main", "SpawnProcess-1"]


def test_an_exec_that_fails_leaves_the_measurement_running(python, tmp_path):
    """An os.exec* that raises (no such program, bad arguments, a bad environment; execvpe
    trying each entry of PATH) returns to a program that goes on: its measurement and its
    environment stay as they were (CPython's test_os checks the environment)."""
    program = tmp_path / "execs.py"
    program.write_text(
        "import os, sys\n"
        "def work():\n    return 1\n"
        "before = dict(os.environ)\n"
        "attempts = [lambda: os.execv('/no/such/program', ['x']),\n"
        "            lambda: os.execv(sys.executable, []),\n"
        "            lambda: os.execve(sys.executable, [sys.executable, '-c', 'pass'],\n"
        "                              dict(os.environ, **{'A=B': '1'})),\n"
        "            lambda: os.execvp('no-such-program-anywhere', ['x'])]\n"
        "for attempt in attempts:\n"
        "    try:\n        attempt()\n"
        "    except (OSError, ValueError) as error:\n"
        "        print(type(error).__name__)\n"
        "    work()\n"
        "print(os.environ == before)\n")
    exp = tmp_path / "exp"
    out = run_scorep(python, [str(program)], exp, SCOREP_ENABLE_TRACING="true")
    assert (out.returncode, out.stderr) == (0, ""), out.stderr
    assert out.stdout == "FileNotFoundError\nValueError\nValueError\nFileNotFoundError\nTrue\n"
    trace = Trace(exp)
    assert trace.enters("__main__:work") == 4
    assert len(trace.of("ProgramEnd")) == 1


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_manager_server_and_a_nested_scorep(python, tmp_path, method):
    exp, nested = tmp_path / "exp", tmp_path / "nested"
    out = run_scorep(python, [child_program("manager.py"), method, nested], exp,
                     SCOREP_ENABLE_TRACING="true", timeout=180)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == "2 2\nnested 0 \n"
    names = [PROCESS_NAME.match(n).group(3) for n in Groups(exp).names]
    assert names[0] == "main" and "SyncManager-1" in names
    assert len(names) == 6
    assert enters_per_group(Trace(exp), "__main__:bump") and \
        sum(enters_per_group(Trace(exp), "__main__:bump").values()) == 4
    # python -m scorep in a measured program is an experiment of its own, not a member.
    assert Trace(nested).location_groups == ["Process"]
