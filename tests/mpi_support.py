"""Running programs under real mpirun and reading their MPI records back with the OTF2
library's Python reader (python3-otf2), shared by the MPI tests."""

import collections
import subprocess
import sys

from conftest import fix_python_otf2, scorep_env


def mpirun(ranks, args, tmp_path, timeout=180, **env_vars):
    env = scorep_env(tmp_path / "exp", **env_vars)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    command = ["mpirun", "--oversubscribe", "-np", str(ranks), sys.executable, "-m", "scorep"]
    return subprocess.run(command + [str(a) for a in args], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=timeout)


def rank_of(location):
    """The rank of a location: its location group's number (MPI Rank r of MPI_COMM_WORLD is
    group r; the processes of spawned worlds follow)."""
    return location.group._ref


def group_ranks(group):
    """The ranks of an OTF2 communicator group (its members index group 0's locations)."""
    return [rank_of(m) for m in group.members]


def peer_rank(comm, location, peer):
    """The rank of `peer` (a rank in `comm`, as MPI records it) seen from `location`: in an
    inter-communicator a rank of the other group."""
    if type(comm).__name__ == "InterComm":
        a, b = group_ranks(comm.groupA), group_ranks(comm.groupB)
        other = b if rank_of(location) in a else a
        return other[peer]
    return group_ranks(comm.group)[peer]


def comm_name(comm):
    return comm.name if comm.name else "<%s %s>" % (
        type(comm).__name__, ",".join(map(str, members_of(comm))))


def members_of(comm):
    if type(comm).__name__ == "InterComm":
        return group_ranks(comm.groupA) + group_ranks(comm.groupB)
    return group_ranks(comm.group)


class MpiTrace:
    """The MPI records of a trace, by kind: each a tuple starting with the rank that
    recorded it (point to point: sender, receiver, communicator, tag, bytes, time)."""

    def __init__(self, exp):
        import otf2
        fix_python_otf2()
        self.sends, self.recvs, self.isends, self.irecvs = [], [], [], []
        self.records = collections.defaultdict(list)  # kind -> [(rank, event)]
        self.collectives = collections.defaultdict(list)  # (rank, op, comm) -> [begin, end, root]
        self.coll_bytes = collections.defaultdict(list)  # (rank, op, comm) -> [(sent, received)]
        self.enters = collections.Counter()  # (rank, region) -> count
        open_collective = {}
        with otf2.reader.open(str(exp / "traces.otf2")) as reader:
            defs = reader.definitions
            self.clock = defs.clock_properties
            self.groups = sorted(g.name for g in defs.location_groups)
            self.regions = {r.name: r for r in defs.regions}
            self.comm_list = list(defs.comms)
            self.comms = {c.name: c for c in defs.comms if c.name}
            self.windows = list(defs.rma_wins)
            self.mpi_locations = [g for g in defs.groups
                                  if str(g.group_type).endswith("COMM_LOCATIONS")]
            self.locations = [(l.group.name, l.name) for l in defs.locations]
            self.first_event = {}
            for location, event in reader.events:
                rank = rank_of(location)
                kind = type(event).__name__
                self.first_event.setdefault(rank, event.time)
                self.records[kind].append((rank, event))
                if kind == "Enter":
                    self.enters[(rank, event.region.name)] += 1
                elif kind in ("MpiSend", "MpiIsend"):
                    to = peer_rank(event.communicator, location, event.receiver)
                    item = (rank, to, comm_name(event.communicator), event.msg_tag,
                            event.msg_length, event.time)
                    (self.sends if kind == "MpiSend" else self.isends).append(item)
                elif kind in ("MpiRecv", "MpiIrecv"):
                    source = peer_rank(event.communicator, location, event.sender)
                    item = (source, rank, comm_name(event.communicator), event.msg_tag,
                            event.msg_length, event.time)
                    (self.recvs if kind == "MpiRecv" else self.irecvs).append(item)
                elif kind == "MpiCollectiveBegin":
                    open_collective[location] = event.time
                elif kind == "MpiCollectiveEnd":
                    op = str(event.collective_op).rsplit(".", 1)[-1]
                    key = (rank, op, comm_name(event.communicator))
                    self.collectives[key].append(
                        (open_collective.pop(location), event.time, event.root))
                    self.coll_bytes[key].append((event.size_sent, event.size_received))
                elif kind == "NonBlockingCollectiveComplete":
                    op = str(event.collective_op).rsplit(".", 1)[-1]
                    self.coll_bytes[(rank, "I" + op, comm_name(event.communicator))].append(
                        (event.size_sent, event.size_received))

    def count(self, kind, rank=None):
        return sum(1 for r, _ in self.records[kind] if rank is None or r == rank)


def match_messages(sends, recvs):
    """Every send has exactly one receive with the same sender, receiver, communicator,
    tag and size, and no receive happens before its send. Returns the number matched."""
    key = lambda m: m[:5]
    pending = collections.defaultdict(list)
    for s in sorted(sends, key=lambda m: m[5]):
        pending[key(s)].append(s[5])
    for r in sorted(recvs, key=lambda m: m[5]):
        assert pending[key(r)], "receive without a send: %r" % (r,)
        sent_at = pending[key(r)].pop(0)
        assert sent_at <= r[5], "message %r received before it was sent" % (r,)
    left = [k for k, v in pending.items() if v]
    assert not left, "sends without a receive: %r" % left
    return len(recvs)


