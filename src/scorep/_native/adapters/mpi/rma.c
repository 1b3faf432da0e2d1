/* One-sided communication, recorded as Score-P's MPI adapter records it (its wrapgen RMA
 * tasks): window creation and destruction as RMA collectives with RmaWinCreate /
 * RmaWinDestroy; Put, Get and the atomic operations as RmaPut / RmaGet / RmaAtomic at the
 * call, each with a matching id, completed (RmaOpCompleteBlocking) by the synchronisation
 * that completes it (fence, unlock, flush, complete, wait); a request-based operation
 * (MPI_Rput...) completed by its Wait or Test (RmaOpCompleteNonBlocking); fences as RMA
 * collectives, general active target synchronisation as RmaGroupSync with the epoch's
 * group, passive target locks as RmaRequestLock / RmaReleaseLock. */
#include "adapters/mpi/mpi_adapter.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/tables.h"

typedef struct {
    uint32_t target;
    uint64_t matching;
} pending_op;

typedef struct {
    MPI_Win win;
    uint32_t id; /* the definition of the running measurement */
    uint32_t generation;
    bool allocated; /* MPI_Win_allocate*: destroyed with DESTROY_HANDLE_AND_DEALLOCATE */
    uint32_t access_group, exposure_group; /* of the open GATS epochs */
    pending_op *ops;
    size_t op_count, op_capacity;
} window;

/* The program's windows. Global because PMPI wrappers carry no context; windows are few
 * and long-lived, the lock is taken once per RMA call. */
static pthread_mutex_t windows_lock = PTHREAD_MUTEX_INITIALIZER;
static window *windows;
static size_t window_count, window_capacity;
/* Windows made per communicator (key -> count): the same on every member. */
static sp_u64map windows_per_comm;

/* Called with the lock. */
static window *find(MPI_Win win)
{
    for (size_t i = 0; i < window_count; i++)
        if (windows[i].win == win)
            return &windows[i];
    return NULL;
}

/* The window's id in the running measurement (SP_NO_ID when unknown or from an earlier
 * one). */
static uint32_t win_id(MPI_Win win)
{
    pthread_mutex_lock(&windows_lock);
    window *w = find(win);
    uint32_t id = w && w->generation == sp_measurement_generation() ? w->id : SP_NO_ID;
    pthread_mutex_unlock(&windows_lock);
    return id;
}

static uint64_t next_window_key(MPI_Comm comm)
{
    /* Every member defines the communicator alike: its key identifies it across
     * processes, and windows are made on it collectively, in the same order. */
    uint64_t base = spmpi_comm_key(comm);
    pthread_mutex_lock(&windows_lock);
    uint32_t before = spmpi_count_occurrence(&windows_per_comm, base);
    pthread_mutex_unlock(&windows_lock);
    return sp_hash_mix(base ^ (0x5157ULL << 40) ^ before);
}

static void window_created(MPI_Win win, MPI_Comm comm, bool allocated, const char *name)
{
    uint64_t key = next_window_key(comm);
    uint32_t id = SP_NO_ID;
    sp_location *section = sp_event_section_begin();
    if (section) {
        id = sp_rma_win_define(key, spmpi_comm_id(comm), name);
        sp_event_section_end(section);
    }
    pthread_mutex_lock(&windows_lock);
    window *w = find(win);
    if (!w && window_count == window_capacity) {
        size_t cap = window_capacity ? window_capacity * 2 : 8;
        window *bigger = realloc(windows, cap * sizeof *bigger);
        if (bigger) {
            windows = bigger;
            window_capacity = cap;
        }
    }
    if (!w && window_count < window_capacity)
        w = &windows[window_count++];
    else if (w)
        free(w->ops); /* a handle MPI gave out again */
    if (w) {
        *w = (window){.win = win, .id = id, .generation = sp_measurement_generation(),
                      .allocated = allocated, .access_group = SP_NO_ID,
                      .exposure_group = SP_NO_ID};
    }
    pthread_mutex_unlock(&windows_lock);
}

static void window_freed(MPI_Win win)
{
    pthread_mutex_lock(&windows_lock);
    window *w = find(win);
    if (w) {
        free(w->ops);
        *w = windows[--window_count];
    }
    pthread_mutex_unlock(&windows_lock);
}

