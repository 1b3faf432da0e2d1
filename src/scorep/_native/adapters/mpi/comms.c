/* Communicators: every communicator the program uses gets a definition that all its
 * members agree on (key, members as processes of the job, parent, name), and the calls
 * that create and free them are recorded as Score-P records them: a collective with
 * CREATE_HANDLE / DESTROY_HANDLE and CommCreate / CommDestroy events.
 *
 * A created communicator's members tell each other who they are (an Allgather of their
 * process ids over the new communicator: for an inter-communicator that yields the remote
 * group, which may live in another world started with MPI_Comm_spawn). Its key is derived
 * from the members and how many communicators with exactly these members were created
 * before: every member computes the same key without further messages, because MPI makes
 * communicator creation collective and ordered on all members. */
#include "adapters/mpi/mpi_adapter.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tables.h"

/* A freed communicator's handle may come back for a new one; the map cannot delete. */
#define FORGOTTEN (SP_NO_ID - 1)
/* Keys: created communicators have the top bit, those defined when first seen (content
 * only) the next one, MPI groups the next; MPI_COMM_WORLD of world 0 is 0, MPI_COMM_SELF 1. */
#define KEY_CREATED (1ULL << 63)
#define KEY_SEEN (1ULL << 62)
#define KEY_GROUP (1ULL << 61)
#define KEY_BITS (KEY_GROUP - 1)
/* A process this one cannot name (not in its world, not told). */
#define UNKNOWN_PROCESS SP_PROCESS(UINT32_MAX, UINT32_MAX)

/* The registry of communicator ids. Global because PMPI wrappers carry no context; taken
 * only when a communicator is first used, created or freed. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static sp_u64map comm_ids;       /* MPI_Comm handle -> index into `entries` (or FORGOTTEN) */
static struct entry {
    uint32_t id;
    uint64_t key;
    bool created; /* its creation was recorded: its destruction is too */
    uint32_t files_opened; /* MPI_File_open on it: the unify keys of its files */
} *entries;
static uint32_t entry_count, entry_capacity;
static uint32_t comm_generation; /* the measurement those ids belong to */
/* Creations per member list (hash -> count), the same on every member; kept across
 * measurements (the members count creations whether or not they measure). */
static sp_u64map creations;

static uint64_t hash_processes(uint64_t h, const uint64_t *ids, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        h = sp_hash_mix(h ^ ids[i]) + 0x9e3779b97f4a7c15ULL;
    return h;
}

uint32_t spmpi_count_occurrence(sp_u64map *counts, uint64_t key)
{
    if (!counts->capacity)
        sp_u64map_init(counts, 16);
    uint32_t before = sp_u64map_get(counts, key);
    before = before == SP_NO_ID ? 0 : before + 1;
    sp_u64map_put(counts, key, before);
    return before;
}

/* The registry holds the ids of the running measurement only. Called with the lock. */
static void registry_reset_if_stale(void)
{
    uint32_t generation = sp_measurement_generation();
    if (comm_generation == generation && comm_ids.capacity)
        return;
    if (comm_ids.capacity)
        sp_u64map_free(&comm_ids);
    sp_u64map_init(&comm_ids, 16);
    entry_count = 0;
    comm_generation = generation;
}

static void remember(MPI_Comm comm, uint32_t id, uint64_t key, bool created)
{
    if (id == SP_NO_ID)
        return;
    pthread_mutex_lock(&registry_lock);
    registry_reset_if_stale();
    if (entry_count == entry_capacity) {
        uint32_t cap = entry_capacity ? entry_capacity * 2 : 32;
        struct entry *bigger = realloc(entries, cap * sizeof *bigger);
        if (!bigger) {
            pthread_mutex_unlock(&registry_lock);
            return;
        }
        entries = bigger;
        entry_capacity = cap;
    }
    entries[entry_count] = (struct entry){id, key, created, 0};
    if (sp_u64map_put(&comm_ids, (uint64_t)(uintptr_t)comm, entry_count) == 0)
        entry_count++;
    pthread_mutex_unlock(&registry_lock);
}

