/* Requests of non-blocking operations: remembered when they start, recorded when a Wait or
 * Test call completes them. */
#include "adapters/mpi/mpi_adapter.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct {
    uint32_t generation; /* the measurement that saw it start */
    uint64_t handle; /* the MPI_Request */
    uint64_t id;     /* the request id of the trace records */
    bool receive;
    uint32_t comm, peer, tag;
    uint64_t bytes;        /* for sends */
    MPI_Datatype datatype; /* for receives: the received count is in this type */
} request_info;

/* The outstanding requests. Global because PMPI wrappers carry no context; the lock is
 * taken once per started and once per completed request. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static request_info *requests;
static size_t request_count, request_capacity;
static _Atomic uint64_t next_request_id = 1;

uint64_t spmpi_remember_request(MPI_Request request, bool receive, uint32_t comm, uint32_t peer,
                                 uint32_t tag, uint64_t bytes, MPI_Datatype datatype)
{
    uint64_t id = atomic_fetch_add(&next_request_id, 1);
    pthread_mutex_lock(&registry_lock);
    if (request_count == request_capacity) {
        size_t cap = request_capacity ? request_capacity * 2 : 64;
        request_info *bigger = realloc(requests, cap * sizeof *bigger);
        if (!bigger) {
            pthread_mutex_unlock(&registry_lock);
            return 0;
        }
        requests = bigger;
        request_capacity = cap;
    }
    requests[request_count++] = (request_info){sp_measurement_generation(),
                                               (uint64_t)(uintptr_t)request, id, receive, comm,
                                               peer, tag, bytes, datatype};
    pthread_mutex_unlock(&registry_lock);
    return id;
}

/* Takes the request out of the registry: false when it is not ours (or was freed). */
static bool take_request(uint64_t handle, request_info *out)
{
    bool found = false;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = request_count; i-- > 0;) {
        if (requests[i].handle == handle) {
            *out = requests[i];
            requests[i] = requests[--request_count];
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return found;
}

static bool peek_request(uint64_t handle, request_info *out)
{
    bool found = false;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = request_count; i-- > 0;) {
        if (requests[i].handle == handle) {
            *out = requests[i];
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return found;
}

static void completed(sp_location *loc, uint64_t handle, const MPI_Status *status)
{
    request_info info;
    if (handle == (uint64_t)(uintptr_t)MPI_REQUEST_NULL || !take_request(handle, &info) ||
        info.generation != sp_measurement_generation())
        return;
    uint64_t now = sp_clock_now();
    if (!info.receive) {
        sp_mpi_isend_complete(loc, now, info.id);
        return;
    }
    if (status->MPI_SOURCE == MPI_PROC_NULL)
        return;
    sp_mpi_irecv(loc, now, (uint32_t)status->MPI_SOURCE, info.comm, (uint32_t)status->MPI_TAG,
                 spmpi_received_bytes(status, info.datatype), info.id);
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
    sp_location *loc = spmpi_after();
    if (loc) {
        if (s == MPI_SUCCESS)
            completed(loc, handle, st);
        spmpi_leave(loc, FN_WAIT);
    }
    return s;
}

EXPORT int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    spmpi_enter(FN_TEST);
    uint64_t handle = (uint64_t)(uintptr_t)*request;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Test(request, flag, st);
    sp_location *loc = spmpi_after();
    if (loc) {
        request_info info;
        if (s == MPI_SUCCESS && *flag)
            completed(loc, handle, st);
        else if (s == MPI_SUCCESS && peek_request(handle, &info))
            sp_mpi_request_test(loc, sp_clock_now(), info.id);
        spmpi_leave(loc, FN_TEST);
    }
    return s;
}

EXPORT int MPI_Waitall(int n, MPI_Request requests_[], MPI_Status statuses[])
{
    spmpi_enter(FN_WAITALL);
    saved_requests saved;
    save_requests(&saved, n, requests_, statuses);
    int s = PMPI_Waitall(n, requests_, saved.statuses ? saved.statuses : statuses);
    sp_location *loc = spmpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && saved.handles && saved.statuses)
            for (int i = 0; i < n; i++)
                completed(loc, saved.handles[i], &saved.statuses[i]);
        spmpi_leave(loc, FN_WAITALL);
    }
    release_requests(&saved, statuses);
    return s;
}

EXPORT int MPI_Testall(int n, MPI_Request requests_[], int *flag, MPI_Status statuses[])
{
    spmpi_enter(FN_TESTALL);
    saved_requests saved;
    save_requests(&saved, n, requests_, statuses);
    int s = PMPI_Testall(n, requests_, flag, saved.statuses ? saved.statuses : statuses);
    sp_location *loc = spmpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && *flag && saved.handles && saved.statuses)
            for (int i = 0; i < n; i++)
                completed(loc, saved.handles[i], &saved.statuses[i]);
        spmpi_leave(loc, FN_TESTALL);
    }
    release_requests(&saved, statuses);
    return s;
}

EXPORT int MPI_Waitany(int n, MPI_Request requests_[], int *index, MPI_Status *status)
{
    spmpi_enter(FN_WAITANY);
    saved_requests saved;
    save_requests(&saved, n, requests_, MPI_STATUSES_IGNORE);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Waitany(n, requests_, index, st);
    sp_location *loc = spmpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && *index != MPI_UNDEFINED && saved.handles)
            completed(loc, saved.handles[*index], st);
        spmpi_leave(loc, FN_WAITANY);
    }
    release_requests(&saved, MPI_STATUSES_IGNORE);
    return s;
}

EXPORT int MPI_Testany(int n, MPI_Request requests_[], int *index, int *flag, MPI_Status *status)
{
    spmpi_enter(FN_TESTANY);
    saved_requests saved;
    save_requests(&saved, n, requests_, MPI_STATUSES_IGNORE);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Testany(n, requests_, index, flag, st);
    sp_location *loc = spmpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED && saved.handles)
            completed(loc, saved.handles[*index], st);
        spmpi_leave(loc, FN_TESTANY);
    }
    release_requests(&saved, MPI_STATUSES_IGNORE);
    return s;
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
    sp_location *loc = spmpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && *outcount != MPI_UNDEFINED && saved.handles && saved.statuses)
            for (int i = 0; i < *outcount; i++)
                completed(loc, saved.handles[indices[i]], &saved.statuses[i]);
        spmpi_leave(loc, fn);
    }
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
    int s = PMPI_Cancel(request);
    sp_location *loc = spmpi_after();
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
    take_request(handle, &info); /* it will never complete visibly */
    sp_location *loc = spmpi_after();
    if (loc)
        spmpi_leave(loc, FN_REQUEST_FREE);
    return s;
}

