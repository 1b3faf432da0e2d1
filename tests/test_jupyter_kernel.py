"""The Score-P Python Jupyter kernel (scorep.jupyter), driven through jupyter_client like a
notebook front end drives it: the cell magics with their exact output, measured cells that
share the kernel's namespace with plain ones, multicell and write mode, experiments read
back with the OTF2 reader, the messaging protocol as jupyter_kernel_test checks it, the
original kernel's README notebook run by nbclient, and %load_ext scorep in a plain IPython
kernel.

One kernel serves most of the module (starting one costs about a second); every test sets
the configuration it relies on, and leaves the kernel in default mode.
"""

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jupyter_kernel_test
import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager, KernelManager
from nbclient import NotebookClient

from conftest import SRC, Trace, scorep_env

NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"
CELL_TIMEOUT = 10  # seconds; every cell here answers well within it
RESULTS = "Instrumentation results can be found in %s\n"


class Cell:
    """What one execute request produced: the reply and the iopub messages of the cell."""

    def __init__(self):
        self.reply = None
        self.status = None
        self.stdout = ""
        self.stderr = ""
        self.results = []   # execute_result text/plain
        self.displays = []  # display_data bundles
        self.errors = []    # error message contents
        # Streams (both), results and tracebacks in the order they came; a stream's text
        # that comes in several messages (the kernel sends what was written every so often,
        # also in the middle of a line) as one.
        self.texts = []
        self._stream = None

    def hook(self, msg):
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            if self._stream == content["name"]:
                self.texts[-1] += content["text"]
            else:
                self.texts.append(content["text"])
            if content["name"] == "stdout":
                self.stdout += content["text"]
            else:
                self.stderr += content["text"]
        if kind == "stream":
            self._stream = content["name"]
        elif kind in ("execute_result", "display_data", "error"):
            self._stream = None
        if kind == "execute_result":
            self.texts.append(content["data"]["text/plain"])
            self.results.append(content["data"]["text/plain"])
        elif kind == "display_data":
            self.displays.append(content["data"])
        elif kind == "error":
            self.texts.append("\n".join(content["traceback"]))
            self.errors.append(content)


def kernel_env(ipython_dir):
    env = scorep_env()
    # Set where the tests run under Jupyter (a terminal of JupyterLab, a notebook calling
    # pytest): it would name the kernel's notebook, and its cell folders, instead of the
    # kernel's connection file. Tests that want a notebook name set it themselves.
    env.pop("JPY_SESSION_NAME", None)
    # debugpy, which ipykernel imports, would otherwise note frozen modules on the kernel
    # process's own stderr.
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    env["IPYTHONDIR"] = str(ipython_dir)  # history and profile stay out of the user's home
    return env


class Kernel:
    def __init__(self, kernel_name, kernel_dirs, cwd, extra_env=None):
        self.cwd = cwd
        env = kernel_env(cwd / ".ipython")
        env.update(extra_env or {})
        self.manager = KernelManager(kernel_name=kernel_name,
                                     kernel_spec_manager=KernelSpecManager(
                                         kernel_dirs=[str(kernel_dirs)]))
        self.manager.start_kernel(cwd=str(cwd), env=env)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def run(self, code, stop_on_error=True, timeout=CELL_TIMEOUT):
        cell = Cell()
        reply = self.client.execute_interactive(code, timeout=timeout, output_hook=cell.hook,
                                                stop_on_error=stop_on_error)
        cell.reply = reply["content"]
        cell.status = cell.reply["status"]
        return cell

    def ok(self, code):
        """Runs a cell that must succeed without anything on stderr."""
        cell = self.run(code)
        assert cell.status == "ok", (cell.stderr, cell.errors)
        assert cell.stderr == ""
        assert cell.errors == []
        return cell

    def shutdown(self):
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


