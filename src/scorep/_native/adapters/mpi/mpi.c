/* The MPI adapter: PMPI wrappers that record MPI calls as regions of paradigm MPI and
 * their messages and collectives as OTF2 MPI events, plus the collectives the core needs
 * at the end (over a private duplicate of MPI_COMM_WORLD, so they never meet the
 * program's messages).
 *
 * This library is loaded with RTLD_GLOBAL before the program's MPI library is used (see
 * scorep/_mpi.py): the dynamic linker then binds every MPI_* call of mpi4py and of any
 * other extension to these wrappers, which call the PMPI_* entry points of the MPI
 * library. Wrappers run without the GIL (mpi4py releases it), so every recording step
 * is an event section of the core (sp_event_section_begin/end). */
#include <mpi.h>

#include <otf2/otf2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/measurement.h"

#define EXPORT __attribute__((visibility("default")))

/* ---- state --------------------------------------------------------------------------
 * Global because PMPI wrappers carry no context; set at MPI_Init, read-mostly after. */

static MPI_Comm tool_comm = MPI_COMM_NULL; /* our duplicate of MPI_COMM_WORLD */
static MPI_Group world_group = MPI_GROUP_NULL;
static int world_rank, world_size;

/* A freed communicator's handle may come back for a new one; the map cannot delete. */
#define FORGOTTEN (SP_NO_ID - 1)

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static sp_u64map comm_ids;      /* MPI_Comm handle -> local communicator id */
static uint32_t comm_generation; /* the measurement those ids belong to */
static uint32_t comm_counter;    /* communicators this rank created first */

typedef struct {
    uint32_t generation; /* the measurement that saw it start */
    uint64_t handle; /* the MPI_Request */
    uint64_t id;     /* OTF2 request id */
    bool receive;
    uint32_t comm, peer, tag;
    uint64_t bytes;        /* for sends */
    MPI_Datatype datatype; /* for receives: the received count is in this type */
} request_info;

static request_info *requests;
static size_t request_count, request_capacity;
static _Atomic uint64_t next_request_id = 1;

/* ---- regions of the MPI functions ------------------------------------------------- */

enum {
    FN_INIT, FN_INIT_THREAD, FN_FINALIZE, FN_SEND, FN_SSEND, FN_BSEND, FN_RSEND, FN_RECV, FN_SENDRECV,
    FN_SENDRECV_REPLACE, FN_ISEND, FN_ISSEND, FN_IBSEND, FN_IRSEND, FN_IRECV, FN_PROBE, FN_IPROBE,
    FN_MPROBE, FN_IMPROBE, FN_MRECV, FN_IMRECV, FN_WAIT, FN_WAITALL, FN_WAITANY, FN_WAITSOME, FN_TEST,
    FN_TESTALL, FN_TESTANY, FN_TESTSOME, FN_CANCEL, FN_REQUEST_FREE, FN_BARRIER, FN_BCAST, FN_REDUCE,
    FN_ALLREDUCE, FN_GATHER, FN_GATHERV, FN_SCATTER, FN_SCATTERV, FN_ALLGATHER, FN_ALLGATHERV,
    FN_ALLTOALL, FN_ALLTOALLV, FN_REDUCE_SCATTER, FN_REDUCE_SCATTER_BLOCK, FN_SCAN, FN_EXSCAN,
    FN_COMM_SPLIT, FN_COMM_DUP, FN_COMM_CREATE, FN_COMM_FREE, FN_COUNT
};

static const struct {
    const char *name;
    sp_role role;
} functions[FN_COUNT] = {
    [FN_INIT] = {"MPI_Init", SP_ROLE_FUNCTION},
    [FN_INIT_THREAD] = {"MPI_Init_thread", SP_ROLE_FUNCTION},
    [FN_FINALIZE] = {"MPI_Finalize", SP_ROLE_FUNCTION},
    [FN_SEND] = {"MPI_Send", SP_ROLE_POINT2POINT},
    [FN_SSEND] = {"MPI_Ssend", SP_ROLE_POINT2POINT},
    [FN_BSEND] = {"MPI_Bsend", SP_ROLE_POINT2POINT},
    [FN_RSEND] = {"MPI_Rsend", SP_ROLE_POINT2POINT},
    [FN_RECV] = {"MPI_Recv", SP_ROLE_POINT2POINT},
    [FN_SENDRECV] = {"MPI_Sendrecv", SP_ROLE_POINT2POINT},
    [FN_SENDRECV_REPLACE] = {"MPI_Sendrecv_replace", SP_ROLE_POINT2POINT},
    [FN_ISEND] = {"MPI_Isend", SP_ROLE_POINT2POINT},
    [FN_ISSEND] = {"MPI_Issend", SP_ROLE_POINT2POINT},
    [FN_IBSEND] = {"MPI_Ibsend", SP_ROLE_POINT2POINT},
    [FN_IRSEND] = {"MPI_Irsend", SP_ROLE_POINT2POINT},
    [FN_IRECV] = {"MPI_Irecv", SP_ROLE_POINT2POINT},
    [FN_PROBE] = {"MPI_Probe", SP_ROLE_POINT2POINT},
    [FN_IPROBE] = {"MPI_Iprobe", SP_ROLE_POINT2POINT},
    [FN_MPROBE] = {"MPI_Mprobe", SP_ROLE_POINT2POINT},
    [FN_IMPROBE] = {"MPI_Improbe", SP_ROLE_POINT2POINT},
    [FN_MRECV] = {"MPI_Mrecv", SP_ROLE_POINT2POINT},
    [FN_IMRECV] = {"MPI_Imrecv", SP_ROLE_POINT2POINT},
    [FN_WAIT] = {"MPI_Wait", SP_ROLE_POINT2POINT},
    [FN_WAITALL] = {"MPI_Waitall", SP_ROLE_POINT2POINT},
    [FN_WAITANY] = {"MPI_Waitany", SP_ROLE_POINT2POINT},
    [FN_WAITSOME] = {"MPI_Waitsome", SP_ROLE_POINT2POINT},
    [FN_TEST] = {"MPI_Test", SP_ROLE_POINT2POINT},
    [FN_TESTALL] = {"MPI_Testall", SP_ROLE_POINT2POINT},
    [FN_TESTANY] = {"MPI_Testany", SP_ROLE_POINT2POINT},
    [FN_TESTSOME] = {"MPI_Testsome", SP_ROLE_POINT2POINT},
    [FN_CANCEL] = {"MPI_Cancel", SP_ROLE_POINT2POINT},
    [FN_REQUEST_FREE] = {"MPI_Request_free", SP_ROLE_POINT2POINT},
    [FN_BARRIER] = {"MPI_Barrier", SP_ROLE_BARRIER},
    [FN_BCAST] = {"MPI_Bcast", SP_ROLE_COLL_ONE2ALL},
    [FN_REDUCE] = {"MPI_Reduce", SP_ROLE_COLL_ALL2ONE},
    [FN_ALLREDUCE] = {"MPI_Allreduce", SP_ROLE_COLL_ALL2ALL},
    [FN_GATHER] = {"MPI_Gather", SP_ROLE_COLL_ALL2ONE},
    [FN_GATHERV] = {"MPI_Gatherv", SP_ROLE_COLL_ALL2ONE},
    [FN_SCATTER] = {"MPI_Scatter", SP_ROLE_COLL_ONE2ALL},
    [FN_SCATTERV] = {"MPI_Scatterv", SP_ROLE_COLL_ONE2ALL},
    [FN_ALLGATHER] = {"MPI_Allgather", SP_ROLE_COLL_ALL2ALL},
    [FN_ALLGATHERV] = {"MPI_Allgatherv", SP_ROLE_COLL_ALL2ALL},
    [FN_ALLTOALL] = {"MPI_Alltoall", SP_ROLE_COLL_ALL2ALL},
    [FN_ALLTOALLV] = {"MPI_Alltoallv", SP_ROLE_COLL_ALL2ALL},
    [FN_REDUCE_SCATTER] = {"MPI_Reduce_scatter", SP_ROLE_COLL_OTHER},
    [FN_REDUCE_SCATTER_BLOCK] = {"MPI_Reduce_scatter_block", SP_ROLE_COLL_OTHER},
    [FN_SCAN] = {"MPI_Scan", SP_ROLE_COLL_OTHER},
    [FN_EXSCAN] = {"MPI_Exscan", SP_ROLE_COLL_OTHER},
    [FN_COMM_SPLIT] = {"MPI_Comm_split", SP_ROLE_FUNCTION},
    [FN_COMM_DUP] = {"MPI_Comm_dup", SP_ROLE_FUNCTION},
    [FN_COMM_CREATE] = {"MPI_Comm_create", SP_ROLE_FUNCTION},
    [FN_COMM_FREE] = {"MPI_Comm_free", SP_ROLE_FUNCTION},
};

