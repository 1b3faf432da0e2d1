/* The end, step 2: each location's mapping tables and clock offsets, the global
 * definitions (the group's root writes them) and the archive closed. */
#include "substrates/trace/trace_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "core/part.h"

static OTF2_RegionRole otf2_role(uint8_t role)
{
    switch ((sp_role)role) {
    case SP_ROLE_FUNCTION: return OTF2_REGION_ROLE_FUNCTION;
    case SP_ROLE_ARTIFICIAL: return OTF2_REGION_ROLE_ARTIFICIAL;
    case SP_ROLE_WRAPPER: return OTF2_REGION_ROLE_WRAPPER;
    case SP_ROLE_POINT2POINT: return OTF2_REGION_ROLE_POINT2POINT;
    case SP_ROLE_BARRIER: return OTF2_REGION_ROLE_BARRIER;
    case SP_ROLE_COLL_ONE2ALL: return OTF2_REGION_ROLE_COLL_ONE2ALL;
    case SP_ROLE_COLL_ALL2ONE: return OTF2_REGION_ROLE_COLL_ALL2ONE;
    case SP_ROLE_COLL_ALL2ALL: return OTF2_REGION_ROLE_COLL_ALL2ALL;
    case SP_ROLE_COLL_OTHER: return OTF2_REGION_ROLE_COLL_OTHER;
    case SP_ROLE_FILE_IO: return OTF2_REGION_ROLE_FILE_IO;
    case SP_ROLE_CODE: return OTF2_REGION_ROLE_CODE;
    case SP_ROLE_FILE_IO_METADATA: return OTF2_REGION_ROLE_FILE_IO_METADATA;
    case SP_ROLE_UNKNOWN: return OTF2_REGION_ROLE_UNKNOWN;
    }
    return OTF2_REGION_ROLE_UNKNOWN;
}

static OTF2_Paradigm otf2_paradigm(uint8_t paradigm)
{
    switch ((sp_paradigm)paradigm) {
    case SP_PARADIGM_USER: return OTF2_PARADIGM_USER;
    case SP_PARADIGM_MEASUREMENT: return OTF2_PARADIGM_MEASUREMENT_SYSTEM;
    case SP_PARADIGM_MPI: return OTF2_PARADIGM_MPI;
    case SP_PARADIGM_IO: return OTF2_PARADIGM_NONE; /* as Score-P writes its I/O regions */
    case SP_PARADIGM_COMPILER: return OTF2_PARADIGM_COMPILER;
    }
    return OTF2_PARADIGM_UNKNOWN;
}

static OTF2_ParameterType otf2_parameter_type(uint8_t type)
{
    switch ((sp_param_type)type) {
    case SP_PARAM_INT64: return OTF2_PARAMETER_TYPE_INT64;
    case SP_PARAM_UINT64: return OTF2_PARAMETER_TYPE_UINT64;
    case SP_PARAM_STRING: return OTF2_PARAMETER_TYPE_STRING;
    }
    return OTF2_PARAMETER_TYPE_STRING;
}

static OTF2_ErrorCode write_map(OTF2_DefWriter *dw, OTF2_MappingType type, const uint32_t *map,
                                uint32_t count)
{
    if (!count)
        return OTF2_SUCCESS;
    OTF2_IdMap *id_map = OTF2_IdMap_CreateFromUint32Array(count, map, true);
    if (!id_map)
        return OTF2_SUCCESS; /* the identity: nothing to write */
    OTF2_ErrorCode s = OTF2_DefWriter_WriteMappingTable(dw, type, id_map);
    OTF2_IdMap_Free(id_map);
    return s;
}

OTF2_ErrorCode sp_trace_write_map(OTF2_DefWriter *dw, OTF2_MappingType type,
                                  const uint32_t *map, uint32_t count)
{
    return write_map(dw, type, map, count);
}

static uint32_t comm_group(uint32_t comm);

/* RMA group syncs name an MPI group by its local communicator id: the OTF2 group of its
 * unified communicator (see comm_group). */
static int write_group_map(OTF2_DefWriter *dw, const sp_unified_maps *u, char *err,
                           size_t errlen)
{
    if (!u->comm_count)
        return 0;
    uint32_t *map = malloc(u->comm_count * sizeof *map);
    if (!map)
        return sp_error(err, errlen, "out of memory while writing the trace definitions");
    for (uint32_t c = 0; c < u->comm_count; c++)
        map[c] = comm_group(u->comm_map[c]);
    OTF2_IdMap *id_map = OTF2_IdMap_CreateFromUint32Array(u->comm_count, map, false);
    free(map);
    if (!id_map)
        return sp_error(err, errlen, "out of memory while writing the trace definitions");
    OTF2_ErrorCode s = OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_GROUP, id_map);
    OTF2_IdMap_Free(id_map);
    return sp_trace_check(s, "WriteMappingTable", err, errlen);
}

