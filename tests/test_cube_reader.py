"""scorep.cube against profiles written by real Score-P runs (tests/data/cube-samples, with
the values pycubexr reads from them), and against re-encodings of them that exercise every
variant the reader claims to handle: DENSE index, big-endian, ZCUBEX.DATA, gzip'ed anchor,
32-bit dtypes, SIMPLE metrics, missing data files, and broken input."""

import csv
import gzip
import io
import math
import struct
import tarfile
import zlib
from pathlib import Path

import pytest

from scorep import cube

SAMPLES = Path(__file__).resolve().parent / "data" / "cube-samples"

CALL_TREE = SAMPLES / "call_tree_test" / "call_tree_test.cubex"
TIME_P4 = SAMPLES / "time.p4.n2000.x1.r0"
KRIPKE = SAMPLES / "kripke.p8.d2.g32.r1"


def _samples_with_csv():
    return sorted(d.name for d in SAMPLES.iterdir()
                  if (d / "incl.csv").is_file() and (d / "excl.csv").is_file())


# ---- every value of the reference CSVs ------------------------------------------------------

def _sig_digits(text):
    mantissa = text.strip().lower().split("e")[0].lstrip("+-")
    return len(mantissa.replace(".", "").lstrip("0"))


def _load_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = [h.strip() for h in rows[0]]
    assert header[:2] == ["Cnode ID", "Thread ID"], header
    body = [[c.strip() for c in r] for r in rows[1:] if r]
    # The CSVs were printed with %g at some precision per column (6 digits for time, 12 for
    # min/max); %g drops trailing zeros, so the widest value shows the column's precision.
    digits = {}
    for col, name in enumerate(header[2:], start=2):
        digits[name] = max([_sig_digits(r[col]) for r in body
                            if "." in r[col] or "e" in r[col].lower()] or [0])
    return header[2:], body, digits


def _mismatch(got, text, integral, digits):
    """None if `got` reproduces the printed value `text`, else a description."""
    if integral:
        return None if got == int(text) else "%r != %s" % (got, text)
    expected = float(text)
    if expected == 0.0:  # %g prints 0 only for an exact zero
        return None if got == 0.0 else "%r != 0" % got
    if "." not in text and "e" not in text.lower() and digits == 0:
        digits = len(text.lstrip("-"))
    exponent = math.floor(math.log10(abs(expected)))
    tolerance = max(abs(expected) * 1e-9, 0.5 * 10.0 ** (exponent - digits + 1))
    if abs(got - expected) <= tolerance * (1 + 1e-12):
        return None
    return "%r != %s (tolerance %.3g)" % (got, text, tolerance)


@pytest.mark.parametrize("flavour", ["incl", "excl"])
@pytest.mark.parametrize("sample", _samples_with_csv())
def test_every_csv_value(sample, flavour):
    profile = cube.read(SAMPLES / sample)
    names, rows, digits = _load_csv(SAMPLES / sample / ("%s.csv" % flavour))
    # The CSV covers all metrics and every (cnode, location) pair, so "every value" is all.
    assert set(names) == {m.uniq_name for m in profile.metrics}
    pairs = {(int(r[0]), int(r[1])) for r in rows}
    assert pairs == {(c, t) for c in range(len(profile.cnodes))
                     for t in range(len(profile.locations))}
    assert len(rows) == len(pairs)

    failures, checked = [], 0
    for name in names:
        metric = profile.metric(name)
        integral = metric.dtype in ("UINT64", "INT64")
        values = profile.values(metric, inclusive=(flavour == "incl"))
        col = names.index(name) + 2
        for r in rows:
            got = values[int(r[0])][int(r[1])]
            assert isinstance(got, int) == integral
            problem = _mismatch(got, r[col], integral, digits[name])
            if problem:
                failures.append("%s cnode %s thread %s: %s" % (name, r[0], r[1], problem))
            checked += 1
    assert checked == len(names) * len(rows)
    assert not failures, "%d of %d values differ, e.g.:\n%s" % (
        len(failures), checked, "\n".join(failures[:10]))