def install_kernelspec(prefix):
    out = subprocess.run([sys.executable, "-m", "scorep.jupyter", "install", "--prefix",
                          str(prefix)], env=scorep_env(), capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    kernels = prefix / "share" / "jupyter" / "kernels"
    assert out.stdout == "Installed kernelspec scorep_jupyter in %s\n" % (
        kernels / "scorep_jupyter")
    return kernels


@pytest.fixture(scope="module")
def kernel_dirs(tmp_path_factory):
    return install_kernelspec(tmp_path_factory.mktemp("prefix"))


@pytest.fixture(scope="module")
def kernel(kernel_dirs, tmp_path_factory):
    k = Kernel("scorep_jupyter", kernel_dirs, tmp_path_factory.mktemp("notebook"))
    yield k
    k.shutdown()


def experiment_dirs(cwd):
    return sorted(p.name for p in cwd.iterdir() if p.is_dir() and p.name.startswith("scorep-"))


def enters(trace):
    """{region: enters} over all locations."""
    counts = {}
    for event in trace.of("Enter"):
        counts[event.region] = counts.get(event.region, 0) + 1
    return counts


# ---- identity and setup magics ------------------------------------------------------------


def test_kernelspec_and_kernel_info(kernel_dirs, kernel):
    with open(kernel_dirs / "scorep_jupyter" / "kernel.json") as spec_file:
        spec = json.load(spec_file)
    assert spec["argv"] == [sys.executable, "-m", "scorep.jupyter", "-f", "{connection_file}"]
    assert spec["display_name"] == "Score-P Python"
    assert spec["language"] == "python"
    assert spec["env"]["PYTHONPATH"].split(os.pathsep)[0] == str(SRC)

    info = kernel.client.kernel_info(reply=True, timeout=CELL_TIMEOUT)
    assert info["content"]["implementation"] == "scorep_jupyter"
    assert info["content"]["language_info"]["name"] == "python"
    # The unfilled ${PYTHONPATH} of the kernelspec does not end up in the kernel's path.
    cell = kernel.ok("import os, sys\nprint(os.environ['PYTHONPATH'] == %r, "
                     "[p for p in sys.path if '$' in p])" % str(SRC))
    assert cell.stdout == "True []\n"


def test_setup_magics_print_exactly(kernel):
    cell = kernel.ok("%%scorep_python_binding_arguments\n--noinstrumenter")
    assert cell.stdout == ("Score-P Python binding arguments set successfully: "
                           "['--noinstrumenter']\n")
    # New arguments replace the earlier ones.
    cell = kernel.ok("%%scorep_python_binding_arguments\n--instrumenter-type=cProfile")
    assert cell.stdout == ("Score-P Python binding arguments set successfully: "
                           "['--instrumenter-type=cProfile']\n")
    cell = kernel.ok("%%scorep_python_binding_arguments\n")
    assert cell.stdout == "Score-P Python binding arguments set successfully: []\n"

    cell = kernel.ok("%%marshalling_settings")
    assert cell.stdout == "Kernel uses 'dill' marshaller in 'memory' mode.\n"
    cell = kernel.ok("%%marshalling_settings\nMARSHALLER=cloudpickle\nMODE=disk")
    assert cell.stdout == "Kernel uses 'cloudpickle' marshaller in 'disk' mode.\n"

    for magic in ("%%abort_multicellmode", "%%finalize_multicellmode", "%%end_writefile",
                  "%%abort_writefile"):
        cell = kernel.run(magic)
        assert cell.status == "ok"
        assert cell.stdout == ""
        assert cell.stderr == "KernelWarning: Currently in default, command ignored.\n"

    cell = kernel.run("%%scorep_python_binding_arguments\n--no-such-option",
                      stop_on_error=False)
    assert cell.status == "error"
    assert cell.stderr.startswith("UsageError: unknown option --no-such-option")
    cell = kernel.ok("%%scorep_python_binding_arguments\n")  # the earlier ones still hold
    assert cell.stdout == "Score-P Python binding arguments set successfully: []\n"
    cell = kernel.run("%%scorep_env\nSCOREP_TOTAL_MEMORY=lots", stop_on_error=False)
    assert cell.status == "error"
    assert cell.stderr.startswith("UsageError: SCOREP_TOTAL_MEMORY='lots' is not a memory size")


# ---- measured cells --------------------------------------------------------------------------


def test_measured_cell_shares_state_and_writes_a_trace(kernel):
    cwd = kernel.cwd
    kernel.ok("%%scorep_python_binding_arguments\n")
    cell = kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_TOTAL_MEMORY=3g\n"
                     "SCOREP_EXPERIMENT_DIRECTORY=exp_state")
    assert cell.stdout.startswith("Score-P environment set successfully: {")
    kernel.ok("import numpy as np\n"
              "class Counter:\n"
              "    def __init__(self):\n"
              "        self.total = 0\n"
              "    def add(self, n):\n"
              "        self.total += n\n"
              "c = Counter()\n"
              "arr = np.arange(4)\n"
              "x = 1\n"
              "log = open('log.txt', 'w')\n"
              "log.write('plain\\n')")
    cell = kernel.ok("%%execute_with_scorep\n"
                     "def f(n):\n"
                     "    return n * 2\n"
                     "total = 0\n"
                     "for i in range(3):\n"
                     "    total += f(i)\n"
                     "c.add(5)\n"
                     "x += 1\n"
                     "arr *= 2\n"
                     "log.write('measured\\n')\n"
                     "class Made:\n"
                     "    pass\n"
                     "made = Made()\n"
                     "print('total', total)\n"
                     "total")
    assert cell.stdout == "total 6\n" + RESULTS % "exp_state"
    assert cell.results == ["6"]
    cell = kernel.ok("log.write('plain again\\n'); log.close()\n"
                     "print(x, arr.tolist(), f(21), type(c) is Counter, c.total,\n"
                     "      type(made) is Made, open('log.txt').read().split())")
    assert cell.stdout == ("2 [0, 2, 4, 6] 42 True 5 True "
                           "['plain', 'measured', 'plain', 'again']\n")

    trace = Trace(cwd / "exp_state")
    trace.check_nesting()
    # The cell's calls and nothing of IPython, ipykernel or the output machinery.
    assert enters(trace) == {"__main__:f": 3, "__main__.Counter:add": 1, "__main__:Made": 1}
    assert trace.locations == ["MainThread"]
    f = trace.regions["__main__:f"]
    assert f.begin_line_number == 2  # in the cell as written, magic line included
    assert f.source_file.endswith(".py")

    # An existing experiment directory is moved aside silently.
    before = sorted(p.name for p in cwd.iterdir())
    cell = kernel.ok("%%execute_with_scorep\nf(1)")
    assert cell.stdout == RESULTS % "exp_state"
    assert cell.results == ["2"]
    moved = sorted(set(p.name for p in cwd.iterdir()) - set(before))
    assert len(moved) == 1 and moved[0].startswith("exp_state-")
    assert enters(Trace(cwd / "exp_state")) == {"__main__:f": 1}
    assert enters(Trace(cwd / moved[0]))["__main__:f"] == 3