static void add_pending(MPI_Win win, uint32_t target, uint64_t matching)
{
    pthread_mutex_lock(&windows_lock);
    window *w = find(win);
    if (w && w->op_count == w->op_capacity) {
        size_t cap = w->op_capacity ? w->op_capacity * 2 : 16;
        pending_op *bigger = realloc(w->ops, cap * sizeof *bigger);
        if (bigger) {
            w->ops = bigger;
            w->op_capacity = cap;
        }
    }
    if (w && w->op_count < w->op_capacity)
        w->ops[w->op_count++] = (pending_op){target, matching};
    pthread_mutex_unlock(&windows_lock);
}

/* The pending operations on `win` (to `target`, or all with SP_RMA_ALL_TARGETS) are
 * complete: RmaOpCompleteBlocking for each. */
static void complete_pending(sp_location *loc, MPI_Win win, uint32_t target)
{
    uint64_t now = sp_clock_now();
    pthread_mutex_lock(&windows_lock);
    window *w = find(win);
    if (w) {
        size_t kept = 0;
        for (size_t i = 0; i < w->op_count; i++) {
            if (target == SP_RMA_ALL_TARGETS || w->ops[i].target == target) {
                if (loc && w->generation == sp_measurement_generation())
                    sp_rma_op(loc, now, SP_RMA_OP_COMPLETE_BLOCKING, w->id, w->ops[i].matching);
            } else {
                w->ops[kept++] = w->ops[i];
            }
        }
        w->op_count = kept;
    }
    pthread_mutex_unlock(&windows_lock);
}

void spmpi_rma_request_completed(sp_location *loc, const request_info *info)
{
    sp_rma_op(loc, sp_clock_now(), SP_RMA_OP_COMPLETE_NON_BLOCKING, info->comm, info->bytes);
}

/* ---- windows ----------------------------------------------------------------------------- */

static void rma_collective_begin(int fn)
{
    spmpi_enter(fn);
    sp_location *loc = spmpi_after(fn);
    if (loc) {
        sp_rma_collective_begin(loc, sp_clock_now());
        sp_event_section_end(loc);
    }
}

static int window_made(int fn, int status, MPI_Win *win, MPI_Comm comm, bool allocated,
                       const char *name)
{
    if (status == MPI_SUCCESS && *win != MPI_WIN_NULL)
        window_created(*win, comm, allocated, name);
    sp_location *loc = spmpi_after(fn);
    if (loc) {
        uint32_t id = status == MPI_SUCCESS ? win_id(*win) : SP_NO_ID;
        uint64_t now = sp_clock_now();
        if (id != SP_NO_ID) {
            sp_rma_win_create(loc, now, id);
            sp_rma_collective_end(loc, now,
                                  allocated ? SP_COLL_CREATE_HANDLE_AND_ALLOCATE
                                            : SP_COLL_CREATE_HANDLE,
                                  SP_RMA_SYNC_LEVEL_PROCESS, id, SP_NO_ROOT, 0, 0);
        }
        spmpi_leave(loc, fn);
    }
    return status;
}

/* Same-shape MPI wrappers, a family: one per MPI function, each the same steps (enter,
 * the PMPI_ call, its records, leave) with its own arguments. The duplicates tool pairs
 * them; they are not one logic written twice. */
EXPORT int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                          MPI_Win *win)
{
    rma_collective_begin(FN_WIN_CREATE);
    int s = PMPI_Win_create(base, size, disp_unit, info, comm, win);
    return window_made(FN_WIN_CREATE, s, win, comm, false, "MPI_Win_create_window");
}

EXPORT int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win)
{
    rma_collective_begin(FN_WIN_ALLOCATE);
    int s = PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
    return window_made(FN_WIN_ALLOCATE, s, win, comm, true, "MPI_Win_allocate_window");
}

EXPORT int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                   void *baseptr, MPI_Win *win)
{
    rma_collective_begin(FN_WIN_ALLOCATE_SHARED);
    int s = PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win);
    return window_made(FN_WIN_ALLOCATE_SHARED, s, win, comm, true,
                       "MPI_Win_allocate_shared_window");
}

EXPORT int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    rma_collective_begin(FN_WIN_CREATE_DYNAMIC);
    int s = PMPI_Win_create_dynamic(info, comm, win);
    return window_made(FN_WIN_CREATE_DYNAMIC, s, win, comm, false,
                       "MPI_Win_create_dynamic_window");
}