def test_value_agrees_with_values():
    profile = cube.read(TIME_P4)
    for metric in profile.metrics:
        for inclusive in (True, False):
            table = profile.values(metric, inclusive)
            for c in (0, 5, 44, 45):
                for loc in range(4):
                    assert profile.value(metric.uniq_name, c, loc, inclusive) == table[c][loc]
    # values() hands out copies: changing them does not change the profile
    table = profile.values("visits")
    table[0][0] = -1
    assert profile.value("visits", 0, 0) == 4215323


# ---- structure ------------------------------------------------------------------------------

def test_call_tree_test_structure():
    profile = cube.read(CALL_TREE)
    assert profile.version == "4.4"
    assert profile.attrs["Creator"] == "Score-P 8.4"
    assert [m.uniq_name for m in profile.metrics] == [
        "visits", "time", "min_time", "max_time", "bytes_put", "bytes_get", "io_bytes_read",
        "io_bytes_written"]
    time = profile.metric("time")
    assert (time.id, time.disp_name, time.type, time.dtype, time.uom) == (
        1, "Time", "INCLUSIVE", "DOUBLE", "sec")
    assert time.descr == "Total CPU allocation time"
    assert profile.metric("min_time").dtype == "MINDOUBLE"
    with pytest.raises(KeyError):
        profile.metric("no_such_metric")

    assert len(profile.cnodes) == 18 and len(profile.regions) == 20
    root = profile.root
    assert profile.roots == [root] and root.id == 0 and root.parent is None
    assert (root.region.name, root.region.paradigm, root.region.role) == (
        "test.x", "measurement", "artificial")
    main = root.children[0]
    assert main.region.name == "main" and main.region.file == "cube_test_file/test.c"
    assert main.region.begin_line == 109 and main.region.end_line == -1
    assert [c.region.mangled_name for c in main.children] == ["a", "b", "c", "d"]
    assert [c.region.name for c in main.children] == ["signed char", "bool", "char", "double"]
    assert [c.id for c in main.children] == [2, 6, 10, 14]
    assert profile.cnodes[16].path() == ["test.x", "main", "double", "d2"]
    assert profile.cnodes[16].parent is profile.cnodes[14]
    assert profile.deep_order() == list(range(18))
    assert profile.wide_order() == [0, 1, 2, 6, 10, 14, 3, 4, 5, 7, 8, 9, 11, 12, 13, 15, 16, 17]

    assert [n.name for n in profile.system_nodes] == ["machine Linux", "node gpu1"]
    assert profile.system_nodes[1].parent is profile.system_nodes[0]
    assert [(g.id, g.name, g.rank, g.type, g.node.name) for g in profile.location_groups] == [
        (0, "Process", 0, "process", "node gpu1")]
    assert [(l.id, l.name, l.rank, l.type, l.group.id) for l in profile.locations] == [
        (0, "Master thread", 0, "thread", 0)]
    # bytes_put etc. have no files in the archive: zero everywhere, as ints
    assert profile.values("io_bytes_written", inclusive=True) == [[0]] * 18
    assert profile.values("io_bytes_written", inclusive=False) == [[0]] * 18


def test_time_p4_structure():
    profile = cube.read(TIME_P4)
    assert len(profile.cnodes) == 46
    assert len(profile.locations) == 4 and len(profile.location_groups) == 4
    assert [g.name for g in profile.location_groups] == ["MPI Rank %d" % r for r in range(4)]
    assert [g.rank for g in profile.location_groups] == [0, 1, 2, 3]
    assert [g.node.name for g in profile.location_groups] == [
        "node mpsd0023", "node mpsd0027", "node mpsd0030", "node mpsd0032"]
    assert profile.root.region.name == "bg_time"
    assert profile.root.children[0].region.name == "main"
    # Score-P appended cnodes 44 and 45 late: they sit inside the tree, so ids are not the
    # preorder and the EXCLUSIVE rows must be matched through the document order.
    assert [c.id for c in profile.cnodes[33].children] == [34, 35, 36, 44]
    assert profile.cnodes[44].path()[-2:] == [profile.cnodes[33].region.name, "MPI_Recv"]
    assert profile.deep_order()[34:42] == [34, 35, 36, 44, 37, 38, 39, 40]
    # bytes_sent is stored sparsely (10 rows); every other row reads as zero
    sent = profile.values("bytes_sent", inclusive=False)
    assert sum(1 for row in sent if any(row)) == 10
    assert [sum(row) for row in profile.values("bytes_sent", inclusive=True)][0] == 24800000