static bool lookup(MPI_Comm comm, struct entry *out)
{
    pthread_mutex_lock(&registry_lock);
    registry_reset_if_stale();
    uint32_t index = sp_u64map_get(&comm_ids, (uint64_t)(uintptr_t)comm);
    bool found = index != SP_NO_ID && index != FORGOTTEN;
    if (found)
        *out = entries[index];
    pthread_mutex_unlock(&registry_lock);
    return found;
}

static void forget(MPI_Comm comm)
{
    pthread_mutex_lock(&registry_lock);
    if (comm_ids.capacity && sp_u64map_get(&comm_ids, (uint64_t)(uintptr_t)comm) != SP_NO_ID)
        sp_u64map_put(&comm_ids, (uint64_t)(uintptr_t)comm, FORGOTTEN);
    pthread_mutex_unlock(&registry_lock);
}

/* Defines a communicator under an event section (nothing when not measuring). */
static uint32_t define(const sp_comm_spec *spec)
{
    sp_location *loc = sp_event_section_begin();
    if (!loc)
        return SP_NO_ID;
    uint32_t id = sp_comm_define(spec);
    sp_event_section_end(loc);
    return id;
}

/* The processes of `group` as far as this process can name them (its own world). */
static uint64_t *group_processes(MPI_Group group, uint32_t *count)
{
    int size = 0;
    PMPI_Group_size(group, &size);
    uint64_t *ids = calloc((size_t)size + 1, sizeof *ids);
    int *ranks = calloc((size_t)size + 1, sizeof *ranks);
    int *world = calloc((size_t)size + 1, sizeof *world);
    if (ids && ranks && world) {
        for (int i = 0; i < size; i++)
            ranks[i] = i;
        PMPI_Group_translate_ranks(group, size, ranks, spmpi_world_group, world);
        for (int i = 0; i < size; i++)
            ids[i] = world[i] == MPI_UNDEFINED ? UNKNOWN_PROCESS
                                               : SP_PROCESS(spmpi_world, world[i]);
    } else {
        free(ids);
        ids = NULL;
    }
    free(ranks);
    free(world);
    *count = ids ? (uint32_t)size : 0;
    return ids;
}

bool spmpi_is_intercomm(MPI_Comm comm)
{
    int inter = 0;
    return comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter;
}

static int comm_rank(MPI_Comm comm)
{
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    return rank;
}

static uint32_t define_seen(MPI_Comm comm, MPI_Comm parent, bool created);

static uint64_t parent_key(MPI_Comm parent)
{
    if (parent == MPI_COMM_NULL)
        return SP_COMM_NO_PARENT;
    struct entry e;
    if (!lookup(parent, &e)) {
        spmpi_comm_id(parent);
        if (!lookup(parent, &e))
            return SP_COMM_NO_PARENT;
    }
    return e.key;
}

void spmpi_define_world(void)
{
    uint32_t n = 0;
    uint64_t *ids = group_processes(spmpi_world_group, &n);
    if (!ids)
        return;
    uint64_t key = spmpi_world == 0 ? SP_COMM_KEY_WORLD
                                    : KEY_CREATED | (sp_hash_mix(spmpi_world) & KEY_BITS);
    sp_comm_spec world = {.key = key, .kind = SP_COMM_WORLD, .size = n, .members = ids,
                          .parent = SP_COMM_NO_PARENT, .root = spmpi_world_rank == 0,
                          .created = true, .name = "MPI_COMM_WORLD"};
    remember(MPI_COMM_WORLD, define(&world), key, true);
    uint64_t me = SP_PROCESS(spmpi_world, spmpi_world_rank);
    sp_comm_spec self = {.key = SP_COMM_KEY_SELF, .kind = SP_COMM_SELF, .size = 1,
                         .members = &me, .parent = SP_COMM_NO_PARENT, .root = true,
                         .created = false, .name = "MPI_COMM_SELF"};
    remember(MPI_COMM_SELF, define(&self), SP_COMM_KEY_SELF, false);
    free(ids);
}

