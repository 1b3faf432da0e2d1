/* Point-to-point communication: sends, receives, probes, persistent requests. As in
 * Score-P, a send is dated at its call's start (a receive can complete before the send
 * call returns), a non-blocking receive is recorded when it completes (requests.c), and
 * without the xnonblock group non-blocking operations are recorded as blocking ones. */
#include "adapters/mpi/mpi_adapter.h"

#define SEND_WRAPPER(NAME, FN)                                                                  \
    EXPORT int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,          \
                    MPI_Comm comm)                                                              \
    {                                                                                           \
        uint64_t start = spmpi_enter(FN);                                                       \
        int status = P##NAME(buf, count, type, dest, tag, comm);                                \
        sp_location *loc = spmpi_after(FN);                                                     \
        if (loc) {                                                                              \
            if (status == MPI_SUCCESS && dest != MPI_PROC_NULL)                                 \
                sp_mpi_send(loc, start, (uint32_t)dest, spmpi_comm_id(comm), (uint32_t)tag,     \
                            spmpi_type_bytes(type, count));                                     \
            spmpi_leave(loc, FN);                                                               \
        }                                                                                       \
        return status;                                                                          \
    }

SEND_WRAPPER(MPI_Send, FN_SEND)
SEND_WRAPPER(MPI_Ssend, FN_SSEND)
SEND_WRAPPER(MPI_Bsend, FN_BSEND)
SEND_WRAPPER(MPI_Rsend, FN_RSEND)

static void record_receive(sp_location *loc, int status, const MPI_Status *st, MPI_Datatype type,
                           MPI_Comm comm)
{
    if (status == MPI_SUCCESS && st->MPI_SOURCE != MPI_PROC_NULL)
        sp_mpi_recv(loc, sp_clock_now(), (uint32_t)st->MPI_SOURCE, spmpi_comm_id(comm),
                    (uint32_t)st->MPI_TAG, spmpi_received_bytes(st, type));
}

/* Same-shape MPI wrappers, a family: one per MPI function, each the same steps (enter,
 * the PMPI_ call, its records, leave) with its own arguments. The duplicates tool pairs
 * them; they are not one logic written twice. */
EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                    MPI_Status *status)
{
    spmpi_enter(FN_RECV);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Recv(buf, count, type, source, tag, comm, st);
    sp_location *loc = spmpi_after(FN_RECV);
    if (loc) {
        record_receive(loc, s, st, type, comm);
        spmpi_leave(loc, FN_RECV);
    }
    return s;
}

EXPORT int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                        void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
                        MPI_Comm comm, MPI_Status *status)
{
    uint64_t start = spmpi_enter(FN_SENDRECV);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                          st);
    sp_location *loc = spmpi_after(FN_SENDRECV);
    if (loc) {
        if (s == MPI_SUCCESS && dest != MPI_PROC_NULL)
            sp_mpi_send(loc, start, (uint32_t)dest, spmpi_comm_id(comm), (uint32_t)stag,
                        spmpi_type_bytes(stype, scount));
        record_receive(loc, s, st, rtype, comm);
        spmpi_leave(loc, FN_SENDRECV);
    }
    return s;
}

EXPORT int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag,
                                int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    uint64_t start = spmpi_enter(FN_SENDRECV_REPLACE);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, st);
    sp_location *loc = spmpi_after(FN_SENDRECV_REPLACE);
    if (loc) {
        if (s == MPI_SUCCESS && dest != MPI_PROC_NULL)
            sp_mpi_send(loc, start, (uint32_t)dest, spmpi_comm_id(comm), (uint32_t)stag,
                        spmpi_type_bytes(type, count));
        record_receive(loc, s, st, type, comm);
        spmpi_leave(loc, FN_SENDRECV_REPLACE);
    }
    return s;
}

/* A send started without blocking: recorded now, its completion by a Wait or Test. */
static void send_started(sp_location *loc, uint64_t start, MPI_Request request, int dest,
                         int tag, MPI_Comm comm, uint64_t bytes)
{
    uint32_t cid = spmpi_comm_id(comm);
    if (!spmpi_on(G_XNONBLOCK)) {
        sp_mpi_send(loc, start, (uint32_t)dest, cid, (uint32_t)tag, bytes);
        return;
    }
    uint64_t id = spmpi_next_request_id();
    request_info info = {.handle = (uint64_t)(uintptr_t)request, .id = id,
                         .generation = sp_measurement_generation(), .kind = REQ_SEND,
                         .comm = cid, .peer = (uint32_t)dest, .tag = (uint32_t)tag,
                         .bytes = bytes};
    spmpi_remember_request(&info);
    sp_mpi_isend(loc, start, (uint32_t)dest, cid, (uint32_t)tag, bytes, id);
}