def test_kripke_opens_with_eight_ranks():
    profile = cube.read(KRIPKE)  # an experiment directory holding profile.cubex
    assert profile.path.endswith("profile.cubex")
    assert profile.attrs["Creator"] == "Score-P 1.4"
    assert len(profile.location_groups) == 8 and len(profile.locations) == 8
    assert [g.rank for g in profile.location_groups] == list(range(8))
    assert [g.name for g in profile.location_groups] == ["MPI Rank %d" % r for r in range(8)]
    assert [n.class_ for n in profile.system_nodes] == [
        "machine", "rack", "midplane", "nodeboard", "nodecard"]
    assert len(profile.cnodes) == 14 and len(profile.metrics) == 15
    assert profile.root.region.name == "PARALLEL"
    assert [c.region.name for c in profile.root.children] == [
        "MPI_Init", "MPI_Comm_rank", "MPI_Comm_size", "Solve", "MPI_Finalize"]
    assert profile.cnodes[11].path() == ["PARALLEL", "Solve", "Sweep", "MPI_Isend"]
    # Written big-endian on a Blue Gene/Q. Wrong byte order would give absurd numbers; a
    # wrong INCLUSIVE row order gives negative exclusive times (checked: 16 of them).
    time_incl = profile.values("time")
    assert [round(v, 6) for v in time_incl[0]] == [
        18.600636, 18.586678, 18.57593, 18.578019, 18.571704, 18.572526, 18.571391, 18.574626]
    for name in ("time", "PAPI_TOT_INS", "PAPI_FP_OPS"):
        assert min(min(row) for row in profile.values(name, inclusive=False)) >= 0, name
    assert profile.values("visits", inclusive=False)[8] == [1000] * 8
    # bytes_sent has one stored row: MPI_Isend
    sent = profile.values("bytes_sent", inclusive=False)
    assert [c for c, row in enumerate(sent) if any(row)] == [11]
    assert sent[11] == [221280000] * 8
    assert profile.values("bytes_sent")[0] == [221280000] * 8
    # no data files for the task migration metrics: zero
    assert profile.values("task_migration_loss")[0] == [0] * 8


def test_min_max_inclusive_is_subtree_extreme():
    profile = cube.read(CALL_TREE)
    mn_ex, mn_in = profile.values("min_time", False), profile.values("min_time", True)
    mx_ex, mx_in = profile.values("max_time", False), profile.values("max_time", True)
    for node in profile.cnodes:
        sub = [c.id for c in cube.deep_order([node])]
        assert mn_in[node.id][0] == min(mn_ex[c][0] for c in sub)
        assert mx_in[node.id][0] == max(mx_ex[c][0] for c in sub)
    assert mn_in[0][0] < mn_ex[0][0] == mx_ex[0][0]


# ---- re-encoded samples -----------------------------------------------------------------------

def _members(path):
    with tarfile.open(path) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}


def _write_tar(path, members):
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _split_index(index):
    """(byte order, format, row positions or None) of an index file."""
    order = "<" if struct.unpack_from("<I", index, 11)[0] == 1 else ">"
    fmt = index[17]
    if fmt != 1:
        return order, fmt, None
    (n,) = struct.unpack_from(order + "I", index, 18)
    return order, fmt, list(struct.unpack_from("%s%dI" % (order, n), index, 22))


def _index(order, positions, fmt=1):
    head = b"CUBEX.INDEX" + struct.pack(order + "IHB", 1, 0, fmt)
    if fmt != 1:
        return head
    return head + struct.pack("%sI%dI" % (order, len(positions)), len(positions), *positions)