def cell_dirs(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_generated_experiment_directory_is_per_cell_and_printed_absolute(kernel):
    """Without SCOREP_EXPERIMENT_DIRECTORY a cell's experiment goes to
    scorep-notebook/<folder>-<hash>/cell-<N>-<time>/ where the front end does not name the
    notebook (Notebook 6, nbconvert): one folder per kernel working directory, the same
    after a restart, not into the working directory itself."""
    import hashlib
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_EXPERIMENT_DIRECTORY=")
    before = sorted(p.name for p in kernel.cwd.iterdir())
    cwd = str(kernel.cwd.resolve())
    from scorep.jupyter.results import _safe_name
    folder = kernel.cwd / "scorep-notebook" / ("%s-%s" % (
        _safe_name(os.path.basename(cwd)), hashlib.sha1(cwd.encode()).hexdigest()[:6]))
    assert kernel.ok("print(get_ipython().kernel.scorep_magics.notebook.id)").stdout == (
        folder.name + "\n")
    cells_before = cell_dirs(folder)
    cell = kernel.ok("%%execute_with_scorep\ndef g():\n    return 1\ng()")
    count = cell.reply["execution_count"]
    new = sorted(set(cell_dirs(folder)) - set(cells_before))
    assert len(new) == 1, (cell.stdout, cells_before,
                           cell_dirs(folder),
                           sorted(str(p.relative_to(kernel.cwd)) for p in kernel.cwd.rglob("cell-*")))
    assert re.fullmatch(r"cell-%d-\d{8}_\d{6}" % count, new[0])
    assert cell.stdout == RESULTS % (folder / new[0])
    assert enters(Trace(folder / new[0])) == {"__main__:g": 1}
    # Nothing new at the top of the working directory but the folder (once).
    after = sorted(p.name for p in kernel.cwd.iterdir())
    assert set(after) - set(before) <= {"scorep-notebook"}
    # A second measurement in the same cell and second gets a name of its own.
    cell = kernel.ok("%scorep g()\n%scorep g()")
    count = cell.reply["execution_count"]
    same = sorted(d for d in cell_dirs(folder) if d.startswith("cell-%d-" % count))
    assert len(same) == 2, same
    stamp = len("cell-%d-YYYYmmdd_HHMMSS" % count)
    if same[0][:stamp] == same[1][:stamp]:  # the same second (usual): the second one is -2
        assert same[1] == same[0] + "-2", same


def test_noinstrumenter_records_only_enabled_blocks(kernel):
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_EXPERIMENT_DIRECTORY=exp_noinst")
    cell = kernel.ok("%%scorep_python_binding_arguments\n--noinstrumenter")
    cell = kernel.ok("%%execute_with_scorep\n"
                     "import scorep\n"
                     "import time\n"
                     "\n"
                     "def sleep_and_double(x):\n"
                     "    time.sleep(0.001 * x)\n"
                     "    return 2*x\n"
                     "\n"
                     "sleep_and_double(1)\n"
                     "with scorep.instrumenter.enable():\n"
                     "    x = 5\n"
                     "    x = sleep_and_double(x)\n"
                     "    x = sleep_and_double(x)\n"
                     "sleep_and_double(1)")
    assert cell.stdout == RESULTS % "exp_noinst"
    assert kernel.ok("print(x)").stdout == "20\n"
    trace = Trace(kernel.cwd / "exp_noinst")
    trace.check_nesting()
    assert enters(trace) == {"__main__:sleep_and_double": 2}
    kernel.ok("%%scorep_python_binding_arguments\n")


def test_thread_started_in_measured_cell_is_its_own_location(kernel):
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_EXPERIMENT_DIRECTORY=exp_thread")
    cell = kernel.ok("%%execute_with_scorep\n"
                     "import threading\n"
                     "def g(i):\n"
                     "    return i\n"
                     "def work(n):\n"
                     "    return sum([g(i) for i in range(n)])\n"
                     "t = threading.Thread(target=work, args=(5,), name='worker')\n"
                     "t.start()\n"
                     "t.join()\n"
                     "work(2)")
    assert cell.stdout == RESULTS % "exp_thread"
    assert cell.results == ["1"]
    trace = Trace(kernel.cwd / "exp_thread")
    trace.check_nesting()
    assert trace.locations == ["MainThread", "worker"]
    assert trace.enters("__main__:work", "worker") == 1
    assert trace.enters("__main__:g", "worker") == 5
    assert trace.enters("__main__:work", "MainThread") == 1
    assert trace.enters("__main__:g", "MainThread") == 2


def test_pool_in_a_measured_cell_records_its_workers(kernel):
    """Child processes (issue 13): the pool's workers are processes of the cell's experiment,
    and the kernel waits for nothing after the cell (the pool ended in it)."""
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_EXPERIMENT_DIRECTORY=exp_pool")
    cell = kernel.ok("%%execute_with_scorep\n"
                     "import multiprocessing\n"
                     "def square(x):\n"
                     "    return x * x\n"
                     "with multiprocessing.get_context('fork').Pool(2) as pool:\n"
                     "    print(sum(pool.map(square, range(20), chunksize=1)))")
    assert cell.stdout == "2470\n" + RESULTS % "exp_pool"
    trace = Trace(kernel.cwd / "exp_pool")
    trace.check_nesting()
    assert len(trace.location_groups) >= 2
    assert trace.location_groups[0].startswith("Process 0 (pid ")
    workers = {e.group for e in trace.of("Enter", "__main__:square")}
    assert trace.enters("__main__:square") == 20
    assert workers and all(re.search(r", ForkPoolWorker-\d+\)$", g) for g in workers)
    assert not (kernel.cwd / "exp_pool" / ".scorep-processes").exists()
    # A plain cell afterwards starts children that are not measured.
    cell = kernel.ok("import os\nprint('_SCOREP_PYTHON_CHILD' in os.environ)")
    assert cell.stdout == "False\n"


def test_raising_cell_shows_traceback_and_writes_the_experiment(kernel):
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_EXPERIMENT_DIRECTORY=exp_raise")
    kernel.ok("def h(n):\n    if n == 0:\n        raise KeyError('deep')\n    return h(n - 1)")
    cell = kernel.run("%%execute_with_scorep\nprint('before')\nh(2)", stop_on_error=False)
    assert cell.status == "error"
    assert cell.reply["ename"] == "KeyError"
    assert cell.reply["evalue"] == "'deep'"
    text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(cell.reply["traceback"]))
    assert "----> 3 h(2)" in text  # the line in the cell as written
    assert "raise KeyError('deep')" in text
    # No frames of the kernel, the measurement or IPython: as IPython shows any cell.
    assert str(SRC) not in text and "interactiveshell.py" not in text
    assert [e["ename"] for e in cell.errors] == ["KeyError"]
    assert cell.stdout == "before\n" + RESULTS % "exp_raise"
    assert cell.stderr == ""
    trace = Trace(kernel.cwd / "exp_raise")
    trace.check_nesting()
    assert enters(trace) == {"__main__:h": 3}
    # The kernel goes on as before.
    assert kernel.ok("print(h(0) if False else 'alive')").stdout == "alive\n"