static void receive_started(sp_location *loc, uint64_t now, MPI_Request request, uint32_t comm,
                            MPI_Datatype type)
{
    uint64_t id = spmpi_next_request_id();
    request_info info = {.handle = (uint64_t)(uintptr_t)request, .id = id,
                         .generation = sp_measurement_generation(), .kind = REQ_RECV,
                         .comm = comm, .datatype = type};
    if (spmpi_remember_request(&info) && spmpi_on(G_XNONBLOCK))
        sp_mpi_irecv_request(loc, now, id);
}

#define ISEND_WRAPPER(NAME, FN)                                                                 \
    EXPORT int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,          \
                    MPI_Comm comm, MPI_Request *request)                                        \
    {                                                                                           \
        uint64_t start = spmpi_enter(FN);                                                       \
        int status = P##NAME(buf, count, type, dest, tag, comm, request);                       \
        sp_location *loc = spmpi_after(FN);                                                     \
        if (loc) {                                                                              \
            if (status == MPI_SUCCESS && dest != MPI_PROC_NULL)                                 \
                send_started(loc, start, *request, dest, tag, comm,                             \
                             spmpi_type_bytes(type, count));                                    \
            spmpi_leave(loc, FN);                                                               \
        }                                                                                       \
        return status;                                                                          \
    }

ISEND_WRAPPER(MPI_Isend, FN_ISEND)
ISEND_WRAPPER(MPI_Issend, FN_ISSEND)
ISEND_WRAPPER(MPI_Ibsend, FN_IBSEND)
ISEND_WRAPPER(MPI_Irsend, FN_IRSEND)

EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                     MPI_Request *request)
{
    spmpi_enter(FN_IRECV);
    int s = PMPI_Irecv(buf, count, type, source, tag, comm, request);
    sp_location *loc = spmpi_after(FN_IRECV);
    if (loc) {
        if (s == MPI_SUCCESS && source != MPI_PROC_NULL)
            receive_started(loc, sp_clock_now(), *request, spmpi_comm_id(comm), type);
        spmpi_leave(loc, FN_IRECV);
    }
    return s;
}

/* ---- persistent requests: remembered inactive; MPI_Start records them (requests.c) ---- */

#define SEND_INIT_WRAPPER(NAME, FN)                                                             \
    EXPORT int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,          \
                    MPI_Comm comm, MPI_Request *request)                                        \
    {                                                                                           \
        spmpi_enter(FN);                                                                        \
        int status = P##NAME(buf, count, type, dest, tag, comm, request);                       \
        sp_location *loc = spmpi_after(FN);                                                     \
        if (loc) {                                                                              \
            if (status == MPI_SUCCESS)                                                          \
                persistent(*request, REQ_SEND, dest, tag, comm, spmpi_type_bytes(type, count), \
                           type);                                                               \
            spmpi_leave(loc, FN);                                                               \
        }                                                                                       \
        return status;                                                                          \
    }

static void persistent(MPI_Request request, request_kind kind, int peer, int tag, MPI_Comm comm,
                       uint64_t bytes, MPI_Datatype type)
{
    request_info info = {.handle = (uint64_t)(uintptr_t)request,
                         .id = spmpi_next_request_id(),
                         .generation = sp_measurement_generation(),
                         .kind = (uint8_t)kind,
                         .flags = REQ_PERSISTENT,
                         .comm = spmpi_comm_id(comm),
                         .peer = (uint32_t)peer,
                         .tag = (uint32_t)tag,
                         .bytes = bytes,
                         .datatype = type};
    spmpi_remember_request(&info);
}

SEND_INIT_WRAPPER(MPI_Send_init, FN_SEND_INIT)
SEND_INIT_WRAPPER(MPI_Ssend_init, FN_SSEND_INIT)
SEND_INIT_WRAPPER(MPI_Bsend_init, FN_BSEND_INIT)
SEND_INIT_WRAPPER(MPI_Rsend_init, FN_RSEND_INIT)

