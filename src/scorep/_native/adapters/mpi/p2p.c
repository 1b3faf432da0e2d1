/* Point-to-point communication: sends, receives and probes. */
#include "adapters/mpi/mpi_adapter.h"

#include <pthread.h>

#define SEND_WRAPPER(NAME, FN)                                                                  \
    EXPORT int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,          \
                    MPI_Comm comm)                                                              \
    {                                                                                           \
        /* The send is dated at the call's start, as Score-P does: a receive can complete */   \
        /* before the send call returns. */                                                    \
        uint64_t start = spmpi_enter(FN);                                                         \
        int status = P##NAME(buf, count, type, dest, tag, comm);                                \
        sp_location *loc = spmpi_after();                                                         \
        if (loc) {                                                                              \
            if (status == MPI_SUCCESS && dest != MPI_PROC_NULL)                                 \
                sp_mpi_send(loc, start, (uint32_t)dest, spmpi_comm_id(comm), (uint32_t)tag,           \
                            spmpi_type_bytes(type, count));                                           \
            spmpi_leave(loc, FN);                                                                 \
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

EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                    MPI_Status *status)
{
    spmpi_enter(FN_RECV);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Recv(buf, count, type, source, tag, comm, st);
    sp_location *loc = spmpi_after();
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
    sp_location *loc = spmpi_after();
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
    sp_location *loc = spmpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && dest != MPI_PROC_NULL)
            sp_mpi_send(loc, start, (uint32_t)dest, spmpi_comm_id(comm), (uint32_t)stag,
                        spmpi_type_bytes(type, count));
        record_receive(loc, s, st, type, comm);
        spmpi_leave(loc, FN_SENDRECV_REPLACE);
    }
    return s;
}

#define ISEND_WRAPPER(NAME, FN)                                                                 \
    EXPORT int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,          \
                    MPI_Comm comm, MPI_Request *request)                                        \
    {                                                                                           \
        uint64_t start = spmpi_enter(FN);                                                         \
        int status = P##NAME(buf, count, type, dest, tag, comm, request);                       \
        sp_location *loc = spmpi_after();                                                         \
        if (loc) {                                                                              \
            if (status == MPI_SUCCESS && dest != MPI_PROC_NULL) {                               \
                uint32_t cid = spmpi_comm_id(comm);                                                   \
                uint64_t bytes = spmpi_type_bytes(type, count);                                       \
                uint64_t id = spmpi_remember_request(*request, false, cid, (uint32_t)dest,            \
                                               (uint32_t)tag, bytes, type);                     \
                sp_mpi_isend(loc, start, (uint32_t)dest, cid, (uint32_t)tag, bytes, id);        \
            }                                                                                   \
            spmpi_leave(loc, FN);                                                                 \
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
    sp_location *loc = spmpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && source != MPI_PROC_NULL) {
            uint32_t cid = spmpi_comm_id(comm);
            uint64_t id = spmpi_remember_request(*request, true, cid, (uint32_t)source, (uint32_t)tag, 0,
                                           type);
            sp_mpi_irecv_request(loc, sp_clock_now(), id);
        }
        spmpi_leave(loc, FN_IRECV);
    }
    return s;
}

EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    spmpi_enter(FN_PROBE);
    int s = PMPI_Probe(source, tag, comm, status);
    sp_location *loc = spmpi_after();
    if (loc)
        spmpi_leave(loc, FN_PROBE);
    return s;
}

EXPORT int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    spmpi_enter(FN_IPROBE);
    int s = PMPI_Iprobe(source, tag, comm, flag, status);
    sp_location *loc = spmpi_after();
    if (loc)
        spmpi_leave(loc, FN_IPROBE);
    return s;
}

/* Matched probes (mpi4py receives pickled objects this way): the communicator of a
 * message is remembered until it is received. */
typedef struct {
    uint64_t message;
    uint32_t comm;
} message_comm;

/* Messages matched by a probe and not yet received. Global because PMPI wrappers carry no
 * context; the lock is taken once per matched probe and once per its receive. */
static pthread_mutex_t messages_lock = PTHREAD_MUTEX_INITIALIZER;
static message_comm messages[64];

static void remember_message(MPI_Message message, uint32_t comm)
{
    pthread_mutex_lock(&messages_lock);
    for (size_t i = 0; i < sizeof messages / sizeof messages[0]; i++) {
        if (messages[i].message == 0) {
            messages[i] = (message_comm){(uint64_t)(uintptr_t)message, comm};
            break;
        }
    }
    pthread_mutex_unlock(&messages_lock);
}

static uint32_t message_comm_of(uint64_t message)
{
    uint32_t comm = SP_NO_ID;
    pthread_mutex_lock(&messages_lock);
    for (size_t i = 0; i < sizeof messages / sizeof messages[0]; i++) {
        if (messages[i].message == message) {
            comm = messages[i].comm;
            messages[i].message = 0;
            break;
        }
    }
    pthread_mutex_unlock(&messages_lock);
    return comm;
}

EXPORT int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    spmpi_enter(FN_MPROBE);
    int s = PMPI_Mprobe(source, tag, comm, message, status);
    sp_location *loc = spmpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && *message != MPI_MESSAGE_NO_PROC)
            remember_message(*message, spmpi_comm_id(comm));
        spmpi_leave(loc, FN_MPROBE);
    }
    return s;
}

EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                       MPI_Status *status)
{
    spmpi_enter(FN_IMPROBE);
    int s = PMPI_Improbe(source, tag, comm, flag, message, status);
    sp_location *loc = spmpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && *flag && *message != MPI_MESSAGE_NO_PROC)
            remember_message(*message, spmpi_comm_id(comm));
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
    sp_location *loc = spmpi_after();
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
    sp_location *loc = spmpi_after();
    if (loc) {
        uint32_t comm = message_comm_of(handle);
        if (s == MPI_SUCCESS && comm != SP_NO_ID) {
            uint64_t id = spmpi_remember_request(*request, true, comm, 0, 0, 0, type);
            sp_mpi_irecv_request(loc, sp_clock_now(), id);
        }
        spmpi_leave(loc, FN_IMRECV);
    }
    return s;
}