def test_interrupted_measured_cell_replies_and_writes_the_experiment(kernel):
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\n"
              "SCOREP_EXPERIMENT_DIRECTORY=exp_interrupt")
    cell = Cell()

    def hook(msg):
        cell.hook(msg)
        if msg["msg_type"] == "stream" and msg["content"]["text"] == "spinning\n":
            kernel.manager.interrupt_kernel()  # only now: an idle kernel ignores SIGINT

    reply = kernel.client.execute_interactive("%%execute_with_scorep\n"
                                              "import sys, time\n"
                                              "def spin():\n"
                                              "    print('spinning', flush=True)\n"
                                              "    while True:\n"
                                              "        time.sleep(0.01)\n"
                                              "spin()", timeout=CELL_TIMEOUT,
                                              output_hook=hook, stop_on_error=False)
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KeyboardInterrupt"
    assert cell.stdout == "spinning\n" + RESULTS % "exp_interrupt"
    trace = Trace(kernel.cwd / "exp_interrupt")
    trace.check_nesting()
    assert enters(trace) == {"__main__:spin": 1}


def test_scorep_env_and_percent_env_configure_later_cells(kernel):
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_EXPERIMENT_DIRECTORY=exp_a")
    kernel.ok("%env SCOREP_EXPERIMENT_DIRECTORY=exp_b")
    # The later %env wins over the earlier %%scorep_env ...
    cell = kernel.ok("%%execute_with_scorep\nimport os\nprint(os.environ['SCOREP_ENABLE_TRACING'])")
    assert cell.stdout == "true\n" + RESULTS % "exp_b"
    # ... and a later %%scorep_env over the %env.
    kernel.ok("%%scorep_env\nSCOREP_EXPERIMENT_DIRECTORY=exp_c")
    cell = kernel.ok("%%execute_with_scorep\npass")
    assert cell.stdout == RESULTS % "exp_c"
    assert (kernel.cwd / "exp_b" / "traces.otf2").exists()
    assert (kernel.cwd / "exp_c" / "traces.otf2").exists()
    # %%scorep_env values are the measured cells' environment, not the kernel's.
    cell = kernel.ok("import os, subprocess\n"
                     "print(os.environ.get('SCOREP_ENABLE_TRACING'))\n"
                     "print(subprocess.run(['sh', '-c', 'echo ${SCOREP_ENABLE_TRACING:-unset}'],\n"
                     "                     capture_output=True, text=True).stdout, end='')")
    assert cell.stdout == "None\nunset\n"
    kernel.ok("%env SCOREP_EXPERIMENT_DIRECTORY=")


# ---- multicell mode ---------------------------------------------------------------------------


def banner(position, code):
    """What the original kernel prints before a cell of a multicell block."""
    return "Executing cell %d\n%s\n%s\n" % (position, code,
                                             "-" * max(len(l) for l in code.split("\n")))


def test_multicell_mode(kernel):
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_EXPERIMENT_DIRECTORY=exp_multi")
    kernel.ok("order = []")
    cell = kernel.ok("%%enable_multicellmode")
    assert cell.stdout == ("Multicell mode enabled. The following cells will be marked for "
                           "instrumented execution.\n")
    assert kernel.ok("order.append('never')").stdout == (
        "Cell marked for multicell mode. It will be executed at position 0\n")
    cell = kernel.ok("%%abort_multicellmode")
    assert cell.stdout == "Multicell mode aborted.\n"

    kernel.ok("%%enable_multicellmode")
    cells = [
        "def step(name):\n    order.append(name)",
        "%%execute_with_scorep\nstep('first')",
        "class B:\n    def desc(self):\n        step('second')\n        return 'B'",
        "b = B()\nb.desc()",
        "print(order)",
    ]
    for position, code in enumerate(cells):
        cell = kernel.ok(code)
        assert cell.stdout == ("Cell marked for multicell mode. It will be executed at "
                               "position %d\n" % position)
    for magic in ("%%enable_multicellmode", "%%scorep_env\nSCOREP_ENABLE_TRACING=false",
                  "%%scorep_python_binding_arguments\n--noinstrumenter",
                  "%%marshalling_settings", "%%start_writefile"):
        cell = kernel.run(magic)
        assert cell.status == "ok" and cell.stdout == ""
        assert cell.stderr == "KernelWarning: Currently in multicell, command ignored.\n"
    assert kernel.ok("print(order)").stdout == (
        "Cell marked for multicell mode. It will be executed at position 5\n")

    cell = kernel.ok("%%finalize_multicellmode")
    # As the original: each cell's position, code and a rule before its output, an empty
    # line after it.
    assert cell.stdout == (
        banner(0, "def step(name):\n    order.append(name)") + "\n\n" +
        banner(1, "step('first')") + "\n\n" +
        banner(2, "class B:\n    def desc(self):\n        step('second')\n        return 'B'") +
        "\n\n" + banner(3, "b = B()\nb.desc()") + "\n\n" +
        banner(4, "print(order)") + "['first', 'second']\n\n\n" +
        banner(5, "print(order)") + "['first', 'second']\n\n\n" + RESULTS % "exp_multi")
    assert cell.results == ["'B'"]
    assert kernel.ok("print(order)").stdout == "['first', 'second']\n"
    trace = Trace(kernel.cwd / "exp_multi")  # one experiment for all the cells
    trace.check_nesting()
    assert enters(trace) == {"__main__:step": 2, "__main__:B": 1, "__main__.B:desc": 1}
    cell = kernel.run("%%finalize_multicellmode")
    assert cell.stderr == "KernelWarning: Currently in default, command ignored.\n"


def test_multicell_block_of_one_cell_keeps_its_own_count(kernel):
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_EXPERIMENT_DIRECTORY=exp_mone")
    kernel.ok("%%enable_multicellmode")
    kernel.ok("%%execute_with_scorep\n40 + 2")
    cell = kernel.ok("%%finalize_multicellmode")
    assert cell.results == ["42"]
    assert cell.stdout == banner(0, "40 + 2") + "\n\n" + RESULTS % "exp_mone"
    count = cell.reply["execution_count"]
    assert kernel.ok("In[%d]" % count).results == ["'%%finalize_multicellmode'"]