EXPORT int MPI_Win_free(MPI_Win *win)
{
    rma_collective_begin(FN_WIN_FREE);
    MPI_Win handle = *win;
    uint32_t id = win_id(handle);
    pthread_mutex_lock(&windows_lock);
    window *w = find(handle);
    bool allocated = w && w->allocated;
    pthread_mutex_unlock(&windows_lock);
    int s = PMPI_Win_free(win);
    if (s == MPI_SUCCESS)
        window_freed(handle);
    sp_location *loc = spmpi_after(FN_WIN_FREE);
    if (loc) {
        if (s == MPI_SUCCESS && id != SP_NO_ID) {
            uint64_t now = sp_clock_now();
            sp_rma_win_destroy(loc, now, id);
            sp_rma_collective_end(loc, now,
                                  allocated ? SP_COLL_DESTROY_HANDLE_AND_DEALLOCATE
                                            : SP_COLL_DESTROY_HANDLE,
                                  SP_RMA_SYNC_LEVEL_PROCESS, id, SP_NO_ROOT, 0, 0);
        }
        spmpi_leave(loc, FN_WIN_FREE);
    }
    return s;
}

EXPORT int MPI_Win_set_name(MPI_Win win, const char *win_name)
{
    spmpi_enter(FN_WIN_SET_NAME);
    int s = PMPI_Win_set_name(win, win_name);
    uint32_t id = win_id(win);
    sp_location *section = sp_event_section_begin();
    if (section) {
        if (s == MPI_SUCCESS && id != SP_NO_ID)
            sp_rma_win_set_name(id, win_name);
        sp_event_section_end(section);
    }
    sp_location *loc = spmpi_after(FN_WIN_SET_NAME);
    if (loc)
        spmpi_leave(loc, FN_WIN_SET_NAME);
    return s;
}

/* ---- communication: recorded at the call, before it (as Score-P) ------------------------ */

typedef enum { OP_PUT, OP_GET, OP_ATOMIC } op_kind;

/* Records one operation and returns its matching id (0: nothing recorded). */
static uint64_t issue(int fn, uint64_t start, op_kind kind, MPI_Win win, int target,
                      uint32_t atomic_type, uint64_t put, uint64_t got)
{
    if (target == MPI_PROC_NULL)
        return 0;
    sp_location *loc = spmpi_after(fn);
    if (!loc)
        return 0;
    uint32_t id = win_id(win);
    uint64_t matching = 0;
    if (id != SP_NO_ID) {
        matching = spmpi_next_request_id();
        if (kind == OP_PUT)
            sp_rma_put(loc, start, id, (uint32_t)target, put, matching);
        else if (kind == OP_GET)
            sp_rma_get(loc, start, id, (uint32_t)target, got, matching);
        else
            sp_rma_atomic(loc, start, id, (uint32_t)target, atomic_type, put, got, matching);
    }
    sp_event_section_end(loc);
    return matching;
}

/* Completed by a later synchronisation (implicit) or by its own request (explicit). */
static int issued(int fn, int status, MPI_Win win, int target, uint64_t matching,
                  MPI_Request *request)
{
    if (status == MPI_SUCCESS && matching) {
        if (request) {
            request_info info = {.handle = (uint64_t)(uintptr_t)*request,
                                 .id = matching,
                                 .generation = sp_measurement_generation(),
                                 .kind = REQ_RMA,
                                 .comm = win_id(win),
                                 .peer = (uint32_t)target,
                                 .bytes = matching};
            spmpi_remember_request(&info);
        } else {
            add_pending(win, (uint32_t)target, matching);
        }
    }
    sp_location *loc = spmpi_after(fn);
    if (loc)
        spmpi_leave(loc, fn);
    return status;
}

#define RMA_OP(FN, KIND, ATOMIC, PUT, GOT, TARGET, WIN, CALL, REQUEST)                          \
    do {                                                                                        \
        uint64_t start_ = spmpi_enter(FN);                                                      \
        uint64_t matching_ = issue(FN, start_, KIND, WIN, TARGET, ATOMIC, PUT, GOT);            \
        int s_ = (CALL);                                                                        \
        return issued(FN, s_, WIN, TARGET, matching_, REQUEST);                                 \
    } while (0)

EXPORT int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Win win)
{
    RMA_OP(FN_PUT, OP_PUT, 0, spmpi_type_bytes(origin_datatype, origin_count), 0, target_rank,
           win,
           PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win),
           NULL);
}

EXPORT int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Win win)
{
    RMA_OP(FN_GET, OP_GET, 0, 0, spmpi_type_bytes(origin_datatype, origin_count), target_rank,
           win,
           PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win),
           NULL);
}

