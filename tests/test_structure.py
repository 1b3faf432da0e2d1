"""The package's structural rules (ARCHITECTURE.md): one error root whose classes carry the
exit status, one module importing the native extension, the C constants exported rather
than repeated, and the core's defaults agreeing with the configuration's."""

import re
from pathlib import Path

import pytest

from conftest import SRC

from scorep import _errors, _native, cube, score
from scorep.measure import cli as _cli, config as _config, filter as _filter, session as _measurement, mpi as _mpi
from scorep._errors import ScorepError
from scorep.jupyter import magics, results
from scorep.report import cli as report_cli
from scorep.report import model as report_model


def test_every_error_class_has_the_one_root_and_its_exit_status():
    statuses = {
        _cli.UsageError: 2, report_cli.UsageError: 2, magics.SettingsError: 2,
        results.UsageProblem: 2,
        _cli.HelpRequested: 0,
        _config.ConfigError: 1, _filter.FilterError: 1, _measurement.MeasurementError: 1,
        _mpi.MPIError: 1, cube.CubeError: 1, report_model.ReportError: 1,
        score.ScoreError: 1,
    }
    for cls, status in statuses.items():
        assert issubclass(cls, ScorepError), cls
        assert cls("x").status == status, cls
    # One UsageError, not two.
    assert _cli.UsageError is report_cli.UsageError is _errors.UsageError
    # Callers that catch the built-in bases keep working.
    assert issubclass(_config.ConfigError, ValueError)
    assert issubclass(_filter.FilterError, _config.ConfigError)
    assert issubclass(magics.SettingsError, ValueError)
    assert issubclass(_measurement.MeasurementError, RuntimeError)
    assert issubclass(_mpi.MPIError, _measurement.MeasurementError)
    # A status given where it is raised wins.
    assert _errors.UsageError("no script", status=1).status == 1


def test_only_scorep_native_imports_the_extension():
    importers = []
    for path in sorted((Path(SRC) / "scorep").rglob("*.py")):
        text = path.read_text()
        if re.search(r"^\s*(from scorep import _bindings|import scorep\._bindings|"
                     r"from scorep\._bindings import)", text, re.M):
            importers.append(path.relative_to(SRC).as_posix())
    assert importers == ["scorep/_native.py"]


def test_the_core_exports_its_sizes_and_limits():
    native = _native.load()
    assert native.CHUNK_SIZE == 256 * 1024
    assert native.TRACE_RECORD_SIZE == 16
    assert native.TRACE_CHUNK_HEADER_SIZE == 16
    assert native.PROFILE_BLOCK_NODES == 2048
    assert native.PROFILE_MAX_PARAMETER_VALUES == 256
    assert native.MAX_LOCATIONS == 65536
    assert _native.constant("CHUNK_SIZE") == native.CHUNK_SIZE


def test_the_core_defaults_the_call_path_depth_as_the_configuration_does(tmp_path):
    native = _native.load()
    # every option at the core's own default
    native.start(dict(native.start_defaults(), experiment_dir=str(tmp_path)))
    native.finalize(0)
    profile = cube.read(tmp_path)
    assert profile.attrs["scorep::max_callpath_depth"] == \
        _config.VARIABLES["SCOREP_PROFILING_MAX_CALLPATH_DEPTH"][0] == "128"


def test_start_takes_exactly_the_fields_of_the_cores_table(tmp_path):
    """start() used to parse 36 keywords with a hand-kept format string: one wrong letter
    parsed the wrong argument. Now a missing, unknown or mistyped field is named."""
    native = _native.load()
    fields = dict(native.start_defaults(), experiment_dir=str(tmp_path))
    assert len(fields) == 39 and fields["max_callpath_depth"] == 128
    assert fields["timer"] == "tsc" and fields["profiling"] is True
    missing = dict(fields)
    del missing["mpi_timeout"]
    with pytest.raises(KeyError, match="configuration field 'mpi_timeout' is missing"):
        native.start(missing)
    with pytest.raises(KeyError, match="no configuration field 'mpi_timout'"):
        native.start(dict(fields, mpi_timout=1.0))
    with pytest.raises(TypeError, match="field 'max_callpath_depth' must be an int, not str"):
        native.start(dict(fields, max_callpath_depth="12"))
    with pytest.raises(TypeError, match="field 'exclude_dirs' must be a sequence, not int"):
        native.start(dict(fields, exclude_dirs=3))
    assert not native.running()
    # The session passes exactly these fields (a drift would fail every start).
    callers = [p.read_text() for p in sorted((Path(SRC) / "scorep").rglob("*.py"))
               if "native.start(dict(" in p.read_text()]
    assert len(callers) == 1
    call = callers[0][callers[0].index("native.start(dict("):]
    call = call[:call.index("))\n")]
    assert set(re.findall(r"^\s+(\w+)=", call, re.M)) == set(fields)


def _run(body, argv=(), usage_hint=False):
    import io
    from contextlib import redirect_stderr
    err = io.StringIO()
    with redirect_stderr(err):
        status = _errors.run_tool("tool", body, list(argv), usage_hint=usage_hint)
    return status, err.getvalue()


def test_run_tool_turns_scorep_errors_into_one_line_and_lets_bugs_through():
    def damaged(argv):
        raise report_model.DamagedInputError("the input is damaged or inconsistent\n(x)")

    def usage(argv):
        raise _errors.UsageError("unknown option --x")

    def bug(argv):
        return {}["missing"]  # a KeyError of the tool's own code

    assert _run(lambda argv: len(argv), ["a", "b"]) == (2, "")
    assert _run(damaged) == (1, "tool: the input is damaged or inconsistent (x)\n")
    assert _run(usage, usage_hint=True) == (2, "tool: unknown option --x (see tool --help)\n")
    assert _run(usage) == (2, "tool: unknown option --x\n")
    import pytest
    with pytest.raises(KeyError):
        _run(bug)


def test_damaged_input_is_raised_where_it_is_read():
    @report_model.reads_input
    def read(table, index):
        return table[index]

    import pytest
    with pytest.raises(report_model.DamagedInputError) as error:
        read([1, 2], 5)
    assert str(error.value) == "the input is damaged or inconsistent (IndexError: list index " \
        "out of range)"
    # The readers' own errors pass unchanged (ConfigError is a ValueError too).
    with pytest.raises(report_model.ReportError) as error:
        report_model.reads_input(lambda: (_ for _ in ()).throw(report_model.ReportError("no")))()
    assert type(error.value) is report_model.ReportError