/* generation << 32 | region, per function: defined once per measurement. */
static _Atomic uint64_t region_cache[FN_COUNT];

static uint32_t region_of(int fn)
{
    uint32_t generation = atomic_load(&sp_meas.generation);
    uint64_t cached = atomic_load(&region_cache[fn]);
    if ((uint32_t)(cached >> 32) == generation)
        return (uint32_t)cached;
    uint32_t region = sp_defs_named_region(&sp_meas.defs, functions[fn].name, "", -1,
                                           SP_PARADIGM_MPI, functions[fn].role, SP_REGION_MPI);
    atomic_store(&region_cache[fn], (uint64_t)generation << 32 | region);
    return region;
}

/* The enter of an MPI call; the location is looked up again after the call (the
 * measurement may have ended meanwhile: another thread finalized it). */
static uint64_t mpi_enter(int fn)
{
    uint64_t time = sp_clock_now();
    sp_location *loc = sp_event_section_begin();
    if (!loc)
        return time;
    uint32_t region = region_of(fn);
    if (region != SP_NO_ID)
        sp_enter(loc, region, SP_KEY_NAMED | region, time);
    sp_event_section_end(loc);
    return time;
}

/* Opens the section for the events after the call; NULL: nothing to record. */
static sp_location *mpi_after(void)
{
    return sp_event_section_begin();
}

static void mpi_leave(sp_location *loc, int fn)
{
    uint32_t region = region_of(fn);
    if (region != SP_NO_ID)
        sp_leave(loc, SP_KEY_NAMED | region, sp_clock_now());
    sp_event_section_end(loc);
}

/* ---- communicators -------------------------------------------------------------------- */

static uint32_t define_comm(MPI_Comm comm, uint64_t key, sp_comm_kind kind)
{
    int size = 1;
    PMPI_Comm_size(comm, &size);
    uint32_t *members = calloc((size_t)size, sizeof *members);
    int *ranks = calloc((size_t)size, sizeof *ranks);
    int *world = calloc((size_t)size, sizeof *world);
    uint32_t id = SP_NO_ID;
    if (members && ranks && world) {
        MPI_Group group;
        PMPI_Comm_group(comm, &group);
        for (int i = 0; i < size; i++)
            ranks[i] = i;
        PMPI_Group_translate_ranks(group, size, ranks, world_group, world);
        PMPI_Group_free(&group);
        for (int i = 0; i < size; i++)
            members[i] = (uint32_t)world[i];
        char name[64] = "";
        if (kind == SP_COMM_OTHER)
            snprintf(name, sizeof name, "MPI communicator %u", (unsigned)(key >> 32));
        else
            snprintf(name, sizeof name, kind == SP_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
        id = sp_defs_comm(&sp_meas.defs, key, kind, (uint32_t)size, members, name);
    }
    free(members);
    free(ranks);
    free(world);
    return id;
}

/* The registry holds the ids of the running measurement only. */
static void registry_reset_if_stale(void)
{
    uint32_t generation = atomic_load(&sp_meas.generation);
    if (comm_generation == generation && comm_ids.capacity)
        return;
    if (comm_ids.capacity)
        sp_u64map_free(&comm_ids);
    sp_u64map_init(&comm_ids, 16);
    comm_generation = generation;
}

static void remember_comm(MPI_Comm comm, uint32_t id)
{
    pthread_mutex_lock(&registry_lock);
    registry_reset_if_stale();
    if (id != SP_NO_ID)
        sp_u64map_put(&comm_ids, (uint64_t)(uintptr_t)comm, id);
    pthread_mutex_unlock(&registry_lock);
}

/* A communicator's id; one not seen at its creation (made by a call this adapter does not
 * wrap) is defined now, keyed by its members. */
static uint32_t comm_id(MPI_Comm comm)
{
    pthread_mutex_lock(&registry_lock);
    registry_reset_if_stale();
    uint32_t id = sp_u64map_get(&comm_ids, (uint64_t)(uintptr_t)comm);
    pthread_mutex_unlock(&registry_lock);
    if (id != SP_NO_ID && id != FORGOTTEN)
        return id;
    sp_comm_kind kind = SP_COMM_OTHER;
    uint64_t key;
    int result;
    if (PMPI_Comm_compare(comm, MPI_COMM_WORLD, &result) == MPI_SUCCESS && result == MPI_IDENT) {
        kind = SP_COMM_WORLD;
        key = SP_COMM_KEY_WORLD;
    } else if (PMPI_Comm_compare(comm, MPI_COMM_SELF, &result) == MPI_SUCCESS &&
               result == MPI_IDENT) {
        kind = SP_COMM_SELF;
        key = SP_COMM_KEY_SELF;
    } else {
        int size = 1, first = 0, zero = 0;
        MPI_Group group;
        PMPI_Comm_size(comm, &size);
        PMPI_Comm_group(comm, &group);
        PMPI_Group_translate_ranks(group, 1, &zero, world_group, &first);
        PMPI_Group_free(&group);
        key = (uint64_t)(first + 2) << 32 | 0x80000000u | (uint32_t)size;
    }
    id = define_comm(comm, key, kind);
    remember_comm(comm, id);
    return id;
}

/* After a communicator was created collectively: its first member picks a key unique in
 * the job and tells the others, so all ranks name it alike. */
static void created_comm(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL)
        return;
    /* The broadcast happens whether or not this rank measures right now: every member
     * must take part in it. */
    uint64_t key = 0;
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        pthread_mutex_lock(&registry_lock);
        uint32_t counter = ++comm_counter;
        pthread_mutex_unlock(&registry_lock);
        key = (uint64_t)(world_rank + 2) << 32 | (counter & 0x7fffffffu);
    }
    PMPI_Bcast(&key, 1, MPI_UINT64_T, 0, comm);
    sp_location *loc = sp_event_section_begin();
    if (loc) {
        remember_comm(comm, define_comm(comm, key, SP_COMM_OTHER));
        sp_event_section_end(loc);
    }
}