/* A communicator not seen at its creation (made before the measurement started, or by a
 * call this adapter does not wrap): defined now from its members, as far as this process
 * can name them. Two such communicators with the same members become one definition. */
static uint32_t define_seen(MPI_Comm comm, MPI_Comm parent, bool created);

uint32_t spmpi_comm_id(MPI_Comm comm)
{
    return define_seen(comm, MPI_COMM_NULL, false);
}

uint32_t spmpi_comm_file_key(MPI_Comm comm)
{
    if (spmpi_comm_id(comm) == SP_NO_ID)
        return 0;
    pthread_mutex_lock(&registry_lock);
    uint32_t index = comm_ids.capacity ? sp_u64map_get(&comm_ids, (uint64_t)(uintptr_t)comm)
                                       : SP_NO_ID;
    uint32_t key = 0;
    if (index != SP_NO_ID && index != FORGOTTEN)
        key = ++entries[index].files_opened;
    pthread_mutex_unlock(&registry_lock);
    return key;
}

uint32_t spmpi_comm_adopted(MPI_Comm comm, MPI_Comm parent)
{
    return define_seen(comm, parent, true);
}

/* A communicator's processes, its local and (inter-communicators) remote group, in the
 * order both sides of an inter-communicator write alike: the side with the lower first
 * process first. */
typedef struct {
    const uint64_t *a, *b;
    uint32_t na, nb;
    bool inter, swap;
} comm_sides;

static comm_sides order_sides(const uint64_t *ids, uint32_t n, const uint64_t *remote,
                              uint32_t nr, bool inter)
{
    bool swap = inter && nr && n && remote[0] < ids[0];
    return (comm_sides){.a = swap ? remote : ids, .b = swap ? ids : remote,
                        .na = swap ? nr : n, .nb = swap ? n : nr, .inter = inter, .swap = swap};
}

static uint64_t sides_hash(const comm_sides *s, uint64_t seed)
{
    return hash_processes(hash_processes(seed, s->a, s->na), s->b, s->nb);
}

/* Defines the communicator under `key` and remembers it. */
static uint32_t define_sides(MPI_Comm comm, const comm_sides *s, uint64_t key, uint64_t parent,
                             bool created)
{
    sp_comm_spec spec = {.key = key, .kind = s->inter ? SP_COMM_INTER : SP_COMM_OTHER,
                         .size = s->na, .members = s->a, .remote_size = s->nb, .remote = s->b,
                         .parent = parent, .root = comm_rank(comm) == 0 && !s->swap,
                         .created = created};
    uint32_t id = define(&spec);
    remember(comm, id, key, created);
    return id;
}

static uint32_t define_seen(MPI_Comm comm, MPI_Comm parent, bool created)
{
    struct entry e;
    if (lookup(comm, &e))
        return e.id;
    if (comm == MPI_COMM_NULL || spmpi_world_group == MPI_GROUP_NULL)
        return SP_NO_ID;
    int result;
    if (PMPI_Comm_compare(comm, MPI_COMM_WORLD, &result) == MPI_SUCCESS && result == MPI_IDENT) {
        spmpi_define_world();
        return lookup(comm, &e) ? e.id : SP_NO_ID;
    }
    if (PMPI_Comm_compare(comm, MPI_COMM_SELF, &result) == MPI_SUCCESS && result == MPI_IDENT) {
        spmpi_define_world();
        return lookup(comm, &e) ? e.id : SP_NO_ID;
    }
    bool inter = spmpi_is_intercomm(comm);
    MPI_Group group, remote_group = MPI_GROUP_NULL;
    PMPI_Comm_group(comm, &group);
    uint32_t n = 0, nr = 0;
    uint64_t *ids = group_processes(group, &n), *remote = NULL;
    PMPI_Group_free(&group);
    if (inter) {
        PMPI_Comm_remote_group(comm, &remote_group);
        remote = group_processes(remote_group, &nr);
        PMPI_Group_free(&remote_group);
    }
    uint32_t id = SP_NO_ID;
    if (ids && (!inter || remote)) {
        comm_sides s = order_sides(ids, n, remote, nr, inter);
        uint64_t key = KEY_SEEN | (sides_hash(&s, 0x5eed) & KEY_BITS);
        id = define_sides(comm, &s, key, parent_key(parent), created);
    }
    free(ids);
    free(remote);
    return id;
}

