"""MPI experiments: until real MPI traces come from the measurement, a trace written with
python3-otf2's writer in the shape Score-P and our core use (location groups "MPI Rank N",
MPI regions of paradigm MPI, MpiSend/MpiRecv inside MPI_Send/MPI_Recv, a collective,
COMM_LOCATIONS + COMM_GROUP + Comm definitions). Rank 3 computes a tenth of the others.

Per rank r (times in us from the start): ProgramBegin 0, <module> from 10; twice: compute
for W = 20000 (rank 3: 2000) from 20 and from 21700, then MPI_Send to (r+1)%4 (tag 7, 1024
bytes, then 4096) and MPI_Recv from (r-1)%4 that completes at 21000 + r, then 42000 + r:
rank 3 waits there. Between the phases MPI_Barrier 21100..21600. <module> ends at
42100 + r, ProgramEnd at 42200."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import program, scorep_env
from test_report_support import chrome_slices, chromium, needs_chromium, report, \
    validate_chrome

US = 1000  # ns

RANKS = 4


def work_of(rank):
    return 2000 if rank == 3 else 20000


def write_mpi_trace(path, ranks=RANKS):
    import otf2
    from otf2.enums import (CollectiveOp, GroupType, LocationGroupType, LocationType, Paradigm,
                            RegionRole)
    with otf2.writer.open(str(path), timer_resolution=1_000_000_000) as trace:
        d = trace.definitions
        machine = d.system_tree_node("machine Linux")
        node = d.system_tree_node("node n1", parent=machine)
        groups = [d.location_group("MPI Rank %d" % r, location_group_type=LocationGroupType.PROCESS,
                                   system_tree_parent=node) for r in range(ranks)]
        locs = [d.location("Master thread", type=LocationType.CPU_THREAD, group=g) for g in groups]
        program = d.region("mpi_app.py", region_role=RegionRole.ARTIFICIAL,
                           paradigm=Paradigm.MEASUREMENT_SYSTEM)
        module = d.region("__main__:<module>", source_file="/app/mpi_app.py",
                          begin_line_number=1, paradigm=Paradigm.USER)
        compute = d.region("__main__:compute", source_file="/app/mpi_app.py",
                           begin_line_number=5, paradigm=Paradigm.USER)
        send = d.region("MPI_Send", region_role=RegionRole.POINT2POINT, paradigm=Paradigm.MPI)
        recv = d.region("MPI_Recv", region_role=RegionRole.POINT2POINT, paradigm=Paradigm.MPI)
        barrier = d.region("MPI_Barrier", region_role=RegionRole.BARRIER, paradigm=Paradigm.MPI)
        world_locations = d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI,
                                  members=locs)
        world_group = d.group("", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
                              members=list(range(ranks)))
        world = d.comm("MPI_COMM_WORLD", group=world_group)
        assert world_locations is not None
        for r in range(ranks):
            w = trace.event_writer_from_location(locs[r])
            t = lambda us: int(us * US)  # noqa: E731
            work = work_of(r)
            w.program_begin(t(0), program_name=program.name, program_arguments=[])
            w.enter(t(10), module)
            for phase, (begin, size, done) in enumerate(((20, 1024, 21000),
                                                         (21700, 4096, 42000))):
                w.enter(t(begin), compute)
                w.leave(t(begin + work), compute)
                # ring: send to the right, then wait for the left neighbour's message
                w.enter(t(begin + work + 10), send)
                w.mpi_send(t(begin + work + 11), (r + 1) % ranks, world, 7, size)
                w.leave(t(begin + work + 15), send)
                w.enter(t(begin + work + 110), recv)
                w.mpi_recv(t(done + r), (r - 1) % ranks, world, 7, size)
                w.leave(t(done + r + 1), recv)
                if phase == 0:
                    w.enter(t(21100), barrier)
                    w.mpi_collective_begin(t(21101))
                    w.mpi_collective_end(t(21599), CollectiveOp.BARRIER, world, 0xFFFFFFFF,
                                         0, 0)
                    w.leave(t(21600), barrier)
            w.leave(t(42100 + r), module)
            w.program_end(t(42200), 0)
    return path


@pytest.fixture(scope="module")
def mpi_exp(tmp_path_factory):
    path = tmp_path_factory.mktemp("mpi") / "exp"
    return write_mpi_trace(path)


def test_mpi_terminal_report(mpi_exp):
    out = report(mpi_exp)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "4 processes, 4 threads;" in text
    assert "missing  no profile (profile.cubex)" in text
    threads = text.split("\nThreads\n")[1].split("\n\n")[0].splitlines()[1:]
    assert [l.split()[:5] for l in threads] == [
        ["MPI", "Rank", "%d" % r, "/", "Master"] for r in range(RANKS)]
    balance = text.split("Ranks: load balance")[1]
    assert "IDLE: 1 of 4 ranks do less than a quarter of the busiest rank's work: MPI Rank 3" \
        in balance
    # compute: 2 x 20 ms on three ranks, 2 x 2 ms on rank 3
    row = [l for l in balance.splitlines() if l.endswith("__main__:compute")][0]
    assert row.split()[:9] == ["4", "ms", "31", "ms", "40", "ms", "15.6", "ms", "1.29"]
    assert "point-to-point: 8 messages, 20,480 bytes between 4 rank pairs" in text
    assert "collectives: 4 calls on 4 ranks (1 per rank)" in text


def test_mpi_tree_values(mpi_exp):
    from scorep.report.readers import Experiment
    exp = Experiment(mpi_exp)
    tree = exp.tree
    assert [r.name for r in tree.ranks] == ["MPI Rank %d" % r for r in range(RANKS)]
    flat = {s.region.name: s for s in tree.flat()}
    assert flat["MPI_Send"].region.kind == "mpi" and flat["MPI_Send"].visits == 8
    assert flat["mpi_app.py"].region.kind == "measurement"
    assert [round(v * 1e6) for v in flat["__main__:compute"].per_loc_incl] == [40000] * 3 + [4000]
    # the program root spans ProgramBegin..ProgramEnd on every rank
    root = tree.roots[0]
    assert root.region.name == "mpi_app.py"
    assert [round(tree.incl[root.id][l] * 1e6) for l in range(4)] == [42200] * 4
    msgs = exp.scan.messages()
    assert sorted((s, d, c, b) for s, d, c, b in msgs["p2p"]) == [
        (r, (r + 1) % 4, 2, 1024 + 4096) for r in range(4)]
    assert sorted(msgs["collectives"]) == [(r, 0, 1, 0, 0) for r in range(4)]


def test_mpi_chrome_json_flows(mpi_exp, tmp_path):
    path = tmp_path / "mpi.json"
    out = report(mpi_exp, "-o", path)
    assert out.returncode == 0, out.stderr
    assert ", 8 message arrows," in out.stdout
    doc = validate_chrome(path)  # checks that each arrow end lies inside a call
    events = doc["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert procs == {r + 1: "MPI Rank %d" % r for r in range(RANKS)}
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert len(starts) == len(ends) == 8 and set(starts) == set(ends)
    for fid, s in starts.items():
        f = ends[fid]
        assert f["pid"] == s["pid"] % RANKS + 1  # ring: rank r sends to r + 1
        assert f["ts"] > s["ts"]
        sender = [e for e in chrome_slices(doc) if e["pid"] == s["pid"] and
                  e["ts"] <= s["ts"] <= e["ts"] + e["dur"] and e["name"] == "MPI_Send"]
        receiver = [e for e in chrome_slices(doc) if e["pid"] == f["pid"] and
                    e["ts"] <= f["ts"] <= e["ts"] + e["dur"] and e["name"] == "MPI_Recv"]
        assert sender and receiver
    cats = {e["name"]: e["cat"] for e in chrome_slices(doc)}
    assert cats["MPI_Send"] == "mpi" and cats["__main__:compute"] == "python"


@needs_chromium
def test_mpi_html(mpi_exp, tmp_path):
    html = tmp_path / "mpi.html"
    out = report(mpi_exp, "-o", html)
    assert out.returncode == 0, out.stderr
    data = json.loads(re.search(r'<script type="application/json" id="report-data">(.*?)</script>',
                                html.read_text(), re.S).group(1).replace("<\\/", "</"))
    assert data["balance"]["unit"] == "rank" and data["balance"]["idle"] == [3]
    assert len(data["timeline"]["messages"]) == 8
    out, console = chromium(html, tmp_path, "--virtual-time-budget=8000", "--dump-dom")
    dom = out.stdout
    assert 'data-ready="yes"' in dom and console == []
    mpi = dom.split('id="mpi-body"')[1].split("</section>")[0]
    assert "Point-to-point messages (sender row, receiver column)" in mpi
    # each ring pair: 2 messages, 5120 bytes; 4 of the 16 cells
    assert len(re.findall(r'<td style="[^"]*">2 / 5.1 kB</td>', mpi)) == 4
    assert "barrier" in mpi
    assert "IDLE" in dom.split('id="balance"')[1] or "(marked IDLE)" in dom


def test_many_ranks_terminal_stays_short(tmp_path):
    exp = write_mpi_trace(tmp_path / "exp40", ranks=40)
    out = report(exp)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    threads = text.split("\nThreads\n")[1].split("\n\n")[0].splitlines()
    assert len(threads) == 1 + 12 + 1 + 8
    assert threads[13] == "  ... 20 more threads (all of them: -o report.html)"
    assert re.search(r"work \(program code, exclusive\) per rank: min 4.\d\d ms \(MPI Rank 3\), "
                     r"mean 39.\d ms, max 40.\d ms \(MPI Rank \d+\)", text)
    assert "IDLE: 1 of 40 ranks" in text
    assert "point-to-point: 80 messages" in text


@pytest.mark.skipif(shutil.which("mpirun") is None or not os.path.exists(program("mpi_patterns.py")),
                    reason="needs mpirun and the MPI test program")
def test_real_mpi_run(tmp_path):
    """2 ranks under mpirun (Open MPI, mpi4py): the reports agree with otf2-print's count
    of message records, and every arrow joins an MPI call on each side."""
    env = scorep_env(tmp_path / "exp", SCOREP_ENABLE_TRACING="true")
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    out = subprocess.run(["mpirun", "--oversubscribe", "-np", "2", sys.executable, "-m", "scorep",
                          "--mpp=mpi", program("mpi_patterns.py")], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    exp = tmp_path / "exp"
    printed = subprocess.run(["otf2-print", str(exp / "traces.otf2")], capture_output=True,
                             text=True).stdout
    sends = len(re.findall(r"^MPI_I?SEND ", printed, re.M))
    assert sends >= 4
    text = report(exp).stdout
    assert "2 processes, " in text and "Ranks: load balance" in text
    assert "point-to-point: %d messages" % sends in text
    path = tmp_path / "mpi.json"
    out = report(exp, "-o", path)
    assert out.returncode == 0, out.stderr
    assert ", %d message arrows," % sends in out.stdout
    doc = validate_chrome(path)
    slices = chrome_slices(doc)
    for e in doc["traceEvents"]:
        if e["ph"] in ("s", "f"):
            around = [s for s in slices if s["pid"] == e["pid"] and s["tid"] == e["tid"]
                      and s["ts"] <= e["ts"] <= s["ts"] + s["dur"]]
            assert any(s["cat"] == "mpi" for s in around), e
