"""scorep-score (scorep.score): the table against programs with known call counts, the byte
model against the real trace of the same run, the SCOREP_TOTAL_MEMORY hint against real
flushes, -r / -s / -f / -g, the Score-P sample profiles, and every error path.

The command line is run as a separate process (`python -m scorep.score`), as users run it;
the model's numbers are also checked through the API (scorep.score.estimate)."""

import collections
import csv
import io
import math
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from conftest import Trace, otf2_print, program, run, run_scorep, scorep_env
from scorep import _native, cube, score

CHUNK_BYTES = _native.constant("CHUNK_SIZE")

SAMPLES = Path(__file__).resolve().parent / "data" / "cube-samples"
TIME_P4 = SAMPLES / "time.p4.n2000.x1.r0"
CALL_TREE = SAMPLES / "call_tree_test"
KRIPKE = SAMPLES / "kripke.p8.d2.g32.r1"

PYTHON = sys.executable
# The estimate of a location's .evt file may miss by what the profile cannot know (the
# number of program arguments, string ids, the unused tail of OTF2 chunks).
SIZE_TOLERANCE = 0.01


def scorep_score(*args, cwd=None):
    env = scorep_env()
    return run([PYTHON, "-m", "scorep.score"] + [str(a) for a in args], env=env, cwd=cwd)


def ok(*args, cwd=None):
    out = scorep_score(*args, cwd=cwd)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    return out.stdout


class Row:
    def __init__(self, line):
        self.flt = line[1]
        fields = line[3:].split(None, 6)
        self.type = fields[0]
        self.max_buf = int(fields[1].replace(",", ""))
        self.visits = int(fields[2].replace(",", ""))
        self.time = float(fields[3])
        self.percent = float(fields[4])
        self.per_visit = float(fields[5])
        self.name = fields[6]

    def __repr__(self):
        return "Row(%s %s %s)" % (self.flt, self.type, self.name)


def parse(text):
    """(summary lines, [section of Rows, ...]): the sections are the groups, the filtered
    groups (with -f) and the regions (with -r), separated by blank lines; whatever follows
    the table (the -g message) is not a row and ends it."""
    lines = text.splitlines()
    header = next(i for i, l in enumerate(lines) if l.startswith("flt "))
    sections, current = [], []
    for line in lines[header + 1:]:
        if not line.strip():
            if current:
                sections.append(current)
            current = []
        elif line.startswith(" ") and line[2:4] == "  ":
            current.append(Row(line))
        else:
            break
    if current:
        sections.append(current)
    return lines[:header], sections


def summary_value(lines, prefix):
    line = next(l for l in lines if l.startswith(prefix))
    return line[len(prefix):].strip()


