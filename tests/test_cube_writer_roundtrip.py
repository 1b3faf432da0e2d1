"""The C CUBE4 writer, read back by scorep.cube (itself proven on real Score-P profiles in
test_cube_reader.py). tests/c/cube_roundtrip_driver.c writes profiles whose every value
follows from a formula; all values are small dyadic numbers, so the comparisons are exact."""

import shutil
import struct
import subprocess
import tarfile
from pathlib import Path

import pytest

from scorep import cube

REPO = Path(__file__).resolve().parents[1]
NATIVE = REPO / "src" / "scorep" / "_native"
DRIVER = REPO / "tests" / "c" / "cube_roundtrip_driver.c"
GCC = shutil.which("gcc")

pytestmark = pytest.mark.skipif(GCC is None, reason="gcc is needed to build the writer driver")


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    exe = tmp_path_factory.mktemp("driver") / "cube_roundtrip_driver"
    cmd = [GCC, "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-Wshadow",
           "-Wstrict-prototypes", "-Wmissing-prototypes", "-I", str(NATIVE), str(DRIVER),
           str(NATIVE / "substrates" / "profile" / "cube_writer.c"), "-o", str(exe)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return exe


def _run(driver, *args):
    out = subprocess.run([str(driver)] + [str(a) for a in args], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    return out.stdout


# ---- the fixed profile ------------------------------------------------------------------------

# Driver cnode index -> (region, parent index, parameters); see the driver's header comment.
FIXED = [
    ("prog.py", -1, []),
    ("__main__:main", 0, []),
    ("__main__:work", 1, []),
    ("__main__:helper", 1, []),
    ("__main__:helper", 2, []),
    ("__main__:work", 2, [("numeric", "n", 3)]),
    ("__main__:work", 2, [("string", "mode", "fast<&>")]),
    ("user:<init> & 'setup'", 0, []),
]
# Ids in the file follow document order (preorder, siblings by index): driver index -> id.
FILE_ID = {0: 0, 1: 1, 2: 2, 4: 3, 5: 4, 6: 5, 3: 6, 7: 7}


def _ran(c, loc):
    return not (loc == 1 and c in (6, 7))


def _fixed_exclusive(c, loc):
    if not _ran(c, loc):
        return {"visits": 0, "time": 0.0, "min_time": 0.0, "max_time": 0.0, "bytes_sent": 0}
    return {"visits": c + 1 + 10 * loc, "time": c + 1 + loc / 8, "min_time": (c + 1) / 2 + loc,
            "max_time": 2.0 * (c + 1) + loc, "bytes_sent": 0}


def _subtree(parents, c):
    out = [c]
    for child in range(len(parents)):
        if parents[child] == c:
            out += _subtree(parents, child)
    return out


@pytest.fixture(scope="module")
def fixed_profile(driver, tmp_path_factory):
    exp = tmp_path_factory.mktemp("exp")
    _run(driver, exp / "profile.cubex")
    return cube.read(exp)


def test_fixed_structure(fixed_profile):
    p = fixed_profile
    assert p.version == "4.4"
    assert p.attrs["Creator"] == "scorep roundtrip driver"
    assert p.attrs["CUBE_CT_AGGR"] == "SUM"
    assert p.attrs["Score-P::Python"] == "3 & up"

    assert [(m.id, m.uniq_name, m.disp_name, m.type, m.dtype, m.uom) for m in p.metrics] == [
        (0, "visits", "Visits", "EXCLUSIVE", "UINT64", "occ"),
        (1, "time", "Time", "INCLUSIVE", "DOUBLE", "sec"),
        (2, "min_time", "Minimum Inclusive Time", "EXCLUSIVE", "MINDOUBLE", "sec"),
        (3, "max_time", "Maximum Inclusive Time", "EXCLUSIVE", "MAXDOUBLE", "sec"),
        (4, "bytes_sent", "bytes_sent", "EXCLUSIVE", "UINT64", "bytes"),
    ]
    assert p.metric("visits").descr == "Number of visits"

    assert [(r.name, r.mangled_name, r.file, r.begin_line, r.end_line, r.paradigm, r.role)
            for r in p.regions] == [
        ("prog.py", "/src/prog.py", "", -1, -1, "measurement", "artificial"),
        ("__main__:main", "__main__:main", "/src/prog.py", 1, 30, "user", "function"),
        ("__main__:work", "__main__:work", "/src/prog.py", 5, 12, "user", "function"),
        ("__main__:helper", "__main__:helper", "/src/prog.py", 14, 20, "user", "function"),
        ("user:<init> & 'setup'", "user:<init> & 'setup'", "", -1, -1, "user", "function"),
    ]
    assert p.regions[2].descr == "does the work"

    assert len(p.cnodes) == 8 and p.roots == [p.root]
    for index, (region, parent, params) in enumerate(FIXED):
        node = p.cnodes[FILE_ID[index]]
        assert node.region.name == region
        assert node.parameters == params
        if parent < 0:
            assert node.parent is None
        else:
            assert node.parent is p.cnodes[FILE_ID[parent]]
    assert [c.path() for c in p.cnodes] == [
        ["prog.py"],
        ["prog.py", "__main__:main"],
        ["prog.py", "__main__:main", "__main__:work"],
        ["prog.py", "__main__:main", "__main__:work", "__main__:helper"],
        ["prog.py", "__main__:main", "__main__:work", "__main__:work"],
        ["prog.py", "__main__:main", "__main__:work", "__main__:work"],
        ["prog.py", "__main__:main", "__main__:helper"],
        ["prog.py", "user:<init> & 'setup'"],
    ]
    # the repeated region: one Region object under two different parents
    assert p.cnodes[3].region is p.cnodes[6].region
    assert p.cnodes[3].parent is not p.cnodes[6].parent
    assert p.deep_order() == list(range(8))
    assert p.wide_order() == [0, 1, 7, 2, 6, 3, 4, 5]

    assert [(n.id, n.name, n.class_) for n in p.system_nodes] == [
        (0, "machine Linux", "machine"), (1, "node alpha", "node"), (2, "node beta", "node")]
    assert [(g.id, g.name, g.rank, g.type, g.node.name) for g in p.location_groups] == [
        (0, "MPI Rank 0", 0, "process", "node alpha"),
        (1, "MPI Rank 1", 1, "process", "node beta")]
    assert [(l.id, l.name, l.rank, l.type, l.group.id) for l in p.locations] == [
        (0, "Master thread", 0, "thread", 0), (1, "Master thread", 0, "thread", 1)]


def test_fixed_values(fixed_profile):
    p = fixed_profile
    parents = [parent for _, parent, _ in FIXED]
    for name in ("visits", "time", "min_time", "max_time", "bytes_sent"):
        excl = p.values(name, inclusive=False)
        incl = p.values(name, inclusive=True)
        for c in range(len(FIXED)):
            sub = _subtree(parents, c)
            for loc in range(2):
                want_excl = _fixed_exclusive(c, loc)[name]
                stored = [_fixed_exclusive(s, loc)[name] for s in sub]
                if name == "min_time":
                    want_incl = min(stored)
                elif name == "max_time":
                    want_incl = max(stored)
                else:
                    want_incl = sum(stored)
                where = "%s cnode %d (file id %d) location %d" % (name, c, FILE_ID[c], loc)
                assert excl[FILE_ID[c]][loc] == want_excl, where
                assert incl[FILE_ID[c]][loc] == want_incl, where
                assert type(excl[FILE_ID[c]][loc]) is type(want_excl), where

    # a few values spelled out, as a reader of this test would compute them by hand
    assert p.values("time")[0] == [1 + 2 + 3 + 4 + 5 + 6 + 7 + 8, 1 + 2 + 3 + 4 + 5 + 6 + 6 / 8]
    assert p.values("visits", inclusive=False)[FILE_ID[6]] == [7, 0]
    assert p.values("visits")[FILE_ID[2]] == [3 + 5 + 6 + 7, 13 + 15 + 16]
    assert p.values("time", inclusive=False)[FILE_ID[7]] == [8.0, 0.0]
    assert p.values("min_time")[0] == [0.5, 0.0]  # location 1 stored 0 where it never ran
    assert p.values("max_time")[FILE_ID[1]] == [14.0, 13.0]
    assert p.values("bytes_sent") == [[0, 0]] * 8


def test_fixed_archive_layout(driver, tmp_path):
    path = tmp_path / "profile.cubex"
    _run(driver, path)
    data = path.read_bytes()
    assert len(data) % 512 == 0 and data[-1024:] == bytes(1024)
    with tarfile.open(path) as tar:
        members = tar.getmembers()
        assert [m.name for m in members] == [
            "0.data", "0.index", "1.data", "1.index", "2.data", "2.index", "3.data", "3.index",
            "4.data", "4.index", "anchor.xml"]
        for m in members:
            assert m.isreg() and m.mode == 0o644
        # every index is SPARSE and lists all 8 rows, 0..7
        for mid in range(5):
            index = tar.extractfile("%d.index" % mid).read()
            assert index[:11] == b"CUBEX.INDEX" and index[17] == 1
            assert struct.unpack_from("=I", index, 11)[0] == 1
            assert struct.unpack_from("=9I", index, 18) == (8, 0, 1, 2, 3, 4, 5, 6, 7)
            assert tar.extractfile("%d.data" % mid).read()[:10] == b"CUBEX.DATA"
        anchor = tar.extractfile("anchor.xml").read()
        assert anchor.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n\n<cube version="4.4">')
        assert b'parvalue="fast&lt;&amp;&gt;"' in anchor
    # GNU tar, a consumer we did not write, accepts it without a word
    tar_exe = shutil.which("tar")
    if tar_exe:
        out = subprocess.run([tar_exe, "-tvf", str(path)], capture_output=True, text=True)
        assert out.returncode == 0 and out.stderr == ""
        assert len(out.stdout.splitlines()) == 11


def test_rewrite_replaces_file(driver, tmp_path):
    path = tmp_path / "profile.cubex"
    path.write_bytes(b"stale content that is not a profile")
    _run(driver, path)
    assert len(cube.read(path).cnodes) == 8
    assert sorted(p.name for p in tmp_path.iterdir()) == ["profile.cubex"]  # no temp file left


# ---- random trees: the C row orders against an independent Python computation -----------------

def _preorder(parents):
    children = [[] for _ in parents]
    for c, parent in enumerate(parents):
        if parent >= 0:
            children[parent].append(c)
    order, stack = [], [0]
    while stack:
        c = stack.pop()
        order.append(c)
        stack.extend(reversed(children[c]))
    return order


@pytest.mark.parametrize("n,seed", [(1, 1), (2, 5), (60, 7), (400, 11), (400, 12)])
def test_random_tree(driver, tmp_path, n, seed):
    path = tmp_path / "random.cubex"
    parents = [int(x) for x in _run(driver, path, n, seed).split()]
    assert len(parents) == n
    p = cube.read(path)
    file_id = {c: k for k, c in enumerate(_preorder(parents))}

    assert [g.name for g in p.location_groups] == ["MPI Rank 0", "MPI Rank 1"]
    assert [(l.name, l.rank, l.group.id) for l in p.locations] == [
        ("Master thread", 0, 0), ("Pthread thread 1", 1, 0), ("Master thread", 0, 1)]
    for c, parent in enumerate(parents):
        node = p.cnodes[file_id[c]]
        assert (node.parent.id if node.parent else -1) == (file_id[parent] if parent >= 0 else -1)

    def ran(c, loc):
        return (c * 7 + loc * 3) % 5 != 0 or c == 0

    excl_time = [[(c % 13 + 0.5 * loc) if ran(c, loc) else 0.0 for loc in range(3)]
                 for c in range(n)]
    visits = [[((c * 7 + loc * 3) % 11 + 1) if ran(c, loc) else 0 for loc in range(3)]
              for c in range(n)]
    incl_time = [row[:] for row in excl_time]
    incl_visits = [row[:] for row in visits]
    for c in range(n - 1, 0, -1):
        for loc in range(3):
            incl_time[parents[c]][loc] += incl_time[c][loc]
            incl_visits[parents[c]][loc] += incl_visits[c][loc]

    got_time_excl = p.values("time", inclusive=False)
    got_time_incl = p.values("time", inclusive=True)
    got_visits_excl = p.values("visits", inclusive=False)
    got_visits_incl = p.values("visits", inclusive=True)
    for c in range(n):
        k = file_id[c]
        assert got_time_incl[k] == incl_time[c]
        assert got_time_excl[k] == excl_time[c]
        assert got_visits_excl[k] == visits[c]
        assert got_visits_incl[k] == incl_visits[c]