/* A location's mapping tables and, when the group wrote together, its clock offsets
 * (`clock` NULL: none). */
static int write_location_definitions(OTF2_DefWriter *dw, const sp_unified_maps *u,
                                      const sp_part_clock *clock, char *err, size_t errlen)
{
    /* Events keep the location's own ids; unification may have merged definitions (two
     * code objects of the same name, file and line), even in a single process. An identity
     * map is not written. */
    if (sp_trace_check(write_map(dw, OTF2_MAPPING_STRING, u->string_map, u->string_count),
                       "WriteMappingTable", err, errlen) != 0 ||
        sp_trace_check(write_map(dw, OTF2_MAPPING_REGION, u->region_map, u->region_count),
                       "WriteMappingTable", err, errlen) != 0 ||
        sp_trace_check(write_map(dw, OTF2_MAPPING_PARAMETER, u->parameter_map,
                                 u->parameter_count),
                       "WriteMappingTable", err, errlen) != 0 ||
        sp_trace_check(write_map(dw, OTF2_MAPPING_COMM, u->comm_map, u->comm_count),
                       "WriteMappingTable", err, errlen) != 0 ||
        sp_trace_check(write_map(dw, OTF2_MAPPING_RMA_WIN, u->win_map, u->win_count),
                       "WriteMappingTable", err, errlen) != 0 ||
        write_group_map(dw, u, err, errlen) != 0 ||
        sp_trace_write_io_mappings(dw, u, err, errlen) != 0 ||
        sp_trace_check(write_map(dw, OTF2_MAPPING_CALLING_CONTEXT, u->context_map,
                                 u->context_count),
                       "WriteMappingTable", err, errlen) != 0)
        return -1;
    if (!clock)
        return 0;
    /* Readers interpolate between the offsets to put every process on the root's clock:
     * without them a message could arrive before it was sent. The offset measured when
     * the group formed holds from the measurement's start, the one measured at the end
     * until its last event, so the first event lands exactly where the global offset of
     * the clock properties (every process's start on the root's clock) says it does,
     * never before it. */
    const sp_part_clock *sync = clock;
    uint64_t start = clock->first_ns, last = clock->last_ns;
    if (start < sync->sync_begin_ns &&
        sp_trace_check(OTF2_DefWriter_WriteClockOffset(dw, start, sync->offset_begin_ns, 0.0),
                       "WriteClockOffset", err, errlen) != 0)
        return -1;
    if (sp_trace_check(OTF2_DefWriter_WriteClockOffset(dw, sync->sync_begin_ns,
                                                       sync->offset_begin_ns, 0.0),
                       "WriteClockOffset", err, errlen) != 0)
        return -1;
    if (sync->sync_end_ns > sync->sync_begin_ns &&
        sp_trace_check(OTF2_DefWriter_WriteClockOffset(dw, sync->sync_end_ns,
                                                       sync->offset_end_ns, 0.0),
                       "WriteClockOffset", err, errlen) != 0)
        return -1;
    if (last > sync->sync_end_ns && last > sync->sync_begin_ns &&
        sp_trace_check(OTF2_DefWriter_WriteClockOffset(dw, last, sync->offset_end_ns, 0.0),
                       "WriteClockOffset", err, errlen) != 0)
        return -1;
    return 0;
}

static int write_definitions_of(OTF2_Archive *archive, uint64_t location,
                                const sp_unified_maps *maps, const sp_part_clock *clock,
                                char *err, size_t errlen)
{
    OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(archive, location);
    if (!dw)
        return sp_error(err, errlen, "OTF2 GetDefWriter failed");
    if (write_location_definitions(dw, maps, clock, err, errlen) != 0)
        return -1;
    return sp_trace_check(OTF2_Archive_CloseDefWriter(archive, dw), "CloseDefWriter", err,
                          errlen);
}

/* A child process's location: its part's mapping tables (same host, same clock). */
static int write_process_definitions(OTF2_DefWriter *dw, const sp_unified_maps *maps, char *err,
                                     size_t errlen)
{
    return write_location_definitions(dw, maps, NULL, err, errlen);
}