uint64_t spmpi_comm_key(MPI_Comm comm)
{
    struct entry e;
    if (!lookup(comm, &e)) {
        spmpi_comm_id(comm);
        if (!lookup(comm, &e))
            return (uint64_t)(uintptr_t)comm; /* not measuring: any stable value */
    }
    return e.key;
}

uint32_t spmpi_comm_created(MPI_Comm comm, MPI_Comm parent, bool remote_measured)
{
    if (comm == MPI_COMM_NULL || spmpi_world_group == MPI_GROUP_NULL)
        return SP_NO_ID;
    uint64_t me = SP_PROCESS(spmpi_world, spmpi_world_rank);
    bool inter = spmpi_is_intercomm(comm);
    int size = 0, remote_size = 0;
    PMPI_Comm_size(comm, &size);
    if (inter)
        PMPI_Comm_remote_size(comm, &remote_size);
    uint64_t *ids = calloc((size_t)size + 1, sizeof *ids);
    uint64_t *remote = calloc((size_t)remote_size + 1, sizeof *remote);
    if (!ids || !remote) {
        free(ids);
        free(remote);
        return SP_NO_ID;
    }
    /* Every member takes part, measuring or not (the others wait for it). */
    uint32_t n = (uint32_t)size, nr = (uint32_t)remote_size;
    if (!inter) {
        PMPI_Allgather(&me, 1, MPI_UINT64_T, ids, 1, MPI_UINT64_T, comm);
    } else {
        MPI_Group group;
        PMPI_Comm_group(comm, &group);
        free(ids);
        ids = group_processes(group, &n);
        PMPI_Group_free(&group);
        if (remote_measured)
            PMPI_Allgather(&me, 1, MPI_UINT64_T, remote, 1, MPI_UINT64_T, comm);
        else
            for (uint32_t i = 0; i < nr; i++)
                remote[i] = UNKNOWN_PROCESS;
    }
    uint32_t id = SP_NO_ID;
    if (ids) {
        comm_sides s = order_sides(ids, n, remote, nr, inter);
        uint64_t content = sides_hash(&s, 0xc0ffee);
        pthread_mutex_lock(&registry_lock);
        uint32_t before = spmpi_count_occurrence(&creations, content);
        pthread_mutex_unlock(&registry_lock);
        uint64_t key = KEY_CREATED | (sp_hash_mix(content + before) & KEY_BITS);
        id = define_sides(comm, &s, key, inter ? SP_COMM_NO_PARENT : parent_key(parent), true);
    }
    free(ids);
    free(remote);
    return id;
}

uint32_t spmpi_group_id(MPI_Group group)
{
    if (group == MPI_GROUP_NULL || spmpi_world_group == MPI_GROUP_NULL)
        return SP_NO_ID;
    uint32_t n = 0;
    uint64_t *ids = group_processes(group, &n);
    if (!ids)
        return SP_NO_ID;
    uint64_t key = KEY_GROUP | (hash_processes(0x9a0, ids, n) & KEY_BITS);
    sp_comm_spec spec = {.key = key, .kind = SP_COMM_GROUP, .size = n, .members = ids,
                         .parent = SP_COMM_NO_PARENT};
    uint32_t id = define(&spec);
    free(ids);
    return id;
}

void spmpi_record_comm_creation(sp_location *loc, uint32_t created, uint32_t collective_comm)
{
    uint64_t now = sp_clock_now();
    if (created != SP_NO_ID)
        sp_mpi_comm_create(loc, now, created);
    if (collective_comm != SP_NO_ID)
        sp_mpi_collective_end(loc, now, SP_COLL_CREATE_HANDLE, collective_comm, SP_NO_ROOT, 0, 0);
}