static uint64_t type_bytes(MPI_Datatype type, int count)
{
    int size = 0;
    if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS)
        return 0;
    return (uint64_t)size * (uint64_t)(count < 0 ? 0 : count);
}

static uint64_t received_bytes(const MPI_Status *status, MPI_Datatype type)
{
    int count = 0;
    if (PMPI_Get_count(status, type, &count) != MPI_SUCCESS || count == MPI_UNDEFINED)
        return 0;
    return type_bytes(type, count);
}

/* ---- requests ------------------------------------------------------------------------- */

static uint64_t remember_request(MPI_Request request, bool receive, uint32_t comm, uint32_t peer,
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
    requests[request_count++] = (request_info){atomic_load(&sp_meas.generation),
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
        info.generation != atomic_load(&sp_meas.generation))
        return;
    uint64_t now = sp_clock_now();
    if (!info.receive) {
        sp_mpi_isend_complete(loc, now, info.id);
        return;
    }
    if (status->MPI_SOURCE == MPI_PROC_NULL)
        return;
    sp_mpi_irecv(loc, now, (uint32_t)status->MPI_SOURCE, info.comm, (uint32_t)status->MPI_TAG,
                 received_bytes(status, info.datatype), info.id);
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

/* ---- the collectives the core needs at the end ---------------------------------------- */

static int wait_for(MPI_Request *request, double timeout)
{
    struct timespec start, now, pause = {0, 1000000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int done = 0;
        if (PMPI_Test(request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -1;
        if (done)
            return 0;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) * 1e-9 > timeout)
            return -1;
        nanosleep(&pause, NULL);
    }
}

/* Two phases, so that no rank writes together with the others unless all of them will:
 * a barrier every rank reaches within the timeout, then a sum that only ranks past that
 * barrier contribute to (a rank that gave up never posts it). A rank that gave up leaves
 * its barrier request behind: harmless, the program ends right after. */
static int op_agree(double timeout)
{
    MPI_Request request;
    if (PMPI_Ibarrier(tool_comm, &request) != MPI_SUCCESS || wait_for(&request, timeout) != 0)
        return -1;
    int one = 1, sum = 0;
    if (PMPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, tool_comm, &request) != MPI_SUCCESS ||
        wait_for(&request, timeout < 10 ? timeout : 10) != 0)
        return -1;
    return sum == world_size ? 0 : -1;
}

static int op_gather(const void *data, uint64_t size, void **all, uint64_t *sizes)
{
    if (size > INT32_MAX)
        return -1;
    uint64_t mine = size;
    if (PMPI_Gather(&mine, 1, MPI_UINT64_T, sizes, 1, MPI_UINT64_T, 0, tool_comm) != MPI_SUCCESS)
        return -1;
    int *counts = NULL, *displs = NULL;
    int status = 0;
    *all = NULL;
    if (world_rank == 0) {
        counts = calloc((size_t)world_size, sizeof *counts);
        displs = calloc((size_t)world_size, sizeof *displs);
        uint64_t total = 0;
        for (int r = 0; counts && displs && r < world_size; r++) {
            counts[r] = (int)sizes[r];
            displs[r] = (int)total;
            total += sizes[r];
        }
        *all = total <= INT32_MAX && counts && displs ? malloc(total ? total : 1) : NULL;
        /* Every rank must still take part in the Gatherv below. */
        status = *all ? 0 : -1;
    }
    if (PMPI_Gatherv(data, (int)size, MPI_BYTE, *all, counts, displs, MPI_BYTE, 0, tool_comm) !=
        MPI_SUCCESS)
        status = -1;
    free(counts);
    free(displs);
    return status;
}

static int op_scatter(void *const *parts, const uint64_t *sizes, void **mine, uint64_t *size)
{
    uint64_t my_size = 0;
    if (PMPI_Scatter((void *)sizes, 1, MPI_UINT64_T, &my_size, 1, MPI_UINT64_T, 0, tool_comm) !=
        MPI_SUCCESS)
        return -1;
    int *counts = NULL, *displs = NULL;
    unsigned char *packed = NULL;
    int status = 0;
    if (world_rank == 0) {
        counts = calloc((size_t)world_size, sizeof *counts);
        displs = calloc((size_t)world_size, sizeof *displs);
        uint64_t total = 0;
        for (int r = 0; r < world_size; r++)
            total += sizes[r];
        packed = counts && displs && total <= INT32_MAX ? malloc(total ? total : 1) : NULL;
        uint64_t offset = 0;
        for (int r = 0; packed && r < world_size; r++) {
            counts[r] = (int)sizes[r];
            displs[r] = (int)offset;
            memcpy(packed + offset, parts[r], sizes[r]);
            offset += sizes[r];
        }
        status = packed ? 0 : -1;
    }
    *mine = malloc(my_size ? my_size : 1);
    if (!*mine)
        status = -1;
    if (PMPI_Scatterv(packed, counts, displs, MPI_BYTE, *mine, (int)my_size, MPI_BYTE, 0,
                      tool_comm) != MPI_SUCCESS)
        status = -1;
    *size = my_size;
    free(counts);
    free(displs);
    free(packed);
    return status;
}

