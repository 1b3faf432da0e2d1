"""scorep as a Python package: pip installs into virtual environments, a wheel, uninstall.

From a copy of the checkout (without its build/, node_modules or built libraries, as a fresh
clone is): `pip install --no-build-isolation` into a venv of Debian's python3
(--system-site-packages: numpy, mpi4py and the OTF2 reader), `python -m build --no-isolation
--wheel` and the wheel into a second venv, a wheel built without mpicc into a third, and
`pip install` with pip's isolated build (setuptools and wheel from Debian's wheels in
/usr/share/python-wheels, never PyPI) into a venv of a pyenv 3.12/3.13, which has no
setuptools of its own. Then the copy is removed and every installation measures a program
in a directory outside the checkout with its own `python -m scorep`, `scorep-score` and
`scorep-report`. `pip uninstall scorep` must leave each venv as it was before.
"""

import glob
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEBIAN_PYTHON = "/usr/bin/python3"
DEBIAN_WHEELS = "/usr/share/python-wheels"


def _source_version():
    """The version as src/scorep/_version.py defines it (the one place it is defined)."""
    namespace = {}
    exec((REPO / "src" / "scorep" / "_version.py").read_text(), namespace)
    return namespace["__version__"]


VERSION = _source_version()

APP = '''\
import sys


def leaf(i):
    return i * 2


def work(n):
    return sum(leaf(i) for i in range(n))


print("sum", work(1000))
sys.exit(3)
'''

MPI_APP = '''\
from mpi4py import MPI


def exchange(comm):
    comm.Barrier()
    return comm.allreduce(comm.Get_rank() + 1)


comm = MPI.COMM_WORLD
print("rank %d total %d" % (comm.Get_rank(), exchange(comm)))
'''


def _usable(python, code):
    return os.path.exists(python) and subprocess.run(
        [python, "-c", code], capture_output=True).returncode == 0


pytestmark = [
    pytest.mark.skipif(not _usable(DEBIAN_PYTHON, "import ensurepip, setuptools, wheel, venv"),
                       reason="Debian's python3 lacks venv, setuptools or wheel "
                              "(python3-venv python3-setuptools python3-wheel)"),
    pytest.mark.skipif(shutil.which("make") is None, reason="no make"),
]