def test_multicell_stops_at_a_failing_cell(kernel):
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_EXPERIMENT_DIRECTORY=exp_mfail")
    kernel.ok("%%enable_multicellmode")
    for code in ("print('one')", "1/0", "print('three')"):
        kernel.ok(code)
    cell = kernel.run("%%finalize_multicellmode", stop_on_error=False)
    assert cell.status == "error"
    assert cell.reply["ename"] == "ZeroDivisionError"
    # The block stops at the failing cell: no empty line after it, no third cell.
    assert cell.stdout == (banner(0, "print('one')") + "one\n\n\n" + banner(1, "1/0") +
                           RESULTS % "exp_mfail")
    assert (kernel.cwd / "exp_mfail" / "traces.otf2").exists()
    assert kernel.ok("print('default again')").stdout == "default again\n"


# ---- write mode --------------------------------------------------------------------------------


def test_write_mode_script_runs_with_bash(kernel):
    cwd = kernel.cwd
    cell = kernel.ok("%%start_writefile out/myscript.py")
    runner, script = cwd / "out" / "myscript_run.sh", cwd / "out" / "myscript.py"
    assert cell.stdout == ("Started converting to Python script. See files:\n%s\n%s\n"
                           % (runner, script))
    steps = [
        ("%%scorep_env\nSCOREP_ENABLE_TRACING=1\nSCOREP_ENABLE_PROFILING=0\n"
         "SCOREP_TOTAL_MEMORY=3g", "Environment variables recorded.\n"),
        # %env prints nothing in write mode (as in the original) and is recorded
        ("%env SCOREP_EXPERIMENT_DIRECTORY=exp_script", ""),
        ("%%scorep_python_binding_arguments\n--noinstrumenter",
         "Score-P bindings arguments recorded.\n"),
        ("import numpy as np\n"
         "def plain_helper():\n"
         "    return '''two\n"
         "lines'''\n"
         "print('Cell without instrumentation.', plain_helper().split())",
         "Python commands without instrumentation recorded.\n"),
        ("%%execute_with_scorep\n"
         "import scorep\n"
         "def dot(a, b):\n"
         "    return int(a.dot(b))\n"
         "with scorep.instrumenter.enable():\n"
         "    c = dot(np.array([1, 2, 3]), np.array([4, 5, 6]))\n"
         "print(c)", "Python commands with instrumentation recorded.\n"),
        ("%%enable_multicellmode", ""),
        ("def outer(a, b):\n"
         "    return np.outer(a, b)\n"
         "with scorep.instrumenter.enable():\n"
         "    d = outer(np.array([1, 2]), np.array([3, 4]))",
         "Python commands with instrumentation recorded.\n"),
        ("print(int(d.sum()))", "Python commands with instrumentation recorded.\n"),
        ("%%finalize_multicellmode", ""),
        ("print('plain again', plain_helper()[:3])",
         "Python commands without instrumentation recorded.\n"),
    ]
    for code, output in steps:
        cell = kernel.ok(code)
        assert cell.stdout == output, code
    for magic in ("%%start_writefile", "%%marshalling_settings"):
        cell = kernel.run(magic)
        assert cell.stderr == "KernelWarning: Currently in writefile, command ignored.\n"
    cell = kernel.ok("%%end_writefile")
    assert cell.stdout == "Finished converting to Python script.\n"
    # Nothing was executed in the kernel while recording.
    assert kernel.ok("print('plain_helper' in dir(), 'dot' in dir())").stdout == "False False\n"

    env = scorep_env()
    del env["PYTHONPATH"]  # the run script makes scorep importable itself
    out = subprocess.run(["bash", str(runner)], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert out.stdout == ("Cell without instrumentation. ['two', 'lines']\n32\n21\n"
                          "plain again two\n")
    trace = Trace(cwd / "exp_script")
    trace.check_nesting()
    counts = enters(trace)
    assert counts["__main__:dot"] == 1
    assert counts["__main__:outer"] == 1
    assert "__main__:plain_helper" not in counts  # ran with instrumentation disabled
    assert not (cwd / "exp_script" / "profile.cubex").exists()


def test_write_mode_abort_removes_the_files(kernel):
    cell = kernel.ok("%%start_writefile")
    runner, script = kernel.cwd / "jupyter_to_script_run.sh", kernel.cwd / "jupyter_to_script.py"
    assert cell.stdout == ("Started converting to Python script. See files:\n%s\n%s\n"
                           % (runner, script))
    assert runner.exists() and script.exists()
    kernel.ok("x = 'recorded only'")
    cell = kernel.ok("%%abort_writefile")
    assert cell.stdout == "Writefile mode aborted.\n"
    assert not runner.exists() and not script.exists()
    cell = kernel.run("%%abort_writefile")
    assert cell.stderr == "KernelWarning: Currently in default, command ignored.\n"


# ---- IPython behaviour stays ---------------------------------------------------------------


def test_ipython_features_work(kernel):
    assert kernel.ok("%%bash\necho from bash").stdout == "from bash\n"
    assert kernel.ok("!echo from shell").stdout == "from shell\r\n"  # through a pty
    cell = kernel.ok("from IPython.display import HTML\nHTML('<b>bold</b>')")
    assert cell.results == ["<IPython.core.display.HTML object>"]
    reply = kernel.client.complete("import numpy as np\nnp.arang", reply=True,
                                   timeout=CELL_TIMEOUT)
    assert "np.arange" in [m if m.startswith("np.") else "np." + m
                           for m in reply["content"]["matches"]]
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_EXPERIMENT_DIRECTORY=exp_ipy")
    cell = kernel.ok("%%execute_with_scorep\n"
                     "%env MY_FLAG=set\n"
                     "from IPython.display import display, HTML\n"
                     "display(HTML('<i>rich</i>'))\n"
                     "import os\n"
                     "os.environ['MY_FLAG']")
    assert cell.stdout == "env: MY_FLAG=set\n" + RESULTS % "exp_ipy"
    assert cell.results == ["'set'"]
    assert cell.displays[0]["text/html"] == "<i>rich</i>"


def test_scorep_magics_in_the_scorep_kernel(kernel):
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true\nSCOREP_EXPERIMENT_DIRECTORY=exp_magic")
    kernel.ok("def k(n):\n    return n + 1")
    cell = kernel.ok("%%scorep\nk(1)\nk(2)")
    assert cell.stdout == RESULTS % "exp_magic"
    assert cell.results == ["3"]
    assert enters(Trace(kernel.cwd / "exp_magic")) == {"__main__:k": 2}
    # Inside a measured cell a second measurement cannot start.
    cell = kernel.run("%%execute_with_scorep\n%scorep k(1)", stop_on_error=False)
    assert cell.status == "error"
    assert cell.stderr == "UsageError: scorep: a measurement is already running in this process\n"


def test_readme_notebook_of_the_original_runs_unchanged(kernel_dirs, tmp_path):
    nb = nbformat.read(str(NOTEBOOKS / "scorep_kernel_readme.ipynb"), as_version=4)
    manager = AsyncKernelManager(kernel_name="scorep_jupyter",
                                 kernel_spec_manager=KernelSpecManager(
                                     kernel_dirs=[str(kernel_dirs)]))
    try:
        NotebookClient(nb, km=manager, timeout=CELL_TIMEOUT,
                       resources={"metadata": {"path": str(tmp_path)}}).execute(
                           env=kernel_env(tmp_path / ".ipython"))
    finally:
        # A client given a kernel manager leaves its kernel running: it outlived the suite.
        if manager.has_kernel:
            asyncio.run(manager.shutdown_kernel(now=True))
    streams = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        texts = {"stdout": "", "stderr": ""}
        for output in cell.outputs:
            assert output.output_type in ("stream", "display_data"), output
            if output.output_type == "stream":
                texts[output.name] += output.text
        assert texts["stderr"] == ""
        streams.append(texts["stdout"])
    results = re.compile(re.escape(RESULTS.strip() % (tmp_path / "scorep-notebook")) +
                         r"/[^/\n]+/cell-\d+-\d{8}_\d{6}\n$")
    for index in (2, 6, 8, 16):
        assert results.search(streams[index]), streams[index]
    experiment = {index: streams[index].rsplit(" ", 1)[1].strip() for index in (2, 6, 8, 16)}
    streams = [results.sub("", s) for s in streams]
    assert streams[:11] == [
        "Score-P environment set successfully: {'SCOREP_ENABLE_TRACING': '1', "
        "'SCOREP_ENABLE_PROFILING': '0', 'SCOREP_TOTAL_MEMORY': '3g'}\n",
        "Score-P Python binding arguments set successfully: ['--noinstrumenter']\n",
        "",
        "This class and method should be...known here\n",
        "",
        "new desc\n",
        "",
        "new desc2\n",
        "",
        "20\n",  # 5 doubled twice (the README shows 40, from a run that is not in it)
        "Multicell mode enabled. The following cells will be marked for instrumented "
        "execution.\n",
    ]
    assert streams[11:16] == ["Cell marked for multicell mode. It will be executed at "
                              "position %d\n" % n for n in range(5)]
    codes = [c.source for c in nb.cells if c.cell_type == "code"]
    assert streams[16] == (
        banner(0, codes[11]) + "\n\n" + banner(1, codes[12]) + "\n\n" +
        banner(2, codes[13]) + "This is a class defined in multi cell mode...and this object "
        "is initialized and used in it.\n\n\n" + banner(3, codes[14]) + "\n\n" +
        banner(4, codes[15]) + "modified desc\n\n\n")
    assert len(set(experiment.values())) == 4
    assert enters(Trace(experiment[2])) == {}
    assert enters(Trace(experiment[8])) == {"__main__:sleep_and_double": 2}
    assert enters(Trace(experiment[16])) == {"__main__:B": 1, "__main__.B:print_desc": 1}


# ---- the original kernel's tests, variables and newest magics --------------------------------

# The environment the original kernel's test suite starts its kernel with (its
# tests/test_kernel.py), with our own experiment directory.
UPSTREAM_ENV = {
    "SCOREP_JUPYTER_DISABLE_PROCESSING_ANIMATIONS": "1",
    "SCOREP_ENABLE_TRACING": "1",
    "SCOREP_ENABLE_PROFILING": "0",
    "SCOREP_TOTAL_MEMORY": "3g",
    "SCOREP_EXPERIMENT_DIRECTORY": "upstream_tmp/traces",
}
UPSTREAM_NOTEBOOKS = ("upstream_exec", "upstream_persistence", "upstream_multicell",
                      "upstream_writemode")


def output_lines(texts, cwd):
    """Outputs as the original kernel's tests compare them: line by line, each stripped
    (its spinner pads lines with blanks), ${PWD} standing for the kernel's directory."""
    return [line.strip().replace("${PWD}", str(cwd))
            for text in texts for line in text.splitlines()]


def test_notebooks_of_the_original_kernels_tests_give_its_outputs(kernel_dirs, tmp_path):
    """Our notebooks modelled on the original kernel's test notebooks (binding arguments,
    plain and measured cells under each marshalling setting, state crossing both ways,
    multicell and write mode), run in one kernel started with its test suite's environment
    (SCOREP_JUPYTER_DISABLE_PROCESSING_ANIMATIONS=1 stopped every measured cell once):
    every cell's output is the one the original kernel prints, nothing else (no stderr)."""
    cwd = tmp_path / "nb"
    (cwd / "upstream_tmp" / "traces").mkdir(parents=True)
    k = Kernel("scorep_jupyter", kernel_dirs, cwd, extra_env=UPSTREAM_ENV)
    try:
        cells = 0
        for name in UPSTREAM_NOTEBOOKS:
            nb = nbformat.read(str(NOTEBOOKS / (name + ".ipynb")), as_version=4)
            for index, code in enumerate(nb.cells):
                if code.cell_type != "code":
                    continue
                expected = []
                for output in code.outputs:
                    if output.output_type == "stream":
                        expected.append(output.text)
                    elif output.output_type == "execute_result":
                        expected.append(output.data["text/plain"])
                cell = k.run(code.source, stop_on_error=False, timeout=60)
                assert (output_lines(cell.texts, cwd) == output_lines(expected, cwd)), (
                    name, index, code.source, cell.texts)
                assert cell.status == "ok", (name, index, cell.errors)
                cells += 1
        assert cells == 42
        # The measured cells wrote where the environment said (the last one: the script's).
        trace = Trace(cwd / "upstream_tmp" / "traces")
        trace.check_nesting()
    finally:
        k.shutdown()


def test_the_original_kernels_variables_are_accepted(kernel):
    """SCOREP_JUPYTER_DISABLE_PROCESSING_ANIMATIONS means what it says here without a word
    (there is no animation); the persistence variables get one line, once per kernel."""
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=false\nSCOREP_EXPERIMENT_DIRECTORY=exp_upvars")
    cell = kernel.ok("%env SCOREP_JUPYTER_DISABLE_PROCESSING_ANIMATIONS=1\n"
                     "%env SCOREP_JUPYTER_PERSISTENCE_DIR=persisted\n"
                     "%env SCOREP_JUPYTER_MARSHALLING_DETAILED_REPORT=1")
    try:
        cell = kernel.run("%%execute_with_scorep\nprint('measured')")
        assert cell.status == "ok"
        assert cell.stdout == "measured\n" + RESULTS % "exp_upvars"
        assert cell.stderr == (
            "scorep: SCOREP_JUPYTER_MARSHALLING_DETAILED_REPORT and "
            "SCOREP_JUPYTER_PERSISTENCE_DIR: no effect, measured cells run in the kernel "
            "process (nothing is marshalled and nothing is persisted)\n")
        for code in ("%%execute_with_scorep\nprint('again')",
                     "%%scorep_env\nSCOREP_JUPYTER_PERSISTENCE_DIR=elsewhere"):
            kernel.ok(code)  # said once: nothing on stderr
        assert not (kernel.cwd / "persisted").exists()
    finally:
        kernel.ok("import os\nfor name in ('DISABLE_PROCESSING_ANIMATIONS', 'PERSISTENCE_DIR',\n"
                  "             'MARSHALLING_DETAILED_REPORT'):\n"
                  "    os.environ.pop('SCOREP_JUPYTER_' + name)")


FAKE_VAMPIR = """#!/bin/sh
# Stands in for Vampir: records its arguments, then runs until the test is done (or until
# the kernel ends it to show a newer trace, which it records too).
PATH=/usr/bin:/bin
trap 'echo "ended $*" >> {log}; exit 0' TERM
echo "started $*" >> {log}
while [ ! -e {stop} ]; do sleep 0.05; done
"""


def wait_for_lines(path, count, timeout=20):
    """The first `count` lines of a file another process writes (no timing is checked: the
    timeout only bounds a failure)."""
    import time
    deadline = time.monotonic() + timeout
    while True:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.02)