static int write_local_definitions(sp_measurement *m, const sp_unified *u, char *err,
                                   size_t errlen)
{
    OTF2_Archive *archive = sp_trace.archive;
    if (sp_trace_check(OTF2_Archive_OpenDefFiles(archive), "OpenDefFiles", err, errlen) != 0)
        return -1;
    const sp_unified_maps *mine = &u->maps;
    const sp_clock_sync *sync = &m->clock_sync;
    sp_part_clock clock = {sync->offset_begin_ns, sync->offset_end_ns, sync->sync_begin_ns,
                           sync->sync_end_ns, m->start.monotonic_ns, sp_trace_last_event_ns(m)};
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs; i++)
        if (write_definitions_of(archive, m->locations[i]->id, mine,
                                 sp_trace.collective ? &clock : NULL, err, errlen) != 0)
            return -1;
    /* The child processes whose parts this process adopted (same host: no clock offsets). */
    if (sp_trace_adopted_definitions(m, u, write_process_definitions, err, errlen) != 0)
        return -1;
    /* The spawned ranks' parts this root adopted: their own mapping tables and clocks. */
    for (uint32_t k = 0; k < m->part_count; k++)
        for (uint32_t i = 0; i < m->parts[k].c.location_count; i++)
            if (write_definitions_of(archive, m->parts[k].location_ids[i], &m->parts[k].maps,
                                     &m->parts[k].c.clock, err, errlen) != 0)
                return -1;
    return sp_trace_check(OTF2_Archive_CloseDefFiles(archive), "CloseDefFiles", err, errlen);
}

static const char *thread_level_name(int32_t level)
{
    static const char *const names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                        "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    return level >= 0 && level < 4 ? names[level] : NULL;
}

/* Strings the global definitions need beyond the unified ones, interned before the
 * strings are written. */
typedef struct {
    uint32_t machine, machine_class, node_class, world_name, empty;
    uint32_t level_requested, level_provided;
    uint32_t *levels; /* per rank: requested, provided (SP_NO_ID: unknown) */
    uint32_t parent_pid, started_by; /* child processes' properties */
    uint32_t *pids;   /* per location group: its parent's pid as text (SP_NO_ID: none) */
} extra_strings;

static int intern_extra_strings(sp_measurement *m, sp_unified *u, extra_strings *x)
{
    sp_defs *g = &u->global;
    x->machine = sp_defs_string(g, m->config.machine_name);
    x->machine_class = sp_defs_string(g, "machine");
    x->node_class = sp_defs_string(g, "node");
    x->world_name = sp_defs_string(g, "MPI_COMM_WORLD");
    x->empty = sp_defs_string(g, "");
    x->level_requested = sp_defs_string(g, "MPI thread level requested");
    x->level_provided = sp_defs_string(g, "MPI thread level provided");
    x->levels = calloc(2 * (size_t)u->rank_count + 1, sizeof *x->levels);
    x->pids = calloc((size_t)u->rank_count + 1, sizeof *x->pids);
    if (!x->levels || !x->pids)
        return -1;
    x->parent_pid = sp_defs_string(g, "parent pid");
    x->started_by = sp_defs_string(g, "started by");
    for (uint32_t r = 0; r < u->rank_count; r++) {
        char pid[32];
        snprintf(pid, sizeof pid, "%llu", (unsigned long long)u->ranks[r].parent_pid);
        x->pids[r] = u->ranks[r].parent == SP_NO_PARENT ? SP_NO_ID : sp_defs_string(g, pid);
    }
    for (uint32_t r = 0; r < u->rank_count; r++) {
        const char *req = thread_level_name(u->ranks[r].thread_requested);
        const char *prov = thread_level_name(u->ranks[r].thread_provided);
        x->levels[2 * r] = req ? sp_defs_string(g, req) : SP_NO_ID;
        x->levels[2 * r + 1] = prov ? sp_defs_string(g, prov) : SP_NO_ID;
    }
    return 0;
}

