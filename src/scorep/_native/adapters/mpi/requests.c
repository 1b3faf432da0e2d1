/* Requests of non-blocking operations: remembered when they start (or, persistent ones,
 * when they are made), recorded when a Wait or Test call completes them, as Score-P's
 * scorep_mpi_check_request does: a receive's MpiIrecv with the sender and size of its
 * status, a send's MpiIsendComplete, a cancelled one's MpiRequestCancelled, a
 * non-blocking collective's NonBlockingCollectiveComplete. Persistent requests stay
 * (inactive) after completion until MPI_Request_free. No fixed limits: a hash table. */
#include "adapters/mpi/mpi_adapter.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* The outstanding requests and matched-probe messages, by handle: open addressing with
 * linear probing and backward-shift deletion. Global because PMPI wrappers carry no
 * context; the lock is taken once per started and once per completed request. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static request_info *slots; /* handle 0 (never a live request or message): empty */
static size_t slot_count, slot_capacity;
static _Atomic uint64_t next_request_id = 1;

uint64_t spmpi_next_request_id(void)
{
    return atomic_fetch_add(&next_request_id, 1);
}

static size_t slot_of(uint64_t handle)
{
    uint64_t h = handle * 0x9e3779b97f4a7c15ULL;
    return (size_t)(h ^ (h >> 29)) & (slot_capacity - 1);
}

static bool grow(void)
{
    size_t cap = slot_capacity ? slot_capacity * 2 : 256;
    request_info *bigger = calloc(cap, sizeof *bigger);
    if (!bigger)
        return false;
    request_info *old = slots;
    size_t old_capacity = slot_capacity;
    slots = bigger;
    slot_capacity = cap;
    for (size_t i = 0; i < old_capacity; i++) {
        if (!old[i].handle)
            continue;
        size_t s = slot_of(old[i].handle);
        while (slots[s].handle)
            s = (s + 1) & (cap - 1);
        slots[s] = old[i];
    }
    free(old);
    return true;
}

/* Called with the lock: the slot of `handle`, or SIZE_MAX. */
static size_t find(uint64_t handle)
{
    if (!slot_capacity || !handle)
        return SIZE_MAX;
    for (size_t s = slot_of(handle);; s = (s + 1) & (slot_capacity - 1)) {
        if (slots[s].handle == handle)
            return s;
        if (!slots[s].handle)
            return SIZE_MAX;
    }
}

/* Called with the lock: empties slot s and moves later entries of its run back. */
static void remove_slot(size_t s)
{
    size_t mask = slot_capacity - 1;
    slots[s].handle = 0;
    for (size_t next = (s + 1) & mask; slots[next].handle; next = (next + 1) & mask) {
        size_t home = slot_of(slots[next].handle);
        /* Move it back when its home is not within (s, next]. */
        bool stays = s <= next ? (home > s && home <= next) : (home > s || home <= next);
        if (!stays) {
            slots[s] = slots[next];
            slots[next].handle = 0;
            s = next;
        }
    }
    slot_count--;
}

bool spmpi_remember_request(const request_info *info)
{
    if (!info->handle)
        return false;
    pthread_mutex_lock(&registry_lock);
    bool ok = true;
    /* The same handle may stand for several outstanding requests (Open MPI hands out one
     * shared, already completed request for sends it finished at once): each is an entry
     * of its own, found and taken in the order they started (probing keeps that order). */
    if ((slot_count + 1) * 4 > slot_capacity * 3 && !grow()) {
        ok = false;
    } else {
        size_t s;
        for (s = slot_of(info->handle); slots[s].handle; s = (s + 1) & (slot_capacity - 1))
            ;
        slots[s] = *info;
        slot_count++;
    }
    pthread_mutex_unlock(&registry_lock);
    return ok;
}

bool spmpi_find_request(uint64_t handle, request_info *out)
{
    pthread_mutex_lock(&registry_lock);
    size_t s = find(handle);
    if (s != SIZE_MAX)
        *out = slots[s];
    pthread_mutex_unlock(&registry_lock);
    return s != SIZE_MAX;
}

bool spmpi_take_request(uint64_t handle, request_info *out)
{
    pthread_mutex_lock(&registry_lock);
    size_t s = find(handle);
    if (s != SIZE_MAX) {
        *out = slots[s];
        remove_slot(s);
    }
    pthread_mutex_unlock(&registry_lock);
    return s != SIZE_MAX;
}

/* A persistent request completed: inactive again, kept for its next MPI_Start. */
static void deactivate(uint64_t handle)
{
    pthread_mutex_lock(&registry_lock);
    size_t s = find(handle);
    if (s != SIZE_MAX)
        slots[s].flags &= (uint8_t)~(REQ_ACTIVE | REQ_CAN_CANCEL);
    pthread_mutex_unlock(&registry_lock);
}

