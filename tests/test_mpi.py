"""MPI programs under real mpirun (Open MPI, mpi4py from Debian) with 2 and 4 ranks: one
experiment for all ranks, MPI calls as regions, messages and collectives in the trace,
every rank in the profile."""

import collections
import os
import re
import shutil
import signal
import subprocess
import sys

import pytest

from conftest import SRC, Trace, otf2_print, program, run_scorep, scorep_env
from mpi_support import MpiTrace, comm_name, group_ranks, match_messages, mpirun
from scorep import cube

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun is not installed")


@pytest.mark.parametrize("ranks", [2, 4])
def test_patterns_one_experiment_messages_and_collectives(tmp_path, ranks):
    out = mpirun(ranks, ["--mpp=mpi", program("mpi_patterns.py")], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    for r in range(ranks):  # mpirun interleaves the ranks' output
        half = sum(q for q in range(ranks) if q % 2 == r % 2)
        assert "rank %d of %d: half sum %g" % (r, ranks, half) in out.stdout
    exp = tmp_path / "exp"
    assert sorted(p.name for p in exp.iterdir()) == [
        "MANIFEST.md", "profile.cubex", "scorep.cfg", "traces", "traces.def", "traces.otf2"]
    assert not [p for p in (exp / "traces").iterdir() if not p.name.endswith((".evt", ".def"))]
    otf2_print(str(exp / "traces.otf2"))

    t = MpiTrace(exp)
    assert t.groups == ["MPI Rank %d" % r for r in range(ranks)]
    for name, role in [("MPI_Send", "POINT2POINT"), ("MPI_Recv", "POINT2POINT"),
                       ("MPI_Isend", "POINT2POINT"), ("MPI_Bcast", "COLL_ONE2ALL"),
                       ("MPI_Reduce", "COLL_ALL2ONE"), ("MPI_Allreduce", "COLL_ALL2ALL"),
                       ("MPI_Gather", "COLL_ALL2ONE"), ("MPI_Alltoall", "COLL_ALL2ALL"),
                       ("MPI_Barrier", "BARRIER")]:
        assert str(t.regions[name].paradigm).endswith("MPI")
        assert str(t.regions[name].region_role).endswith(role), name
    # ping-pong: 3 round trips between ranks 0 and 1 on MPI_COMM_WORLD, 800 bytes each way.
    blocking = [s for s in t.sends if s[2] == "MPI_COMM_WORLD" and s[3] in (7, 8)]
    assert sorted(s[:5] for s in blocking) == sorted(
        [(0, 1, "MPI_COMM_WORLD", 7, 800)] * 3 + [(1, 0, "MPI_COMM_WORLD", 8, 800)] * 3)
    assert match_messages(t.sends, t.recvs) >= 6
    # the ring, twice: one Isend and one Irecv of 40 bytes per rank each time
    assert sorted(s[:5] for s in t.isends) == sorted(
        [(r, (r + 1) % ranks, "MPI_COMM_WORLD", 11, 40) for r in range(ranks)] * 2)
    assert match_messages(t.isends, t.irecvs) == 2 * ranks
    assert sorted(r for r, _ in t.records["MpiIsendComplete"]) == sorted(list(range(ranks)) * 2)
    assert sorted(r for r, _ in t.records["MpiIrecvRequest"]) == sorted(list(range(ranks)) * 2)
    assert all(t.enters[(r, "MPI_Testall")] >= 1 for r in range(ranks))
    # collectives: on every member, once each, root 0 where there is one
    for op, count in [("BCAST", 1), ("REDUCE", 1), ("GATHER", 1), ("ALLTOALL", 1),
                      ("BARRIER", 1)]:
        for r in range(ranks):
            records = t.collectives[(r, op, "MPI_COMM_WORLD")]
            assert len(records) == count, (op, r)
            begin, end, root = records[0]
            assert begin <= end
            if op in ("BCAST", "REDUCE", "GATHER"):
                assert root == 0
    # the split communicators: unnamed, made from MPI_COMM_WORLD, one Allreduce per rank on
    # its half
    halves = [c for c in t.comm_list if c.parent is not None and c.parent.name == "MPI_COMM_WORLD"
              and len(c.group.members) == ranks // 2]
    assert sorted(sorted(group_ranks(c.group)) for c in halves) == [
        list(range(0, ranks, 2)), list(range(1, ranks, 2))]
    assert all(c.name == "" for c in halves)
    for r in range(ranks):
        on_half = [k for k in t.collectives if k[0] == r and k[1] == "ALLREDUCE"
                   and k[2] in [comm_name(c) for c in halves]]
        assert len(on_half) == 1
    assert "MPI_COMM_WORLD" in t.comms and "MPI_COMM_SELF" in t.comms

    # The profile: every rank's location, MPI regions with their visits and bytes.
    p = cube.read(str(exp))
    assert [g.name for g in p.location_groups] == ["MPI Rank %d" % r for r in range(ranks)]
    assert [l.group.name for l in p.locations] == ["MPI Rank %d" % r for r in range(ranks)]
    visits = p.values(p.metric("visits"), inclusive=False)
    sent = p.values(p.metric("bytes_sent"), inclusive=False)
    received = p.values(p.metric("bytes_received"), inclusive=False)
    per_rank = collections.Counter()
    sent_by = collections.Counter()
    received_by = collections.Counter()
    for c in p.cnodes:
        for r in range(ranks):
            per_rank[(r, c.region.name)] += visits[c.id][r]
            if c.region.name == "MPI_Send":
                sent_by[r] += sent[c.id][r]
            if c.region.name == "MPI_Recv":
                received_by[r] += received[c.id][r]
    assert per_rank[(0, "MPI_Send")] == t.enters[(0, "MPI_Send")] >= 3
    assert per_rank[(1, "MPI_Recv")] == t.enters[(1, "MPI_Recv")] >= 3
    assert sent_by[0] >= 2400 and received_by[1] >= 2400
    assert per_rank[(ranks - 1, "MPI_Barrier")] == 1
    assert per_rank[(0, "__main__:ping_pong")] == 1


def test_thread_levels_and_threads(tmp_path):
    out = mpirun(2, ["--mpp=mpi", program("mpi_threads.py")], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    for r in (0, 1):
        assert "threads of rank %d done; thread level 3" % r in out.stdout
    exp = tmp_path / "exp"
    t = MpiTrace(exp)
    assert sorted(t.locations) == sorted(
        (g, n) for g in ("MPI Rank 0", "MPI Rank 1") for n in ("MainThread", "talker-1",
                                                              "talker-2"))
    assert match_messages(t.sends, t.recvs) == 20
    # Under MPI_THREAD_MULTIPLE every thread takes part in MPI: all are MPI locations, each
    # rank's first location first (communicator ranks index them).
    group, = t.mpi_locations
    assert sorted((l.group.name, l.name) for l in group.members) == sorted(t.locations)
    assert [l.group.name for l in group.members[:2]] == ["MPI Rank 0", "MPI Rank 1"]
    defs = otf2_print(str(exp / "traces.otf2"), "-G")
    assert defs.count('"MPI thread level requested"') >= 2
    assert "MPI_THREAD_MULTIPLE" in defs


def test_auto_detection_under_mpirun_without_mpp(tmp_path):
    out = mpirun(2, [program("mpi_patterns.py")], tmp_path)
    assert out.returncode == 0, out.stderr
    p = cube.read(str(tmp_path / "exp"))
    assert [g.name for g in p.location_groups] == ["MPI Rank 0", "MPI Rank 1"]
    assert any(r.name == "MPI_Send" for r in p.regions)


def test_program_without_mpi_under_mpirun(tmp_path):
    out = mpirun(2, ["--mpp=mpi", program("no_mpi.py")], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("42") == 2  # two ranks' lines, possibly interleaved
    made = sorted(p.name for p in tmp_path.iterdir())
    assert made == ["exp-rank0", "exp-rank1"]
    for name in made:
        p = cube.read(str(tmp_path / name))
        assert [g.name for g in p.location_groups] == ["Process"]


def test_mpp_none_measures_each_process_alone(tmp_path):
    out = mpirun(2, ["--mpp=none", program("mpi_patterns.py")], tmp_path)
    assert out.returncode == 0, out.stderr
    for rank in (0, 1):
        p = cube.read(str(tmp_path / ("exp-rank%d" % rank)))
        assert [g.name for g in p.location_groups] == ["Process"]
        assert not any(r.paradigm == "mpi" for r in p.regions)


def test_rank_raising_at_the_end_still_writes_one_experiment(tmp_path):
    out = mpirun(2, ["--mpp=mpi", program("mpi_patterns.py"), "fail"], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    assert out.returncode != 0
    assert "RuntimeError: rank 1 fails at the end" in out.stderr
    exp = tmp_path / "exp"
    assert (exp / "traces.otf2").exists() and (exp / "profile.cubex").exists()
    ends = {}
    import otf2
    with otf2.reader.open(str(exp / "traces.otf2")) as reader:
        for location, event in reader.events:
            if type(event).__name__ == "ProgramEnd":
                ends[location.group.name] = event.exit_status
    assert ends == {"MPI Rank 0": 0, "MPI Rank 1": 1}


def test_ranks_that_cannot_meet_write_their_own_parts(tmp_path):
    out = mpirun(2, ["--mpp=mpi", program("mpi_slow_rank.py")], tmp_path,
                 SCOREP_ENABLE_TRACING="true", SCOREP_MPI_FINALIZE_TIMEOUT="1")
    assert out.returncode == 0, out.stderr
    for rank in (0, 1):
        part = tmp_path / "exp" / ("rank-%d" % rank)
        assert ("scorep: rank %d: not all ranks reached the end of the measurement within 1 s; "
                "this rank's results are in %s" % (rank, part)) in out.stderr
        assert (part / "traces.otf2").exists() and (part / "profile.cubex").exists()
        assert (part / "scorep.cfg").exists()
        Trace(part).check_nesting()


def test_program_finalizing_mpi_itself(tmp_path):
    out = mpirun(2, ["--mpp=mpi", program("mpi_early_finalize.py")], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    # Both ranks print at the same moment: mpirun may interleave their lines.
    assert out.stdout.count("finalized early; 2 ranks") == 2
    # The MPI_Finalize wrapper wrote the results; the end of the program adds the rest
    # (every rank used to say "writing the results ... failed: no measurement is running").
    assert "scorep:" not in out.stderr, out.stderr
    exp = tmp_path / "exp"
    assert sorted(p.name for p in exp.iterdir()) == [
        "MANIFEST.md", "profile.cubex", "scorep.cfg", "traces", "traces.def", "traces.otf2"]
    t = MpiTrace(tmp_path / "exp")
    assert t.enters[(0, "__main__:before")] == 1
    assert t.enters[(0, "__main__:after")] == 0  # after MPI_Finalize: not measured
    assert t.enters[(1, "MPI_Finalize")] == 1


def test_mpi_abort_keeps_what_the_aborting_rank_recorded(tmp_path):
    """MPI_Abort used to leave an empty experiment directory. The aborting rank writes its
    own part (as after a finalize timeout) before the job ends; the others are ended by
    the MPI runtime inside their MPI calls and cannot write."""
    out = mpirun(2, ["--mpp=mpi", program("mpi_abort.py")], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 3
    part = tmp_path / "exp" / "rank-1"
    assert ("scorep: rank 1: the program called MPI_Abort(3); this rank's results are in %s"
            % part) in out.stderr
    assert {"MANIFEST.md", "profile.cubex", "scorep.cfg", "traces.otf2"} <= \
        {p.name for p in part.iterdir()}
    trace = Trace(part)
    trace.check_nesting()
    assert trace.enters("__main__:work") == 5
    end, = trace.of("ProgramEnd")
    assert end.attrs["exit_status"] == 3
    otf2_print(str(part / "traces.otf2"))


def test_score_ranks_shows_the_load_balance(tmp_path):
    out = mpirun(4, ["--mpp=mpi", program("mpi_imbalance.py")], tmp_path)
    assert out.returncode == 0, out.stderr
    env = scorep_env()
    score = subprocess.run([sys.executable, "-m", "scorep.score", "--ranks", "-r",
                            str(tmp_path / "exp")], env=env, capture_output=True, text=True)
    assert score.returncode == 0 and score.stderr == "", score.stderr
    lines = score.stdout.splitlines()
    assert lines[0] == "Exclusive time per rank of each region, over 4 ranks"
    assert lines[2].split() == ["min[s]", "mean[s]", "max[s]", "stddev[s]", "max/mean",
                                "min@", "max@", "visits", "region"]
    rows = {line.split()[-1]: line.split()[:-1] for line in lines[3:]}
    lo, mean, hi, dev, ratio, at_min, at_max, visits = rows["__main__:work"]
    assert (at_min, at_max, visits) == ("0", "3", "4")
    assert 0.1 <= float(lo) < float(mean) < float(hi) and float(hi) >= 0.4
    assert float(dev) > 0.05
    # Rank 0 waits in the barrier for the others; rank 3 hardly waits.
    lo, mean, hi, dev, ratio, at_min, at_max, visits = rows["MPI_Barrier"]
    assert (at_min, at_max, visits) == ("3", "0", "4")
    assert float(hi) - float(lo) > 0.2
    # Sorted by the largest max: MPI_Init_thread and the work come before the barrier.
    names = [line.split()[-1] for line in lines[3:]]
    assert names.index("__main__:work") < names.index("MPI_Barrier")


def test_mpi_and_serial_runs_respect_each_others_lock_on_the_directory(tmp_path):
    """One experiment-directory policy for every run (core/experiment_dir.c): an MPI run's
    rank 0 used to neither take nor honour the lock a serial run holds."""
    exp = tmp_path / "exp"
    serial = subprocess.Popen([sys.executable, "-m", "scorep", program("signals.py")],
                              env=scorep_env(exp, SCOREP_ENABLE_TRACING="true"),
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    assert serial.stdout.readline() == "ready\n"
    go = tmp_path / "go"
    go.touch()
    out = mpirun(2, ["--mpp=mpi", program("mpi_wait.py"), go], tmp_path)
    # The program goes on (refused inside MPI_Init, stopping would abort the job); one line
    # says why the group's directory is not used and where the ranks' results go.
    assert out.returncode == 0
    # mpirun forwards each rank's output on its own: lines of two ranks can interleave
    # (a CI run got "rank 0 donerank 1 done\n\n"), so the words are compared, not lines.
    said = re.findall(r"ready|rank \d done", out.stdout)
    assert sorted(said) == ["rank 0 done", "rank 1 done", "ready"], out.stdout
    assert re.sub(r"ready|rank \d done", "", out.stdout).strip() == "", out.stdout
    assert out.stderr == ("scorep: experiment directory %s is in use by another running "
                          "measurement; set SCOREP_EXPERIMENT_DIRECTORY to another "
                          "directory; each rank writes an experiment of its own, that name "
                          "with -rank<N>\n" % exp)
    for rank in (0, 1):
        assert (tmp_path / ("exp-rank%d" % rank) / "profile.cubex").is_file()
    # Nothing moved or written into the held directory: the ranks, without the group's
    # directory, wrote alone (as when MPI is never initialized).
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exp", "exp-rank0", "exp-rank1",
                                                          "go"]
    serial.send_signal(signal.SIGTERM)
    serial.communicate(timeout=60)
    assert Trace(exp).enters("__main__:spin") > 0

    # The other way round: the MPI run holds the directory while its ranks wait.
    go.unlink()
    env = scorep_env(exp, SCOREP_ENABLE_TRACING="true")
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    ranks = subprocess.Popen(["mpirun", "--oversubscribe", "-np", "2", sys.executable, "-m",
                              "scorep", "--mpp=mpi", program("mpi_wait.py"), str(go)],
                             env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert ranks.stdout.readline() == "ready\n"
    second = run_scorep(sys.executable, [program("calls.py")], exp, cwd=tmp_path)
    assert second.returncode == 1 and second.stdout == ""
    assert second.stderr == ("scorep: experiment directory %s is in use by another running "
                             "measurement; set SCOREP_EXPERIMENT_DIRECTORY to another "
                             "directory\n" % exp)
    go.touch()
    stdout, stderr = ranks.communicate(timeout=180)
    assert ranks.returncode == 0, stderr
    said = re.findall(r"rank \d done", stdout)  # lines of two ranks can interleave (above)
    assert sorted(said) == ["rank 0 done", "rank 1 done"], stdout
    assert re.sub(r"rank \d done", "", stdout).strip() == "", stdout
    # The serial run's experiment, ended, was moved aside by the MPI run; the MPI run's own
    # is whole, untouched by the refused serial run.
    aside = [p for p in tmp_path.glob("exp-*") if not p.name.startswith("exp-rank")]
    assert len(aside) == 1
    assert Trace(aside[0]).enters("__main__:spin") > 0
    t = MpiTrace(exp)
    assert [t.enters[(r, "MPI_Barrier")] for r in range(2)] == [1, 1]


def test_ranks_write_the_profile_rows_together(tmp_path):
    """SCOREP_PROFILING_WRITE_SLICE=8: every one of 4 ranks writes its slice of each row of
    profile.cubex with pwrite (substrates/profile/stream.c); the file reads back with every
    rank's values where they belong, as with rank 0 writing alone (=0)."""
    def visits(slice_):
        work = tmp_path / ("slice-" + slice_)
        work.mkdir()
        out = mpirun(4, ["--mpp=mpi", program("mpi_patterns.py")], work,
                     SCOREP_PROFILING_WRITE_SLICE=slice_)
        assert out.returncode == 0, out.stderr
        assert out.stderr == ""
        p = cube.read(str(work / "exp"))
        assert [g.name for g in p.location_groups] == ["MPI Rank %d" % r for r in range(4)]
        values = p.values(p.metric("visits"), inclusive=False)
        sent = p.values(p.metric("bytes_sent"), inclusive=False)
        counts = collections.Counter()
        for c in p.cnodes:
            # the polling loops' counts differ from run to run
            if c.region.name.startswith("MPI_Test"):
                continue
            for r in range(4):
                counts[(r, c.region.name)] += values[c.id][r]
                counts[(r, c.region.name, "sent")] += sent[c.id][r]
        return counts

    together, alone = visits("8"), visits("0")
    assert together == alone
    assert together[(0, "__main__:ping_pong")] == 1 and together[(3, "MPI_Barrier")] == 1
    assert together[(0, "MPI_Send", "sent")] >= 2400