static int op_bcast(void *data, uint64_t size)
{
    if (size > INT32_MAX)
        return -1;
    return PMPI_Bcast(data, (int)size, MPI_BYTE, 0, tool_comm) == MPI_SUCCESS ? 0 : -1;
}

/* Rank 0's clock minus ours: the best of a few ping-pongs (the shortest round trip
 * bounds the error), one rank after the other. */
static int op_clock_offset(int64_t *offset)
{
    enum { ROUNDS = 8, TAG = 4711 };
    *offset = 0;
    for (int r = 1; r < world_size; r++) {
        if (world_rank == 0) {
            for (int k = 0; k < ROUNDS; k++) {
                uint64_t ask, now;
                PMPI_Recv(&ask, 1, MPI_UINT64_T, r, TAG, tool_comm, MPI_STATUS_IGNORE);
                now = sp_clock_monotonic_ns();
                PMPI_Send(&now, 1, MPI_UINT64_T, r, TAG, tool_comm);
            }
        } else if (world_rank == r) {
            uint64_t best_rtt = UINT64_MAX;
            for (int k = 0; k < ROUNDS; k++) {
                uint64_t t1 = sp_clock_monotonic_ns(), t0;
                PMPI_Send(&t1, 1, MPI_UINT64_T, 0, TAG, tool_comm);
                PMPI_Recv(&t0, 1, MPI_UINT64_T, 0, TAG, tool_comm, MPI_STATUS_IGNORE);
                uint64_t t2 = sp_clock_monotonic_ns();
                if (t2 - t1 < best_rtt) {
                    best_rtt = t2 - t1;
                    *offset = (int64_t)t0 - (int64_t)(t1 + (t2 - t1) / 2);
                }
            }
        }
    }
    return 0;
}

/* OTF2's collective callbacks, on our communicator. */
static MPI_Datatype mpi_type(OTF2_Type type)
{
    switch (type) {
    case OTF2_TYPE_UINT8: return MPI_UINT8_T;
    case OTF2_TYPE_INT8: return MPI_INT8_T;
    case OTF2_TYPE_UINT16: return MPI_UINT16_T;
    case OTF2_TYPE_INT16: return MPI_INT16_T;
    case OTF2_TYPE_UINT32: return MPI_UINT32_T;
    case OTF2_TYPE_INT32: return MPI_INT32_T;
    case OTF2_TYPE_UINT64: return MPI_UINT64_T;
    case OTF2_TYPE_INT64: return MPI_INT64_T;
    case OTF2_TYPE_FLOAT: return MPI_FLOAT;
    case OTF2_TYPE_DOUBLE: return MPI_DOUBLE;
    default: return MPI_BYTE;
    }
}

static OTF2_CallbackCode result(int status)
{
    return status == MPI_SUCCESS ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_ERROR;
}

