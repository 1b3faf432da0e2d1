"""Every MPI family under real mpirun (2 and 4 ranks), recorded as Score-P records it:
persistent requests, non-blocking collectives, one-sided communication, communicators
(names, members, parents, inter-communicators), cancel, more than 64 matched-probe messages,
collective byte counts by Score-P's formulas, SCOREP_MPI_ENABLE_GROUPS, clock properties."""

import collections
import shutil

import pytest

from conftest import otf2_print, program
from mpi_support import MpiTrace, group_ranks, match_messages, members_of, mpirun, rank_of
from scorep import cube

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun is not installed")

BLOCK = 800  # 100 float64


def score_p_bytes(op, rank, n, inplace=False):
    """(sent, received) of one collective on `rank` of n ranks, each block BLOCK bytes, by
    Score-P's scorep_mpi_coll_bytes_* formulas (root 0 where there is one)."""
    b = BLOCK
    if op == "BCAST":  # one to all: the root counts itself
        return (n * b, b) if rank == 0 else (0, b)
    if op == "SCATTER":
        return (n * b, b) if rank == 0 else (0, b)
    if op in ("REDUCE", "GATHER"):  # all to one
        return (b, n * b) if rank == 0 else (b, 0)
    if op in ("ALLREDUCE", "ALLGATHER", "ALLTOALL", "REDUCE_SCATTER_BLOCK"):
        return ((n - 1) * b, (n - 1) * b) if inplace else (n * b, n * b)
    if op == "SCAN":
        return ((n - rank) * b, (rank + 1) * b)
    if op == "EXSCAN":  # never sends to itself: an in-place scan
        return ((n - rank - 1) * b, rank * b)
    raise AssertionError(op)


