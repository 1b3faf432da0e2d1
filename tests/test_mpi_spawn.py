"""mpi4py.futures measured end to end (dynamic pools spawn their workers, the static and
MPICommExecutor modes use MPI_COMM_WORLD) and a program's own MPI_Comm_spawn: the spawned
processes run under the same measurement and join the parent's experiment as location
groups "MPI Rank r (spawned k)"; one traces.otf2 and one profile.cubex."""

import collections
import shutil

import pytest

from conftest import assert_metric_instances_per_group, otf2_print, program
from mpi_support import MpiTrace, fix_python_otf2, match_messages, members_of, mpirun
from scorep import cube

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun is not installed")


def square_visits(exp):
    """Visits of square() per location group, from the profile, with the region names."""
    p = cube.read(str(exp))
    visits = p.values(p.metric("visits"), inclusive=False)
    per_group = collections.Counter()
    names = set()
    for c in p.cnodes:
        if c.region.name.endswith(":square"):
            names.add(c.region.name)
            for i, loc in enumerate(p.locations):
                per_group[loc.group.name] += visits[c.id][i]
    return names, per_group, [g.name for g in p.location_groups]


def check_experiment(out, exp):
    assert out.returncode == 0, out.stderr
    assert out.stderr == "", out.stderr
    assert "sum of squares 2470" in out.stdout
    assert sorted(p.name for p in exp.iterdir()) == [
        "MANIFEST.md", "profile.cubex", "scorep.cfg", "traces", "traces.def", "traces.otf2"]
    otf2_print(str(exp / "traces.otf2"))


