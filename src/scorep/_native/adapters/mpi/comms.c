/* Communicators: every communicator the program uses gets a definition that all its
 * members agree on, and the calls that create and free them are recorded. */
#include "adapters/mpi/mpi_adapter.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* A freed communicator's handle may come back for a new one; the map cannot delete. */
#define FORGOTTEN (SP_NO_ID - 1)

/* The registry of communicator ids. Global because PMPI wrappers carry no context; taken
 * only when a communicator is first used, created or freed. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static sp_u64map comm_ids;      /* MPI_Comm handle -> local communicator id */
static uint32_t comm_generation; /* the measurement those ids belong to */
static uint32_t comm_counter;    /* communicators this rank created first */

uint32_t spmpi_define_comm(MPI_Comm comm, uint64_t key, sp_comm_kind kind)
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
        PMPI_Group_translate_ranks(group, size, ranks, spmpi_world_group, world);
        PMPI_Group_free(&group);
        for (int i = 0; i < size; i++)
            members[i] = (uint32_t)world[i];
        char name[64] = "";
        if (kind == SP_COMM_OTHER)
            snprintf(name, sizeof name, "MPI communicator %u", (unsigned)(key >> 32));
        else
            snprintf(name, sizeof name, kind == SP_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
        id = sp_comm_define(key, kind, (uint32_t)size, members, name);
    }
    free(members);
    free(ranks);
    free(world);
    return id;
}

/* The registry holds the ids of the running measurement only. */
static void registry_reset_if_stale(void)
{
    uint32_t generation = sp_measurement_generation();
    if (comm_generation == generation && comm_ids.capacity)
        return;
    if (comm_ids.capacity)
        sp_u64map_free(&comm_ids);
    sp_u64map_init(&comm_ids, 16);
    comm_generation = generation;
}

void spmpi_remember_comm(MPI_Comm comm, uint32_t id)
{
    pthread_mutex_lock(&registry_lock);
    registry_reset_if_stale();
    if (id != SP_NO_ID)
        sp_u64map_put(&comm_ids, (uint64_t)(uintptr_t)comm, id);
    pthread_mutex_unlock(&registry_lock);
}

/* A communicator's id; one not seen at its creation (made by a call this adapter does not
 * wrap) is defined now, keyed by its members. */
uint32_t spmpi_comm_id(MPI_Comm comm)
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
        PMPI_Group_translate_ranks(group, 1, &zero, spmpi_world_group, &first);
        PMPI_Group_free(&group);
        key = (uint64_t)(first + 2) << 32 | 0x80000000u | (uint32_t)size;
    }
    id = spmpi_define_comm(comm, key, kind);
    spmpi_remember_comm(comm, id);
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
        key = (uint64_t)(spmpi_world_rank + 2) << 32 | (counter & 0x7fffffffu);
    }
    PMPI_Bcast(&key, 1, MPI_UINT64_T, 0, comm);
    sp_location *loc = sp_event_section_begin();
    if (loc) {
        spmpi_remember_comm(comm, spmpi_define_comm(comm, key, SP_COMM_OTHER));
        sp_event_section_end(loc);
    }
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


EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    spmpi_enter(FN_COMM_SPLIT);
    int s = PMPI_Comm_split(comm, color, key, newcomm);
    if (s == MPI_SUCCESS)
        created_comm(*newcomm);
    sp_location *loc = spmpi_after();
    if (loc)
        spmpi_leave(loc, FN_COMM_SPLIT);
    return s;
}

EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    spmpi_enter(FN_COMM_DUP);
    int s = PMPI_Comm_dup(comm, newcomm);
    if (s == MPI_SUCCESS)
        created_comm(*newcomm);
    sp_location *loc = spmpi_after();
    if (loc)
        spmpi_leave(loc, FN_COMM_DUP);
    return s;
}

EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    spmpi_enter(FN_COMM_CREATE);
    int s = PMPI_Comm_create(comm, group, newcomm);
    if (s == MPI_SUCCESS)
        created_comm(*newcomm);
    sp_location *loc = spmpi_after();
    if (loc)
        spmpi_leave(loc, FN_COMM_CREATE);
    return s;
}

EXPORT int MPI_Comm_free(MPI_Comm *comm)
{
    spmpi_enter(FN_COMM_FREE);
    uint64_t handle = (uint64_t)(uintptr_t)*comm;
    int s = PMPI_Comm_free(comm);
    /* The handle may be reused for a new communicator: forget it. */
    pthread_mutex_lock(&registry_lock);
    if (comm_ids.capacity)
        sp_u64map_put(&comm_ids, handle, FORGOTTEN);
    pthread_mutex_unlock(&registry_lock);
    sp_location *loc = spmpi_after();
    if (loc)
        spmpi_leave(loc, FN_COMM_FREE);
    return s;
}