def clean_env(**extra):
    """No PYTHONPATH (make pytest points it at the checkout), no SCOREP_* settings, no outer
    make's flags."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")
           and not k.startswith("SCOREP_")}
    env.update(extra)
    return env


def run(args, cwd, timeout=600, **env):
    out = subprocess.run([str(a) for a in args], cwd=str(cwd), env=clean_env(**env),
                         capture_output=True, text=True, timeout=timeout)
    return out


def check(args, cwd, **env):
    out = run(args, cwd, **env)
    assert out.returncode == 0, "`%s` failed (%d):\n%s\n%s" % (
        " ".join(map(str, args)), out.returncode, out.stdout[-3000:], out.stderr[-3000:])
    return out


def pyenv_python():
    """A pyenv CPython 3.12 or 3.13 (from SCOREP_TEST_PYTHONS or pyenv's root), or None."""
    candidates = os.environ.get("SCOREP_TEST_PYTHONS", "").split()
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    for version in ("3.12", "3.13"):
        candidates += sorted(glob.glob(os.path.join(root, "versions", version + ".*", "bin",
                                                    "python" + version)))
    for path in candidates:
        if re.search(r"python3\.1[23]$", path) and _usable(path, "import ensurepip, venv"):
            return path
    return None


def venv_files(venv):
    """Every file and directory of a venv, relative to it, without bytecode caches."""
    found = set()
    for dirpath, dirnames, filenames in os.walk(venv):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        rel = os.path.relpath(dirpath, venv)
        found.update(os.path.normpath(os.path.join(rel, name)) for name in dirnames + filenames)
    return found


def copy_checkout(destination):
    """The checkout as a fresh clone has it: sources only, nothing built or fetched."""
    def ignore(directory, names):
        skipped = {n for n in names if n in (".git", ".venv", "build", "dist", "node_modules",
                                              "__pycache__", ".pytest_cache")
                   or n.endswith((".so", ".egg-info")) or n.startswith("scorep-")}
        return skipped
    shutil.copytree(REPO, destination, ignore=ignore, symlinks=True)


def ext_suffix(python):
    return check([python, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                 cwd="/").stdout.strip()


class Venv:
    def __init__(self, base_python, path, system_site_packages):
        self.path = Path(path)
        args = [base_python, "-m", "venv"]
        if system_site_packages:
            args.append("--system-site-packages")
        check(args + [str(path)], cwd=path.parent)
        self.python = self.path / "bin" / "python"
        self.before = venv_files(self.path)

    def pip_install(self, *arguments):
        # --ignore-installed: a scorep installed system-wide (`make install-system`) is visible
        # through --system-site-packages and would make pip skip the installation under test.
        return check([self.python, "-m", "pip", "install", "--no-index", "--no-cache-dir",
                      "--ignore-installed", *arguments], cwd=self.path.parent)

    def script(self, name):
        return self.path / "bin" / name


@pytest.fixture(scope="module")
def installs(tmp_path_factory):
    """Builds and installs everything once; the copy of the checkout is gone afterwards."""
    base = tmp_path_factory.mktemp("packaging")
    source = base / "scorep-source"
    copy_checkout(source)
    venvs = {}

    # 1. pip install from the source tree, with Debian's setuptools.
    venvs["pip"] = Venv(DEBIAN_PYTHON, base / "venv-pip", True)
    out = venvs["pip"].pip_install(source, "--no-build-isolation")
    venvs["pip"].build_log = out.stdout + out.stderr

    # 2. A wheel (python -m build), and one built where there is no mpicc.
    wheels = {}
    if _usable(DEBIAN_PYTHON, "import build"):
        for kind, env in (("full", {}), ("nompi", {"MPICC": str(base / "no-such-mpicc")})):
            outdir = base / ("dist-" + kind)
            out = check([DEBIAN_PYTHON, "-m", "build", "--no-isolation", "--wheel",
                         "--outdir", outdir, source], cwd=base, **env)
            built = sorted(outdir.glob("scorep-*.whl"))
            assert len(built) == 1, out.stdout
            wheels[kind] = (built[0], out.stdout + out.stderr)

    # 3. A pyenv interpreter: pip's isolated build gets setuptools and wheel from Debian's
    #    wheels (--find-links) instead of PyPI.
    pyenv = pyenv_python()
    if pyenv and os.path.isdir(DEBIAN_WHEELS):
        venvs["pyenv"] = Venv(pyenv, base / "venv-pyenv", False)
        venvs["pyenv"].pip_install(source, "--find-links", DEBIAN_WHEELS)

    # 4. Editable (development) install: the package stays in the source tree, whose
    #    src/scorep gets the built parts, as with `make build`.
    editable = Venv(DEBIAN_PYTHON, base / "venv-editable", True)
    editable.pip_install("-e", source, "--no-build-isolation")
    out = check([editable.python, "-m", "scorep", "-c", "import scorep, scorep._bindings as b; "
                 "print(scorep.__file__); print(b.__file__)"], cwd=base,
                SCOREP_EXPERIMENT_DIRECTORY=str(base / "exp-editable"))
    assert out.stdout.splitlines() == [str(source / "src" / "scorep" / "__init__.py"),
                                       str(source / "src" / "scorep" / ("_bindings" + ext_suffix(
                                           editable.python)))]
    assert (base / "exp-editable" / "profile.cubex").is_file()
    check([editable.python, "-m", "pip", "uninstall", "-y", "scorep"], cwd=base)
    editable.left_after_uninstall = venv_files(editable.path) - editable.before

    shutil.rmtree(source)

    for kind, (wheel, log) in wheels.items():
        venv = venvs["wheel-" + kind] = Venv(DEBIAN_PYTHON, base / ("venv-wheel-" + kind), True)
        venv.wheel, venv.build_log = wheel, log
        venv.pip_install(wheel)

    work = base / "elsewhere"
    work.mkdir()
    (work / "app.py").write_text(APP)
    (work / "mpi_app.py").write_text(MPI_APP)
    (work / "child_app.py").write_text(CHILD_APP)
    return {"venvs": venvs, "work": work, "pyenv": pyenv, "has_build": bool(wheels),
            "editable": editable}


def venv_or_skip(installs, name):
    if name.startswith("wheel") and not installs["has_build"]:
        pytest.skip("python3-build is not installed")
    if name == "pyenv" and name not in installs["venvs"]:
        pytest.skip("no pyenv CPython 3.12/3.13 with venv, or no %s" % DEBIAN_WHEELS)
    return installs["venvs"][name]


CHILD_APP = (
    "import subprocess, sys\n"
    "out = subprocess.run([sys.executable, '-c', 'def in_child():\\n    pass\\nin_child()'])\n"
    "print('child', out.returncode)\n")


def measure_and_report(venv, work, tag):
    """python -m scorep, scorep-score and scorep-report of this venv, in a directory outside
    the checkout; what they write is checked with concrete values."""
    out = check([venv.python, "-c", "import scorep, sys; print(scorep.__file__); "
                 "print(sys.version_info[0], sys.version_info[1])"], cwd=work)
    location, version = out.stdout.splitlines()
    assert os.path.realpath(location).startswith(os.path.realpath(venv.path) + os.sep), location
    python_version = "%s.%s" % tuple(version.split())

    exp = work / ("exp-" + tag)
    out = run([venv.python, "-m", "scorep", "app.py"], cwd=work,
              SCOREP_EXPERIMENT_DIRECTORY=str(exp), SCOREP_ENABLE_TRACING="true")
    assert (out.returncode, out.stdout, out.stderr) == (3, "sum 999000\n", "")
    assert sorted(p.name for p in exp.iterdir()) == [
        "MANIFEST.md", "profile.cubex", "scorep.cfg", "traces", "traces.def", "traces.otf2"]

    cfg = (exp / "scorep.cfg").read_text().splitlines()
    assert re.fullmatch(r"# written by scorep %s \(Python %s\.\d+\)" % (
        re.escape(VERSION), re.escape(python_version)), cfg[0]), cfg[0]
    assert "SCOREP_ENABLE_TRACING=true" in cfg
    assert "Written by scorep %s, " % VERSION in (exp / "MANIFEST.md").read_text()

    assert check([venv.python, "-m", "scorep", "--version"], cwd=work).stdout == \
        "scorep %s\n" % VERSION
    assert check([venv.script("scorep-score"), "--version"], cwd=work).stdout == \
        "scorep-score (scorep %s)\n" % VERSION
    out = check([venv.python, "-m", "pip", "show", "scorep"], cwd=work)
    assert "\nVersion: %s\n" % VERSION in out.stdout  # the package metadata says the same

    score = check([venv.script("scorep-score"), "-r", exp], cwd=work).stdout
    assert "Estimated aggregate size of event trace" in score
    assert re.search(r"\bUSR\s+[\d,]+\s+1,000\s.*__main__:leaf$", score, re.MULTILINE), score

    report = check([venv.script("scorep-report"), exp, "--top", "20"], cwd=work).stdout
    assert re.search(r"\b1,000\s.*__main__:leaf$", report, re.MULTILINE), report
    out = check([venv.python, "-c", "import scorep._reader as r; print(r.__file__)"], cwd=work)
    assert out.stdout.startswith(str(venv.path)), out.stdout  # what reads the trace

    # The Python processes it starts join the experiment, from the installed package's
    # measure/child_site.
    child_exp = work / ("exp-child-" + tag)
    out = run([venv.python, "-m", "scorep", "child_app.py"], cwd=work,
              SCOREP_EXPERIMENT_DIRECTORY=str(child_exp))
    assert (out.returncode, out.stdout, out.stderr) == (0, "child 0\n", "")
    out = check([venv.python, "-c", "import sys; from scorep import cube; p = cube.read(sys.argv[1]); "
                 "print(len(p.location_groups), sum(1 for c in p.cnodes "
                 "if c.region.name == '__main__:in_child'))", child_exp / "profile.cubex"],
                cwd=work)
    assert out.stdout == "2 1\n"

    html = work / ("report-%s.html" % tag)
    out = check([venv.script("scorep-report"), exp, "-o", html], cwd=work)
    assert out.stdout.startswith("wrote ")
    page = html.read_text()
    assert "d3-flame-graph" in page and "flamegraph" in page  # the npm JS, inlined
    assert "__main__:leaf" in page
    return exp


def installed_files(venv):
    out = check([venv.python, "-m", "pip", "show", "-f", "scorep"], cwd=venv.path.parent)
    return [line.strip() for line in out.stdout.split("Files:", 1)[1].splitlines()
            if line.strip()]


@pytest.mark.parametrize("name", ["pip", "wheel-full", "pyenv"])
def test_installed_package_measures_outside_the_checkout(installs, name):
    venv = venv_or_skip(installs, name)
    measure_and_report(venv, installs["work"], name)
    files = installed_files(venv)
    for expected in ("scorep/libscorep_core.so", "scorep/libscorep_mpi.so",
                     "scorep/report/js/report.js", "scorep/measure/child_site/sitecustomize.py",
                     "scorep/report/js/node_modules/d3-flame-graph/dist/d3-flamegraph.umd.min.js",
                     "scorep/report/js/node_modules/d3-flame-graph/LICENSE",
                     "../../../bin/scorep-score", "../../../bin/scorep-report"):
        assert expected in files, expected
    assert [f for f in files if re.fullmatch(r"scorep/_bindings\.cpython-3\d+-.*\.so", f)]
    assert [f for f in files if re.fullmatch(r"scorep/_reader\.cpython-3\d+-.*\.so", f)]
    assert not [f for f in files if f.endswith((".c", ".h", "package.json"))], files


def test_build_runs_the_makefile(installs):
    """The C parts are built by `make native` (the Makefile), not by setuptools' compiler."""
    log = venv_or_skip(installs, "wheel-full").build_log
    assert re.search(r"make -C \S+ --no-print-directory native PYTHON=\S+ PKG_DIR=\S+", log)


def test_wheel_is_for_this_interpreter(installs):
    venv = venv_or_skip(installs, "wheel-full")
    tag = check([DEBIAN_PYTHON, "-c", "import sys; print('cp%d%d' % sys.version_info[:2])"],
                cwd=venv.path).stdout.strip()
    assert re.fullmatch(r"scorep-%s-%s-%s-linux_\w+\.whl" % (re.escape(VERSION), tag, tag),
                        venv.wheel.name)


def test_mpi_ranks_with_the_installed_wrappers(installs):
    venv = venv_or_skip(installs, "pip")
    if shutil.which("mpirun") is None or not _usable(str(venv.python), "import mpi4py"):
        pytest.skip("no mpirun or mpi4py")
    work = installs["work"]
    exp = work / "exp-mpi"
    out = run(["mpirun", "--oversubscribe", "-np", "2", venv.python, "-m", "scorep",
               "--mpp=mpi", "mpi_app.py"], cwd=work, timeout=180,
              SCOREP_EXPERIMENT_DIRECTORY=str(exp), OMPI_ALLOW_RUN_AS_ROOT="1",
              OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    assert out.returncode == 0, out.stderr
    for rank in (0, 1):  # mpirun may interleave the ranks' lines
        assert out.stdout.count("rank %d total 3" % rank) == 1, out.stdout
    score = check([venv.script("scorep-score"), "-r", exp], cwd=work).stdout
    # one visit per rank, through the installed libscorep_mpi.so
    assert re.search(r"\bMPI\s+[\d,]+\s+2\s.*\bMPI_Barrier$", score, re.MULTILINE), score
    assert re.search(r"\s2\s.*\b__main__:exchange$", score, re.MULTILINE), score


def test_without_mpicc_the_package_works_and_says_so(installs):
    venv = venv_or_skip(installs, "wheel-nompi")
    assert "no-such-mpicc not found: building without the MPI wrappers" in venv.build_log
    files = installed_files(venv)
    assert "scorep/libscorep_core.so" in files and "scorep/libscorep_mpi.so" not in files
    work = installs["work"]
    out = run([venv.python, "-m", "scorep", "app.py"], cwd=work,
              SCOREP_EXPERIMENT_DIRECTORY=str(work / "exp-nompi"))
    assert (out.returncode, out.stdout, out.stderr) == (3, "sum 999000\n", "")
    out = run([venv.python, "-m", "scorep", "--mpp=mpi", "app.py"], cwd=work,
              SCOREP_EXPERIMENT_DIRECTORY=str(work / "exp-nompi-mpi"))
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("scorep: this scorep was built without MPI support (no "
                                 "mpicc was found when it was built, ")
    assert out.stderr.count("\n") == 1


def test_kernelspec_points_at_the_venv_interpreter(installs):
    venv = venv_or_skip(installs, "pip")
    if not _usable(str(venv.python), "import jupyter_client"):
        pytest.skip("no jupyter_client")
    out = check([venv.python, "-m", "scorep.jupyter", "install", "--sys-prefix"],
                cwd=installs["work"])
    spec_dir = venv.path / "share" / "jupyter" / "kernels" / "scorep_jupyter"
    assert out.stdout == "Installed kernelspec scorep_jupyter in %s\n" % spec_dir
    spec = json.loads((spec_dir / "kernel.json").read_text())
    assert spec["argv"] == [str(venv.python), "-m", "scorep.jupyter", "-f", "{connection_file}"]
    assert "env" not in spec  # the installed package needs no PYTHONPATH
    # pip uninstall leaves a kernelspec, as with ipykernel: `jupyter kernelspec remove`
    shutil.rmtree(spec_dir)
    for parent in (spec_dir.parent, spec_dir.parent.parent, spec_dir.parent.parent.parent):
        if os.path.relpath(parent, venv.path) not in venv.before:
            parent.rmdir()


@pytest.mark.parametrize("name", ["pip", "wheel-full", "wheel-nompi", "pyenv"])
def test_uninstall_leaves_the_venv_as_it_was(installs, name):
    venv = venv_or_skip(installs, name)
    check([venv.python, "-m", "pip", "uninstall", "-y", "scorep"], cwd=venv.path.parent)
    left = venv_files(venv.path) - venv.before
    assert not left, sorted(left)
    assert not [p for p in venv_files(venv.path) if "scorep" in p.lower()]
    out = run([venv.python, "-c", "import scorep; print(scorep.__file__)"],
              cwd=installs["work"])
    assert out.returncode == 1 or not os.path.realpath(out.stdout.strip()).startswith(
        os.path.realpath(venv.path)), out.stdout


def test_make_install_runs_pip_for_the_interpreter(tmp_path):
    """`make install` (tools/install.py) only chooses pip's options; --dry-run prints them."""
    venv = tmp_path / "v"
    out = check([DEBIAN_PYTHON, REPO / "tools" / "install.py", "--dry-run", "--venv", venv],
                cwd=tmp_path)
    python = str(venv / "bin" / "python")
    assert out.stdout.splitlines() == [
        "$ %s -m venv --system-site-packages %s" % (DEBIAN_PYTHON, venv),
        "$ %s -m pip install --no-index --no-build-isolation %s" % (python, REPO),
        "$ %s -m scorep.jupyter install --sys-prefix" % python]
    assert not venv.exists()
    # a relative DIR (make's default .venv) is the one below the current directory, even
    # though the commands run in /
    out = check([DEBIAN_PYTHON, REPO / "tools" / "install.py", "--dry-run", "--venv", "v"],
                cwd=tmp_path)
    assert out.stdout.splitlines()[0] == "$ %s -m venv --system-site-packages %s" % (
        DEBIAN_PYTHON, venv)

    out = check([DEBIAN_PYTHON, REPO / "tools" / "install.py", "--dry-run"], cwd=tmp_path)
    # Debian's python3 is externally managed: system-wide (root) or ~/.local, never its own
    # directories; the kernelspec for the same interpreter
    where = "--root-user-action=ignore" if os.getuid() == 0 else "--user"
    assert out.stdout.splitlines()[0] == (
        "$ %s -m pip install --no-index --no-build-isolation %s --break-system-packages %s"
        % (DEBIAN_PYTHON, where, REPO))

    pyenv = pyenv_python()
    if pyenv:  # no setuptools of its own: pip's isolated build with Debian's wheels
        out = check([pyenv, REPO / "tools" / "install.py", "--dry-run",
                     "--wheels", DEBIAN_WHEELS], cwd=tmp_path)
        assert out.stdout.splitlines()[0].startswith(
            "$ %s -m pip install --no-index --find-links %s " % (pyenv, DEBIAN_WHEELS))


def make_dry_run(target, **variables):
    """The commands `make -n TARGET` would run (the Makefile's recipes, nothing executed)."""
    out = check(["make", "-n", "--no-print-directory", target] +
                ["%s=%s" % item for item in variables.items()], cwd=REPO)
    return out.stdout.splitlines()


def test_the_readme_commands_install_into_the_project_venv_only():
    """`make demo` (and so `make install`) installs into the checkout's own .venv, never into
    an interpreter's site-packages: a system-wide scorep would shadow the venvs the packaging
    tests and a user's own venvs make with --system-site-packages. System-wide is the separate
    target `install-system`."""
    install = [line for line in make_dry_run("demo") if "tools/install.py" in line]
    assert install == ["/usr/bin/python3 tools/install.py --venv .venv --wheels %s"
                       % DEBIAN_WHEELS]
    assert make_dry_run("demo")[-1] == ".venv/bin/python tools/demo.py"
    assert not [line for line in make_dry_run("test") if "install.py" in line or "pip install" in line]
    system = [line for line in make_dry_run("install-system") if "tools/install.py" in line]
    assert system == ["/usr/bin/python3 tools/install.py --wheels %s" % DEBIAN_WHEELS]
    assert "/.venv/" in (REPO / ".gitignore").read_text().splitlines()


def test_editable_install_and_uninstall(installs):
    """pip install -e ran from the source tree (checked while it existed) and its
    uninstall left the venv as it was."""
    assert not installs["editable"].left_after_uninstall
