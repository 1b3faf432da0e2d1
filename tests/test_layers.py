"""The include-rule check of tools/check_layers.py: the real tree follows ARCHITECTURE.md's
dependency rules, and each rule catches a file that breaks it."""

import subprocess
import sys

from conftest import REPO

CHECK = REPO / "tools" / "check_layers.py"


def run_check(root):
    return subprocess.run([sys.executable, str(CHECK), str(root)], capture_output=True,
                          text=True)


def test_the_native_tree_follows_the_rules():
    out = run_check(REPO / "src" / "scorep" / "_native")
    assert out.returncode == 0, out.stdout
    assert out.stdout == ""


def write(root, rel, *includes):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join('#include "%s"\n' % i for i in includes))


def test_each_rule_catches_its_violation(tmp_path):
    write(tmp_path, "core/substrates.h", "substrates/trace/trace.h")  # allowed
    write(tmp_path, "core/events.c", "core/substrates.h", "substrates/profile/profile.h")
    write(tmp_path, "substrates/profile/tree.c", "core/measurement.h", "substrates/trace/trace.h")
    write(tmp_path, "substrates/trace/encode.c", "otf2/otf2.h", "core/substrates.h")
    write(tmp_path, "adapters/mpi/p2p.c", "core/measurement.h", "otf2/otf2.h",
          "adapters/python/python.h")
    write(tmp_path, "adapters/io/posix.c", "substrates/trace/trace.h", "core/core_internal.h")
    write(tmp_path, "bindings/module.c", "adapters/python/internal.h")
    out = run_check(tmp_path)
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    assert lines == [
        "adapters/io/posix.c:1: includes substrates/trace/trace.h: adapters see only the core, "
        "never a substrate",
        "adapters/io/posix.c:2: includes core/core_internal.h: core/core_internal.h belongs to "
        "the core's own files",
        "adapters/mpi/p2p.c:2: includes otf2/otf2.h: adapters never include OTF2",
        "adapters/mpi/p2p.c:3: includes adapters/python/python.h: adapters never include each "
        "other",
        "bindings/module.c:1: includes adapters/python/internal.h: the bindings use only the "
        "public headers of the Python and the child processes' adapters",
        "core/events.c:2: includes substrates/profile/profile.h: the core names substrates only "
        "in core/substrates.h",
        "substrates/profile/tree.c:2: includes substrates/trace/trace.h: substrates never "
        "include each other",
        "substrates/trace/encode.c:2: includes core/substrates.h: a substrate never includes "
        "core/substrates.h (it names the other substrates)",
        "8 use(s) break the layering rules of ARCHITECTURE.md",
    ]


def test_an_adapter_touching_the_cores_state_fails(tmp_path):
    """measurement.h used to expose the whole sp_measurement struct, which adapters
    (mpi/spawn.c, metrics/papi.c) and the bindings read and wrote directly."""
    write(tmp_path, "substrates/trace/trace.h", "core/measurement_state.h")  # allowed
    write(tmp_path, "core/measurement.c", "core/measurement_state.h")  # allowed
    (tmp_path / "adapters" / "mpi").mkdir(parents=True)
    (tmp_path / "adapters" / "mpi" / "spawn.c").write_text(
        '#include "core/measurement.h"\n'
        '/* sp_meas in a comment is no use */\n'
        'static const char *why = "nor sp_meas in a string";\n'
        'static bool on(void)\n'
        '{\n'
        '    return sp_meas.config.mpi && sp_meas.grouped;\n'
        '}\n')
    write(tmp_path, "adapters/metrics/papi.c", "core/measurement_state.h")
    write(tmp_path, "bindings/module.c", "core/measurement.h")
    (tmp_path / "bindings" / "module.c").write_text(
        '#include "core/measurement.h"\nint r(void) { return sp_meas.recording; }\n')
    out = run_check(tmp_path)
    assert out.returncode == 1
    state = "names sp_meas: adapters and the bindings use the functions of " \
            "core/measurement.h, never the core's state"
    assert out.stdout.splitlines() == [
        "adapters/metrics/papi.c:1: includes core/measurement_state.h: "
        "core/measurement_state.h belongs to the core and the substrates; use "
        "core/measurement.h",
        "adapters/mpi/spawn.c:6: " + state,
        "adapters/mpi/spawn.c:6: " + state,
        "bindings/module.c:2: " + state,
        "4 use(s) break the layering rules of ARCHITECTURE.md",
    ]


def run_python_check(package):
    return subprocess.run([sys.executable, str(CHECK), "--python", str(package)],
                          capture_output=True, text=True)


def test_the_python_package_follows_the_rules():
    out = run_python_check(REPO / "src" / "scorep")
    assert (out.returncode, out.stdout) == (0, "")


def write_module(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_each_python_rule_catches_its_violation(tmp_path):
    package = tmp_path / "scorep"
    write_module(package, "__init__.py", "")
    write_module(package, "_errors.py", "")
    write_module(package, "_native.py", "from scorep import _bindings\n")  # allowed
    # A cycle hidden in functions (the lazy imports of two modules of one layer).
    write_module(package, "measure/__init__.py", "")
    write_module(package, "measure/session.py",
                 "def start():\n    from scorep.measure import children\n")
    write_module(package, "measure/children.py",
                 "import os\n\n\ndef fork():\n    if os:\n"
                 "        import scorep.measure.session as s\n        return s\n")
    # A reading tool importing the measurement, the extension past _native, a private name.
    write_module(package, "report/__init__.py", "")
    write_module(package, "report/model.py",
                 "from scorep._errors import ScorepError\n\n\ndef f():\n"
                 "    from scorep.measure.session import start\n"
                 "    from scorep import _bindings\n"
                 "    from scorep.measure.children import _saved\n")
    write_module(package, "user.py", "from scorep.measure import session\n"
                 "session._finalize_at_exit()\n")
    out = run_python_check(package)
    assert out.returncode == 1
    assert out.stdout.splitlines() == [
        "scorep/measure/children.py:6: import cycle scorep.measure.children -> "
        "scorep.measure.session -> scorep.measure.children",
        "scorep/report/model.py:5: imports scorep.measure.session: the reading tools layer "
        "never imports the measurement layer (above it)",
        "scorep/report/model.py:6: imports scorep._bindings: only scorep._native imports the "
        "extension",
        "scorep/report/model.py:7: imports scorep.measure.children: the reading tools layer "
        "never imports the measurement layer (above it)",
        "scorep/report/model.py:7: uses scorep.measure.children._saved: a name with a leading "
        "underscore is its module's own",
        "scorep/user.py:1: imports scorep.measure.session: the user api layer never imports "
        "the measurement layer (above it)",
        "scorep/user.py:2: uses scorep.measure.session._finalize_at_exit: a name with a leading "
        "underscore is its module's own",
        "7 import(s) break the layering rules of ARCHITECTURE.md",
    ]