@pytest.fixture(scope="module", params=[2, 4])
def families(request, tmp_path_factory):
    ranks = request.param
    tmp_path = tmp_path_factory.mktemp("families%d" % ranks)
    out = mpirun(ranks, ["--mpp=mpi", program("mpi_families.py")], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    for r in range(ranks):
        assert "rank %d of %d: families done" % (r, ranks) in out.stdout
    exp = tmp_path / "exp"
    otf2_print(str(exp / "traces.otf2"))
    otf2_print(str(exp / "traces.otf2"), "-G")
    return ranks, exp, MpiTrace(exp)


def test_persistent_requests_each_start_is_a_message(families):
    ranks, _exp, t = families
    ring = [s for s in t.isends if s[3] == 21]
    assert sorted(s[:5] for s in ring) == sorted(
        [(r, (r + 1) % ranks, "MPI_COMM_WORLD", 21, 20) for r in range(ranks)] * 3)
    ssend = [s for s in t.isends if s[3] == 22]
    assert sorted(s[:5] for s in ssend) == sorted(
        [(r, (r + 1) % ranks, "MPI_COMM_WORLD", 22, 24) for r in range(ranks)])
    persistent = ring + ssend
    assert match_messages(persistent, [m for m in t.irecvs if m[3] in (21, 22)]) == 4 * ranks
    # One request id per persistent request, reused by each start (as Score-P).
    for r in range(ranks):
        ids = {e.request_id for rank, e in t.records["MpiIsend"] if rank == r and e.msg_tag == 21}
        assert len(ids) == 1
        assert t.enters[(r, "MPI_Startall")] == 3 and t.enters[(r, "MPI_Start")] == 2
        assert t.enters[(r, "MPI_Send_init")] == 1 and t.enters[(r, "MPI_Recv_init")] == 2


def test_non_blocking_collectives_request_and_completion(families):
    ranks, _exp, t = families
    for r in range(ranks):
        assert t.count("NonBlockingCollectiveRequest", r) == 6  # 5 collectives and Idup
        done = collections.Counter(
            str(e.collective_op).rsplit(".", 1)[-1] for rank, e in
            t.records["NonBlockingCollectiveComplete"] if rank == r)
        assert done == {"BARRIER": 1, "BCAST": 1, "ALLREDUCE": 1, "GATHER": 1, "ALLTOALL": 1,
                        "CREATE_HANDLE": 1}
        bcast, = t.coll_bytes[(r, "IBCAST", "MPI_COMM_WORLD")]
        assert bcast == ((ranks * 80, 80) if r == 0 else (0, 80))
        assert t.coll_bytes[(r, "IALLREDUCE", "MPI_COMM_WORLD")] == [(ranks * 32, ranks * 32)]
        gather, = t.coll_bytes[(r, "IGATHER", "MPI_COMM_WORLD")]
        assert gather == ((8, ranks * 8) if r == 1 else (8, 0))
    # Each request id is completed once, after it was requested, on the same rank.
    requested = {(r, e.request_id): e.time for r, e in t.records["NonBlockingCollectiveRequest"]}
    for r, e in t.records["NonBlockingCollectiveComplete"]:
        assert requested.pop((r, e.request_id)) <= e.time
    assert not requested


def test_one_sided_records_and_bytes(families):
    ranks, exp, t = families
    assert sorted(w.name for w in t.windows) == ["MPI_Win_allocate_window",
                                                 "MPI_Win_create_window"]
    assert all(w.comm.name == "MPI_COMM_WORLD" for w in t.windows)
    expected = {"RmaWinCreate": 2, "RmaWinDestroy": 2, "RmaPut": 3, "RmaGet": 2,
                "RmaAtomic": 2, "RmaOpCompleteBlocking": 6, "RmaOpCompleteNonBlocking": 1,
                "RmaRequestLock": 2, "RmaReleaseLock": 2, "RmaGroupSync": 4,
                "RmaCollectiveBegin": 8, "RmaCollectiveEnd": 8}
    for r in range(ranks):
        assert {k: t.count(k, r) for k in expected} == expected, r
        right, left, partner = (r + 1) % ranks, (r - 1) % ranks, r ^ 1
        puts = sorted((e.remote, e.bytes) for rank, e in t.records["RmaPut"] if rank == r)
        assert puts == sorted([(right, 16), (right, 32), (right, 8)])
        gets = sorted((e.remote, e.bytes) for rank, e in t.records["RmaGet"] if rank == r)
        assert gets == sorted([(left, 24), (partner, 8)])
        atomics = sorted((e.remote, str(e.type).rsplit(".", 1)[-1], e.bytes_sent,
                          e.bytes_received) for rank, e in t.records["RmaAtomic"] if rank == r)
        assert atomics == [(0, "ACCUMULATE", 8, 0), (0, "FETCH_AND_ACCUMULATE", 8, 8)]
        # every operation is completed exactly once, after it was issued
        issued = {e.matching_id: e.time for kind in ("RmaPut", "RmaGet", "RmaAtomic")
                  for rank, e in t.records[kind] if rank == r}
        for kind in ("RmaOpCompleteBlocking", "RmaOpCompleteNonBlocking"):
            for rank, e in t.records[kind]:
                if rank == r:
                    assert issued.pop(e.matching_id) <= e.time
        assert not issued
        syncs = [group_ranks(e.group) for rank, e in t.records["RmaGroupSync"] if rank == r]
        assert syncs == [[partner]] * 4
        ends = collections.Counter(str(e.collective_op).rsplit(".", 1)[-1]
                                   for rank, e in t.records["RmaCollectiveEnd"] if rank == r)
        assert ends == {"CREATE_HANDLE": 1, "CREATE_HANDLE_AND_ALLOCATE": 1, "BARRIER": 4,
                        "DESTROY_HANDLE": 1, "DESTROY_HANDLE_AND_DEALLOCATE": 1}
    # Score-P's profile metrics of one-sided communication.
    p = cube.read(str(exp))
    put = p.values(p.metric("bytes_put"), inclusive=False)
    got = p.values(p.metric("bytes_get"), inclusive=False)
    for r in range(ranks):
        assert sum(put[c.id][r] for c in p.cnodes) == 16 + 32 + 8 + 8 + 8
        assert sum(got[c.id][r] for c in p.cnodes) == 24 + 8 + 8


def test_communicators_names_members_parents_and_intercomm_traffic(families):
    ranks, _exp, t = families
    everyone = list(range(ranks))
    world = t.comms["MPI_COMM_WORLD"]
    made_from_world = [c for c in t.comm_list if c.parent is world]
    kinds = collections.Counter(len(members_of(c)) for c in made_from_world)
    # Cart_create, Split_type, Idup... over everyone; Split's halves; Create_group's evens
    assert kinds[ranks] >= 2 and kinds[ranks // 2] >= 2
    cart = [c for c in made_from_world if c.parent is world and members_of(c) == everyone]
    subs = [c for c in t.comm_list if c.parent in cart]
    assert sorted(members_of(c) for c in subs) == [[r] for r in everyone]  # Cart_sub
    if ranks == 4:
        evens, = [c for c in t.comm_list if c.name == "evens"]
        assert group_ranks(evens.group) == [0, 2] and evens.parent is world
    inter, = [c for c in t.comm_list if type(c).__name__ == "InterComm"]
    assert sorted([group_ranks(inter.groupA), group_ranks(inter.groupB)]) == [
        list(range(0, ranks, 2)), list(range(1, ranks, 2))]
    merged = [c for c in t.comm_list if c.parent is inter]
    assert len(merged) == 1 and sorted(members_of(merged[0])) == everyone
    # Intercommunicator traffic with the remote group's ranks: even 2k -> odd 2k+1.
    over_inter = [s[:5] for s in t.sends if s[3] == 31]
    assert sorted(over_inter) == [(r, r + 1, over_inter[0][2], 31, 24) for r in range(0, ranks, 2)]
    assert match_messages([s for s in t.sends if s[3] == 31],
                          [m for m in t.recvs if m[3] == 31]) == ranks // 2
    # Creation and destruction as Score-P records them.
    for r in everyone:
        assert t.count("CommCreate", r) >= 8
        assert t.count("CommDestroy", r) >= 7
    assert t.enters[(0, "MPI_Comm_set_name")] == 0  # cg and ext: not in the default groups


def test_cancelled_receive_and_many_matched_probes(families):
    ranks, _exp, t = families
    for r in range(ranks):
        assert t.count("MpiRequestCancelled", r) == 1
    assert not [m for m in t.irecvs if m[3] == 99]
    probed = [m for m in t.recvs if 1000 <= m[3] < 1100]
    assert sorted(m[3] for m in probed) == list(range(1000, 1100))
    assert match_messages([s for s in t.isends if 1000 <= s[3] < 1100], probed) == 100


def test_collective_bytes_follow_score_p(families):
    ranks, exp, t = families
    for r in range(ranks):
        for op in ("BCAST", "REDUCE", "ALLGATHER", "GATHER", "SCATTER", "ALLTOALL", "SCAN",
                   "EXSCAN", "REDUCE_SCATTER_BLOCK"):
            assert t.coll_bytes[(r, op, "MPI_COMM_WORLD")] == [score_p_bytes(op, r, ranks)], op
        assert t.coll_bytes[(r, "ALLREDUCE", "MPI_COMM_WORLD")] == [
            score_p_bytes("ALLREDUCE", r, ranks), score_p_bytes("ALLREDUCE", r, ranks, True)]
    # The profile carries the same bytes on the calls' call paths.
    p = cube.read(str(exp))
    sent = p.values(p.metric("bytes_sent"), inclusive=False)
    for r in range(ranks):
        allreduce = sum(sent[c.id][r] for c in p.cnodes if c.region.name == "MPI_Allreduce")
        assert allreduce == ranks * BLOCK + (ranks - 1) * BLOCK


def test_init_finalize_and_clock_properties(families):
    ranks, _exp, t = families
    for r in range(ranks):
        creates = [e for rank, e in t.records["MpiCollectiveEnd"] if rank == r and
                   str(e.collective_op).endswith("CREATE_HANDLE") and
                   e.communicator.name == "MPI_COMM_WORLD"]
        assert creates, "MPI_Init creates MPI_COMM_WORLD collectively"
        assert t.enters[(r, "MPI_Init_thread")] == 1 and t.enters[(r, "MPI_Finalize")] == 1
        assert t.enters[(r, "MPI_Wtime")] == 0  # ext is not a default group
        # No event before the global offset of the clock properties.
        assert t.first_event[r] >= t.clock.global_offset
    assert min(t.first_event.values()) == t.clock.global_offset


@pytest.mark.parametrize("groups", ["all", "coll", "all,~xnonblock"])
def test_enable_groups(tmp_path, groups):
    out = mpirun(2, ["--mpp=mpi", program("mpi_patterns.py")], tmp_path,
                 SCOREP_ENABLE_TRACING="true", SCOREP_MPI_ENABLE_GROUPS=groups)
    assert out.returncode == 0, out.stderr
    t = MpiTrace(tmp_path / "exp")
    mpi_regions = {name for (_r, name) in t.enters if name.startswith("MPI_")}
    if groups == "coll":
        assert mpi_regions == {"MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather",
                               "MPI_Alltoall", "MPI_Barrier"}
        assert not t.sends and not t.isends and not t.recvs
    elif groups == "all":
        assert {"MPI_Comm_rank", "MPI_Send", "MPI_Init_thread", "MPI_Type_get_extent",
                "MPI_Isend"} <= mpi_regions
        assert len(t.isends) == 4
    else:  # without the extended non-blocking events: as blocking sends and receives
        assert not t.isends and not t.irecvs and not t.records["MpiIsendComplete"]
        ring = [s for s in t.sends if s[3] == 11]
        assert len(ring) == 4
        assert match_messages(ring, [m for m in t.recvs if m[3] == 11]) == 4


def test_unknown_group_is_a_clear_error(tmp_path):
    out = mpirun(1, ["--mpp=mpi", program("mpi_patterns.py")], tmp_path,
                 SCOREP_MPI_ENABLE_GROUPS="coll,bogus")
    assert out.returncode == 1
    assert "scorep: SCOREP_MPI_ENABLE_GROUPS='coll,bogus': unknown MPI group 'bogus'" in out.stderr
    assert "Traceback" not in out.stderr


def test_mpi_io_records(tmp_path):
    """MPI-IO as Score-P's MPI adapter records it: the calls as regions of role file I/O, one
    I/O handle of paradigm MPI-IO for the file both ranks opened collectively (on
    MPI_COMM_WORLD), its creation and destruction, reads and writes with the bytes asked
    for and moved (collective ones flagged), a non-blocking read issued by MPI_File_iread_at
    and completed in MPI_Wait, a split collective, a seek; the profile's io_bytes metrics
    with the MPI I/O part."""
    import otf2
    from conftest import fix_python_otf2
    fix_python_otf2()
    out = mpirun(2, ["--mpp=mpi", program("mpi_io.py"), tmp_path / "data.bin"], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    t = MpiTrace(tmp_path / "exp")
    for r in (0, 1):
        for name in ("MPI_File_open", "MPI_File_write_at_all", "MPI_File_read_at",
                     "MPI_File_iread_at", "MPI_File_write_all_begin", "MPI_File_write_all_end",
                     "MPI_File_seek", "MPI_File_close"):
            assert t.enters[(r, name)] == 1, (r, name)
            assert str(t.regions[name].region_role).endswith("FILE_IO")
    assert t.enters[(0, "MPI_File_delete")] == 1
    events = collections.defaultdict(list)  # (rank, kind) -> [(region, event)]
    with otf2.reader.open(str(tmp_path / "exp" / "traces.otf2")) as reader:
        defs = reader.definitions
        mpi_handles = [h for h in defs.io_handles if h.io_paradigm.identification == "MPI-IO"]
        stacks = collections.defaultdict(list)
        for location, event in reader.events:
            kind = type(event).__name__
            if kind == "Enter":
                stacks[location].append(event.region.name)
            elif kind == "Leave":
                stacks[location].pop()
            elif kind.startswith("Io") and event.handle.io_paradigm.identification == "MPI-IO":
                events[(rank_of(location), kind)].append((stacks[location][-1], event))
    # One handle for both ranks: the file, opened on MPI_COMM_WORLD.
    assert len(mpi_handles) == 1, mpi_handles
    handle = mpi_handles[0]
    assert handle.file.name == str(tmp_path / "data.bin")
    assert handle.comm.name == "MPI_COMM_WORLD"
    assert str(handle.io_paradigm.io_paradigm_class).endswith("PARALLEL")
    for r in (0, 1):
        (where, create), = events[(r, "IoCreateHandle")]
        assert where == "MPI_File_open" and create.handle == handle
        assert str(create.mode).endswith("READ_WRITE")
        assert "CREATE" in str(create.creation_flags)
        assert [w for w, _ in events[(r, "IoDestroyHandle")]] == ["MPI_File_close"]
        begins = {w: e for w, e in events[(r, "IoOperationBegin")]}
        completes = {w: e for w, e in events[(r, "IoOperationComplete")]}
        assert begins["MPI_File_write_at_all"].bytes_request == 400
        assert "COLLECTIVE" in str(begins["MPI_File_write_at_all"].operation_flags)
        assert completes["MPI_File_write_at_all"].bytes_result == 400
        assert str(begins["MPI_File_read_at"].mode).endswith("READ")
        assert completes["MPI_File_read_at"].bytes_result == 400
        # non-blocking: begun and issued in the call, completed in MPI_Wait
        assert "NON_BLOCKING" in str(begins["MPI_File_iread_at"].operation_flags)
        (issued_in, issued), = events[(r, "IoOperationIssued")][:1]
        assert issued_in == "MPI_File_iread_at"
        assert issued.matching_id == begins["MPI_File_iread_at"].matching_id
        assert completes["MPI_Wait"].matching_id == issued.matching_id
        assert completes["MPI_Wait"].bytes_result == 200
        # the split collective: begun in _begin, completed in _end
        assert begins["MPI_File_write_all_begin"].bytes_request == 40
        assert completes["MPI_File_write_all_end"].bytes_result == 40
        assert (completes["MPI_File_write_all_end"].matching_id ==
                begins["MPI_File_write_all_begin"].matching_id)
        (where, seek), = events[(r, "IoSeek")]
        assert where == "MPI_File_seek"
        assert seek.offset_request == r * 400 + 40 and seek.offset_result == r * 400 + 40
    # the profile: MPI I/O bytes per rank (400 + 40 written, 400 + 200 read)
    p = cube.read(str(tmp_path / "exp"))
    for name, total in (("io_bytes_written::MPI_I_O", 440), ("io_bytes_read::MPI_I_O", 600)):
        values = p.values(p.metric(name), inclusive=False)
        assert [sum(values[c.id][r] for c in p.cnodes) for r in (0, 1)] == [total, total], name
    # the report: MPI-IO volumes next to the messages, in the text and the HTML MPI tab
    import subprocess
    import sys
    from conftest import scorep_env
    text = subprocess.run([sys.executable, "-m", "scorep.report", str(tmp_path / "exp")],
                          env=scorep_env(), capture_output=True, text=True)
    assert text.returncode == 0, text.stderr
    assert "MPI-IO: 1,200 bytes read, 880 bytes written" in text.stdout
    from scorep.report import html
    from scorep.report.readers import Experiment
    e = Experiment(str(tmp_path / "exp"))
    volumes = html.mpi_data(e, e.tree)["volumes"]
    assert volumes["columns"][-2:] == ["MPI-IO read", "MPI-IO written"]
    assert [row[-2:] for row in volumes["rows"]] == [[600, 440]] * 2


def test_report_shows_one_sided_volumes(families):
    """scorep-report's text and its HTML MPI tab: one-sided operations and bytes next to
    point-to-point and collectives."""
    import subprocess
    import sys
    from conftest import scorep_env
    ranks, exp, t = families
    out = subprocess.run([sys.executable, "-m", "scorep.report", str(exp)], env=scorep_env(),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "one-sided: %d operations, %d bytes put, %d bytes got" % (
        7 * ranks, 72 * ranks, 40 * ranks) in out.stdout
    assert "collectives:" in out.stdout and "calls on %d ranks" % ranks in out.stdout
    from scorep.report import html
    from scorep.report.readers import Experiment
    e = Experiment(str(exp))
    volumes = html.mpi_data(e, e.tree)["volumes"]
    assert volumes["columns"][-2:] == ["one-sided put", "one-sided got"]
    assert [row[-2:] for row in volumes["rows"]] == [[72, 40]] * ranks
    assert [row[0] for row in volumes["rows"]] == ["MPI Rank %d" % r for r in range(ranks)]