EXPORT int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                          int target_rank, MPI_Aint target_disp, int target_count,
                          MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    RMA_OP(FN_ACCUMULATE, OP_ATOMIC, SP_RMA_ATOMIC_ACCUMULATE,
           spmpi_type_bytes(origin_datatype, origin_count), 0, target_rank, win,
           PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                           target_count, target_datatype, op, win),
           NULL);
}

EXPORT int MPI_Get_accumulate(const void *origin_addr, int origin_count,
                              MPI_Datatype origin_datatype, void *result_addr, int result_count,
                              MPI_Datatype result_datatype, int target_rank,
                              MPI_Aint target_disp, int target_count,
                              MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    RMA_OP(FN_GET_ACCUMULATE, OP_ATOMIC, SP_RMA_ATOMIC_FETCH_AND_ACCUMULATE,
           spmpi_type_bytes(origin_datatype, origin_count),
           spmpi_type_bytes(result_datatype, result_count), target_rank, win,
           PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                               result_count, result_datatype, target_rank, target_disp,
                               target_count, target_datatype, op, win),
           NULL);
}

EXPORT int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                            int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    RMA_OP(FN_FETCH_AND_OP, OP_ATOMIC, SP_RMA_ATOMIC_FETCH_AND_ACCUMULATE,
           spmpi_type_bytes(datatype, 1), spmpi_type_bytes(datatype, 1), target_rank, win,
           PMPI_Fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op,
                             win),
           NULL);
}

EXPORT int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr,
                                void *result_addr, MPI_Datatype datatype, int target_rank,
                                MPI_Aint target_disp, MPI_Win win)
{
    RMA_OP(FN_COMPARE_AND_SWAP, OP_ATOMIC, SP_RMA_ATOMIC_COMPARE_AND_SWAP,
           spmpi_type_bytes(datatype, 1), spmpi_type_bytes(datatype, 1), target_rank, win,
           PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank,
                                 target_disp, win),
           NULL);
}

EXPORT int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    RMA_OP(FN_RPUT, OP_PUT, 0, spmpi_type_bytes(origin_datatype, origin_count), 0, target_rank,
           win,
           PMPI_Rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                     target_count, target_datatype, win, request),
           request);
}

EXPORT int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    RMA_OP(FN_RGET, OP_GET, 0, 0, spmpi_type_bytes(origin_datatype, origin_count), target_rank,
           win,
           PMPI_Rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                     target_count, target_datatype, win, request),
           request);
}

EXPORT int MPI_Raccumulate(const void *origin_addr, int origin_count,
                           MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                           int target_count, MPI_Datatype target_datatype, MPI_Op op,
                           MPI_Win win, MPI_Request *request)
{
    RMA_OP(FN_RACCUMULATE, OP_ATOMIC, SP_RMA_ATOMIC_ACCUMULATE,
           spmpi_type_bytes(origin_datatype, origin_count), 0, target_rank, win,
           PMPI_Raccumulate(origin_addr, origin_count, origin_datatype, target_rank,
                            target_disp, target_count, target_datatype, op, win, request),
           request);
}

EXPORT int MPI_Rget_accumulate(const void *origin_addr, int origin_count,
                               MPI_Datatype origin_datatype, void *result_addr, int result_count,
                               MPI_Datatype result_datatype, int target_rank,
                               MPI_Aint target_disp, int target_count,
                               MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                               MPI_Request *request)
{
    RMA_OP(FN_RGET_ACCUMULATE, OP_ATOMIC, SP_RMA_ATOMIC_FETCH_AND_ACCUMULATE,
           spmpi_type_bytes(origin_datatype, origin_count),
           spmpi_type_bytes(result_datatype, result_count), target_rank, win,
           PMPI_Rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                                result_count, result_datatype, target_rank, target_disp,
                                target_count, target_datatype, op, win, request),
           request);
}

/* ---- synchronisation ---------------------------------------------------------------------- */

EXPORT int MPI_Win_fence(int assert, MPI_Win win)
{
    rma_collective_begin(FN_WIN_FENCE);
    int s = PMPI_Win_fence(assert, win);
    sp_location *loc = spmpi_after(FN_WIN_FENCE);
    complete_pending(loc, win, SP_RMA_ALL_TARGETS);
    if (loc) {
        uint32_t id = win_id(win);
        if (s == MPI_SUCCESS && id != SP_NO_ID)
            sp_rma_collective_end(loc, sp_clock_now(), SP_COLL_BARRIER,
                                  SP_RMA_SYNC_LEVEL_MEMORY | SP_RMA_SYNC_LEVEL_PROCESS, id,
                                  SP_NO_ROOT, 0, 0);
        spmpi_leave(loc, FN_WIN_FENCE);
    }
    return s;
}