static OTF2_CallbackCode otf2_get_size(void *user, OTF2_CollectiveContext *ctx, uint32_t *size)
{
    (void)user, (void)ctx;
    *size = (uint32_t)world_size;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode otf2_get_rank(void *user, OTF2_CollectiveContext *ctx, uint32_t *rank)
{
    (void)user, (void)ctx;
    *rank = (uint32_t)world_rank;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode otf2_create_local_comm(void *user, OTF2_CollectiveContext **local,
                                                OTF2_CollectiveContext *global, uint32_t grank,
                                                uint32_t gsize, uint32_t lrank, uint32_t lsize,
                                                uint32_t file, uint32_t files)
{
    (void)user, (void)global, (void)grank, (void)gsize, (void)lrank, (void)lsize, (void)file,
        (void)files;
    /* Only SION archives use local communicators; POSIX ones never ask. */
    *local = NULL;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode otf2_free_local_comm(void *user, OTF2_CollectiveContext *local)
{
    (void)user, (void)local;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode otf2_barrier(void *user, OTF2_CollectiveContext *ctx)
{
    (void)user, (void)ctx;
    return result(PMPI_Barrier(tool_comm));
}

static OTF2_CallbackCode otf2_bcast(void *user, OTF2_CollectiveContext *ctx, void *data,
                                    uint32_t n, OTF2_Type type, uint32_t root)
{
    (void)user, (void)ctx;
    return result(PMPI_Bcast(data, (int)n, mpi_type(type), (int)root, tool_comm));
}

static OTF2_CallbackCode otf2_gather(void *user, OTF2_CollectiveContext *ctx, const void *in,
                                     void *out, uint32_t n, OTF2_Type type, uint32_t root)
{
    (void)user, (void)ctx;
    return result(PMPI_Gather(in, (int)n, mpi_type(type), out, (int)n, mpi_type(type), (int)root,
                              tool_comm));
}

static OTF2_CallbackCode otf2_gatherv(void *user, OTF2_CollectiveContext *ctx, const void *in,
                                      uint32_t in_n, void *out, const uint32_t *out_n,
                                      OTF2_Type type, uint32_t root)
{
    (void)user, (void)ctx;
    int *counts = NULL, *displs = NULL;
    if (world_rank == (int)root) {
        counts = calloc((size_t)world_size, sizeof *counts);
        displs = calloc((size_t)world_size, sizeof *displs);
        if (!counts || !displs) {
            free(counts);
            free(displs);
            return OTF2_CALLBACK_ERROR;
        }
        for (int r = 0, d = 0; r < world_size; d += (int)out_n[r], r++) {
            counts[r] = (int)out_n[r];
            displs[r] = d;
        }
    }
    int s = PMPI_Gatherv(in, (int)in_n, mpi_type(type), out, counts, displs, mpi_type(type),
                         (int)root, tool_comm);
    free(counts);
    free(displs);
    return result(s);
}

static OTF2_CallbackCode otf2_scatter(void *user, OTF2_CollectiveContext *ctx, const void *in,
                                      void *out, uint32_t n, OTF2_Type type, uint32_t root)
{
    (void)user, (void)ctx;
    return result(PMPI_Scatter(in, (int)n, mpi_type(type), out, (int)n, mpi_type(type),
                               (int)root, tool_comm));
}

static OTF2_CallbackCode otf2_scatterv(void *user, OTF2_CollectiveContext *ctx, const void *in,
                                       const uint32_t *in_n, void *out, uint32_t out_n,
                                       OTF2_Type type, uint32_t root)
{
    (void)user, (void)ctx;
    int *counts = NULL, *displs = NULL;
    if (world_rank == (int)root) {
        counts = calloc((size_t)world_size, sizeof *counts);
        displs = calloc((size_t)world_size, sizeof *displs);
        if (!counts || !displs) {
            free(counts);
            free(displs);
            return OTF2_CALLBACK_ERROR;
        }
        for (int r = 0, d = 0; r < world_size; d += (int)in_n[r], r++) {
            counts[r] = (int)in_n[r];
            displs[r] = d;
        }
    }
    int s = PMPI_Scatterv(in, counts, displs, mpi_type(type), out, (int)out_n, mpi_type(type),
                          (int)root, tool_comm);
    free(counts);
    free(displs);
    return result(s);
}

static void otf2_release(void *user, OTF2_CollectiveContext *global, OTF2_CollectiveContext *local)
{
    (void)user, (void)global, (void)local;
}

static const OTF2_CollectiveCallbacks otf2_collectives = {
    .otf2_release = otf2_release,
    .otf2_get_size = otf2_get_size,
    .otf2_get_rank = otf2_get_rank,
    .otf2_create_local_comm = otf2_create_local_comm,
    .otf2_free_local_comm = otf2_free_local_comm,
    .otf2_barrier = otf2_barrier,
    .otf2_bcast = otf2_bcast,
    .otf2_gather = otf2_gather,
    .otf2_gatherv = otf2_gatherv,
    .otf2_scatter = otf2_scatter,
    .otf2_scatterv = otf2_scatterv,
};

static const sp_mpi_ops ops = {
    .agree = op_agree,
    .gather = op_gather,
    .scatter = op_scatter,
    .bcast = op_bcast,
    .clock_offset = op_clock_offset,
    .otf2_collectives = &otf2_collectives,
    .otf2_data = NULL,
};

/* ---- initialization and finalization -------------------------------------------------- */

static void initialized(int requested, int provided)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    PMPI_Comm_dup(MPI_COMM_WORLD, &tool_comm);
    char err[8192] = "";
    if (sp_mpi_initialized((uint32_t)world_rank, (uint32_t)world_size, &ops, requested, provided,
                           err, sizeof err) != 0 &&
        world_rank == 0) {
        fprintf(stderr, "scorep: %s\n", err);
        fflush(stderr);
    }
    sp_location *loc = sp_event_section_begin();
    if (loc) {
        remember_comm(MPI_COMM_WORLD,
                      define_comm(MPI_COMM_WORLD, SP_COMM_KEY_WORLD, SP_COMM_WORLD));
        remember_comm(MPI_COMM_SELF, define_comm(MPI_COMM_SELF, SP_COMM_KEY_SELF, SP_COMM_SELF));
        sp_event_section_end(loc);
    }
}

EXPORT int MPI_Init(int *argc, char ***argv)
{
    mpi_enter(FN_INIT);
    int status = PMPI_Init(argc, argv);
    if (status == MPI_SUCCESS)
        initialized(-1, -1);
    sp_location *loc = mpi_after();
    if (loc)
        mpi_leave(loc, FN_INIT);
    return status;
}

EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    mpi_enter(FN_INIT_THREAD);
    int status = PMPI_Init_thread(argc, argv, required, provided);
    if (status == MPI_SUCCESS)
        initialized(required, *provided);
    sp_location *loc = mpi_after();
    if (loc)
        mpi_leave(loc, FN_INIT_THREAD);
    return status;
}

EXPORT int MPI_Finalize(void)
{
    mpi_enter(FN_FINALIZE);
    /* Everything is written while MPI still works; MPI_Finalize's own region is closed
     * at the end of the measurement. */
    sp_mpi_finalizing();
    if (tool_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&tool_comm);
    if (world_group != MPI_GROUP_NULL)
        PMPI_Group_free(&world_group);
    return PMPI_Finalize();
}

EXPORT int MPI_Abort(MPI_Comm comm, int errorcode)
{
    /* The job ends inside PMPI_Abort: what this rank recorded is written first. */
    sp_mpi_aborting(errorcode);
    return PMPI_Abort(comm, errorcode);
}

/* ---- point to point ------------------------------------------------------------------- */

#define SEND_WRAPPER(NAME, FN)                                                                  \
    EXPORT int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,          \
                    MPI_Comm comm)                                                              \
    {                                                                                           \
        /* The send is dated at the call's start, as Score-P does: a receive can complete */   \
        /* before the send call returns. */                                                    \
        uint64_t start = mpi_enter(FN);                                                         \
        int status = P##NAME(buf, count, type, dest, tag, comm);                                \
        sp_location *loc = mpi_after();                                                         \
        if (loc) {                                                                              \
            if (status == MPI_SUCCESS && dest != MPI_PROC_NULL)                                 \
                sp_mpi_send(loc, start, (uint32_t)dest, comm_id(comm), (uint32_t)tag,           \
                            type_bytes(type, count));                                           \
            mpi_leave(loc, FN);                                                                 \
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
        sp_mpi_recv(loc, sp_clock_now(), (uint32_t)st->MPI_SOURCE, comm_id(comm),
                    (uint32_t)st->MPI_TAG, received_bytes(st, type));
}

EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                    MPI_Status *status)
{
    mpi_enter(FN_RECV);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Recv(buf, count, type, source, tag, comm, st);
    sp_location *loc = mpi_after();
    if (loc) {
        record_receive(loc, s, st, type, comm);
        mpi_leave(loc, FN_RECV);
    }
    return s;
}

EXPORT int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                        void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
                        MPI_Comm comm, MPI_Status *status)
{
    uint64_t start = mpi_enter(FN_SENDRECV);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
                          st);
    sp_location *loc = mpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && dest != MPI_PROC_NULL)
            sp_mpi_send(loc, start, (uint32_t)dest, comm_id(comm), (uint32_t)stag,
                        type_bytes(stype, scount));
        record_receive(loc, s, st, rtype, comm);
        mpi_leave(loc, FN_SENDRECV);
    }
    return s;
}

EXPORT int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag,
                                int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    uint64_t start = mpi_enter(FN_SENDRECV_REPLACE);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Sendrecv_replace(buf, count, type, dest, stag, source, rtag, comm, st);
    sp_location *loc = mpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && dest != MPI_PROC_NULL)
            sp_mpi_send(loc, start, (uint32_t)dest, comm_id(comm), (uint32_t)stag,
                        type_bytes(type, count));
        record_receive(loc, s, st, type, comm);
        mpi_leave(loc, FN_SENDRECV_REPLACE);
    }
    return s;
}