def _all_values(profile):
    return {(m.uniq_name, incl): profile.values(m, incl)
            for m in profile.metrics for incl in (True, False)}


@pytest.fixture(scope="module")
def reference():
    return _all_values(cube.read(CALL_TREE))


def test_dense_index(tmp_path, reference):
    members = _members(CALL_TREE)
    for mid in range(4):  # these list all 18 rows, so DENSE holds the same data
        order, _, positions = _split_index(members["%d.index" % mid])
        assert positions == list(range(18))
        members["%d.index" % mid] = _index(order, None, fmt=3)
    assert _all_values(cube.read(_write_tar(tmp_path / "dense.cubex", members))) == reference


def test_big_endian_reencoding(tmp_path, reference):
    members = _members(CALL_TREE)
    for mid in range(4):
        order, _, positions = _split_index(members["%d.index" % mid])
        code = "Q" if mid == 0 else "d"
        payload = members["%d.data" % mid][10:]
        values = struct.unpack("<%d%s" % (len(payload) // 8, code), payload)
        members["%d.index" % mid] = _index(">", positions)
        members["%d.data" % mid] = b"CUBEX.DATA" + struct.pack(
            ">%d%s" % (len(values), code), *values)
    assert _all_values(cube.read(_write_tar(tmp_path / "be.cubex", members))) == reference


def test_zlib_compressed_data(tmp_path):
    # ZCUBEX.DATA as CubeW writes it: uint64 n, n x (uncompressed offset, compressed offset,
    # compressed size), then one zlib stream per row. time.p4 has 4 locations per row.
    src = _members(TIME_P4 / "profile.cubex")
    members = dict(src)
    for mid in (1, 8):  # time (all rows) and bytes_sent (sparse)
        payload = src["%d.data" % mid][10:]
        row = 4 * 8
        streams, entries, cpos = [], [], 0
        for k in range(len(payload) // row):
            z = zlib.compress(payload[k * row:(k + 1) * row], 1)
            entries += [k * row, cpos, len(z)]
            streams.append(z)
            cpos += len(z)
        members["%d.data" % mid] = (b"ZCUBEX.DATA" + struct.pack("<Q", len(streams))
                                    + struct.pack("<%dQ" % len(entries), *entries)
                                    + b"".join(streams))
    got = cube.read(_write_tar(tmp_path / "z.cubex", members))
    want = cube.read(TIME_P4)
    for name in ("time", "bytes_sent"):
        for incl in (True, False):
            assert got.values(name, incl) == want.values(name, incl)


def test_gzipped_anchor(tmp_path, reference):
    members = _members(CALL_TREE)
    members["anchor.xml"] = gzip.compress(members["anchor.xml"])
    assert _all_values(cube.read(_write_tar(tmp_path / "gz.cubex", members))) == reference


def test_32_bit_and_signed_dtypes(tmp_path):
    members = _members(CALL_TREE)
    payload = members["0.data"][10:]
    visits = struct.unpack("<18Q", payload)
    members["0.data"] = b"CUBEX.DATA" + struct.pack("<18I", *visits)
    # make io_bytes_read (id 6, no files) an INT32 metric with negative values
    members["6.index"] = _index("<", [0, 17])
    members["6.data"] = b"CUBEX.DATA" + struct.pack("<2i", -5, 7)
    members["anchor.xml"] = (members["anchor.xml"]
                             .replace(b"<dtype>UINT64</dtype>", b"<dtype>UINT32</dtype>", 1)
                             .replace(b"<uniq_name>io_bytes_read</uniq_name>\n<dtype>UINT64",
                                      b"<uniq_name>io_bytes_read</uniq_name>\n<dtype>INT32"))
    profile = cube.read(_write_tar(tmp_path / "u32.cubex", members))
    assert profile.metric("visits").dtype == "UINT32"
    assert [r[0] for r in profile.values("visits", False)] == list(visits)
    assert profile.values("visits", True)[0] == [72]
    assert profile.metric("io_bytes_read").dtype == "INT32"
    excl = profile.values("io_bytes_read", False)
    assert excl[0] == [-5] and excl[17] == [7] and sum(r[0] for r in excl) == 2
    incl = profile.values("io_bytes_read", True)
    assert incl[0] == [2] and incl[14] == [7] and incl[1] == [7]


def test_simple_metric_rows_follow_ids(tmp_path):
    # CubeW enumerates SIMPLE metrics by cnode id, not by tree walk; time.p4's ids differ
    # from its preorder, so rows written by id must land on those ids.
    members = _members(TIME_P4 / "profile.cubex")
    want = cube.read(TIME_P4).values("visits", inclusive=False)
    members["0.data"] = b"CUBEX.DATA" + b"".join(struct.pack("<4Q", *row) for row in want)
    members["anchor.xml"] = members["anchor.xml"].replace(
        b'<metric id="0" type="EXCLUSIVE">', b'<metric id="0" type="SIMPLE">')
    profile = cube.read(_write_tar(tmp_path / "simple.cubex", members))
    assert profile.metric("visits").type == "SIMPLE"
    assert profile.values("visits", inclusive=False) == want
    assert profile.values("visits", inclusive=True) == want  # SIMPLE: no conversion


def test_experiment_directory(tmp_path):
    exp = tmp_path / "scorep-exp"
    exp.mkdir()
    (exp / "profile.cubex").write_bytes(CALL_TREE.read_bytes())
    assert cube.read(exp).path == str(exp / "profile.cubex")
    assert len(cube.read(str(exp)).cnodes) == 18


# ---- broken input ---------------------------------------------------------------------------

def _error(path):
    with pytest.raises(cube.CubeError) as info:
        cube.read(path)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_errors(tmp_path):
    missing = tmp_path / "missing.cubex"
    assert _error(missing) == "%s: no such file" % missing

    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    assert _error(empty_dir) == "%s: directory holds no .cubex file" % empty_dir

    junk = tmp_path / "junk.cubex"
    junk.write_bytes(b"this is not a tar archive" * 40)
    message = _error(junk)
    assert message.startswith("%s: not a tar archive" % junk)

    members = _members(CALL_TREE)
    no_anchor = dict(members)
    del no_anchor["anchor.xml"]
    path = _write_tar(tmp_path / "noanchor.cubex", no_anchor)
    assert _error(path) == "%s: no anchor.xml in the archive" % path

    bad_xml = dict(members, **{"anchor.xml": members["anchor.xml"][:500]})
    path = _write_tar(tmp_path / "badxml.cubex", bad_xml)
    assert _error(path).startswith("%s: anchor.xml is not well-formed XML" % path)

    tau = dict(members, **{"anchor.xml": members["anchor.xml"].replace(
        b"<dtype>DOUBLE</dtype>", b"<dtype>TAU_ATOMIC</dtype>")})
    path = _write_tar(tmp_path / "tau.cubex", tau)
    assert _error(path) == "%s: metric time: unsupported dtype TAU_ATOMIC" % path

    bitvector = dict(members, **{"2.index": _index("<", None, fmt=2)})
    path = _write_tar(tmp_path / "bitvector.cubex", bitvector)
    assert _error(path) == (
        "%s: 2.index: unsupported index format 2 (only SPARSE=1 and DENSE=3)" % path)

    short = dict(members, **{"1.data": members["1.data"][:-8]})
    path = _write_tar(tmp_path / "short.cubex", short)
    assert _error(path) == (
        "%s: 1.data holds 136 bytes, expected 18 rows x 1 locations x 8" % path)

    endian = dict(members, **{"0.index": members["0.index"][:11] + b"\x07\0\0\0"
                              + members["0.index"][15:]})
    path = _write_tar(tmp_path / "endian.cubex", endian)
    assert _error(path).startswith("%s: 0.index: bad endianness marker" % path)

    half = dict(members)
    del half["3.data"]
    path = _write_tar(tmp_path / "half.cubex", half)
    assert _error(path) == "%s: metric max_time has only one of 3.index / 3.data" % path