uint64_t spmpi_type_bytes(MPI_Datatype type, int count)
{
    int size = 0;
    if (type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS)
        return 0;
    return (uint64_t)size * (uint64_t)(count < 0 ? 0 : count);
}

uint64_t spmpi_received_bytes(const MPI_Status *status, MPI_Datatype type)
{
    int count = 0;
    if (PMPI_Get_count(status, type, &count) != MPI_SUCCESS || count == MPI_UNDEFINED)
        return 0;
    return spmpi_type_bytes(type, count);
}

/* ---- constructors: a collective (CREATE_HANDLE) on the communicator they come from ---- */

static void creation_begin(int fn)
{
    spmpi_enter(fn);
    sp_location *loc = spmpi_after(fn);
    if (loc) {
        sp_mpi_collective_begin(loc, sp_clock_now());
        sp_event_section_end(loc);
    }
}

/* `collective`: the communicator the creation was collective over (its MPI_COMM_NULL: the
 * new one, or MPI_COMM_SELF when this process got none). */
static int creation_end(int fn, int status, MPI_Comm *newcomm, MPI_Comm parent,
                        MPI_Comm collective)
{
    uint32_t id = SP_NO_ID;
    if (status == MPI_SUCCESS && newcomm)
        id = spmpi_comm_created(*newcomm, parent, true);
    sp_location *loc = spmpi_after(fn);
    if (loc) {
        if (collective == MPI_COMM_NULL)
            collective = newcomm && *newcomm != MPI_COMM_NULL ? *newcomm : MPI_COMM_SELF;
        spmpi_record_comm_creation(loc, id, spmpi_comm_id(collective));
        spmpi_leave(loc, fn);
    }
    return status;
}

#define CREATION(FN, CALL, NEWCOMM, PARENT, COLLECTIVE)                                        \
    do {                                                                                       \
        creation_begin(FN);                                                                    \
        int s_ = (CALL);                                                                       \
        return creation_end(FN, s_, NEWCOMM, PARENT, COLLECTIVE);                              \
    } while (0)

/* Same-shape MPI wrappers, a family: one per MPI function, each the same steps (enter,
 * the PMPI_ call, its records, leave) with its own arguments. The duplicates tool pairs
 * them; they are not one logic written twice. */
EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    CREATION(FN_COMM_SPLIT, PMPI_Comm_split(comm, color, key, newcomm), newcomm, comm, comm);
}

EXPORT int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    CREATION(FN_COMM_SPLIT_TYPE, PMPI_Comm_split_type(comm, type, key, info, newcomm), newcomm,
             comm, comm);
}

EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    CREATION(FN_COMM_DUP, PMPI_Comm_dup(comm, newcomm), newcomm, comm, comm);
}

EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    CREATION(FN_COMM_DUP_WITH_INFO, PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm, comm,
             comm);
}

EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    CREATION(FN_COMM_CREATE, PMPI_Comm_create(comm, group, newcomm), newcomm, comm, comm);
}

EXPORT int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    /* Collective over the group only: the new communicator. */
    CREATION(FN_COMM_CREATE_GROUP, PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm,
             comm, MPI_COMM_NULL);
}

EXPORT int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                                int remote_leader, int tag, MPI_Comm *newintercomm)
{
    CREATION(FN_INTERCOMM_CREATE,
             PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag,
                                   newintercomm),
             newintercomm, MPI_COMM_NULL, local_comm);
}

EXPORT int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    CREATION(FN_INTERCOMM_MERGE, PMPI_Intercomm_merge(intercomm, high, newintracomm),
             newintracomm, intercomm, intercomm);
}

EXPORT int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                           int reorder, MPI_Comm *newcomm)
{
    CREATION(FN_CART_CREATE, PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm),
             newcomm, comm, comm);
}

EXPORT int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    CREATION(FN_CART_SUB, PMPI_Cart_sub(comm, remain_dims, newcomm), newcomm, comm, comm);
}

EXPORT int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                            int reorder, MPI_Comm *newcomm)
{
    CREATION(FN_GRAPH_CREATE, PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm),
             newcomm, comm, comm);
}