#define ISEND_WRAPPER(NAME, FN)                                                                 \
    EXPORT int NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,          \
                    MPI_Comm comm, MPI_Request *request)                                        \
    {                                                                                           \
        uint64_t start = mpi_enter(FN);                                                         \
        int status = P##NAME(buf, count, type, dest, tag, comm, request);                       \
        sp_location *loc = mpi_after();                                                         \
        if (loc) {                                                                              \
            if (status == MPI_SUCCESS && dest != MPI_PROC_NULL) {                               \
                uint32_t cid = comm_id(comm);                                                   \
                uint64_t bytes = type_bytes(type, count);                                       \
                uint64_t id = remember_request(*request, false, cid, (uint32_t)dest,            \
                                               (uint32_t)tag, bytes, type);                     \
                sp_mpi_isend(loc, start, (uint32_t)dest, cid, (uint32_t)tag, bytes, id);        \
            }                                                                                   \
            mpi_leave(loc, FN);                                                                 \
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
    mpi_enter(FN_IRECV);
    int s = PMPI_Irecv(buf, count, type, source, tag, comm, request);
    sp_location *loc = mpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && source != MPI_PROC_NULL) {
            uint32_t cid = comm_id(comm);
            uint64_t id = remember_request(*request, true, cid, (uint32_t)source, (uint32_t)tag, 0,
                                           type);
            sp_mpi_irecv_request(loc, sp_clock_now(), id);
        }
        mpi_leave(loc, FN_IRECV);
    }
    return s;
}

EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    mpi_enter(FN_PROBE);
    int s = PMPI_Probe(source, tag, comm, status);
    sp_location *loc = mpi_after();
    if (loc)
        mpi_leave(loc, FN_PROBE);
    return s;
}

EXPORT int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    mpi_enter(FN_IPROBE);
    int s = PMPI_Iprobe(source, tag, comm, flag, status);
    sp_location *loc = mpi_after();
    if (loc)
        mpi_leave(loc, FN_IPROBE);
    return s;
}

/* Matched probes (mpi4py receives pickled objects this way): the communicator of a
 * message is remembered until it is received. */
typedef struct {
    uint64_t message;
    uint32_t comm;
} message_comm;

static message_comm messages[64];

static void remember_message(MPI_Message message, uint32_t comm)
{
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < sizeof messages / sizeof messages[0]; i++) {
        if (messages[i].message == 0) {
            messages[i] = (message_comm){(uint64_t)(uintptr_t)message, comm};
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
}

static uint32_t message_comm_of(uint64_t message)
{
    uint32_t comm = SP_NO_ID;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < sizeof messages / sizeof messages[0]; i++) {
        if (messages[i].message == message) {
            comm = messages[i].comm;
            messages[i].message = 0;
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return comm;
}

EXPORT int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    mpi_enter(FN_MPROBE);
    int s = PMPI_Mprobe(source, tag, comm, message, status);
    sp_location *loc = mpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && *message != MPI_MESSAGE_NO_PROC)
            remember_message(*message, comm_id(comm));
        mpi_leave(loc, FN_MPROBE);
    }
    return s;
}

EXPORT int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                       MPI_Status *status)
{
    mpi_enter(FN_IMPROBE);
    int s = PMPI_Improbe(source, tag, comm, flag, message, status);
    sp_location *loc = mpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && *flag && *message != MPI_MESSAGE_NO_PROC)
            remember_message(*message, comm_id(comm));
        mpi_leave(loc, FN_IMPROBE);
    }
    return s;
}

EXPORT int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                     MPI_Status *status)
{
    mpi_enter(FN_MRECV);
    uint64_t handle = (uint64_t)(uintptr_t)*message;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Mrecv(buf, count, type, message, st);
    sp_location *loc = mpi_after();
    if (loc) {
        uint32_t comm = message_comm_of(handle);
        if (s == MPI_SUCCESS && comm != SP_NO_ID && st->MPI_SOURCE != MPI_PROC_NULL)
            sp_mpi_recv(loc, sp_clock_now(), (uint32_t)st->MPI_SOURCE, comm, (uint32_t)st->MPI_TAG,
                        received_bytes(st, type));
        mpi_leave(loc, FN_MRECV);
    }
    return s;
}

EXPORT int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                      MPI_Request *request)
{
    mpi_enter(FN_IMRECV);
    uint64_t handle = (uint64_t)(uintptr_t)*message;
    int s = PMPI_Imrecv(buf, count, type, message, request);
    sp_location *loc = mpi_after();
    if (loc) {
        uint32_t comm = message_comm_of(handle);
        if (s == MPI_SUCCESS && comm != SP_NO_ID) {
            uint64_t id = remember_request(*request, true, comm, 0, 0, 0, type);
            sp_mpi_irecv_request(loc, sp_clock_now(), id);
        }
        mpi_leave(loc, FN_IMRECV);
    }
    return s;
}

/* ---- completion ----------------------------------------------------------------------- */

EXPORT int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    mpi_enter(FN_WAIT);
    uint64_t handle = (uint64_t)(uintptr_t)*request;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Wait(request, st);
    sp_location *loc = mpi_after();
    if (loc) {
        if (s == MPI_SUCCESS)
            completed(loc, handle, st);
        mpi_leave(loc, FN_WAIT);
    }
    return s;
}

EXPORT int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    mpi_enter(FN_TEST);
    uint64_t handle = (uint64_t)(uintptr_t)*request;
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Test(request, flag, st);
    sp_location *loc = mpi_after();
    if (loc) {
        request_info info;
        if (s == MPI_SUCCESS && *flag)
            completed(loc, handle, st);
        else if (s == MPI_SUCCESS && peek_request(handle, &info))
            sp_mpi_request_test(loc, sp_clock_now(), info.id);
        mpi_leave(loc, FN_TEST);
    }
    return s;
}

EXPORT int MPI_Waitall(int n, MPI_Request requests_[], MPI_Status statuses[])
{
    mpi_enter(FN_WAITALL);
    saved_requests saved;
    save_requests(&saved, n, requests_, statuses);
    int s = PMPI_Waitall(n, requests_, saved.statuses ? saved.statuses : statuses);
    sp_location *loc = mpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && saved.handles && saved.statuses)
            for (int i = 0; i < n; i++)
                completed(loc, saved.handles[i], &saved.statuses[i]);
        mpi_leave(loc, FN_WAITALL);
    }
    release_requests(&saved, statuses);
    return s;
}

EXPORT int MPI_Testall(int n, MPI_Request requests_[], int *flag, MPI_Status statuses[])
{
    mpi_enter(FN_TESTALL);
    saved_requests saved;
    save_requests(&saved, n, requests_, statuses);
    int s = PMPI_Testall(n, requests_, flag, saved.statuses ? saved.statuses : statuses);
    sp_location *loc = mpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && *flag && saved.handles && saved.statuses)
            for (int i = 0; i < n; i++)
                completed(loc, saved.handles[i], &saved.statuses[i]);
        mpi_leave(loc, FN_TESTALL);
    }
    release_requests(&saved, statuses);
    return s;
}