static int write_system_tree(OTF2_GlobalDefWriter *gw, const sp_unified *u,
                             const extra_strings *x, char *err, size_t errlen)
{
    if (sp_trace_check(OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, x->machine,
                                                                x->machine_class,
                                                                OTF2_UNDEFINED_SYSTEM_TREE_NODE),
                       "WriteSystemTreeNode", err, errlen) != 0)
        return -1;
    for (uint32_t n = 0; n < u->node_count; n++)
        if (sp_trace_check(OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, n + 1, u->nodes[n],
                                                                    x->node_class, 0),
                           "WriteSystemTreeNode", err, errlen) != 0)
            return -1;
    /* OTF2 wants location groups 0, 1, ... in this order; child processes have numbers
     * with gaps (a killed one) and join in any order: their groups are numbered densely by
     * process number (MPI ranks, numbered first, keep theirs). */
    uint32_t *order = malloc((u->rank_count + 1) * sizeof *order);
    uint32_t *dense = malloc((u->rank_count + 1) * sizeof *dense);
    int status = order && dense ? 0 : sp_error(err, errlen, "out of memory while writing the "
                                                            "trace definitions");
    for (uint32_t r = 0; status == 0 && r < u->rank_count; r++) {
        uint32_t k = r; /* insertion by process number: groups are few */
        while (k > 0 && u->ranks[order[k - 1]].rank > u->ranks[r].rank) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = r;
    }
    for (uint32_t k = 0; status == 0 && k < u->rank_count; k++)
        dense[order[k]] = k;
    for (uint32_t k = 0; status == 0 && k < u->rank_count; k++) {
        uint32_t r = order[k];
        const sp_unified_rank *rank = &u->ranks[r];
        /* A child process names the process that started it (OTF2's creating location
         * group; not when it wrote alone) and how. */
        bool child = rank->parent != SP_NO_PARENT;
        OTF2_LocationGroupRef creator = OTF2_UNDEFINED_LOCATION_GROUP;
        for (uint32_t p = 0; child && p < u->rank_count; p++)
            if (u->ranks[p].rank == rank->parent)
                creator = dense[p];
        status = sp_trace_check(OTF2_GlobalDefWriter_WriteLocationGroup(
                                    gw, k, rank->name, OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                    rank->node + 1, creator),
                                "WriteLocationGroup", err, errlen);
        if (status == 0 && child) {
            OTF2_AttributeValue pid, method;
            pid.stringRef = x->pids[r];
            method.stringRef = rank->method;
            status = sp_trace_check(OTF2_GlobalDefWriter_WriteLocationGroupProperty(
                                        gw, k, x->parent_pid, OTF2_TYPE_STRING, pid),
                                    "WriteLocationGroupProperty", err, errlen);
            if (status == 0 && rank->method != SP_NO_ID)
                status = sp_trace_check(OTF2_GlobalDefWriter_WriteLocationGroupProperty(
                                            gw, k, x->started_by, OTF2_TYPE_STRING, method),
                                        "WriteLocationGroupProperty", err, errlen);
        }
        for (int j = 0; status == 0 && j < 2; j++) {
            if (x->levels[2 * r + j] == SP_NO_ID)
                continue;
            OTF2_AttributeValue value;
            value.stringRef = x->levels[2 * r + j];
            status = sp_trace_check(OTF2_GlobalDefWriter_WriteLocationGroupProperty(
                                        gw, k, j ? x->level_provided : x->level_requested,
                                        OTF2_TYPE_STRING, value),
                                    "WriteLocationGroupProperty", err, errlen);
        }
    }
    for (uint32_t k = 0; status == 0 && k < u->rank_count; k++) {
        uint32_t r = order[k];
        for (uint32_t i = 0; status == 0 && i < u->ranks[r].location_count; i++) {
            const sp_unified_location *l = &u->ranks[r].locations[i];
            status = sp_trace_check(OTF2_GlobalDefWriter_WriteLocation(
                                        gw, l->id, l->name, OTF2_LOCATION_TYPE_CPU_THREAD,
                                        l->events, k),
                                    "WriteLocation", err, errlen);
        }
    }
    free(order);
    free(dense);
    return status;
}

static int write_regions_and_parameters(OTF2_GlobalDefWriter *gw, const sp_defs *g, char *err,
                                        size_t errlen)
{
    for (uint32_t i = 0; i < g->region_count; i++) {
        const sp_region *reg = &g->regions[i];
        if (sp_trace_check(OTF2_GlobalDefWriter_WriteRegion(
                               gw, i, reg->name, reg->canonical, 0, otf2_role(reg->role),
                               otf2_paradigm(reg->paradigm), OTF2_REGION_FLAG_NONE, reg->file,
                               reg->begin_line < 0 ? 0 : (uint32_t)reg->begin_line,
                               reg->end_line < 0 ? 0 : (uint32_t)reg->end_line),
                           "WriteRegion", err, errlen) != 0)
            return -1;
    }
    for (uint32_t i = 0; i < g->parameter_count; i++)
        if (sp_trace_check(OTF2_GlobalDefWriter_WriteParameter(
                               gw, i, g->parameters[i].name,
                               otf2_parameter_type(g->parameters[i].type)),
                           "WriteParameter", err, errlen) != 0)
            return -1;
    return 0;
}

/* OTF2 group ids (dense, written in order): 0 lists the locations of the MPI ranks;
 * communicator (or MPI group) g of the unified definitions has group 1 + g; the remote
 * groups of inter-communicators follow. Each process derives 1 + g from its communicator
 * mapping (the mapping tables of write_location_definitions). */
static uint32_t comm_group(uint32_t comm)
{
    return 1 + comm;
}

/* The locations that take part in MPI: each rank's first location, in rank order (a
 * communicator's members are indices into this list), then the other threads of ranks
 * that use MPI from several threads (MPI_THREAD_MULTIPLE). */