EXPORT int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[],
                                 const int destinations[], const int weights[], MPI_Info info,
                                 int reorder, MPI_Comm *newcomm)
{
    CREATION(FN_DIST_GRAPH_CREATE,
             PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info,
                                    reorder, newcomm),
             newcomm, comm, comm);
}

EXPORT int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                          const int sourceweights[], int outdegree,
                                          const int destinations[], const int destweights[],
                                          MPI_Info info, int reorder, MPI_Comm *newcomm)
{
    CREATION(FN_DIST_GRAPH_CREATE_ADJACENT,
             PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree,
                                             destinations, destweights, info, reorder, newcomm),
             newcomm, comm, comm);
}

EXPORT int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    /* Completed by a Wait or Test: the communicator is defined then (requests.c). */
    uint64_t start = spmpi_enter(FN_COMM_IDUP);
    int s = PMPI_Comm_idup(comm, newcomm, request);
    uint64_t id = spmpi_next_request_id();
    if (s == MPI_SUCCESS)
        spmpi_remember_request(&(request_info){.handle = (uint64_t)(uintptr_t)*request,
                                               .id = id,
                                               .generation = sp_measurement_generation(),
                                               .kind = REQ_IDUP,
                                               .comm = spmpi_comm_id(comm),
                                               .newcomm = newcomm,
                                               .parent = comm});
    sp_location *loc = spmpi_after(FN_COMM_IDUP);
    if (loc) {
        if (s == MPI_SUCCESS)
            sp_mpi_icoll_request(loc, start, id);
        spmpi_leave(loc, FN_COMM_IDUP);
    }
    return s;
}

EXPORT int MPI_Comm_free(MPI_Comm *comm)
{
    spmpi_enter(FN_COMM_FREE);
    uint32_t id = spmpi_comm_id(*comm);
    struct entry e = {.created = false};
    lookup(*comm, &e);
    sp_location *loc = spmpi_after(FN_COMM_FREE);
    if (loc) {
        sp_mpi_collective_begin(loc, sp_clock_now());
        sp_event_section_end(loc);
    }
    MPI_Comm handle = *comm;
    int s = PMPI_Comm_free(comm);
    /* The handle may be reused for a new communicator: forget it. */
    forget(handle);
    loc = spmpi_after(FN_COMM_FREE);
    if (loc) {
        if (s == MPI_SUCCESS && id != SP_NO_ID) {
            uint64_t now = sp_clock_now();
            if (e.created)
                sp_mpi_comm_destroy(loc, now, id);
            sp_mpi_collective_end(loc, now, SP_COLL_DESTROY_HANDLE, id, SP_NO_ROOT, 0, 0);
        }
        spmpi_leave(loc, FN_COMM_FREE);
    }
    return s;
}

EXPORT int MPI_Comm_disconnect(MPI_Comm *comm)
{
    spmpi_enter(FN_COMM_DISCONNECT);
    MPI_Comm handle = *comm;
    int s = PMPI_Comm_disconnect(comm);
    forget(handle);
    sp_location *loc = spmpi_after(FN_COMM_DISCONNECT);
    if (loc)
        spmpi_leave(loc, FN_COMM_DISCONNECT);
    return s;
}

EXPORT int MPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    spmpi_enter(FN_COMM_SET_NAME);
    int s = PMPI_Comm_set_name(comm, name);
    if (s == MPI_SUCCESS) {
        /* As Score-P: the name given by the communicator's rank 0, not for one of a
         * single process (every process has those). */
        int size = 1;
        PMPI_Comm_size(comm, &size);
        uint32_t id = spmpi_comm_id(comm);
        sp_location *section = sp_event_section_begin();
        if (section) {
            if (id != SP_NO_ID)
                sp_comm_set_name(id, name, comm_rank(comm) == 0 && size > 1 &&
                                               !spmpi_is_intercomm(comm));
            sp_event_section_end(section);
        }
    }
    sp_location *loc = spmpi_after(FN_COMM_SET_NAME);
    if (loc)
        spmpi_leave(loc, FN_COMM_SET_NAME);
    return s;
}