EXPORT int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    spmpi_enter(FN_WIN_LOCK);
    sp_location *loc = spmpi_after(FN_WIN_LOCK);
    if (loc) {
        uint32_t id = win_id(win);
        if (id != SP_NO_ID && rank != MPI_PROC_NULL)
            sp_rma_lock(loc, sp_clock_now(), SP_RMA_REQUEST_LOCK, id, (uint32_t)rank, 0,
                        lock_type == MPI_LOCK_EXCLUSIVE ? SP_LOCK_EXCLUSIVE : SP_LOCK_SHARED);
        sp_event_section_end(loc);
    }
    int s = PMPI_Win_lock(lock_type, rank, assert, win);
    loc = spmpi_after(FN_WIN_LOCK);
    if (loc)
        spmpi_leave(loc, FN_WIN_LOCK);
    return s;
}

EXPORT int MPI_Win_lock_all(int assert, MPI_Win win)
{
    spmpi_enter(FN_WIN_LOCK_ALL);
    sp_location *loc = spmpi_after(FN_WIN_LOCK_ALL);
    if (loc) {
        uint32_t id = win_id(win);
        if (id != SP_NO_ID)
            sp_rma_lock(loc, sp_clock_now(), SP_RMA_REQUEST_LOCK, id, SP_RMA_ALL_TARGETS, 0,
                        SP_LOCK_SHARED);
        sp_event_section_end(loc);
    }
    int s = PMPI_Win_lock_all(assert, win);
    loc = spmpi_after(FN_WIN_LOCK_ALL);
    if (loc)
        spmpi_leave(loc, FN_WIN_LOCK_ALL);
    return s;
}

/* The pending operations to `target` complete; with `release`, the lock is released. */
static int completion(int fn, int status, MPI_Win win, uint32_t target, bool release)
{
    sp_location *loc = spmpi_after(fn);
    if (status == MPI_SUCCESS)
        complete_pending(loc, win, target);
    if (loc) {
        uint32_t id = win_id(win);
        if (status == MPI_SUCCESS && release && id != SP_NO_ID)
            sp_rma_release_lock(loc, sp_clock_now(), id, target, 0);
        spmpi_leave(loc, fn);
    }
    return status;
}

EXPORT int MPI_Win_unlock(int rank, MPI_Win win)
{
    spmpi_enter(FN_WIN_UNLOCK);
    int s = PMPI_Win_unlock(rank, win);
    return completion(FN_WIN_UNLOCK, s, win, (uint32_t)rank, rank != MPI_PROC_NULL);
}

EXPORT int MPI_Win_unlock_all(MPI_Win win)
{
    spmpi_enter(FN_WIN_UNLOCK_ALL);
    int s = PMPI_Win_unlock_all(win);
    return completion(FN_WIN_UNLOCK_ALL, s, win, SP_RMA_ALL_TARGETS, true);
}

EXPORT int MPI_Win_flush(int rank, MPI_Win win)
{
    spmpi_enter(FN_WIN_FLUSH);
    int s = PMPI_Win_flush(rank, win);
    return completion(FN_WIN_FLUSH, s, win, (uint32_t)rank, false);
}

EXPORT int MPI_Win_flush_all(MPI_Win win)
{
    spmpi_enter(FN_WIN_FLUSH_ALL);
    int s = PMPI_Win_flush_all(win);
    return completion(FN_WIN_FLUSH_ALL, s, win, SP_RMA_ALL_TARGETS, false);
}

EXPORT int MPI_Win_flush_local(int rank, MPI_Win win)
{
    spmpi_enter(FN_WIN_FLUSH_LOCAL);
    int s = PMPI_Win_flush_local(rank, win);
    return completion(FN_WIN_FLUSH_LOCAL, s, win, (uint32_t)rank, false);
}

EXPORT int MPI_Win_flush_local_all(MPI_Win win)
{
    spmpi_enter(FN_WIN_FLUSH_LOCAL_ALL);
    int s = PMPI_Win_flush_local_all(win);
    return completion(FN_WIN_FLUSH_LOCAL_ALL, s, win, SP_RMA_ALL_TARGETS, false);
}