static int write_mpi_locations(OTF2_GlobalDefWriter *gw, const sp_unified *u,
                               const extra_strings *x, char *err, size_t errlen)
{
    /* The ranks' child processes (which have a parent) are no MPI processes. */
    uint64_t nranks = 0, count = 0;
    for (uint32_t r = 0; r < u->rank_count; r++)
        if (u->ranks[r].parent == SP_NO_PARENT) {
            nranks++;
            count++;
            if (u->ranks[r].thread_provided == 3 && u->ranks[r].location_count > 1)
                count += u->ranks[r].location_count - 1;
        }
    uint64_t *members = calloc(count + 1, sizeof *members);
    if (!members)
        return sp_error(err, errlen, "out of memory while writing the trace definitions");
    uint64_t next = nranks;
    for (uint32_t r = 0; r < u->rank_count; r++) {
        const sp_unified_rank *rank = &u->ranks[r];
        if (rank->parent != SP_NO_PARENT)
            continue;
        uint32_t index = sp_unified_process_rank(u, SP_PROCESS(rank->world, rank->world_rank));
        if (index < nranks)
            members[index] = rank->location_count ? rank->locations[0].id : 0;
        if (rank->thread_provided == 3)
            for (uint32_t i = 1; i < rank->location_count; i++)
                members[next++] = rank->locations[i].id;
    }
    int status = sp_trace_check(OTF2_GlobalDefWriter_WriteGroup(gw, 0, x->empty,
                                                                OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                                                OTF2_PARADIGM_MPI,
                                                                OTF2_GROUP_FLAG_NONE,
                                                                (uint32_t)count, members),
                                "WriteGroup", err, errlen);
    free(members);
    return status;
}

/* A group of processes as ranks of the experiment (indices into group 0); processes that
 * are not part of the experiment (not measured) are left out. */
static int write_process_group(OTF2_GlobalDefWriter *gw, const sp_unified *u, uint32_t id,
                               const uint64_t *processes, uint32_t count, bool self,
                               const extra_strings *x, char *err, size_t errlen)
{
    uint64_t *ranks = calloc(count + 1, sizeof *ranks);
    if (!ranks)
        return sp_error(err, errlen, "out of memory while writing the trace definitions");
    uint32_t n = 0;
    for (uint32_t k = 0; k < count && !self; k++) {
        uint32_t rank = sp_unified_process_rank(u, processes[k]);
        if (rank != UINT32_MAX)
            ranks[n++] = rank;
    }
    int status = sp_trace_check(
        OTF2_GlobalDefWriter_WriteGroup(gw, id, x->empty,
                                        self ? OTF2_GROUP_TYPE_COMM_SELF
                                             : OTF2_GROUP_TYPE_COMM_GROUP,
                                        OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, n, ranks),
        "WriteGroup", err, errlen);
    free(ranks);
    return status;
}

static int write_communicator(OTF2_GlobalDefWriter *gw, const sp_unified *u, uint32_t c,
                              const uint32_t *remote_group, char *err, size_t errlen)
{
    const sp_defs *g = &u->global;
    const sp_comm *comm = &g->comms[c];
    if (comm->kind == SP_COMM_GROUP)
        return 0; /* an MPI group of an RMA epoch: no communicator */
    uint32_t parent = comm->parent == SP_COMM_NO_PARENT
                          ? OTF2_UNDEFINED_COMM
                          : sp_u64map_get(&g->comm_by_key, comm->parent);
    if (parent == SP_NO_ID)
        parent = OTF2_UNDEFINED_COMM;
    OTF2_CommFlag flags = comm->created ? OTF2_COMM_FLAG_CREATE_DESTROY_EVENTS
                                        : OTF2_COMM_FLAG_NONE;
    if (comm->kind == SP_COMM_INTER)
        return sp_trace_check(OTF2_GlobalDefWriter_WriteInterComm(gw, c, comm->name,
                                                                  comm_group(c), remote_group[c],
                                                                  parent, flags),
                              "WriteInterComm", err, errlen);
    return sp_trace_check(OTF2_GlobalDefWriter_WriteComm(gw, c, comm->name, comm_group(c),
                                                         parent, flags),
                          "WriteComm", err, errlen);
}

