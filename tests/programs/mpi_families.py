"""Every MPI family with known counts, for 2 or 4 ranks (even number of ranks).

persistent   a ring with Send_init/Recv_init started 3 times by Startall (tag 21, 5 int32),
             Ssend_init/Recv_init once with Start (tag 22, 3 float64)
icoll        Ibarrier, Ibcast (root 0, 10 float64), Iallreduce (4 int64), Igather (root 1,
             2 int32), Ialltoall (1 int32 each), completed by Wait/Waitall
rma          Win_create over 8 float64 per rank: Fence; Put of 2 float64 to the right
             neighbour; Fence; Get of 3 float64 from the left; Fence; Accumulate of 1 float64
             to rank 0; Fence. Lock/Put 4 float64/Unlock to the right. Post/Start/Get 1
             float64/Complete/Wait between pairs (0,1), (2,3). Win_allocate of 4 int64:
             Lock_all, Fetch_and_op on rank 0, Rput of 1 int64 to the right + Wait,
             Unlock_all. Both windows freed.
comms        Cart_create (1-d, all ranks), Cart_sub, Split_type(shared), Create_group (even
             ranks), Set_name("evens") on it, Intercomm_create between even and odd ranks with
             one message from each even rank 2k to odd rank 2k+1 over it (tag 31, 6 int32),
             Intercomm_merge, Idup of COMM_WORLD
cancel       an Irecv that is cancelled (tag 99)
mprobe       rank 0 sends 100 messages to rank 1 (tags 1000..1099) before rank 1 matches any
             with Improbe/Mprobe, then receives them all with Mrecv
colls        the byte-count table: Bcast, Reduce, Allreduce, Allgather, Gather, Scatter,
             Alltoall, Scan, Exscan, Reduce_scatter_block, Allreduce in place, each of 100
             float64 per block
"""
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
right, left = (rank + 1) % size, (rank - 1) % size


def persistent():
    out = np.full(5, rank, dtype=np.int32)
    got = np.empty(5, dtype=np.int32)
    requests = [comm.Recv_init(got, source=left, tag=21), comm.Send_init(out, dest=right, tag=21)]
    for _ in range(3):
        MPI.Prequest.Startall(requests)
        MPI.Request.Waitall(requests)
        assert got[0] == left
    for r in requests:
        r.Free()
    a = np.arange(3.0)
    b = np.empty(3)
    recv = comm.Recv_init(b, source=left, tag=22)
    send = comm.Ssend_init(a, dest=right, tag=22)
    recv.Start()
    send.Start()
    MPI.Request.Waitall([recv, send])
    recv.Free()
    send.Free()


def icoll():
    comm.Ibarrier().Wait()
    data = np.arange(10.0) if rank == 0 else np.zeros(10)
    comm.Ibcast(data, root=0).Wait()
    assert data[9] == 9.0
    total = np.zeros(4, dtype=np.int64)
    r1 = comm.Iallreduce(np.ones(4, dtype=np.int64), total, op=MPI.SUM)
    gathered = np.zeros(2 * size, dtype=np.int32) if rank == 1 else None
    r2 = comm.Igather(np.full(2, rank, dtype=np.int32), gathered, root=1)
    recv = np.empty(size, dtype=np.int32)
    r3 = comm.Ialltoall(np.arange(size, dtype=np.int32), recv)
    MPI.Request.Waitall([r1, r2, r3])
    assert total[0] == size