EXPORT int MPI_Waitany(int n, MPI_Request requests_[], int *index, MPI_Status *status)
{
    mpi_enter(FN_WAITANY);
    saved_requests saved;
    save_requests(&saved, n, requests_, MPI_STATUSES_IGNORE);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Waitany(n, requests_, index, st);
    sp_location *loc = mpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && *index != MPI_UNDEFINED && saved.handles)
            completed(loc, saved.handles[*index], st);
        mpi_leave(loc, FN_WAITANY);
    }
    release_requests(&saved, MPI_STATUSES_IGNORE);
    return s;
}

EXPORT int MPI_Testany(int n, MPI_Request requests_[], int *index, int *flag, MPI_Status *status)
{
    mpi_enter(FN_TESTANY);
    saved_requests saved;
    save_requests(&saved, n, requests_, MPI_STATUSES_IGNORE);
    MPI_Status own;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &own : status;
    int s = PMPI_Testany(n, requests_, index, flag, st);
    sp_location *loc = mpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED && saved.handles)
            completed(loc, saved.handles[*index], st);
        mpi_leave(loc, FN_TESTANY);
    }
    release_requests(&saved, MPI_STATUSES_IGNORE);
    return s;
}

static int some(int fn, int n, MPI_Request requests_[], int *outcount, int indices[],
                MPI_Status statuses[], bool wait)
{
    mpi_enter(fn);
    saved_requests saved;
    save_requests(&saved, n, requests_, statuses);
    MPI_Status *st = saved.statuses ? saved.statuses : statuses;
    int s = wait ? PMPI_Waitsome(n, requests_, outcount, indices, st)
                 : PMPI_Testsome(n, requests_, outcount, indices, st);
    sp_location *loc = mpi_after();
    if (loc) {
        if (s == MPI_SUCCESS && *outcount != MPI_UNDEFINED && saved.handles && saved.statuses)
            for (int i = 0; i < *outcount; i++)
                completed(loc, saved.handles[indices[i]], &saved.statuses[i]);
        mpi_leave(loc, fn);
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
    mpi_enter(FN_CANCEL);
    int s = PMPI_Cancel(request);
    sp_location *loc = mpi_after();
    if (loc)
        mpi_leave(loc, FN_CANCEL);
    return s;
}

EXPORT int MPI_Request_free(MPI_Request *request)
{
    mpi_enter(FN_REQUEST_FREE);
    uint64_t handle = (uint64_t)(uintptr_t)*request;
    int s = PMPI_Request_free(request);
    request_info info;
    take_request(handle, &info); /* it will never complete visibly */
    sp_location *loc = mpi_after();
    if (loc)
        mpi_leave(loc, FN_REQUEST_FREE);
    return s;
}

/* ---- collectives ------------------------------------------------------------------------ */

static int comm_size_of(MPI_Comm comm)
{
    int size = 1;
    PMPI_Comm_size(comm, &size);
    return size;
}

static int comm_rank_of(MPI_Comm comm)
{
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    return rank;
}

static void collective_enter(int fn)
{
    mpi_enter(fn);
    sp_location *loc = sp_event_section_begin();
    if (loc) {
        sp_mpi_collective_begin(loc, sp_clock_now());
        sp_event_section_end(loc);
    }
}

static int collective_leave(int fn, int status, OTF2_CollectiveOp op, MPI_Comm comm, int root,
                            uint64_t sent, uint64_t received)
{
    sp_location *loc = mpi_after();
    if (loc) {
        if (status == MPI_SUCCESS)
            sp_mpi_collective_end(loc, sp_clock_now(), op, comm_id(comm),
                                  root < 0 ? OTF2_UNDEFINED_UINT32 : (uint32_t)root, sent,
                                  received);
        mpi_leave(loc, fn);
    }
    return status;
}

static uint64_t sum_counts(MPI_Datatype type, const int *counts, int n)
{
    uint64_t total = 0;
    for (int i = 0; counts && i < n; i++)
        total += type_bytes(type, counts[i]);
    return total;
}

EXPORT int MPI_Barrier(MPI_Comm comm)
{
    collective_enter(FN_BARRIER);
    int s = PMPI_Barrier(comm);
    return collective_leave(FN_BARRIER, s, OTF2_COLLECTIVE_OP_BARRIER, comm, -1, 0, 0);
}

EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    collective_enter(FN_BCAST);
    int s = PMPI_Bcast(buf, count, type, root, comm);
    uint64_t bytes = type_bytes(type, count);
    bool is_root = comm_rank_of(comm) == root;
    return collective_leave(FN_BCAST, s, OTF2_COLLECTIVE_OP_BCAST, comm, root,
                            is_root ? bytes * (uint64_t)(comm_size_of(comm) - 1) : 0,
                            is_root ? 0 : bytes);
}

EXPORT int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                      int root, MPI_Comm comm)
{
    collective_enter(FN_REDUCE);
    int s = PMPI_Reduce(sbuf, rbuf, count, type, op, root, comm);
    uint64_t bytes = type_bytes(type, count);
    bool is_root = comm_rank_of(comm) == root;
    return collective_leave(FN_REDUCE, s, OTF2_COLLECTIVE_OP_REDUCE, comm, root,
                            is_root ? 0 : bytes,
                            is_root ? bytes * (uint64_t)(comm_size_of(comm) - 1) : 0);
}

EXPORT int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm)
{
    collective_enter(FN_ALLREDUCE);
    int s = PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
    uint64_t bytes = type_bytes(type, count);
    return collective_leave(FN_ALLREDUCE, s, OTF2_COLLECTIVE_OP_ALLREDUCE, comm, -1, bytes, bytes);
}

EXPORT int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                      MPI_Datatype rtype, int root, MPI_Comm comm)
{
    collective_enter(FN_GATHER);
    int s = PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    bool is_root = comm_rank_of(comm) == root;
    uint64_t sent = sbuf == MPI_IN_PLACE ? type_bytes(rtype, rcount) : type_bytes(stype, scount);
    return collective_leave(FN_GATHER, s, OTF2_COLLECTIVE_OP_GATHER, comm, root, sent,
                            is_root ? type_bytes(rtype, rcount) * (uint64_t)comm_size_of(comm) : 0);
}

EXPORT int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                       MPI_Comm comm)
{
    collective_enter(FN_GATHERV);
    int s = PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
    bool is_root = comm_rank_of(comm) == root;
    uint64_t sent = sbuf == MPI_IN_PLACE ? 0 : type_bytes(stype, scount);
    return collective_leave(FN_GATHERV, s, OTF2_COLLECTIVE_OP_GATHERV, comm, root, sent,
                            is_root ? sum_counts(rtype, rcounts, comm_size_of(comm)) : 0);
}