static void set_flags(uint64_t handle, uint8_t flags)
{
    pthread_mutex_lock(&registry_lock);
    size_t s = find(handle);
    if (s != SIZE_MAX)
        slots[s].flags |= flags;
    pthread_mutex_unlock(&registry_lock);
}

void spmpi_icoll_started(sp_location *loc, uint64_t start, MPI_Request request,
                         sp_collective_op op, MPI_Comm comm, int root, uint64_t sent,
                         uint64_t received)
{
    uint64_t id = spmpi_next_request_id();
    request_info info = {.handle = (uint64_t)(uintptr_t)request,
                         .id = id,
                         .generation = sp_measurement_generation(),
                         .kind = REQ_ICOLL,
                         .comm = spmpi_comm_id(comm),
                         .root = root < 0 ? SP_NO_ROOT : (uint32_t)root,
                         .op = op,
                         .bytes = sent,
                         .received = received};
    if (spmpi_remember_request(&info))
        /* dated at the call's enter, as Score-P does */
        sp_mpi_icoll_request(loc, start, id);
}

/* A request completed (MPI_REQUEST_NULL and unknown handles are ignored). Comm_idup's
 * communicator is defined even when nothing is recorded. */
static void completed(sp_location *loc, uint64_t handle, const MPI_Status *status)
{
    request_info info;
    if (handle == (uint64_t)(uintptr_t)MPI_REQUEST_NULL || !spmpi_find_request(handle, &info))
        return;
    if ((info.flags & REQ_PERSISTENT) && !(info.flags & REQ_ACTIVE))
        return; /* an inactive persistent request completes at once: nothing happened */
    if (info.flags & REQ_PERSISTENT)
        deactivate(handle);
    else
        spmpi_take_request(handle, &info);
    if (info.kind == REQ_IDUP) {
        /* Defined from its members now (no collective inside a Wait or Test). */
        uint32_t id = info.newcomm ? spmpi_comm_adopted(*info.newcomm, info.parent) : SP_NO_ID;
        if (loc && id != SP_NO_ID && info.generation == sp_measurement_generation()) {
            uint64_t now = sp_clock_now();
            sp_mpi_comm_create(loc, now, id);
            sp_mpi_icoll_complete(loc, now, SP_COLL_CREATE_HANDLE, info.comm, SP_NO_ROOT, 0, 0,
                                  info.id);
        }
        return;
    }
    if (!loc || info.generation != sp_measurement_generation())
        return;
    uint64_t now = sp_clock_now();
    bool xnonblock = spmpi_on(G_XNONBLOCK);
    int cancelled = 0;
    if (info.flags & REQ_CAN_CANCEL)
        PMPI_Test_cancelled(status, &cancelled);
    if (info.kind == REQ_IO) {
        spmpi_io_request_completed(loc, &info, status, cancelled != 0);
        return;
    }
    if (cancelled) {
        if (xnonblock)
            sp_mpi_request_cancelled(loc, now, info.id);
        return;
    }
    switch ((request_kind)info.kind) {
    case REQ_SEND:
        if (xnonblock)
            sp_mpi_isend_complete(loc, now, info.id);
        break;
    case REQ_RECV:
        if (status->MPI_SOURCE == MPI_PROC_NULL)
            break;
        if (xnonblock)
            sp_mpi_irecv(loc, now, (uint32_t)status->MPI_SOURCE, info.comm,
                         (uint32_t)status->MPI_TAG, spmpi_received_bytes(status, info.datatype),
                         info.id);
        else
            sp_mpi_recv(loc, now, (uint32_t)status->MPI_SOURCE, info.comm,
                        (uint32_t)status->MPI_TAG, spmpi_received_bytes(status, info.datatype));
        break;
    case REQ_ICOLL:
        sp_mpi_icoll_complete(loc, now, info.op, info.comm, info.root, info.bytes, info.received,
                              info.id);
        break;
    case REQ_RMA:
        spmpi_rma_request_completed(loc, &info);
        break;
    case REQ_IDUP:
    case REQ_MESSAGE:
    case REQ_IO:
    case REQ_IO_SPLIT:
        break;
    }
}

/* A Test that found the request not complete (the xreqtest group). */
static void tested(sp_location *loc, uint64_t handle)
{
    request_info info;
    if (!spmpi_on(G_XREQTEST) || !spmpi_find_request(handle, &info) ||
        info.generation != sp_measurement_generation())
        return;
    if (info.kind == REQ_RMA)
        sp_rma_op(loc, sp_clock_now(), SP_RMA_OP_TEST, info.comm, info.bytes);
    else if (info.kind == REQ_IO)
        spmpi_io_request_tested(loc, &info);
    else if (info.kind != REQ_MESSAGE && info.kind != REQ_IO_SPLIT)
        sp_mpi_request_test(loc, sp_clock_now(), info.id);
}