def test_vampir_launch_magics(kernel, tmp_path):
    from scorep.jupyter.vampir import DISABLED, ENABLED, NOT_FOUND
    empty, fake = tmp_path / "empty", tmp_path / "bin"
    empty.mkdir()
    fake.mkdir()
    log, stop = tmp_path / "vampir.log", tmp_path / "stop"
    (fake / "vampir").write_text(FAKE_VAMPIR.format(log=log, stop=stop))
    (fake / "vampir").chmod(0o755)
    kernel.ok("import os\n_path_before_vampir = os.environ['PATH']\n"
              "os.environ['PATH'] = %r" % str(empty))
    kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=false\nSCOREP_EXPERIMENT_DIRECTORY=exp_vampir")
    try:
        # Not on PATH: said when asked and after each measured cell; nothing fails.
        cell = kernel.run("%%enable_vampir_launch_on_scorep_instrumented")
        assert (cell.status, cell.stdout, cell.stderr) == ("ok", "", NOT_FOUND + "\n")
        cell = kernel.run("%%execute_with_scorep\n1")
        assert cell.status == "ok" and cell.stdout == RESULTS % "exp_vampir"
        assert cell.stderr == ("KernelError: Vampir not launched: the cell was not traced "
                               "(SCOREP_ENABLE_TRACING=true traces the next ones)\n")
        kernel.ok("%%scorep_env\nSCOREP_ENABLE_TRACING=true")
        cell = kernel.run("%%execute_with_scorep\n1")
        assert cell.status == "ok" and cell.stdout == RESULTS % "exp_vampir"
        assert cell.stderr == NOT_FOUND + "\n"

        # On PATH: started on the cell's trace, after the results line.
        kernel.ok("os.environ['PATH'] = %r" % str(fake))
        assert kernel.ok("%%enable_vampir_launch_on_scorep_instrumented").stdout == ENABLED + "\n"
        cell = kernel.ok("%%execute_with_scorep\ndef shown():\n    return 7\nshown()")
        assert cell.stdout == (RESULTS % "exp_vampir" +
                               "Launching Vampir: exp_vampir/traces.otf2\n")
        first = kernel.cwd / "exp_vampir" / "traces.otf2"
        assert wait_for_lines(log, 1) == ["started %s" % first]
        assert enters(Trace(first.parent)) == {"__main__:shown": 1}
        # The next measured cell (here %%scorep) replaces that Vampir by one on its trace;
        # the first experiment was moved aside, the new one has the path the first had.
        cell = kernel.ok("%%scorep\nshown()\nshown()")
        assert cell.stdout == (RESULTS % "exp_vampir" +
                               "Launching Vampir: exp_vampir/traces.otf2\n")
        # (The new one may start before the old one has said that it ended.)
        assert sorted(wait_for_lines(log, 3)) == ["ended %s" % first, "started %s" % first,
                                                  "started %s" % first]
        assert enters(Trace(first.parent)) == {"__main__:shown": 2}
        # The magics act at once in multicell mode too (they are no cells of the block), and
        # a block is a measured cell.
        kernel.ok("%%enable_multicellmode")
        assert kernel.ok("%%enable_vampir_launch_on_scorep_instrumented").stdout == (
            ENABLED + "\n")
        kernel.ok("shown()")
        cell = kernel.ok("%%finalize_multicellmode")
        assert cell.stdout.endswith("\n\n\n" + RESULTS % "exp_vampir" +
                                    "Launching Vampir: exp_vampir/traces.otf2\n")
        assert sorted(wait_for_lines(log, 5)) == ["ended %s" % first] * 2 + \
            ["started %s" % first] * 3
        kernel.ok("%%enable_multicellmode")
        assert kernel.ok("%%disable_vampir_launch").stdout == DISABLED + "\n"
        kernel.ok("shown()")
        cell = kernel.ok("%%finalize_multicellmode")
        assert cell.stdout.endswith("\n\n\n" + RESULTS % "exp_vampir")  # no Launching line
    finally:
        stop.touch()  # the fake Vampir still running ends
        kernel.ok("%%disable_vampir_launch")
        kernel.ok("os.environ['PATH'] = _path_before_vampir")