static int write_communicators(OTF2_GlobalDefWriter *gw, const sp_unified *u,
                               const extra_strings *x, char *err, size_t errlen)
{
    const sp_defs *g = &u->global;
    if (!g->comm_count || !sp_trace.collective)
        return 0;
    if (write_mpi_locations(gw, u, x, err, errlen) != 0)
        return -1;
    uint32_t *remote_group = calloc(g->comm_count, sizeof *remote_group);
    if (!remote_group)
        return sp_error(err, errlen, "out of memory while writing the trace definitions");
    int status = 0;
    for (uint32_t c = 0; c < g->comm_count && status == 0; c++)
        status = write_process_group(gw, u, comm_group(c), g->comms[c].members,
                                     g->comms[c].size, g->comms[c].kind == SP_COMM_SELF, x, err,
                                     errlen);
    for (uint32_t c = 0, next = comm_group(g->comm_count); c < g->comm_count && status == 0; c++)
        if (g->comms[c].kind == SP_COMM_INTER) {
            remote_group[c] = next++;
            status = write_process_group(gw, u, remote_group[c], g->comms[c].remote,
                                         g->comms[c].remote_size, false, x, err, errlen);
        }
    /* The unification ordered them: every communicator after its parent, MPI groups
     * (no communicators) last. */
    for (uint32_t c = 0; c < g->comm_count && status == 0; c++)
        status = write_communicator(gw, u, c, remote_group, err, errlen);
    free(remote_group);
    for (uint32_t w = 0; w < g->win_count && status == 0; w++)
        status = sp_trace_check(OTF2_GlobalDefWriter_WriteRmaWin(
                                    gw, w, g->wins[w].name, g->wins[w].comm,
                                    OTF2_RMA_WIN_FLAG_CREATE_DESTROY_EVENTS),
                                "WriteRmaWin", err, errlen);
    return status;
}

/* ---- what Score-P's traces carry besides the events' own definitions ----------------- */

/* Strings of the definitions below, interned into the global strings before they are
 * written. */
typedef struct {
    uint32_t process_id, process_id_descr, thread_id, thread_id_descr;
    uint32_t platform, platform_value;
    uint32_t mpi, comm_template, win_template;
} scorep_strings;

static void intern_scorep_strings(sp_unified *u, scorep_strings *x)
{
    sp_defs *g = &u->global;
    struct utsname system;
    x->process_id = sp_defs_string(g, "ProcessId");
    x->process_id_descr = sp_defs_string(g, "Process identifier");
    x->thread_id = sp_defs_string(g, "ThreadId");
    x->thread_id_descr = sp_defs_string(g, "Thread identifier");
    x->platform = sp_defs_string(g, "platform");
    x->platform_value = sp_defs_string(g, uname(&system) == 0 ? system.sysname : "Linux");
    x->mpi = sp_defs_string(g, "MPI");
    x->comm_template = sp_defs_string(g, "Comm ${id}");
    x->win_template = sp_defs_string(g, "Win ${id}");
}

static bool has_mpi_regions(const sp_defs *g)
{
    for (uint32_t i = 0; i < g->region_count; i++)
        if (g->regions[i].paradigm == SP_PARADIGM_MPI)
            return true;
    return false;
}

/* Score-P defines the parallel paradigms a measurement used (its MPI adapter: "MPI", class
 * process, with the templates Vampir names unnamed communicators and windows by). */
static int write_paradigms(OTF2_GlobalDefWriter *gw, const sp_unified *u, const scorep_strings *x,
                           char *err, size_t errlen)
{
    if (!has_mpi_regions(&u->global))
        return 0;
    OTF2_AttributeValue comm, win;
    comm.stringRef = x->comm_template;
    win.stringRef = x->win_template;
    if (sp_trace_check(OTF2_GlobalDefWriter_WriteParadigm(gw, OTF2_PARADIGM_MPI, x->mpi,
                                                          OTF2_PARADIGM_CLASS_PROCESS),
                       "WriteParadigm", err, errlen) != 0 ||
        sp_trace_check(OTF2_GlobalDefWriter_WriteParadigmProperty(
                           gw, OTF2_PARADIGM_MPI, OTF2_PARADIGM_PROPERTY_COMM_NAME_TEMPLATE,
                           OTF2_TYPE_STRING, comm),
                       "WriteParadigmProperty", err, errlen) != 0 ||
        sp_trace_check(OTF2_GlobalDefWriter_WriteParadigmProperty(
                           gw, OTF2_PARADIGM_MPI, OTF2_PARADIGM_PROPERTY_RMA_WIN_NAME_TEMPLATE,
                           OTF2_TYPE_STRING, win),
                       "WriteParadigmProperty", err, errlen) != 0)
        return -1;
    return 0;
}

/* The system tree's domains (the root is the machine, each node one shared memory) and the
 * root's "platform" property, as Score-P's platform layer describes a Linux cluster. */
static int write_system_tree_domains(OTF2_GlobalDefWriter *gw, const sp_unified *u,
                                     const scorep_strings *x, char *err, size_t errlen)
{
    OTF2_AttributeValue platform;
    platform.stringRef = x->platform_value;
    if (sp_trace_check(OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(
                           gw, 0, OTF2_SYSTEM_TREE_DOMAIN_MACHINE),
                       "WriteSystemTreeNodeDomain", err, errlen) != 0 ||
        sp_trace_check(OTF2_GlobalDefWriter_WriteSystemTreeNodeProperty(
                           gw, 0, x->platform, OTF2_TYPE_STRING, platform),
                       "WriteSystemTreeNodeProperty", err, errlen) != 0)
        return -1;
    for (uint32_t n = 0; n < u->node_count; n++)
        if (sp_trace_check(OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(
                               gw, n + 1, OTF2_SYSTEM_TREE_DOMAIN_SHARED_MEMORY),
                           "WriteSystemTreeNodeDomain", err, errlen) != 0)
            return -1;
    return 0;
}