/* Request handles before a Wait/Test call: the call replaces completed ones with
 * MPI_REQUEST_NULL. Small arrays stay on the stack. */
typedef struct {
    uint64_t local[16];
    uint64_t *handles;
    MPI_Status local_statuses[16];
    MPI_Status *statuses;
} saved_requests;

static void save_requests(saved_requests *s, int n, const MPI_Request *reqs,
                          MPI_Status *user_statuses)
{
    s->handles = n <= 16 ? s->local : malloc((size_t)n * sizeof *s->handles);
    s->statuses = user_statuses != MPI_STATUSES_IGNORE
                      ? user_statuses
                      : (n <= 16 ? s->local_statuses : malloc((size_t)n * sizeof *s->statuses));
    for (int i = 0; s->handles && i < n; i++)
        s->handles[i] = (uint64_t)(uintptr_t)reqs[i];
}

static void release_requests(saved_requests *s, MPI_Status *user_statuses)
{
    if (s->handles != s->local)
        free(s->handles);
    if (s->statuses != user_statuses && s->statuses != s->local_statuses)
        free(s->statuses);
}

EXPORT int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    spmpi_enter(FN_WAIT);
    uint64_t handle = (uint64_t)(uintptr_t)*request;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Wait(request, st);
    sp_location *loc = spmpi_after(FN_WAIT);
    if (s == MPI_SUCCESS)
        completed(loc, handle, st);
    if (loc)
        spmpi_leave(loc, FN_WAIT);
    return s;
}

EXPORT int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    spmpi_enter(FN_TEST);
    uint64_t handle = (uint64_t)(uintptr_t)*request;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Test(request, flag, st);
    sp_location *loc = spmpi_after(FN_TEST);
    if (s == MPI_SUCCESS && *flag)
        completed(loc, handle, st);
    else if (s == MPI_SUCCESS && loc)
        tested(loc, handle);
    if (loc)
        spmpi_leave(loc, FN_TEST);
    return s;
}

static int all(int fn, int n, MPI_Request requests_[], int *flag, MPI_Status statuses[])
{
    spmpi_enter(fn);
    saved_requests saved;
    save_requests(&saved, n, requests_, statuses);
    MPI_Status *st = saved.statuses ? saved.statuses : statuses;
    int s = flag ? PMPI_Testall(n, requests_, flag, st) : PMPI_Waitall(n, requests_, st);
    sp_location *loc = spmpi_after(fn);
    if (s == MPI_SUCCESS && saved.handles && saved.statuses)
        for (int i = 0; i < n; i++) {
            if (!flag || *flag)
                completed(loc, saved.handles[i], &saved.statuses[i]);
            else if (loc)
                tested(loc, saved.handles[i]);
        }
    if (loc)
        spmpi_leave(loc, fn);
    release_requests(&saved, statuses);
    return s;
}

EXPORT int MPI_Waitall(int n, MPI_Request requests_[], MPI_Status statuses[])
{
    return all(FN_WAITALL, n, requests_, NULL, statuses);
}

EXPORT int MPI_Testall(int n, MPI_Request requests_[], int *flag, MPI_Status statuses[])
{
    return all(FN_TESTALL, n, requests_, flag, statuses);
}

static int any(int fn, int n, MPI_Request requests_[], int *index, int *flag, MPI_Status *status)
{
    spmpi_enter(fn);
    saved_requests saved;
    save_requests(&saved, n, requests_, MPI_STATUSES_IGNORE);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = flag ? PMPI_Testany(n, requests_, index, flag, st)
                 : PMPI_Waitany(n, requests_, index, st);
    sp_location *loc = spmpi_after(fn);
    if (s == MPI_SUCCESS && (!flag || *flag) && *index != MPI_UNDEFINED && saved.handles)
        completed(loc, saved.handles[*index], st);
    else if (s == MPI_SUCCESS && loc && flag && saved.handles)
        for (int i = 0; i < n; i++)
            tested(loc, saved.handles[i]);
    if (loc)
        spmpi_leave(loc, fn);
    release_requests(&saved, MPI_STATUSES_IGNORE);
    return s;
}

EXPORT int MPI_Waitany(int n, MPI_Request requests_[], int *index, MPI_Status *status)
{
    return any(FN_WAITANY, n, requests_, index, NULL, status);
}

EXPORT int MPI_Testany(int n, MPI_Request requests_[], int *index, int *flag, MPI_Status *status)
{
    return any(FN_TESTANY, n, requests_, index, flag, status);
}