def rma():
    mem = np.zeros(8)
    win = MPI.Win.Create(mem, disp_unit=8, comm=comm)
    win.Fence()
    win.Put(np.full(2, float(rank)), right)
    win.Fence()
    got = np.zeros(3)
    win.Get(got, left)
    win.Fence()
    win.Accumulate(np.ones(1), 0, op=MPI.SUM)
    win.Fence()
    win.Lock(right, MPI.LOCK_EXCLUSIVE)
    win.Put(np.full(4, 7.0), right)
    win.Unlock(right)
    comm.Barrier()
    partner = rank ^ 1
    group = comm.Get_group().Incl([partner])
    win.Post(group)
    win.Start(group)
    one = np.zeros(1)
    win.Get(one, partner)
    win.Complete()
    win.Wait()
    group.Free()
    win.Free()
    awin = MPI.Win.Allocate(4 * 8, disp_unit=8, comm=comm)
    awin.Lock_all()
    result = np.zeros(1, dtype=np.int64)
    awin.Fetch_and_op(np.ones(1, dtype=np.int64), result, 0, op=MPI.SUM)
    awin.Rput(np.ones(1, dtype=np.int64), right).Wait()
    awin.Unlock_all()
    awin.Free()


def comms():
    cart = comm.Create_cart([size], periods=[True])
    sub = cart.Sub([False])
    shared = comm.Split_type(MPI.COMM_TYPE_SHARED)
    evens_group = comm.Get_group().Incl(list(range(0, size, 2)))
    evens = comm.Create_group(evens_group) if rank % 2 == 0 else None
    if evens is not None:
        evens.Set_name("evens")
    half = comm.Split(rank % 2, rank)
    inter = half.Create_intercomm(0, comm, 1 - rank % 2, tag=30)
    if rank % 2 == 0:
        inter.Send(np.arange(6, dtype=np.int32), dest=inter.Get_rank(), tag=31)
    else:
        buf = np.empty(6, dtype=np.int32)
        inter.Recv(buf, source=inter.Get_rank(), tag=31)
    merged = inter.Merge(high=rank % 2 == 1)
    merged.Barrier()
    dup, req = comm.Idup()
    req.Wait()
    for c in (merged, inter, half, shared, sub, cart):
        c.Free()
    if evens is not None:
        evens.Free()
    evens_group.Free()
    return dup


def cancel():
    buf = np.empty(4)
    req = comm.Irecv(buf, source=left, tag=99)
    req.Cancel()
    status = MPI.Status()
    req.Wait(status)
    assert status.Is_cancelled()


def mprobe():
    if rank == 0:
        requests = [comm.Isend(np.full(2, i, dtype=np.int32), dest=1, tag=1000 + i)
                    for i in range(100)]
        MPI.Request.Waitall(requests)
        comm.Barrier()
    elif rank == 1:
        comm.Barrier()
        messages = []
        for i in range(100):
            if i % 2:
                messages.append(comm.Mprobe(source=0, tag=1000 + i))
            else:
                while True:
                    message = comm.Improbe(source=0, tag=1000 + i)
                    if message is not None:
                        break
                messages.append(message)
        for i, message in enumerate(messages):
            buf = np.empty(2, dtype=np.int32)
            message.Recv(buf)
            assert buf[0] == i
    else:
        comm.Barrier()


def colls():
    n = 100
    block = np.arange(n, dtype=np.float64)
    out = np.zeros(n)
    comm.Bcast(block, root=0)
    comm.Reduce(block, out, op=MPI.SUM, root=0)
    comm.Allreduce(block, out, op=MPI.SUM)
    comm.Allgather(block, np.zeros(n * size))
    comm.Gather(block, np.zeros(n * size) if rank == 0 else None, root=0)
    comm.Scatter(np.zeros(n * size) if rank == 0 else None, out, root=0)
    comm.Alltoall(np.zeros(n * size), np.zeros(n * size))
    comm.Scan(block, out, op=MPI.SUM)
    comm.Exscan(block, out, op=MPI.SUM)
    comm.Reduce_scatter_block(np.zeros(n * size), out, op=MPI.SUM)
    inplace = block.copy()
    comm.Allreduce(MPI.IN_PLACE, inplace, op=MPI.SUM)
    MPI.Wtime()  # the ext group: recorded only when enabled


persistent()
icoll()
rma()
dup = comms()
cancel()
mprobe()
colls()
if dup is not None:
    dup.Free()
print("rank %d of %d: families done" % (rank, size))
sys.stdout.flush()