def to_bytes(text):
    match = re.match(r"^(\d+)\s*(bytes|kB|MB|GB)$", text)
    assert match, text
    return int(match.group(1)) * {"bytes": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[
        match.group(2)]


def by_name(rows):
    return {r.name: r for r in rows}


def evt_sizes(experiment):
    """.evt sizes by location index: the files are named by location id, which is
    (thread index << 32) | rank as in Score-P (rank 0 here)."""
    return {int(p.stem) >> 32: p.stat().st_size
            for p in (Path(experiment) / "traces").glob("*.evt")}


# ---- runs shared by the tests ----------------------------------------------------------------

@pytest.fixture(scope="module")
def calls(tmp_path_factory):
    """score_calls.py traced and profiled in one run: the profile and the trace of the same
    events."""
    exp = tmp_path_factory.mktemp("score") / "calls"
    out = run_scorep(PYTHON, [program("score_calls.py")], exp, SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    return exp


@pytest.fixture(scope="module")
def calls_regions(calls):
    summary, sections = parse(ok("-r", calls))
    assert len(sections) == 2
    return summary, sections[0], sections[1]


# ---- the table -----------------------------------------------------------------------------

def test_visits_bytes_and_groups_of_known_calls(calls_regions):
    summary, groups, regions = calls_regions
    rows = by_name(regions)
    assert {n: rows[n].visits for n in ("__main__:hot", "__main__:medium", "__main__:slow",
                                        "__main__:driver", "__main__.Box:area", "user:tagged",
                                        "__main__:<module>", "score_calls.py")} == {
        "__main__:hot": 20000, "__main__:medium": 300, "__main__:slow": 3,
        "__main__:driver": 1, "__main__.Box:area": 2, "user:tagged": 8,
        "__main__:<module>": 1, "score_calls.py": 1}
    # Region ids below 256: 12 bytes per enter and per leave.
    assert rows["__main__:hot"].max_buf == 20000 * 24
    assert rows["__main__:medium"].max_buf == 300 * 24
    # 8 visits plus 8 parameter events: 14 bytes for k = 0 (twice), 15 for k = 1..3.
    assert rows["user:tagged"].max_buf == 8 * 24 + 2 * 14 + 6 * 15
    assert rows["score_calls.py"].type == "SCOREP"
    assert all(r.type == "USR" for r in regions if r.name != "score_calls.py")

    assert [g.name for g in groups] == ["ALL", "USR", "SCOREP"]
    assert all(g.flt == " " for g in groups + regions)
    all_row, usr, scorep_row = groups
    assert all_row.visits == usr.visits + scorep_row.visits == sum(r.visits for r in regions)
    assert all_row.max_buf == usr.max_buf + scorep_row.max_buf  # one location
    assert all_row.max_buf == sum(r.max_buf for r in regions)
    assert math.isclose(all_row.time, usr.time + scorep_row.time, abs_tol=0.011)
    assert all_row.percent == 100.0
    # slow() sleeps 3 x 40 ms: at least that much exclusive time, 40 ms a visit.
    assert rows["__main__:slow"].time >= 0.12
    assert rows["__main__:slow"].per_visit >= 40000
    assert rows["__main__:hot"].per_visit < 1.0
    assert summary_value(summary, "Estimated aggregate size of event trace:") == \
        score.readable_bytes(all_row.max_buf)


def test_visits_equal_enters_in_the_trace_of_the_same_run(calls_regions, calls):
    _, _, regions = calls_regions
    trace = Trace(calls)
    enters = {}
    for e in trace.of("Enter"):
        enters[e.region] = enters.get(e.region, 0) + 1
    visits = {}
    for r in regions:
        if r.type != "SCOREP":
            visits[r.name] = visits.get(r.name, 0) + r.visits
    assert visits == enters
    program_rows = [r for r in regions if r.type == "SCOREP"]
    assert sum(r.visits for r in program_rows) == len(trace.of("ProgramBegin")) == 1


def test_r_lists_every_visited_region_once(calls_regions, calls):
    _, _, regions = calls_regions
    profile = cube.read(calls)
    visits = profile.values("visits", inclusive=False)
    visited = sorted(c.region.name for c in profile.cnodes
                     if sum(visits[c.id]) and not c.parameters)
    assert sorted(r.name for r in regions) == sorted(set(visited))
    # Without -r: the groups only.
    _, sections = parse(ok(calls))
    assert len(sections) == 1 and [g.name for g in sections[0]] == ["ALL", "USR", "SCOREP"]


def test_m_shows_canonical_names(calls):
    _, sections = parse(ok("-r", "-m", calls))
    names = [r.name for r in sections[1]]
    assert "__main__:Box.area" in names and "__main__.Box:area" not in names


@pytest.mark.parametrize("mode", ["maxbuffer", "maxbuf", "visits", "totaltime", "name",
                                  "timepervisit"])
def test_sort_orders(calls, mode):
    _, sections = parse(ok("-r", "-s", mode, calls))
    groups, regions = sections
    # Score-P sorts ALL with the groups: it comes first but for time per visit, where the
    # average is larger than the tiny functions' USR group.
    assert groups == sorted(groups, key={
        "maxbuffer": lambda g: -g.max_buf, "maxbuf": lambda g: -g.max_buf,
        "visits": lambda g: -g.visits, "totaltime": lambda g: -g.time,
        "name": lambda g: g.name, "timepervisit": lambda g: g.per_visit}[mode])
    if mode != "timepervisit":
        assert groups[0].name == "ALL"
    names = [r.name for r in regions]
    known = ["__main__:hot", "__main__:medium", "user:tagged", "__main__:slow",
             "__main__:driver"]
    order = [n for n in names if n in known]
    if mode in ("maxbuffer", "maxbuf"):
        assert order == known  # 480,000 > 7,200 > 310 > 72 > 24
        assert [r.max_buf for r in regions] == sorted((r.max_buf for r in regions), reverse=True)
        assert [g.name for g in groups] == ["ALL", "USR", "SCOREP"]
    elif mode == "visits":
        assert order == known  # 20,000 > 300 > 8 > 3 > 1
        assert [r.visits for r in regions] == sorted((r.visits for r in regions), reverse=True)
    elif mode == "totaltime":
        assert [n for n in names if n in ("__main__:slow", "__main__:medium",
                                          "user:tagged")] == \
            ["__main__:slow", "__main__:medium", "user:tagged"]
        assert [r.time for r in regions] == sorted((r.time for r in regions), reverse=True)
    elif mode == "name":
        assert names == sorted(names)
        assert names[0] == "__main__.Box:area" and names[-1] == "user:tagged"
    else:
        assert [r.per_visit for r in regions] == sorted(r.per_visit for r in regions)
        assert names.index("__main__:hot") < names.index("__main__:medium") < \
            names.index("__main__:slow")


def test_default_sort_is_maxbuffer(calls):
    assert ok("-r", calls) == ok("-r", "-s", "maxbuffer", calls)


# ---- the byte model ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["score_calls.py", "score_regions.py", "threads.py"])
def test_estimate_matches_the_trace_of_the_same_run(tmp_path, calls, name):
    if name == "score_calls.py":
        exp = calls
    else:
        exp = tmp_path / "exp"
        out = run_scorep(PYTHON, [program(name)], exp, SCOREP_ENABLE_TRACING="true")
        assert out.returncode == 0, out.stderr
    est = score.estimate(cube.read(exp))
    real = evt_sizes(exp)
    assert sorted(real) == list(range(len(est.profile.locations)))
    for location, size in real.items():
        assert est.scenario.location_bytes[location] == pytest.approx(size, rel=SIZE_TOLERANCE)
    assert est.scenario.total_bytes == pytest.approx(sum(real.values()), rel=SIZE_TOLERANCE)
    summary, sections = parse(ok(exp))
    assert sections[0][0].max_buf == est.scenario.max_buf
    assert to_bytes(summary_value(
        summary, "Estimated requirements for largest trace buffer (max_buf):")) >= \
        max(real.values()) * (1 - SIZE_TOLERANCE)
    if name == "score_regions.py":
        rows = {r.region.name: r for r in est.rows}
        # g0 has region id 6, g299 id 305: 12 and 13 bytes per event, 11 visits each.
        assert rows["__main__:g0"].region.id < 256 <= rows["__main__:g299"].region.id
        assert rows["__main__:g0"].max_buf == 11 * 24
        assert rows["__main__:g299"].max_buf == 11 * 26
    if name == "threads.py":
        assert len(real) == 3


# The raw records each OTF2 event stands for, by the names of the native table.
_RECORDS_OF_EVENT = {
    "Enter": ["enter"], "Leave": ["leave"], "ProgramBegin": ["program_begin"],
    "ProgramEnd": ["program_end"], "ParameterInt": ["parameter"],
    "ParameterUnsignedInt": ["parameter"], "ParameterString": ["parameter"],
    "IoCreateHandle": ["io_create_handle"], "IoDestroyHandle": ["io_destroy_handle"],
    "IoDuplicateHandle": ["io_duplicate_handle"], "IoSeek": ["io_seek"],
    "IoOperationBegin": ["io_operation_begin"], "IoOperationComplete": ["io_operation_complete"],
}


def test_records_estimate_reads_the_native_tables_and_matches_the_trace(tmp_path):
    """Issue 35: the records per event and the I/O functions' events are the trace
    substrate's and the I/O adapter's tables, exported by the extension, not numbers
    scorep-score repeats; the estimate of a run counts as many raw records as its trace
    holds events times the table's records."""
    from scorep.score import measured
    native = _native.load()
    assert measured.trace_records() is native.TRACE_RECORDS
    assert measured.io_calls() is native.IO_CALLS
    records = native.TRACE_RECORDS
    assert (records["enter"], records["leave"], records["program_end"], records["io_seek"],
            records["io_destroy_handle"], records["io_operation_begin"]) == (1, 1, 2, 3, 1, 2)
    calls = native.IO_CALLS
    assert (calls["fopen"], calls["open"], calls["fclose"], calls["read"], calls["fsync"],
            calls["dup"], calls["lseek"], calls["fcntl"]) == (
        ("create", 2), ("create", 1), ("destroy", 2), ("transfer", 1), ("flush", 1),
        ("duplicate", 1), ("seek", 1), ("duplicate", 1))
    exp = tmp_path / "exp"
    out = run_scorep(PYTHON, ["--io=runtime:posix", program("score_io.py"), tmp_path / "data"], exp,
                     SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    assert out.stdout == "10\n"
    trace = Trace(exp)
    kinds = collections.Counter(e.kind for e in trace.events)
    assert set(kinds) <= set(_RECORDS_OF_EVENT), kinds
    assert kinds["IoSeek"] >= 3 and kinds["IoDuplicateHandle"] == 3 and kinds["IoCreateHandle"] >= 4
    in_trace = sum(n * sum(records[name] for name in _RECORDS_OF_EVENT[kind])
                   for kind, n in kinds.items())
    est = score.estimate(cube.read(exp))
    assert est.scenario.records == [in_trace]


def test_compressed_sizes_and_readable_bytes():
    assert [score.compressed_size(v) for v in (0, 1, 255, 256, 65535, 65536, 2**32, -1)] == \
        [1, 2, 2, 3, 3, 4, 6, 9]
    # Score-P's get_user_readable_byte_no: divided while above 4 units, then 1 added.
    assert score.readable_bytes(913) == "914 bytes"
    assert score.readable_bytes(4096) == "4097 bytes"
    assert score.readable_bytes(4097) == "5kB"
    assert score.readable_bytes(585893) == "573kB"
    assert score.readable_bytes(1 << 20) == "1025kB"
    assert score.readable_bytes(4 << 20) == "4097kB"
    assert score.readable_bytes(27 * 256 * 1024) == "7MB"
    assert score.readable_bytes(5 << 40) == "6TB"


# ---- the memory model ----------------------------------------------------------------------

def _trace_with_memory(tmp_path, name, memory):
    exp = tmp_path / name
    out = run_scorep(PYTHON, [program("score_memory.py")], exp, SCOREP_ENABLE_TRACING="true",
                     SCOREP_TOTAL_MEMORY=memory)
    assert out.returncode == 0, out.stderr
    return exp, out.stderr


def test_total_memory_hint_avoids_flushes_and_less_memory_flushes(tmp_path):
    profile_run = tmp_path / "profile"
    out = run_scorep(PYTHON, [program("score_memory.py")], profile_run)
    assert out.returncode == 0, out.stderr
    summary, _ = parse(ok(profile_run))
    hint = summary_value(summary, "Estimated memory requirements (SCOREP_TOTAL_MEMORY):")
    assert "(hint: When tracing set SCOREP_TOTAL_MEMORY=%s to avoid intermediate flushes" \
        % hint in summary
    est = score.estimate(cube.read(profile_run))
    s = est.scenario
    # 150,000 calls of tiny() and 2,460 others: about 305,000 raw records, 19 chunks of
    # 16,383; 2,400 call paths and a few dozen more: 2 blocks of 2,048 nodes; one chunk to
    # encode the trace at the end.
    assert 304900 < s.records[0] < 305100
    assert 2400 < s.nodes[0] < 2600
    assert s.trace_chunks == [19] and s.profile_chunks == [2]
    assert s.max_run_chunks == 21 and s.total_memory == 22 * CHUNK_BYTES
    assert hint == "6MB" and to_bytes(hint) >= s.total_memory

    exp, stderr = _trace_with_memory(tmp_path, "hinted", hint)
    assert "flushed" not in stderr
    assert "BUFFER_FLUSH" not in otf2_print(str(exp / "traces.otf2"))

    exp, stderr = _trace_with_memory(tmp_path, "half", "%dk" % (to_bytes(hint) // 2048))
    assert "flushed" in stderr
    assert "BUFFER_FLUSH" in otf2_print(str(exp / "traces.otf2"))

    # The model is exact: the run needs its 21 chunks (trace and profile), one less flushes.
    chunk_k = CHUNK_BYTES // 1024
    _, stderr = _trace_with_memory(tmp_path, "exact", "%dk" % (s.max_run_chunks * chunk_k))
    assert "flushed" not in stderr
    _, stderr = _trace_with_memory(tmp_path, "one_less",
                                   "%dk" % ((s.max_run_chunks - 1) * chunk_k))
    assert "flushed to disk 1 time(s)" in stderr


# ---- -f ------------------------------------------------------------------------------------

def test_filter_flags_and_filtered_groups(calls, calls_regions, tmp_path):
    _, groups, regions = calls_regions
    flt = tmp_path / "my.filter"
    flt.write_text("SCOREP_REGION_NAMES_BEGIN\n"
                   "  EXCLUDE __main__:medium user:tagged\n"
                   "SCOREP_REGION_NAMES_END\n"
                   "SCOREP_FILE_NAMES_BEGIN\n"
                   "  EXCLUDE */threading.py\n"
                   "SCOREP_FILE_NAMES_END\n")
    summary, sections = parse(ok("-r", "-f", flt, calls))
    before, after, listed = sections
    flags = {r.name: r.flt for r in listed}
    excluded = {n for n, f in flags.items() if f == "+"}
    threading_regions = {r.name for r in regions if r.name.startswith("threading")}
    assert threading_regions
    assert excluded == {"__main__:medium", "user:tagged"} | threading_regions
    assert flags["__main__:hot"] == flags["__main__:slow"] == flags["score_calls.py"] == "-"
    assert set(flags.values()) == {"+", "-"}

    assert [(g.flt, g.name) for g in before] == [("-", "ALL"), ("-", "USR"), ("-", "SCOREP")]
    assert [(g.flt, g.name) for g in after] == [
        ("*", "ALL-FLT"), ("*", "USR-FLT"), ("+", "FLT"), ("-", "SCOREP-FLT")]
    rows = by_name(regions)
    all_flt, usr_flt, flt_group, scorep_flt = after
    filtered_visits = sum(rows[n].visits for n in excluded)
    assert flt_group.visits == filtered_visits == 300 + 8 + sum(
        rows[n].visits for n in threading_regions)
    assert flt_group.max_buf == sum(rows[n].max_buf for n in excluded)
    assert all_flt.visits == before[0].visits - filtered_visits
    assert all_flt.max_buf == usr_flt.max_buf + scorep_flt.max_buf
    assert math.isclose(all_flt.time + flt_group.time, before[0].time, abs_tol=0.011)
    # The summary is the filtered measurement's.
    est = score.estimate(cube.read(calls))
    assert summary_value(summary, "Estimated aggregate size of event trace:") == \
        score.readable_bytes(all_flt.max_buf)
    assert all_flt.max_buf < est.unfiltered.total_bytes


def test_filter_never_marks_mpi_or_measurement_regions(tmp_path):
    flt = tmp_path / "everything.filter"
    flt.write_text("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE *\nSCOREP_REGION_NAMES_END\n")
    _, sections = parse(ok("-r", "-f", flt, TIME_P4))
    listed = sections[2]
    assert {r.flt for r in listed if r.type in ("USR", "COM")} == {"+"}
    assert {r.flt for r in listed if r.type in ("MPI", "SCOREP")} == {"-"}
    after = by_name(sections[1])
    assert after["FLT"].visits == 16814064 + 2008
    assert after["ALL-FLT"].visits == 2616 + 4


# ---- -g ------------------------------------------------------------------------------------

def region_rules(text):
    """The lines of a filter file's region block that are not comments: real scorep-score
    -g writes one EXCLUDE, then one MANGLED <name> line per region."""
    block = text.split("SCOREP_REGION_NAMES_BEGIN\n", 1)[1].split("SCOREP_REGION_NAMES_END")[0]
    return [l.strip() for l in block.splitlines() if l.strip() and not l.strip().startswith("#")]


def test_generate_writes_a_filter_that_the_measurement_applies(calls, tmp_path):
    out = ok("-g", calls, cwd=tmp_path)
    path = tmp_path / score.FILTER_FILE_NAME
    assert "An initial filter file template has been generated: '%s'" % path in out
    text = path.read_text()
    assert region_rules(text) == ["EXCLUDE", "MANGLED __main__:hot"]
    assert text.splitlines()[-1] == "SCOREP_REGION_NAMES_END"
    comment = text[:text.index("    MANGLED __main__:hot")].splitlines()[-3:]
    assert re.match(r"^    # type=USR max_buf=\s*480,000 visits=\s*20,000, time=\s*\d+\.\d\ds "
                    r"\(\s*\d+\.\d%\), time/visit=\s+0\.\d\dus$", comment[0]), comment
    assert comment[1] == "    # name='__main__:hot'"
    # Files are shown without the common prefix the header names (as Score-P does).
    prefix = re.search(r"^# The common prefix for the files is:\n# '(.*)'$", text, re.M).group(1)
    assert prefix and program("score_calls.py").startswith(prefix)
    assert comment[2] == "    # file='%s'" % program("score_calls.py")[len(prefix):]
    assert "at least 1% of the estimated trace buffer" in text
    assert "at most 1 us" in text

    # The measurement accepts it and leaves hot() out, nothing else.
    exp = tmp_path / "filtered"
    out = run_scorep(PYTHON, ["--filter=" + score.FILTER_FILE_NAME, program("score_calls.py")],
                     exp, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    _, sections = parse(ok("-r", exp))
    rows = by_name(sections[1])
    assert "__main__:hot" not in rows
    assert rows["__main__:driver"].visits == 1 and rows["__main__:medium"].visits == 300
    assert sections[0][0].visits == parse(ok(calls))[1][0][0].visits - 20000

    # The tool agrees with the measurement on what the file leaves out.
    _, sections = parse(ok("-r", "-f", path, calls))
    assert {r.name for r in sections[2] if r.flt == "+"} == {"__main__:hot"}

    # -g with -f: what the given filter leaves out stays left out (and the shares are of
    # the filtered max_buf, so ask for a half of it: nothing new qualifies).
    again = tmp_path / "again"
    again.mkdir()
    ok("-g", "bufferpercent=50", "-f", path, calls, cwd=again)
    text = (again / score.FILTER_FILE_NAME).read_text()
    assert "    # Regions directly included from filter file provided by `-f`:\n    # '%s'" \
        % path in text
    assert region_rules(text) == ["EXCLUDE", "MANGLED __main__:hot"]
    # Given the file it is about to replace, the note says where that went.
    ok("-g", "-f", score.FILTER_FILE_NAME, calls, cwd=again)
    moved = sorted(p.name for p in again.iterdir() if p.name != score.FILTER_FILE_NAME)
    assert "    # '%s' moved to '%s'" % (score.FILTER_FILE_NAME, again / moved[-1]) in \
        (again / score.FILTER_FILE_NAME).read_text()


def test_generate_parameters_and_moving_an_existing_file_aside(calls, tmp_path):
    ok("-g", calls, cwd=tmp_path)
    first = (tmp_path / score.FILTER_FILE_NAME).read_text()
    out = ok("-r", "-g", "bufferPercent=0.5, timepervisit=100000,visits=3", calls, cwd=tmp_path)
    moved = [p for p in tmp_path.iterdir() if p.name.startswith(score.FILTER_FILE_NAME + "-")]
    assert len(moved) == 1 and moved[0].read_text() == first
    assert "Moved existing filter file to: '%s'" % moved[0] in out
    text = (tmp_path / score.FILTER_FILE_NAME).read_text()
    # hot (98 %) and medium (1.5 % of max_buf); slow has 3 visits but 0.01 % of max_buf.
    assert region_rules(text) == ["EXCLUDE", "MANGLED __main__:hot", "MANGLED __main__:medium"]
    assert "at least 3 visits" in text
    # Nothing qualifies: an EXCLUDE without patterns, as Score-P writes it; it parses and
    # excludes nothing.
    out = ok("-g", "timepervisit=0", calls, cwd=tmp_path)
    assert "No region meets the conditions" in out
    text = (tmp_path / score.FILTER_FILE_NAME).read_text()
    assert region_rules(text) == ["EXCLUDE"]
    _, sections = parse(ok("-r", "-f", tmp_path / score.FILTER_FILE_NAME, calls))
    assert {r.flt for r in sections[2]} == {"-"}


def test_generated_names_are_escaped_for_the_filter_parser(tmp_path):
    from scorep.measure.filter import Filter
    name = "my region[1]*?#!x\\y"
    path = tmp_path / "escaped.filter"
    path.write_text("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE\n    MANGLED %s\n"
                    "SCOREP_REGION_NAMES_END\n" % score.clean_name(name))
    f = Filter(path)
    assert f.excludes(name, name, None)
    assert not f.excludes("my region1", "my region1", None)


# ---- Score-P's own profiles ----------------------------------------------------------------

def test_sample_with_mpi_has_mpi_and_com_groups():
    _, sections = parse(ok("-r", TIME_P4))
    groups, regions = sections
    g = by_name(groups)
    assert [x.name for x in groups] == ["ALL", "USR", "MPI", "COM", "SCOREP"]
    with open(TIME_P4 / "excl.csv") as f:
        rows = list(csv.reader(f))[1:]
    assert g["ALL"].visits == sum(int(r[2]) for r in rows) == 16818692
    assert g["ALL"].time == round(sum(float(r[3]) for r in rows), 2) == 3.38
    assert (g["USR"].visits, g["MPI"].visits, g["COM"].visits, g["SCOREP"].visits) == \
        (16814064, 2616, 2008, 4)
    assert sum(x.visits for x in groups[1:]) == g["ALL"].visits
    assert math.isclose(sum(x.time for x in groups[1:]), g["ALL"].time, abs_tol=0.03)
    r = by_name(regions)
    assert (r["MPI_Send"].type, r["MPI_Send"].visits) == ("MPI", 300)
    assert (r["MPI_Barrier"].type, r["MPI_Barrier"].visits) == ("MPI", 400)
    # main() and MODEL_1 call MPI: COM; the vector accessor does not: USR.
    assert r["main"].type == r["MODEL_1(unsigned long, unsigned long, int, int)"].type == "COM"
    assert r["bg::Vector<double>::operator()(int)"].type == "USR"
    assert r["bg_time"].type == "SCOREP"


def test_ranks_spread_of_the_mpi_sample():
    lines = ok("--ranks", "-r", TIME_P4).splitlines()
    assert lines[0] == "Exclusive time per rank of each region, over 4 ranks"
    rows = {line.split(None, 8)[8]: line.split(None, 8)[:8] for line in lines[3:]}
    # The reference: excl.csv's exclusive times summed per region and rank (one thread each).
    profile = cube.read(TIME_P4 / "profile.cubex")
    per_rank = collections.defaultdict(lambda: [0.0] * 4)
    with open(TIME_P4 / "excl.csv") as f:
        for row in list(csv.reader(f))[1:]:
            region = profile.cnodes[int(row[0])].region.name
            per_rank[region][int(row[1])] += float(row[3])
    assert {name for name, times in per_rank.items() if any(times)} <= set(rows)
    for name in ("MPI_Barrier", "MPI_Send", "main"):
        times = per_rank[name]
        lo, mean, hi, dev, ratio, at_min, at_max, visits = rows[name]
        assert math.isclose(float(lo), min(times), abs_tol=1e-6)
        assert math.isclose(float(hi), max(times), abs_tol=1e-6)
        assert math.isclose(float(mean), sum(times) / 4, abs_tol=1e-6)
        assert (int(at_min), int(at_max)) == (times.index(min(times)), times.index(max(times)))
    assert rows["MPI_Barrier"][7] == "400"
    # Sorted by the largest max.
    maxima = [float(rows[line.split(None, 8)[8]][2]) for line in lines[3:]]
    assert maxima == sorted(maxima, reverse=True)


def test_ranks_of_one_process_are_its_threads(calls):
    lines = ok("--ranks", calls).splitlines()
    assert lines[0] == "Exclusive time per thread of each region, over 1 threads (0 = MainThread)"
    rows = {line.split(None, 8)[8]: line.split(None, 8)[:8] for line in lines[3:]
            if not line.startswith("(")}
    assert len(rows) <= 20
    lo, mean, hi, dev, ratio, at_min, at_max, visits = rows["__main__:slow"]
    assert lo == mean == hi and float(dev) == 0 and visits == "3" and float(hi) >= 0.12
    assert (at_min, at_max, ratio) == ("0", "0", "1.00")


@pytest.mark.parametrize("sample", [CALL_TREE, KRIPKE])
def test_other_samples_add_up(sample):
    _, sections = parse(ok("-r", sample))
    groups, regions = sections
    assert groups[0].name == "ALL"
    assert sum(x.visits for x in groups[1:]) == groups[0].visits == sum(
        r.visits for r in regions)
    if sample == CALL_TREE:
        with open(sample / "excl.csv") as f:
            assert groups[0].visits == sum(int(r[2]) for r in list(csv.reader(f))[1:])


# ---- Score-P's rules on Score-P's profiles ------------------------------------------------
#
# Score-P's scorep-score asks OTF2's otf2-estimator for the size of each event (given the
# profile's definition counts) and charges each visit the events its region stands for
# (src/tools/score/SCOREP_Score_Estimator.cpp, SCOREP_Score_Event.cpp,
# SCOREP_Score_EventList.hpp). The expectations below are built from the samples' excl.csv
# and otf2-estimator directly, not through scorep.score.

def otf2_sizes(definitions, names):
    script = ["set %s %d" % d for d in definitions] + ["get " + n for n in names] + ["exit"]
    out = subprocess.run(["otf2-estimator"], input="\n".join(script) + "\n",
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    return {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in out.splitlines()}


def score_p_readable(count):
    """Score-P's get_user_readable_byte_no, for the summary lines."""
    units = 0
    while count > 4096:
        count //= 1024
        units += 1
    return "%d%s" % (count + 1, [" bytes", "kB", "MB", "GB"][units])


def visits_per_rank(sample, ranks):
    profile = cube.read(sample / "profile.cubex")
    visits = collections.defaultdict(lambda: [0] * ranks)
    with open(sample / "excl.csv") as f:
        for row in list(csv.reader(f))[1:]:
            visits[profile.cnodes[int(row[0])].region.name][int(row[1])] += int(row[2])
    return visits


def test_score_p_profile_bytes_and_memory_hint_are_score_p_s():
    s = otf2_sizes([("Region", 262), ("Metric", 10), ("Parameter", 4)],
                   ["Timestamp", "Enter", "Leave", "MpiSend", "MpiRecv", "MpiCollectiveBegin",
                    "MpiCollectiveEnd", "ProgramBegin 4", "ProgramEnd"])
    ts = s["Timestamp"]
    call = s["Enter"] + s["Leave"] + 2 * ts
    collective = call + s["MpiCollectiveBegin"] + s["MpiCollectiveEnd"] + ts  # Begin: no time
    visits = visits_per_rank(TIME_P4, 4)
    per_visit = {name: call for name in visits}
    per_visit.update({"MPI_Send": call + s["MpiSend"] + ts, "MPI_Recv": call + s["MpiRecv"] + ts,
                      # the program's root: no Enter/Leave, ProgramBegin (4 arguments) and End
                      "bg_time": s["ProgramBegin 4"] + s["ProgramEnd"] + 2 * ts})
    for name in ("MPI_Allgather", "MPI_Allreduce", "MPI_Barrier", "MPI_Bcast", "MPI_Gather",
                 "MPI_Reduce", "MPI_Scatter"):
        per_visit[name] = collective
    rank_bytes = [sum(per_visit[n] * v[rank] for n, v in visits.items()) for rank in range(4)]

    summary, (groups, regions) = parse(ok("-r", TIME_P4))
    rows = by_name(regions)
    for name, counts in visits.items():
        if sum(counts):
            assert rows[name].visits == sum(counts)
            assert rows[name].max_buf == max(per_visit[name] * c for c in counts), name
    assert rows["bg_time"].max_buf == per_visit["bg_time"] and rows["bg_time"].type == "SCOREP"
    # max_buf is per process (here one thread each); the summary sums the processes.
    assert by_name(groups)["ALL"].max_buf == max(rank_bytes)
    assert summary_value(summary, "Estimated aggregate size of event trace:") == \
        score_p_readable(sum(rank_bytes))
    assert summary_value(summary, "Estimated requirements for largest trace buffer (max_buf):") \
        == score_p_readable(max(rank_bytes))
    # The memory hint: max(max_buf, 2 MiB) + 2 MiB per location of the largest process.
    memory = score_p_readable(max(max(rank_bytes), 2 << 20) + (2 << 20) * 1)
    assert summary_value(summary, "Estimated memory requirements (SCOREP_TOTAL_MEMORY):") == \
        memory
    assert "(hint: When tracing set SCOREP_TOTAL_MEMORY=%s to avoid intermediate flushes" \
        % memory in summary
    # No file framing anywhere: the SCOREP row is the program's two events.
    assert by_name(groups)["SCOREP"].max_buf == per_visit["bg_time"]


def test_score_p_profiles_of_other_versions():
    # Score-P 8.4, one process: ProgramBegin with 0 arguments and ProgramEnd make the SCOREP
    # row 41 bytes (the row the Score-P manual shows for its example); 4 MiB + 1 kB printed.
    s = otf2_sizes([("Region", 20), ("Metric", 8), ("Parameter", 4)],
                   ["Timestamp", "Enter", "Leave", "ProgramBegin 0", "ProgramEnd"])
    summary, (groups, regions) = parse(ok("-r", CALL_TREE))
    assert by_name(groups)["SCOREP"].max_buf == \
        s["ProgramBegin 0"] + s["ProgramEnd"] + 2 * s["Timestamp"] == 41
    call = s["Enter"] + s["Leave"] + 2 * s["Timestamp"]
    assert by_name(regions)["d3"].max_buf == 12 * call
    assert summary_value(summary, "Estimated memory requirements (SCOREP_TOTAL_MEMORY):") == \
        "4097kB"
    # Score-P 1.4 wrote no program argument count: no ProgramBegin/End, so no SCOREP row;
    # an MPI_Isend writes MpiIsend and MpiIsendComplete besides Enter/Leave.
    s = otf2_sizes([("Region", 211), ("Metric", 15)],
                   ["Timestamp", "Enter", "Leave", "MpiIsend", "MpiIsendComplete"])
    _, (groups, regions) = parse(ok("-r", KRIPKE))
    assert [g.name for g in groups] == ["ALL", "MPI", "USR", "COM"]
    per_visit = s["Enter"] + s["Leave"] + s["MpiIsend"] + s["MpiIsendComplete"] + \
        4 * s["Timestamp"]
    isend = by_name(regions)["MPI_Isend"]
    assert isend.max_buf == per_visit * 12000 and isend.visits == 96000  # 12,000 per rank


def _anchor_only_cubex(path, regions, tree):
    """A CUBE4 file with an anchor.xml only: regions (name, paradigm or None for none,
    descr) and a call tree of nested (region index, [children]) tuples; every metric is
    zero."""
    region_xml = "".join(
        '<region id="%d" mod="" begin="-1" end="-1"><name>%s</name>%s<descr>%s</descr>'
        '</region>' % (i, name, "" if paradigm is None else "<paradigm>%s</paradigm>" % paradigm,
                       descr)
        for i, (name, paradigm, descr) in enumerate(regions))
    ids = iter(range(1000))

    def cnode(node):
        index, children = node
        return '<cnode id="%d" calleeId="%d">%s</cnode>' % (
            next(ids), index, "".join(cnode(c) for c in children))
    anchor = ('<?xml version="1.0"?><cube version="4.4"><metrics>'
              '<metric id="0"><uniq_name>visits</uniq_name><dtype>UINT64</dtype></metric>'
              '<metric id="1" type="INCLUSIVE"><uniq_name>time</uniq_name><dtype>DOUBLE</dtype>'
              '</metric></metrics><program>%s%s</program><system>'
              '<systemtreenode Id="0"><name>m</name><class>machine</class>'
              '<locationgroup Id="0"><name>p</name><rank>0</rank><type>process</type>'
              '<location Id="0"><name>t</name><rank>0</rank><type>thread</type></location>'
              '</locationgroup></systemtreenode></system></cube>'
              % (region_xml, cnode(tree))).encode()
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo("anchor.xml")
        info.size = len(anchor)
        tar.addfile(info, io.BytesIO(anchor))
    return cube.read(path)


def test_paradigm_classification_follows_score_p(tmp_path):
    """SCOREP_Score_Profile::get_definition_type: a paradigm 'unknown' (also a missing one,
    as cubelib reports it) is replaced by the region's description; the name decides only
    when that is 'unknown' too, as in profiles of old Score-P versions."""
    from scorep.score.model import classify
    old = "unknown"
    regions = [
        ("main", "user", ""), ("wrapped", "libwrap:libfoo", ""), ("kernel", "kokkos:parallel",
                                                                   ""),
        ("hip_a", "hip", ""), ("hip_b", "hip:runtime", ""), ("MPI_Send", old, old),
        ("shmem_put", old, old), ("omp_get_thread_num", old, old),
        ("!$omp parallel @x.c:3", old, old), ("pthread_create", None, old),
        ("cudaMalloc", old, old), ("cuLaunchKernel", old, old),
        ("clCreateBuffer", old, old), ("cleanup", old, old), ("custom", old, old),
        ("described", "unknown", "mpi"), ("flush", "measurement", ""), ("f", "user", ""),
        ("g", "compiler", ""), ("h", "user", ""), ("io_call", "io", ""),
        ("alloc", "memory", ""), ("MPI_Recv", "unknown", ""),
    ]
    index = {name: i for i, (name, _p, _d) in enumerate(regions)}
    leaf = lambda name: (index[name], [])
    tree = (index["main"], [
        (index["f"], [leaf("flush")]),             # the measurement does not make f COM
        (index["g"], [(index["h"], [leaf("MPI_Send")])]),  # g and h lead to MPI: COM
        leaf("wrapped"),                           # a library call makes main COM
        (index["custom"], [leaf("alloc")]),        # so does MEMORY (it comes after COM)
    ])
    types = classify(_anchor_only_cubex(tmp_path / "p.cubex", regions, tree))
    by = {name: types[i] for name, i in index.items()}
    assert {n: by[n] for n in ("wrapped", "kernel", "hip_a", "hip_b", "MPI_Send", "shmem_put",
                               "omp_get_thread_num", "!$omp parallel @x.c:3",
                               "pthread_create", "cudaMalloc", "cuLaunchKernel",
                               "clCreateBuffer", "described", "flush", "io_call",
                               "alloc")} == {
        "wrapped": "LIB", "kernel": "KOKKOS", "hip_a": "HIP", "hip_b": "HIP",
        "MPI_Send": "MPI", "shmem_put": "SHMEM", "omp_get_thread_num": "OMP",
        "!$omp parallel @x.c:3": "OMP", "pthread_create": "PTHREAD", "cudaMalloc": "CUDA",
        "cuLaunchKernel": "CUDA", "clCreateBuffer": "OPENCL", "described": "MPI",
        "flush": "SCOREP", "io_call": "IO", "alloc": "MEMORY"}
    # 'cleanup' is not cl + upper case: a user region; unknown without a rule: USR, also a
    # name of the MPI_ form whose description is not 'unknown' (Score-P reads it literally).
    assert by["cleanup"] == "USR" and by["f"] == "USR" and by["MPI_Recv"] == "USR"
    assert by["main"] == by["g"] == by["h"] == by["custom"] == "COM"


def test_filtered_scorep_row_equals_the_unfiltered_one(calls, tmp_path):
    flt = tmp_path / "hot.filter"
    flt.write_text("SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE __main__:hot\nSCOREP_REGION_NAMES_END\n")
    _, (before, after, _regions) = parse(ok("-r", "-f", flt, calls))
    assert by_name(before)["SCOREP"].max_buf == by_name(after)["SCOREP-FLT"].max_buf
    assert by_name(after)["ALL-FLT"].max_buf == sum(
        g.max_buf for g in after if g.name not in ("ALL-FLT", "FLT"))


def test_hardware_counters_add_metric_records(calls):
    # Score-P's rule: each visit gets a metric set at enter and at leave, with a timestamp.
    s = otf2_sizes([("Region", 20), ("Metric", 8), ("Parameter", 4)], ["Timestamp", "Metric 2"])
    _, (_, plain) = parse(ok("-r", CALL_TREE))
    _, (_, counted) = parse(ok("-r", "-c", "2", CALL_TREE))
    extra = 2 * s["Metric 2"] + s["Timestamp"]
    assert by_name(counted)["d3"].max_buf - by_name(plain)["d3"].max_buf == 12 * extra
    # Our traces: the metric records share the enter's and leave's timestamps.
    s = otf2_sizes([("Metric", 1)], ["Metric 1"])
    _, (_, plain) = parse(ok("-r", calls))
    _, (_, counted) = parse(ok("-r", "-c", "1", calls))
    assert by_name(counted)["__main__:hot"].max_buf - by_name(plain)["__main__:hot"].max_buf \
        == 20000 * 2 * s["Metric 1"]


def test_generate_on_a_score_p_profile_writes_score_p_s_shape(tmp_path):
    from scorep.measure.filter import Filter
    out = ok("-g", TIME_P4, cwd=tmp_path)
    text = (tmp_path / score.FILTER_FILE_NAME).read_text()
    # The only USR region under 1 us per visit with 1 % of max_buf: its mangled name.
    assert region_rules(text) == ["EXCLUDE", "MANGLED _ZN2bg6VectorIdEclEi"]
    assert "bg::Vector<double>::operator()(int)" in out
    f = Filter(tmp_path / score.FILTER_FILE_NAME)
    assert f.excludes("bg::Vector<double>::operator()(int)", "_ZN2bg6VectorIdEclEi", None)
    assert not f.excludes("main", "main", None)


def test_generate_all_writes_max_scorep_filter(calls, tmp_path):
    from scorep.measure.filter import Filter
    out = ok("-r", "-g", "all", calls, cwd=tmp_path)
    path = tmp_path / score.ALL_FILTER_FILE_NAME
    assert "generated: '%s'" % path in out and not (tmp_path / score.FILTER_FILE_NAME).exists()
    _, (_, regions) = parse(out)
    filterable = [r for r in regions if r.type in ("USR", "COM")]
    assert len(filterable) > 5
    rules = region_rules(path.read_text())
    assert rules[0] == "EXCLUDE" and all(r.startswith("MANGLED ") for r in rules[1:])
    assert len(rules) - 1 == len(filterable)
    # Everything that can be filtered is left out, the program's root is not.
    _, (_, _, listed) = parse(ok("-r", "-f", path, calls))
    assert {r.flt for r in listed if r.type in ("USR", "COM")} == {"+"}
    assert [r.flt for r in listed if r.type == "SCOREP"] == ["-"]
    assert Filter(path).excludes("__main__:hot", "__main__:hot", None)


# ---- errors and help -----------------------------------------------------------------------

def _fails(status, message, *args, cwd=None):
    out = scorep_score(*args, cwd=cwd)
    assert out.returncode == status, (out.stdout, out.stderr)
    assert out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("scorep-score: "), out.stderr
    assert "Traceback" not in out.stderr
    assert message in lines[0], lines[0]


def test_errors_in_the_input(tmp_path):
    _fails(1, "no such file", tmp_path / "missing.cubex")
    empty = tmp_path / "empty_dir"
    empty.mkdir()
    _fails(1, "no .cubex file", empty)
    text = tmp_path / "notes.cubex"
    text.write_text("not a profile\n")
    _fails(1, "not a tar archive", text)
    no_visits = tmp_path / "no_visits.cubex"
    anchor = (b'<?xml version="1.0"?><cube version="4.4"><metrics>'
              b'<metric id="0"><uniq_name>time</uniq_name><dtype>DOUBLE</dtype></metric>'
              b'</metrics><program><region id="0" mod="" begin="-1" end="-1"><name>r</name>'
              b'</region><cnode id="0" calleeId="0"/></program><system>'
              b'<systemtreenode Id="0"><name>m</name><class>machine</class>'
              b'<locationgroup Id="0"><name>p</name><rank>0</rank><type>process</type>'
              b'<location Id="0"><name>t</name><rank>0</rank><type>thread</type></location>'
              b'</locationgroup></systemtreenode></system></cube>')
    with tarfile.open(no_visits, "w") as tar:
        info = tarfile.TarInfo("anchor.xml")
        info.size = len(anchor)
        tar.addfile(info, io.BytesIO(anchor))
    _fails(1, "not a Score-P profile: no metric 'visits'", no_visits)


def test_errors_in_filters(tmp_path, calls):
    _fails(1, "no such filter file", "-f", tmp_path / "none.filter", calls)
    bad = tmp_path / "bad.filter"
    # A pattern before any INCLUDE/EXCLUDE: an error for Score-P's parser too (an EXCLUDE
    # without patterns is not).
    bad.write_text("SCOREP_REGION_NAMES_BEGIN\n  foo\nSCOREP_REGION_NAMES_END\n")
    out = scorep_score("-f", bad, calls)
    assert out.returncode == 1 and out.stdout == ""
    assert re.match(r"^scorep-score: .*bad\.filter:\d+: .+\n$", out.stderr), out.stderr


@pytest.mark.parametrize("args, message", [
    (("-r",), "no profile given"),
    (("-x", "p.cubex"), "unknown option -x"),
    (("-s", "fastest", "p.cubex"), "unknown sorting mode"),
    (("-s",), "-s needs a value"),
    (("p.cubex", "-f"), "-f needs a value"),
    (("a.cubex", "b.cubex"), "one profile only"),
    (("-g", "percent=3", "p.cubex"), "-g: 'percent=3' is not all or KEY=VALUE"),
    (("-c", "two", "p.cubex"), "-c two: the number of hardware counters is a non-negative"),
    (("-c", "-1", "p.cubex"), "-c -1: the number of hardware counters is a non-negative"),
    (("-g", "timepervisit=fast", "p.cubex"), "is not a number"),
    (("-g", "type=mpi", "p.cubex"), "expected usr, com or both"),
    (("-g", "visits=-1", "p.cubex"), "must not be negative"),
    (("-g", "bufferpercent=101", "p.cubex"), "a percentage lies in 0-100"),
    (("--ranks", "-f", "x.filter", "p.cubex"), "--ranks does not go with -f or -g"),
])
def test_usage_errors(args, message):
    _fails(2, message, *args)


def test_help():
    # Without arguments too, as Score-P's tool does (exit status 0).
    for flag in ("-h", "--help", None):
        out = ok(flag) if flag else ok()
        assert out.startswith(
            "Usage: scorep-score [options] <experiment directory | profile.cubex>")
        for option in ("-r", "-s MODE", "-f FILE", "-g [LIST]", "bufferpercent=P",
                       "timepervisit=U", "-m", "-g all", "max_scorep.filter", "-c NUM"):
            assert option in out


def test_main_returns_the_status_without_exiting(capsys, tmp_path):
    assert score.main([str(tmp_path / "missing")]) == 1
    assert score.main(["--bogus"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(l.startswith("scorep-score: ") for l in err)