class TestMessagingProtocol(jupyter_kernel_test.KernelTests):
    """The Jupyter messaging protocol as jupyter_kernel_test checks it, measured cells
    included: all standard IPython behaviour stays."""

    language_name = "python"
    file_extension = ".py"
    code_hello_world = "print('hello, world')"
    code_stderr = "import sys; print('test', file=sys.stderr)"
    completion_samples = [{"text": "zi", "matches": {"zip"}}]
    complete_code_samples = ["1", "print('hello, world')", "def f(x):\n  return x*2\n\n\n"]
    incomplete_code_samples = ["print('''hello", "def f(x):\n  x*2"]
    invalid_code_samples = ["import = 7q"]
    code_page_something = "zip?"
    code_generate_error = "raise"  # a measured cell adds its results line to the error
    code_execute_result = [
        {"code": "1+2+3", "result": "6"},
        {"code": "%%execute_with_scorep\n[n*n for n in range(1, 4)]", "result": "[1, 4, 9]"},
    ]
    code_display_data = [
        {"code": "%%execute_with_scorep\nfrom IPython.display import HTML, display\n"
                 "display(HTML('<b>test</b>'))", "mime": "text/html"},
    ]
    code_inspect_sample = "zip"
    code_clear_output = "from IPython.display import clear_output; clear_output()"

    @classmethod
    def setUpClass(cls):
        import tempfile
        cls._tmp = tempfile.TemporaryDirectory(prefix="scorep_protocol_")
        tmp = Path(cls._tmp.name)
        cwd = tmp / "notebook"
        cwd.mkdir()
        cls._kernel = Kernel("scorep_jupyter", install_kernelspec(tmp / "prefix"), cwd)
        cls.km, cls.kc = cls._kernel.manager, cls._kernel.client

    @classmethod
    def tearDownClass(cls):
        cls._kernel.shutdown()
        cls._tmp.cleanup()

    def test_history(self):
        # As the base class's, less "range": IPython answers it for the running session with
        # session number 0, which fails that check for Debian's plain ipykernel (6.17) too.
        codes = [sample["code"] for sample in self.code_execute_result]
        reply = self.history_helper(codes, output=False, raw=True, hist_access_type="tail",
                                    n=len(codes))
        # A measured cell is in the history as it was written, magic line included.
        self.assertEqual([entry[2] for entry in reply["content"]["history"]], codes)
        reply = self.history_helper(codes, output=False, raw=True, hist_access_type="search",
                                    pattern="*range(1, 4)*", unique=True)
        self.assertEqual([entry[2] for entry in reply["content"]["history"]], codes[1:])