/* Score-P's unification makes a group of type REGIONS per region group name and paradigm
 * (the Python bindings group by the module's top-level package), in the order the groups
 * first appear among the regions. Their ids start at `first`. */
static int write_region_groups(OTF2_GlobalDefWriter *gw, const sp_defs *g, uint32_t first,
                               char *err, size_t errlen)
{
    uint32_t n = g->region_count;
    uint64_t *members = malloc((n ? n : 1) * sizeof *members);
    bool *done = calloc(n ? n : 1, sizeof *done);
    int status = 0;
    if (!members || !done)
        status = sp_error(err, errlen, "out of memory while writing the trace definitions");
    uint32_t id = first;
    for (uint32_t i = 0; i < n && status == 0; i++) {
        const sp_region *r = &g->regions[i];
        if (done[i] || !r->group)
            continue;
        uint32_t count = 0;
        for (uint32_t k = i; k < n; k++) {
            if (!done[k] && g->regions[k].group == r->group &&
                g->regions[k].paradigm == r->paradigm) {
                done[k] = true;
                members[count++] = k;
            }
        }
        status = sp_trace_check(OTF2_GlobalDefWriter_WriteGroup(gw, id++, r->group,
                                                                OTF2_GROUP_TYPE_REGIONS,
                                                                OTF2_PARADIGM_NONE,
                                                                OTF2_GROUP_FLAG_NONE, count,
                                                                members),
                                "WriteGroup", err, errlen);
    }
    free(members);
    free(done);
    return status;
}

/* The groups write_communicators writes before the region groups: the location group of all
 * ranks, one per communicator (or MPI group) and one per inter-communicator's remote group. */
static uint32_t communicator_group_count(const sp_unified *u)
{
    const sp_defs *g = &u->global;
    if (!g->comm_count || !sp_trace.collective)
        return 0;
    uint32_t count = comm_group(g->comm_count);
    for (uint32_t c = 0; c < g->comm_count; c++)
        count += g->comms[c].kind == SP_COMM_INTER;
    return count;
}

/* Score-P's attributes of ProgramBegin. */
static int write_attributes(OTF2_GlobalDefWriter *gw, const scorep_strings *x, char *err,
                            size_t errlen)
{
    if (sp_trace_check(OTF2_GlobalDefWriter_WriteAttribute(gw, SP_TRACE_ATTRIBUTE_PROCESS_ID,
                                                           x->process_id, x->process_id_descr,
                                                           OTF2_TYPE_UINT64),
                       "WriteAttribute", err, errlen) != 0 ||
        sp_trace_check(OTF2_GlobalDefWriter_WriteAttribute(gw, SP_TRACE_ATTRIBUTE_THREAD_ID,
                                                           x->thread_id, x->thread_id_descr,
                                                           OTF2_TYPE_UINT64),
                       "WriteAttribute", err, errlen) != 0)
        return -1;
    return 0;
}

/* Whether every process recorded all its MPI events (none while recording was off, none
 * discarded by a rewind). Collective over the group when it writes together. */
static int mpi_communication_complete(sp_measurement *m, bool *complete, char *err, size_t errlen)
{
    uint8_t mine = atomic_load(&m->mpi_events_unrecorded) ? 0 : 1;
    *complete = mine && sp_trace.collective;
    if (!sp_trace.collective)
        return 0;
    void *all = NULL;
    uint64_t *sizes = calloc(m->ipc.size, sizeof *sizes);
    if (!sizes)
        return sp_error(err, errlen, "out of memory while writing the trace definitions");
    int status = sp_ipc_gather_bytes(&m->ipc, &mine, 1, &all, sizes);
    if (status != 0)
        sp_error(err, errlen, "collecting the ranks' trace properties failed");
    else if (m->ipc.rank == 0)
        for (uint32_t r = 0; r < m->ipc.size; r++)
            if (sizes[r] != 1 || !((uint8_t *)all)[r])
                *complete = false;
    free(all);
    free(sizes);
    return status;
}

/* Score-P's archive properties (OTF2::...), where they apply: MPI communication is complete
 * when every MPI event of every rank is in the trace. */