def test_dynamic_pool_workers_join_the_experiment(tmp_path):
    out = mpirun(1, ["--mpp=mpi", program("futures_app.py")], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    exp = tmp_path / "exp"
    check_experiment(out, exp)
    t = MpiTrace(exp)
    assert t.groups == ["MPI Rank 0", "MPI Rank 0 (spawned 1)", "MPI Rank 1 (spawned 1)"]
    # The 20 tasks ran on the two workers, recorded under the main module's name.
    tasks = {(rank, name): n for (rank, name), n in t.enters.items() if name.endswith(":square")}
    assert sum(tasks.values()) == 20 and {name for _, name in tasks} == {"__main__:square"}
    assert {rank for rank, _ in tasks} <= {1, 2} and len(tasks) >= 1
    # Parent and workers talk over the spawn's inter-communicator: every message matched,
    # with the partner in the other world.
    sends, recvs = t.sends + t.isends, t.recvs + t.irecvs
    assert match_messages(sends, recvs) >= 2 * 20
    inter = [c for c in t.comm_list if type(c).__name__ == "InterComm"]
    assert len(inter) == 1 and sorted(members_of(inter[0])) == [0, 1, 2]
    assert {(s[0], s[1]) for s in sends} == {(0, 1), (0, 2), (1, 0), (2, 0)}
    # The workers' world: its own MPI_COMM_WORLD of two.
    worlds = [c for c in t.comm_list if c.name == "MPI_COMM_WORLD"]
    assert sorted(members_of(c) for c in worlds) == [[0], [1, 2]]
    # Every process on one clock: no event before the global offset.
    assert min(t.first_event.values()) == t.clock.global_offset
    names, per_group, groups = square_visits(exp)
    assert names == {"__main__:square"}
    assert sum(per_group.values()) == 20
    assert groups == ["MPI Rank 0", "MPI Rank 0 (spawned 1)", "MPI Rank 1 (spawned 1)"]
    manifest = (exp / "MANIFEST.md").read_text()
    assert "2 process(es) started with MPI_Comm_spawn are part of this experiment" in manifest


def test_static_mode_names_the_workers_main_module_main(tmp_path):
    out = mpirun(3, ["--mpp=mpi", "-m", "mpi4py.futures", program("futures_app.py")], tmp_path)
    exp = tmp_path / "exp"
    assert out.returncode == 0, out.stderr
    assert "sum of squares 2470" in out.stdout
    names, per_group, groups = square_visits(exp)
    assert names == {"__main__:square"}  # not __worker__:square
    assert sum(per_group.values()) == 20 and per_group["MPI Rank 0"] == 0
    assert groups == ["MPI Rank 0", "MPI Rank 1", "MPI Rank 2"]


def test_comm_executor(tmp_path):
    out = mpirun(3, ["--mpp=mpi", program("futures_app.py"), "comm"], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    exp = tmp_path / "exp"
    check_experiment(out, exp)
    names, per_group, groups = square_visits(exp)
    assert names == {"__main__:square"} and sum(per_group.values()) == 20
    t = MpiTrace(exp)
    assert match_messages(t.sends + t.isends, t.recvs + t.irecvs) >= 40


def test_mpi4py_run_module(tmp_path):
    """`python -m scorep --mpp=mpi -m mpi4py program.py`, as mpi4py.run runs programs."""
    out = mpirun(2, ["--mpp=mpi", "-m", "mpi4py", program("mpi_patterns.py")], tmp_path)
    assert out.returncode == 0, out.stderr
    p = cube.read(str(tmp_path / "exp"))
    assert [g.name for g in p.location_groups] == ["MPI Rank 0", "MPI Rank 1"]
    assert any(r.name == "__main__:ping_pong" for r in p.regions)


def test_own_spawn_messages_with_partners(tmp_path):
    out = mpirun(1, ["--mpp=mpi", program("spawn_parent.py")], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert "parent done" in out.stdout
    exp = tmp_path / "exp"
    otf2_print(str(exp / "traces.otf2"))
    assert not (exp / ".spawned").exists()
    t = MpiTrace(exp)
    assert t.groups == ["MPI Rank 0", "MPI Rank 0 (spawned 1)", "MPI Rank 1 (spawned 1)"]
    inter = [c for c in t.comm_list if type(c).__name__ == "InterComm"]
    assert len(inter) == 1
    name = [s[2] for s in t.sends][0]
    assert sorted(s[:5] for s in t.sends) == [(0, 1, name, 5, 8), (0, 2, name, 5, 8),
                                             (1, 0, name, 6, 8), (2, 0, name, 6, 8)]
    assert match_messages(t.sends, t.recvs) == 4
    # The children's world and their Allreduce on it.
    for rank in (1, 2):
        assert t.enters[(rank, "__main__:double")] == 1
        assert [k for k in t.coll_bytes if k[0] == rank and k[1] == "ALLREDUCE"]
    p = cube.read(str(exp))
    assert [g.name for g in p.location_groups] == t.groups


def test_spawned_processes_that_never_end_are_waited_for_boundedly(tmp_path):
    """A child that outlives its parent's end: the parent writes without it after
    SCOREP_MPI_FINALIZE_TIMEOUT and says so; nothing hangs."""
    script = tmp_path / "lingering.py"
    script.write_text(
        "import sys, time\n"
        "from mpi4py import MPI\n"
        "if MPI.Comm.Get_parent() == MPI.COMM_NULL:\n"
        "    inter = MPI.COMM_SELF.Spawn(sys.executable, [__file__], maxprocs=1)\n"
        "    inter.Disconnect()\n"
        "else:\n"
        "    MPI.Comm.Get_parent().Disconnect()\n"
        "    time.sleep(8)\n")
    out = mpirun(1, ["--mpp=mpi", script], tmp_path, SCOREP_MPI_FINALIZE_TIMEOUT="2")
    assert out.returncode == 0, out.stderr
    assert ("the results of processes started with MPI_Comm_spawn did not arrive within "
            "SCOREP_MPI_FINALIZE_TIMEOUT=2 s and are left out: rank 0 of spawned world 1"
            in out.stderr)
    p = cube.read(str(tmp_path / "exp"))
    assert [g.name for g in p.location_groups] == ["MPI Rank 0"]




def test_spawned_workers_record_metrics_like_their_parent(tmp_path):
    """Metrics travel with the configuration into the spawned world: the workers' parts
    carry their metric sums into the profile, and their per-process metrics are recorded
    under their own location group's metric instance."""
    fix_python_otf2()
    out = mpirun(1, ["--mpp=mpi", program("futures_app.py")], tmp_path,
                 SCOREP_ENABLE_TRACING="true", SCOREP_METRIC_RUSAGE="ru_utime,ru_minflt",
                 SCOREP_METRIC_RUSAGE_PER_PROCESS="ru_maxrss")
    exp = tmp_path / "exp"
    check_experiment(out, exp)
    p = cube.read(str(exp))
    assert [m.uniq_name for m in p.metrics][-3:] == ["ru_utime", "ru_minflt", "ru_maxrss"]
    groups = {g.name for g in p.location_groups}
    assert groups == {"MPI Rank 0", "MPI Rank 0 (spawned 1)", "MPI Rank 1 (spawned 1)"}
    # Every worker's program root holds the page faults of its interpreter's start.
    minflt = p.values(p.metric("ru_minflt"), inclusive=True)
    root = [c for c in p.cnodes if c.parent is None][0]
    per_group = collections.Counter()
    for i, loc in enumerate(p.locations):
        per_group[loc.group.name] += minflt[root.id][i]
    assert all(per_group[g] > 0 for g in groups), per_group
    assert_metric_instances_per_group(exp, groups)


def test_child_processes_and_spawned_processes_in_one_experiment(tmp_path):
    """Both kinds of parts at once: rank 0's pool workers (child processes, merged by rank 0
    before the unification) and the processes it spawns (parts adopted at the end). Every
    location group has an id of its own, the spawned ranks follow the job's ranks in OTF2's
    group of MPI locations, messages find their partners."""
    out = mpirun(1, ["--mpp=mpi", program("children/spawn_and_pool.py")], tmp_path,
                 SCOREP_ENABLE_TRACING="true")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert "squares 285" in out.stdout
    exp = tmp_path / "exp"
    otf2_print(str(exp / "traces.otf2"))
    t = MpiTrace(exp)
    workers = [g for g in t.groups if g.startswith("Process ")]
    assert len(workers) == 2 and all("ForkPoolWorker" in g for g in workers)
    assert sorted(set(t.groups) - set(workers)) == [
        "MPI Rank 0", "MPI Rank 0 (spawned 1)", "MPI Rank 1 (spawned 1)"]
    # Group 0 lists the MPI processes only: the job's rank and the two spawned ones first
    # (then, MPI_THREAD_MULTIPLE, rank 0's other threads), no pool worker.
    assert len(t.mpi_locations) == 1
    members = t.mpi_locations[0].members
    assert [m.group.name for m in members[:3]] == [
        "MPI Rank 0", "MPI Rank 0 (spawned 1)", "MPI Rank 1 (spawned 1)"]
    assert {m.group.name for m in members[3:]} <= {"MPI Rank 0"}
    name = [s[2] for s in t.sends][0]
    spawned = sorted({s[1] for s in t.sends if s[0] == 0})
    assert len(spawned) == 2 and 0 not in spawned
    assert sorted(s[:5] for s in t.sends) == sorted(
        [(0, spawned[0], name, 5, 8), (0, spawned[1], name, 5, 8),
         (spawned[0], 0, name, 6, 8), (spawned[1], 0, name, 6, 8)])
    assert match_messages(t.sends, t.recvs) == 4
    for rank in spawned:
        assert t.enters[(rank, "__main__:double")] == 1
    assert sum(n for (rank, region), n in t.enters.items() if region == "__main__:square") == 10
    p = cube.read(str(exp / "profile.cubex"))
    assert sorted(g.name for g in p.location_groups) == t.groups
    assert not (exp / ".spawned").exists() and not (exp / ".scorep-processes").exists()