EXPORT int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag,
                         MPI_Comm comm, MPI_Request *request)
{
    spmpi_enter(FN_RECV_INIT);
    int s = PMPI_Recv_init(buf, count, type, source, tag, comm, request);
    sp_location *loc = spmpi_after(FN_RECV_INIT);
    if (loc) {
        if (s == MPI_SUCCESS)
            persistent(*request, REQ_RECV, source, tag, comm, 0, type);
        spmpi_leave(loc, FN_RECV_INIT);
    }
    return s;
}

EXPORT int MPI_Buffer_attach(void *buffer, int size)
{
    SPMPI_REGION_CALL(FN_BUFFER_ATTACH, PMPI_Buffer_attach(buffer, size));
}

EXPORT int MPI_Buffer_detach(void *buffer, int *size)
{
    SPMPI_REGION_CALL(FN_BUFFER_DETACH, PMPI_Buffer_detach(buffer, size));
}

/* ---- probes ----------------------------------------------------------------------------- */

EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    SPMPI_REGION_CALL(FN_PROBE, PMPI_Probe(source, tag, comm, status));
}

EXPORT int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    SPMPI_REGION_CALL(FN_IPROBE, PMPI_Iprobe(source, tag, comm, flag, status));
}

/* Matched probes (mpi4py receives pickled objects this way): the communicator of a
 * message is remembered until it is received, in the request table (no limit). */
static void remember_message(MPI_Message message, MPI_Comm comm)
{
    request_info info = {.handle = (uint64_t)(uintptr_t)message,
                         .generation = sp_measurement_generation(),
                         .kind = REQ_MESSAGE,
                         .comm = spmpi_comm_id(comm)};
    spmpi_remember_request(&info);
}

static uint32_t message_comm_of(uint64_t message)
{
    request_info info;
    if (!spmpi_take_request(message, &info) || info.kind != REQ_MESSAGE ||
        info.generation != sp_measurement_generation())
        return SP_NO_ID;
    return info.comm;
}

EXPORT int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    spmpi_enter(FN_MPROBE);
    int s = PMPI_Mprobe(source, tag, comm, message, status);
    sp_location *loc = spmpi_after(FN_MPROBE);
    if (loc) {
        if (s == MPI_SUCCESS && *message != MPI_MESSAGE_NO_PROC)
            remember_message(*message, comm);
        spmpi_leave(loc, FN_MPROBE);
    }
    return s;
}

EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                       MPI_Status *status)
{
    spmpi_enter(FN_IMPROBE);
    int s = PMPI_Improbe(source, tag, comm, flag, message, status);
    sp_location *loc = spmpi_after(FN_IMPROBE);
    if (loc) {
        if (s == MPI_SUCCESS && *flag && *message != MPI_MESSAGE_NO_PROC)
            remember_message(*message, comm);
        spmpi_leave(loc, FN_IMPROBE);
    }
    return s;
}

EXPORT int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                     MPI_Status *status)
{
    spmpi_enter(FN_MRECV);
    uint64_t handle = (uint64_t)(uintptr_t)*message;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Mrecv(buf, count, type, message, st);
    sp_location *loc = spmpi_after(FN_MRECV);
    if (loc) {
        uint32_t comm = message_comm_of(handle);
        if (s == MPI_SUCCESS && comm != SP_NO_ID && st->MPI_SOURCE != MPI_PROC_NULL)
            sp_mpi_recv(loc, sp_clock_now(), (uint32_t)st->MPI_SOURCE, comm, (uint32_t)st->MPI_TAG,
                        spmpi_received_bytes(st, type));
        spmpi_leave(loc, FN_MRECV);
    }
    return s;
}

EXPORT int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                      MPI_Request *request)
{
    spmpi_enter(FN_IMRECV);
    uint64_t handle = (uint64_t)(uintptr_t)*message;
    int s = PMPI_Imrecv(buf, count, type, message, request);
    sp_location *loc = spmpi_after(FN_IMRECV);
    if (loc) {
        uint32_t comm = message_comm_of(handle);
        if (s == MPI_SUCCESS && comm != SP_NO_ID)
            receive_started(loc, sp_clock_now(), *request, comm, type);
        spmpi_leave(loc, FN_IMRECV);
    }
    return s;
}