static int set_archive_properties(const sp_unified *u, bool mpi_complete, char *err,
                                  size_t errlen)
{
    if (!has_mpi_regions(&u->global))
        return 0;
    return sp_trace_check(OTF2_Archive_SetBoolProperty(sp_trace.archive,
                                                       "OTF2::MPI_COMMUNICATION_COMPLETE",
                                                       mpi_complete, false),
                          "SetBoolProperty", err, errlen);
}

static int write_global_definitions(sp_measurement *m, sp_unified *u, char *err, size_t errlen)
{
    extra_strings x = {0};
    scorep_strings sx;
    intern_scorep_strings(u, &sx);
    if (intern_extra_strings(m, u, &x) != 0 || sp_trace_intern_io_strings(&u->global) != 0 ||
        sp_trace_intern_metric_strings(&u->global) != 0 ||
        sp_trace_intern_context_strings(&u->global) != 0) {
        free(x.levels);
        free(x.pids);
        return sp_error(err, errlen, "out of memory while writing the trace definitions");
    }
    const sp_defs *g = &u->global;
    int status = -1;
    OTF2_GlobalDefWriter *gw = OTF2_Archive_GetGlobalDefWriter(sp_trace.archive);
    if (!gw) {
        sp_error(err, errlen, "OTF2 GetGlobalDefWriter failed");
        goto out;
    }
    uint64_t begin = UINT64_MAX, end = 0, realtime = 0;
    for (uint32_t r = 0; r < u->rank_count; r++) {
        if (u->ranks[r].start_ns < begin) {
            begin = u->ranks[r].start_ns;
            realtime = u->ranks[r].realtime_start_ns;
        }
        if (u->ranks[r].end_ns > end)
            end = u->ranks[r].end_ns;
    }
    if (sp_trace_check(OTF2_GlobalDefWriter_WriteClockProperties(
                           gw, 1000000000u, begin, end > begin ? end - begin + 1 : 1, realtime),
                       "WriteClockProperties", err, errlen) != 0)
        goto out;
    for (uint32_t i = 0; i < g->strings.count; i++)
        if (sp_trace_check(OTF2_GlobalDefWriter_WriteString(gw, i, sp_defs_str(g, i)),
                           "WriteString", err, errlen) != 0)
            goto out;
    if (write_paradigms(gw, u, &sx, err, errlen) != 0 ||
        write_system_tree(gw, u, &x, err, errlen) != 0 ||
        write_system_tree_domains(gw, u, &sx, err, errlen) != 0 ||
        write_regions_and_parameters(gw, g, err, errlen) != 0 ||
        sp_trace_write_context_definitions(gw, u, err, errlen) != 0 ||
        write_communicators(gw, u, &x, err, errlen) != 0 ||
        sp_trace_write_io_definitions(gw, u, err, errlen) != 0 ||
        write_region_groups(gw, g, communicator_group_count(u), err, errlen) != 0 ||
        write_attributes(gw, &sx, err, errlen) != 0 ||
        sp_trace_write_metric_definitions(gw, u, err, errlen) != 0 ||
        sp_trace_check(OTF2_Archive_CloseGlobalDefWriter(sp_trace.archive, gw),
                       "CloseGlobalDefWriter", err, errlen) != 0)
        goto out;
    status = 0;
out:
    free(x.levels);
    free(x.pids);
    return status;
}

int sp_trace_finish(sp_measurement *m, sp_unified *u, char *err, size_t errlen)
{
    if (sp_trace.error[0] || !sp_trace.archive)
        return 0; /* given up in step 1; the results say why */
    sp_trace_capture_otf2_messages();
    bool mpi_complete = false;
    int status = mpi_communication_complete(m, &mpi_complete, err, errlen);
    if (status == 0)
        status = write_local_definitions(m, u, err, errlen);
    if (status == 0 && (!sp_trace.collective || m->ipc.rank == 0))
        status = write_global_definitions(m, u, err, errlen);
    if (status == 0 && (!sp_trace.collective || m->ipc.rank == 0))
        status = set_archive_properties(u, mpi_complete, err, errlen);
    /* Every process of a host records CLOCK_MONOTONIC (the TSC is converted to it):
     * processes of one host share it; MPI ranks are put on rank 0's clock by offsets. */
    if (status == 0)
        status = sp_trace_check(
            OTF2_Archive_SetProperty(sp_trace.archive, "SCOREP_PYTHON::CLOCK",
                                     "CLOCK_MONOTONIC nanoseconds; the processes of one host "
                                     "share this clock (child processes need no offsets), MPI "
                                     "ranks carry clock offsets to rank 0",
                                     true),
            "SetProperty", err, errlen);
    if (status == 0)
        status = sp_trace_check(OTF2_Archive_Close(sp_trace.archive), "Close", err, errlen);
    if (status == 0)
        sp_trace.archive = NULL;
    sp_trace_release_otf2_messages(err, errlen);
    return status;
}