EXPORT int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                       MPI_Datatype rtype, int root, MPI_Comm comm)
{
    collective_enter(FN_SCATTER);
    int s = PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
    bool is_root = comm_rank_of(comm) == root;
    return collective_leave(FN_SCATTER, s, OTF2_COLLECTIVE_OP_SCATTER, comm, root,
                            is_root ? type_bytes(stype, scount) * (uint64_t)comm_size_of(comm) : 0,
                            rbuf == MPI_IN_PLACE ? 0 : type_bytes(rtype, rcount));
}

EXPORT int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[],
                        MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                        MPI_Comm comm)
{
    collective_enter(FN_SCATTERV);
    int s = PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
    bool is_root = comm_rank_of(comm) == root;
    return collective_leave(FN_SCATTERV, s, OTF2_COLLECTIVE_OP_SCATTERV, comm, root,
                            is_root ? sum_counts(stype, scounts, comm_size_of(comm)) : 0,
                            rbuf == MPI_IN_PLACE ? 0 : type_bytes(rtype, rcount));
}

EXPORT int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                         MPI_Datatype rtype, MPI_Comm comm)
{
    collective_enter(FN_ALLGATHER);
    int s = PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    uint64_t sent = sbuf == MPI_IN_PLACE ? type_bytes(rtype, rcount) : type_bytes(stype, scount);
    return collective_leave(FN_ALLGATHER, s, OTF2_COLLECTIVE_OP_ALLGATHER, comm, -1, sent,
                            type_bytes(rtype, rcount) * (uint64_t)comm_size_of(comm));
}

EXPORT int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          const int rcounts[], const int displs[], MPI_Datatype rtype,
                          MPI_Comm comm)
{
    collective_enter(FN_ALLGATHERV);
    int s = PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
    uint64_t sent = sbuf == MPI_IN_PLACE ? 0 : type_bytes(stype, scount);
    return collective_leave(FN_ALLGATHERV, s, OTF2_COLLECTIVE_OP_ALLGATHERV, comm, -1, sent,
                            sum_counts(rtype, rcounts, comm_size_of(comm)));
}

EXPORT int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                        MPI_Datatype rtype, MPI_Comm comm)
{
    collective_enter(FN_ALLTOALL);
    int s = PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
    uint64_t n = (uint64_t)comm_size_of(comm);
    uint64_t sent = sbuf == MPI_IN_PLACE ? type_bytes(rtype, rcount) : type_bytes(stype, scount);
    return collective_leave(FN_ALLTOALL, s, OTF2_COLLECTIVE_OP_ALLTOALL, comm, -1, sent * n,
                            type_bytes(rtype, rcount) * n);
}

EXPORT int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
                         MPI_Datatype stype, void *rbuf, const int rcounts[], const int rdispls[],
                         MPI_Datatype rtype, MPI_Comm comm)
{
    collective_enter(FN_ALLTOALLV);
    int s = PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
    int n = comm_size_of(comm);
    return collective_leave(FN_ALLTOALLV, s, OTF2_COLLECTIVE_OP_ALLTOALLV, comm, -1,
                            sbuf == MPI_IN_PLACE ? sum_counts(rtype, rcounts, n)
                                                 : sum_counts(stype, scounts, n),
                            sum_counts(rtype, rcounts, n));
}

EXPORT int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm)
{
    collective_enter(FN_REDUCE_SCATTER);
    int s = PMPI_Reduce_scatter(sbuf, rbuf, rcounts, type, op, comm);
    return collective_leave(FN_REDUCE_SCATTER, s, OTF2_COLLECTIVE_OP_REDUCE_SCATTER, comm, -1,
                            sum_counts(type, rcounts, comm_size_of(comm)),
                            type_bytes(type, rcounts[comm_rank_of(comm)]));
}

EXPORT int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype type,
                                    MPI_Op op, MPI_Comm comm)
{
    collective_enter(FN_REDUCE_SCATTER_BLOCK);
    int s = PMPI_Reduce_scatter_block(sbuf, rbuf, rcount, type, op, comm);
    uint64_t bytes = type_bytes(type, rcount);
    return collective_leave(FN_REDUCE_SCATTER_BLOCK, s, OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK,
                            comm, -1, bytes * (uint64_t)comm_size_of(comm), bytes);
}

EXPORT int MPI_Scan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                    MPI_Comm comm)
{
    collective_enter(FN_SCAN);
    int s = PMPI_Scan(sbuf, rbuf, count, type, op, comm);
    uint64_t bytes = type_bytes(type, count);
    return collective_leave(FN_SCAN, s, OTF2_COLLECTIVE_OP_SCAN, comm, -1, bytes, bytes);
}

EXPORT int MPI_Exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm)
{
    collective_enter(FN_EXSCAN);
    int s = PMPI_Exscan(sbuf, rbuf, count, type, op, comm);
    uint64_t bytes = type_bytes(type, count);
    return collective_leave(FN_EXSCAN, s, OTF2_COLLECTIVE_OP_EXSCAN, comm, -1, bytes, bytes);
}

/* ---- communicators ------------------------------------------------------------------- */

EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    mpi_enter(FN_COMM_SPLIT);
    int s = PMPI_Comm_split(comm, color, key, newcomm);
    if (s == MPI_SUCCESS)
        created_comm(*newcomm);
    sp_location *loc = mpi_after();
    if (loc)
        mpi_leave(loc, FN_COMM_SPLIT);
    return s;
}

EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    mpi_enter(FN_COMM_DUP);
    int s = PMPI_Comm_dup(comm, newcomm);
    if (s == MPI_SUCCESS)
        created_comm(*newcomm);
    sp_location *loc = mpi_after();
    if (loc)
        mpi_leave(loc, FN_COMM_DUP);
    return s;
}

EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    mpi_enter(FN_COMM_CREATE);
    int s = PMPI_Comm_create(comm, group, newcomm);
    if (s == MPI_SUCCESS)
        created_comm(*newcomm);
    sp_location *loc = mpi_after();
    if (loc)
        mpi_leave(loc, FN_COMM_CREATE);
    return s;
}

EXPORT int MPI_Comm_free(MPI_Comm *comm)
{
    mpi_enter(FN_COMM_FREE);
    uint64_t handle = (uint64_t)(uintptr_t)*comm;
    int s = PMPI_Comm_free(comm);
    /* The handle may be reused for a new communicator: forget it. */
    pthread_mutex_lock(&registry_lock);
    if (comm_ids.capacity)
        sp_u64map_put(&comm_ids, handle, FORGOTTEN);
    pthread_mutex_unlock(&registry_lock);
    sp_location *loc = mpi_after();
    if (loc)
        mpi_leave(loc, FN_COMM_FREE);
    return s;
}