# ---- %load_ext scorep in a plain IPython kernel ---------------------------------------------


@pytest.fixture(scope="module")
def ipython_kernel(tmp_path_factory):
    dirs = tmp_path_factory.mktemp("ipykernel_spec")
    (dirs / "plain_python").mkdir()
    with open(dirs / "plain_python" / "kernel.json", "w") as out:
        json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f",
                            "{connection_file}"], "display_name": "Python", "language": "python"},
                  out)
    k = Kernel("plain_python", dirs, tmp_path_factory.mktemp("plain"))
    yield k
    k.shutdown()


def test_load_ext_scorep_in_ipython_kernel(ipython_kernel):
    k = ipython_kernel
    assert k.ok("%load_ext scorep").stdout == ""
    help_text = k.ok("%scorep --help").stdout
    assert help_text.startswith("Measure IPython code with scorep, in this process")
    assert "%%scorep [binding arguments]" in help_text
    k.ok("%env SCOREP_ENABLE_TRACING=true")
    k.ok("%env SCOREP_EXPERIMENT_DIRECTORY=exp_ext")
    k.ok("import scorep, time\n"
         "def sleep_and_double(x):\n"
         "    time.sleep(0.001)\n"
         "    return 2 * x\n"
         "x = 1")
    cell = k.ok("%%scorep --noinstrumenter\n"
                "sleep_and_double(1)\n"
                "with scorep.instrumenter.enable():\n"
                "    x = sleep_and_double(x)\n"
                "x += 1\n"
                "x")
    assert cell.stdout == RESULTS % "exp_ext"
    assert cell.results == ["3"]
    assert enters(Trace(k.cwd / "exp_ext")) == {"__main__:sleep_and_double": 1}
    cell = k.ok("%scorep sleep_and_double(x)")
    assert cell.stdout == RESULTS % "exp_ext"
    assert cell.results == ["6"]
    assert enters(Trace(k.cwd / "exp_ext")) == {"__main__:sleep_and_double": 1}
    cell = k.run("%%scorep\nsleep_and_double(None)", stop_on_error=False)
    assert cell.status == "error"
    assert cell.reply["ename"] == "TypeError"
    assert cell.stdout == RESULTS % "exp_ext"
    assert enters(Trace(k.cwd / "exp_ext")) == {"__main__:sleep_and_double": 1}
    cell = k.run("%scorep --instrumenter-type=nonsense x", stop_on_error=False)
    assert cell.status == "error"
    assert cell.stderr.startswith("UsageError: scorep: unknown instrumenter type 'nonsense'")