static int some(int fn, int n, MPI_Request requests_[], int *outcount, int indices[],
                MPI_Status statuses[], bool wait)
{
    spmpi_enter(fn);
    saved_requests saved;
    save_requests(&saved, n, requests_, statuses);
    MPI_Status *st = saved.statuses ? saved.statuses : statuses;
    int s = wait ? PMPI_Waitsome(n, requests_, outcount, indices, st)
                 : PMPI_Testsome(n, requests_, outcount, indices, st);
    sp_location *loc = spmpi_after(fn);
    if (s == MPI_SUCCESS && *outcount != MPI_UNDEFINED && saved.handles && saved.statuses) {
        for (int i = 0; i < *outcount; i++)
            completed(loc, saved.handles[indices[i]], &saved.statuses[i]);
        if (!wait && loc)
            for (int i = 0; i < n; i++)
                if (requests_[i] != MPI_REQUEST_NULL)
                    tested(loc, saved.handles[i]);
    }
    if (loc)
        spmpi_leave(loc, fn);
    release_requests(&saved, statuses);
    return s;
}

EXPORT int MPI_Waitsome(int n, MPI_Request requests_[], int *outcount, int indices[],
                        MPI_Status statuses[])
{
    return some(FN_WAITSOME, n, requests_, outcount, indices, statuses, true);
}

EXPORT int MPI_Testsome(int n, MPI_Request requests_[], int *outcount, int indices[],
                        MPI_Status statuses[])
{
    return some(FN_TESTSOME, n, requests_, outcount, indices, statuses, false);
}

EXPORT int MPI_Cancel(MPI_Request *request)
{
    spmpi_enter(FN_CANCEL);
    /* Its completion may now be a cancellation (PMPI_Test_cancelled tells then). */
    set_flags((uint64_t)(uintptr_t)*request, REQ_CAN_CANCEL);
    int s = PMPI_Cancel(request);
    sp_location *loc = spmpi_after(FN_CANCEL);
    if (loc)
        spmpi_leave(loc, FN_CANCEL);
    return s;
}

EXPORT int MPI_Request_free(MPI_Request *request)
{
    spmpi_enter(FN_REQUEST_FREE);
    uint64_t handle = (uint64_t)(uintptr_t)*request;
    int s = PMPI_Request_free(request);
    request_info info;
    spmpi_take_request(handle, &info); /* it will never complete visibly */
    sp_location *loc = spmpi_after(FN_REQUEST_FREE);
    if (loc)
        spmpi_leave(loc, FN_REQUEST_FREE);
    return s;
}

EXPORT int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    SPMPI_REGION_CALL(FN_REQUEST_GET_STATUS, PMPI_Request_get_status(request, flag, status));
}

EXPORT int MPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    SPMPI_REGION_CALL(FN_TEST_CANCELLED, PMPI_Test_cancelled(status, flag));
}

/* ---- persistent requests: made by *_init (p2p.c), started here ------------------------ */

static void started(sp_location *loc, uint64_t time, uint64_t handle)
{
    request_info info;
    if (!spmpi_find_request(handle, &info) || !(info.flags & REQ_PERSISTENT))
        return;
    set_flags(handle, REQ_ACTIVE);
    if (!loc || info.generation != sp_measurement_generation() || info.peer == (uint32_t)MPI_PROC_NULL)
        return;
    /* As Score-P's MPI_Start: a send is issued now, a receive is posted now. */
    if (info.kind == REQ_SEND) {
        if (spmpi_on(G_XNONBLOCK))
            sp_mpi_isend(loc, time, info.peer, info.comm, info.tag, info.bytes, info.id);
        else
            sp_mpi_send(loc, time, info.peer, info.comm, info.tag, info.bytes);
    } else if (info.kind == REQ_RECV && spmpi_on(G_XNONBLOCK)) {
        sp_mpi_irecv_request(loc, time, info.id);
    }
}

EXPORT int MPI_Start(MPI_Request *request)
{
    uint64_t start = spmpi_enter(FN_START);
    uint64_t handle = (uint64_t)(uintptr_t)*request;
    int s = PMPI_Start(request);
    sp_location *loc = spmpi_after(FN_START);
    if (s == MPI_SUCCESS)
        started(loc, start, handle);
    if (loc)
        spmpi_leave(loc, FN_START);
    return s;
}

EXPORT int MPI_Startall(int n, MPI_Request requests_[])
{
    uint64_t start = spmpi_enter(FN_STARTALL);
    saved_requests saved;
    save_requests(&saved, n, requests_, MPI_STATUSES_IGNORE);
    int s = PMPI_Startall(n, requests_);
    sp_location *loc = spmpi_after(FN_STARTALL);
    if (s == MPI_SUCCESS && saved.handles)
        for (int i = 0; i < n; i++)
            started(loc, start, saved.handles[i]);
    if (loc)
        spmpi_leave(loc, FN_STARTALL);
    release_requests(&saved, MPI_STATUSES_IGNORE);
    return s;
}