EXPORT int MPI_Win_sync(MPI_Win win)
{
    spmpi_enter(FN_WIN_SYNC);
    int s = PMPI_Win_sync(win);
    sp_location *loc = spmpi_after(FN_WIN_SYNC);
    if (loc) {
        uint32_t id = win_id(win);
        if (s == MPI_SUCCESS && id != SP_NO_ID)
            sp_rma_sync(loc, sp_clock_now(), id, SP_RMA_ALL_TARGETS, SP_RMA_SYNC_MEMORY);
        spmpi_leave(loc, FN_WIN_SYNC);
    }
    return s;
}

/* General active target synchronisation: an epoch opens with its group, closes with it. */
typedef enum { ACCESS, EXPOSURE } epoch;

static int epoch_started(int fn, int status, MPI_Win win, MPI_Group group, epoch which)
{
    uint32_t gid = status == MPI_SUCCESS ? spmpi_group_id(group) : SP_NO_ID;
    pthread_mutex_lock(&windows_lock);
    window *w = find(win);
    if (w) {
        if (which == ACCESS)
            w->access_group = gid;
        else
            w->exposure_group = gid;
    }
    pthread_mutex_unlock(&windows_lock);
    sp_location *loc = spmpi_after(fn);
    if (loc) {
        uint32_t id = win_id(win);
        if (id != SP_NO_ID && gid != SP_NO_ID)
            sp_rma_group_sync(loc, sp_clock_now(), SP_RMA_SYNC_LEVEL_PROCESS, id, gid);
        spmpi_leave(loc, fn);
    }
    return status;
}

static int epoch_ended(int fn, int status, MPI_Win win, epoch which, bool done)
{
    sp_location *loc = spmpi_after(fn);
    if (status == MPI_SUCCESS && done)
        complete_pending(loc, win, SP_RMA_ALL_TARGETS);
    pthread_mutex_lock(&windows_lock);
    window *w = find(win);
    uint32_t gid = !w ? SP_NO_ID : which == ACCESS ? w->access_group : w->exposure_group;
    pthread_mutex_unlock(&windows_lock);
    if (loc) {
        uint32_t id = win_id(win);
        if (status == MPI_SUCCESS && id != SP_NO_ID && gid != SP_NO_ID)
            sp_rma_group_sync(loc, sp_clock_now(),
                              done ? SP_RMA_SYNC_LEVEL_MEMORY | SP_RMA_SYNC_LEVEL_PROCESS
                                   : SP_RMA_SYNC_LEVEL_NONE,
                              id, gid);
        spmpi_leave(loc, fn);
    }
    return status;
}

EXPORT int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    spmpi_enter(FN_WIN_POST);
    int s = PMPI_Win_post(group, assert, win);
    return epoch_started(FN_WIN_POST, s, win, group, EXPOSURE);
}

EXPORT int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    spmpi_enter(FN_WIN_START);
    int s = PMPI_Win_start(group, assert, win);
    return epoch_started(FN_WIN_START, s, win, group, ACCESS);
}

EXPORT int MPI_Win_complete(MPI_Win win)
{
    spmpi_enter(FN_WIN_COMPLETE);
    int s = PMPI_Win_complete(win);
    return epoch_ended(FN_WIN_COMPLETE, s, win, ACCESS, true);
}

EXPORT int MPI_Win_wait(MPI_Win win)
{
    spmpi_enter(FN_WIN_WAIT);
    int s = PMPI_Win_wait(win);
    return epoch_ended(FN_WIN_WAIT, s, win, EXPOSURE, true);
}

EXPORT int MPI_Win_test(MPI_Win win, int *flag)
{
    spmpi_enter(FN_WIN_TEST);
    int s = PMPI_Win_test(win, flag);
    return epoch_ended(FN_WIN_TEST, s, win, EXPOSURE, s == MPI_SUCCESS && *flag);
}

EXPORT int MPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    SPMPI_REGION_CALL(FN_WIN_GET_GROUP, PMPI_Win_get_group(win, group));
}

EXPORT int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    SPMPI_REGION_CALL(FN_WIN_ATTACH, PMPI_Win_attach(win, base, size));
}

EXPORT int MPI_Win_detach(MPI_Win win, const void *base)
{
    SPMPI_REGION_CALL(FN_WIN_DETACH, PMPI_Win_detach(win, base));
}

EXPORT int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
                                void *baseptr)
{
    SPMPI_REGION_CALL(FN_WIN_SHARED_QUERY, PMPI_Win_shared_query(win, rank, size, disp_unit,
                                                                  baseptr));
}

EXPORT int MPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    SPMPI_REGION_CALL(FN_WIN_GET_NAME, PMPI_Win_get_name(win, win_name, resultlen));
}
