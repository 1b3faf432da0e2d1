/* The wait-state analysis offline (scorep-report EXP --wait-states): the MPI operations of
 * every rank read from an OTF2 archive, on one clock (OTF2 applies the clock offsets the
 * ranks measured, read with the local definitions), turned into the engine's neutral
 * operations (core/waitstates.h) by the builder the trace substrate feeds its raw records
 * to at the end of a run (core/waitstates_build.h), and replayed by the same engine
 * with one thread per rank over an in-process group (core/ipc_threads.h). The same code on
 * the same events gives the same waiting, online or offline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#include "core/events.h"
#include "core/ipc_threads.h"
#include "core/waitstates.h"
#include "core/waitstates_build.h"
#include "reader/rd.h"
#include "reader/rd_pass.h"

/* Window keys: the trace's unified window refs (the same on every rank), apart from the
 * communicators' refs. */
#define KEY_WINDOW (1ull << 62)

typedef struct {
    rd_pass_ctx pass; /* first: the message callbacks reach on_message through it */
    const rd_defs *d;
    const uint32_t *rank_of_group; /* per location group ref: rank, RD_NONE */
    uint32_t nranks;
    uint32_t locations_group; /* the COMM_LOCATIONS group the MPI groups index, RD_NONE */
    sp_ws_builder *b; /* the rank being read */
} wr_ctx;

/* ns on the trace's clock (the ranks' clock offsets already applied by OTF2). */
static int64_t to_ns(const rd_defs *d, OTF2_TimeStamp time)
{
    int64_t t = (int64_t)(time - d->offset);
    if (d->resolution == 1000000000u || d->resolution == 0)
        return t;
    return (int64_t)((double)t * (1e9 / (double)d->resolution) + (t < 0 ? -0.5 : 0.5));
}

/* The builder's questions (core/waitstates_build.h), answered from the trace's
 * definitions: communicators by their unified refs, the same on every rank. */
static const char *region_name(void *ctx, uint32_t region)
{
    const rd_defs *d = ((wr_ctx *)ctx)->d;
    return rd_string(d, d->regions[region].name);
}

static bool comm_of(void *ctx, uint32_t comm, uint64_t *key, uint32_t *size)
{
    const rd_comm *m = &((wr_ctx *)ctx)->d->comms[comm];
    if (!m->defined || m->inter || !m->rank_to_lgroup)
        return false;
    *key = comm;
    *size = m->size;
    return true;
}

static uint32_t member_of(void *ctx, uint32_t comm, uint32_t i)
{
    const wr_ctx *c = ctx;
    uint32_t g = c->d->comms[comm].rank_to_lgroup[i];
    /* MPI_COMM_SELF's and other worlds' processes are no ranks of this world */
    if (g == RD_NONE || g >= c->d->nlgroups || c->rank_of_group[g] == RD_NONE)
        return SP_WS_NO_RANK;
    return c->rank_of_group[g];
}

static bool window_of(void *ctx, uint32_t win, uint64_t *key, uint32_t *comm)
{
    const rd_defs *d = ((wr_ctx *)ctx)->d;
    if (d->win_comm[win] == RD_NONE)
        return false;
    *key = KEY_WINDOW | win;
    *comm = d->win_comm[win];
    return true;
}

/* An MPI group of an RMA epoch: a COMM_GROUP, its members indices into the COMM_LOCATIONS
 * group (OTF2's rules). */
static bool group_of(void *ctx, uint32_t group, uint32_t *size)
{
    const wr_ctx *c = ctx;
    const rd_defs *d = c->d;
    if (group >= d->ngroups || !d->groups[group].defined ||
        d->groups[group].type != OTF2_GROUP_TYPE_COMM_GROUP || c->locations_group == RD_NONE)
        return false;
    *size = d->groups[group].size;
    return true;
}

static uint32_t group_member(void *ctx, uint32_t group, uint32_t i)
{
    const wr_ctx *c = ctx;
    const rd_defs *d = c->d;
    const rd_group *all = &d->groups[c->locations_group];
    uint64_t index = d->groups[group].members[i];
    if (index >= all->size)
        return SP_WS_NO_RANK;
    uint32_t li = rd_location_index(d, all->members[index]);
    uint32_t g = li == RD_NONE ? RD_NONE : d->locations[li].group;
    return g == RD_NONE || g >= d->nlgroups || c->rank_of_group[g] == RD_NONE
               ? SP_WS_NO_RANK
               : c->rank_of_group[g];
}

static OTF2_CallbackCode result(int status)
{
    return status == 0 ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}

static uint8_t collective_op(OTF2_CollectiveOp op)
{
    switch (op) {
    case OTF2_COLLECTIVE_OP_BARRIER: return SP_COLL_BARRIER;
    case OTF2_COLLECTIVE_OP_BCAST: return SP_COLL_BCAST;
    case OTF2_COLLECTIVE_OP_GATHER: return SP_COLL_GATHER;
    case OTF2_COLLECTIVE_OP_GATHERV: return SP_COLL_GATHERV;
    case OTF2_COLLECTIVE_OP_SCATTER: return SP_COLL_SCATTER;
    case OTF2_COLLECTIVE_OP_SCATTERV: return SP_COLL_SCATTERV;
    case OTF2_COLLECTIVE_OP_ALLGATHER: return SP_COLL_ALLGATHER;
    case OTF2_COLLECTIVE_OP_ALLGATHERV: return SP_COLL_ALLGATHERV;
    case OTF2_COLLECTIVE_OP_ALLTOALL: return SP_COLL_ALLTOALL;
    case OTF2_COLLECTIVE_OP_ALLTOALLV: return SP_COLL_ALLTOALLV;
    case OTF2_COLLECTIVE_OP_ALLTOALLW: return SP_COLL_ALLTOALLW;
    case OTF2_COLLECTIVE_OP_ALLREDUCE: return SP_COLL_ALLREDUCE;
    case OTF2_COLLECTIVE_OP_REDUCE: return SP_COLL_REDUCE;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER: return SP_COLL_REDUCE_SCATTER;
    case OTF2_COLLECTIVE_OP_SCAN: return SP_COLL_SCAN;
    case OTF2_COLLECTIVE_OP_EXSCAN: return SP_COLL_EXSCAN;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK: return SP_COLL_REDUCE_SCATTER_BLOCK;
    case OTF2_COLLECTIVE_OP_CREATE_HANDLE: return SP_COLL_CREATE_HANDLE;
    case OTF2_COLLECTIVE_OP_DESTROY_HANDLE: return SP_COLL_DESTROY_HANDLE;
    case OTF2_COLLECTIVE_OP_ALLOCATE: return SP_COLL_ALLOCATE;
    case OTF2_COLLECTIVE_OP_DEALLOCATE: return SP_COLL_DEALLOCATE;
    case OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE: return SP_COLL_CREATE_HANDLE_AND_ALLOCATE;
    case OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE:
        return SP_COLL_DESTROY_HANDLE_AND_DEALLOCATE;
    default: return SP_COLL_CREATE_HANDLE; /* no data moves: the engine leaves it out */
    }
}

static OTF2_CallbackCode on_enter(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                  void *ud, OTF2_AttributeList *attributes, OTF2_RegionRef region)
{
    (void)location, (void)pos, (void)attributes;
    wr_ctx *c = ud;
    return result(sp_ws_builder_enter(c->b, region, to_ns(c->d, time)));
}

static OTF2_CallbackCode on_leave(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                  void *ud, OTF2_AttributeList *attributes, OTF2_RegionRef region)
{
    (void)location, (void)pos, (void)attributes, (void)region;
    wr_ctx *c = ud;
    return result(sp_ws_builder_leave(c->b, to_ns(c->d, time)));
}

static OTF2_CallbackCode on_message(void *ud, const rd_message_event *m)
{
    sp_ws_builder *b = ((wr_ctx *)ud)->b;
    uint64_t request = m->blocking ? SP_WS_NO_REQUEST : m->request;
    if (m->send)
        return result(sp_ws_builder_send(b, m->comm, m->peer, m->tag, m->length, m->blocking,
                                         request));
    return result(sp_ws_builder_recv(b, m->comm, m->peer, m->tag, m->length, request));
}

static OTF2_CallbackCode on_isend_complete(OTF2_LocationRef location, OTF2_TimeStamp time,
                                           uint64_t pos, void *ud,
                                           OTF2_AttributeList *attributes, uint64_t request)
{
    (void)location, (void)time, (void)pos, (void)attributes;
    return result(sp_ws_builder_isend_complete(((wr_ctx *)ud)->b, request));
}

/* MPI_Win_post/start/complete/wait/test: the epoch's group. */
static OTF2_CallbackCode on_rma_group_sync(OTF2_LocationRef location, OTF2_TimeStamp time,
                                           uint64_t pos, void *ud,
                                           OTF2_AttributeList *attributes,
                                           OTF2_RmaSyncLevel level, OTF2_RmaWinRef win,
                                           OTF2_GroupRef group)
{
    (void)location, (void)time, (void)pos, (void)attributes, (void)level;
    return result(sp_ws_builder_rma_group_sync(((wr_ctx *)ud)->b, win, group));
}

static OTF2_CallbackCode on_irecv_request(OTF2_LocationRef location, OTF2_TimeStamp time,
                                          uint64_t pos, void *ud, OTF2_AttributeList *attributes,
                                          uint64_t request)
{
    (void)location, (void)time, (void)pos, (void)attributes;
    return result(sp_ws_builder_irecv_request(((wr_ctx *)ud)->b, request));
}

static OTF2_CallbackCode on_collective_end(OTF2_LocationRef location, OTF2_TimeStamp time,
                                           uint64_t pos, void *ud, OTF2_AttributeList *attributes,
                                           OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root,
                                           uint64_t sent, uint64_t received)
{
    (void)location, (void)time, (void)pos, (void)attributes, (void)sent, (void)received;
    /* OTF2_UNDEFINED_UINT32, no root, is above every communicator's size */
    return result(sp_ws_builder_collective(((wr_ctx *)ud)->b, comm, collective_op(op), root));
}

/* MPI_Win_fence: its RMA collective record (win: the window). */
static OTF2_CallbackCode on_rma_collective_end(OTF2_LocationRef location, OTF2_TimeStamp time,
                                               uint64_t pos, void *ud,
                                               OTF2_AttributeList *attributes,
                                               OTF2_CollectiveOp op, OTF2_RmaSyncLevel level,
                                               OTF2_RmaWinRef win, uint32_t root, uint64_t sent,
                                               uint64_t received)
{
    (void)location, (void)time, (void)pos, (void)attributes, (void)op, (void)level;
    (void)root, (void)sent, (void)received;
    return result(sp_ws_builder_rma_collective(((wr_ctx *)ud)->b, win));
}

/* The ranks of the world: MPI_COMM_WORLD's members (the first communicator of that name;
 * the worlds of MPI_Comm_spawn come after it). */
static const rd_comm *world_of(const rd_defs *d)
{
    for (uint32_t i = 0; i < d->ncomms; i++)
        if (d->comms[i].defined && !d->comms[i].inter && d->comms[i].rank_to_lgroup &&
            !strcmp(rd_string(d, d->comms[i].name), "MPI_COMM_WORLD"))
            return &d->comms[i];
    return NULL;
}

typedef struct {
    sp_ws_input in;
    sp_ws_result result;
    char err[256];
} wr_rank;

static int replay_rank(const sp_ipc *ipc, void *arg)
{
    wr_rank *w = arg;
    return sp_ws_run(ipc, true, &w->in, &w->result, w->err, sizeof w->err);
}

static int read_ranks(const rd_trace *t, wr_ctx *c, wr_rank *ranks, char *err, size_t errlen)
{
    const rd_defs *d = &t->defs;
    OTF2_Reader *r = rd_pass_open(t, err, errlen);
    if (!r)
        return -1;
    OTF2_EvtReaderCallbacks *cb = OTF2_EvtReaderCallbacks_New();
    if (!cb) {
        rd_pass_close(r);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    OTF2_EvtReaderCallbacks_SetEnterCallback(cb, on_enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, on_leave);
    rd_pass_messages(cb);
    OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, on_irecv_request);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, on_collective_end);
    OTF2_EvtReaderCallbacks_SetRmaCollectiveEndCallback(cb, on_rma_collective_end);
    OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, on_isend_complete);
    OTF2_EvtReaderCallbacks_SetRmaGroupSyncCallback(cb, on_rma_group_sync);
    int status = 0;
    sp_ws_source source = {
        .ctx = c,
        .group_size = c->nranks,
        .region_count = d->nregions,
        .comm_count = d->ncomms,
        .win_count = d->nwins,
        .region_name = region_name,
        .comm = comm_of,
        .member = member_of,
        .window = window_of,
        .group_count = d->ngroups,
        .group = group_of,
        .group_member = group_member,
    };
    /* Rank by rank, each rank's locations in definition order (as a rank reads its own
     * locations at the end of a run): a builder per rank, as call paths and communicators
     * are per rank. */
    for (uint32_t rank = 0; rank < c->nranks && status == 0; rank++) {
        c->b = sp_ws_builder_new(&source, &ranks[rank].in);
        if (!c->b) {
            snprintf(err, errlen, "out of memory reading the MPI events");
            status = -1;
            break;
        }
        for (uint32_t li = 0; li < d->nlocations && status == 0; li++) {
            uint32_t g = d->locations[li].group;
            if (g >= d->nlgroups || c->rank_of_group[g] != rank)
                continue;
            if (sp_ws_builder_location(c->b, li) != 0)
                break;
            if (rd_pass_location(r, t, li, cb, c, err, errlen) < 0)
                status = -1;
        }
        if (sp_ws_builder_finish(c->b) != 0 && status == 0)
            status = -1, snprintf(err, errlen, "out of memory reading the MPI events");
        c->b = NULL;
    }
    OTF2_EvtReaderCallbacks_Delete(cb);
    rd_pass_close(r);
    return status;
}

int rd_wait_states(const rd_trace *t, rd_ws *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const rd_defs *d = &t->defs;
    const rd_comm *world = world_of(d);
    if (!world) {
        snprintf(err, errlen, "%s: not a trace of an MPI run (no MPI_COMM_WORLD); wait states "
                 "are times ranks wait for each other", t->path);
        return -1;
    }
    out->ranks = world->size;
    out->nmetrics = SP_WS_METRIC_COUNT;
    out->names = sp_ws_metric_names;
    out->parents = sp_ws_metric_parent;
    if (world->size < 2)
        return 0; /* one rank waits for nobody */
    wr_ctx c;
    memset(&c, 0, sizeof c);
    c.pass.on_message = on_message;
    c.d = d;
    c.nranks = world->size;
    c.locations_group = RD_NONE;
    for (uint32_t g = 0; g < d->ngroups; g++)
        if (d->groups[g].defined && d->groups[g].type == OTF2_GROUP_TYPE_COMM_LOCATIONS &&
            d->groups[g].paradigm == OTF2_PARADIGM_MPI) {
            c.locations_group = g;
            break;
        }
    uint32_t *rank_of_group = malloc((d->nlgroups + 1) * sizeof *rank_of_group);
    wr_rank *ranks = calloc(world->size, sizeof *ranks);
    void **args = calloc(world->size, sizeof *args);
    int status = 0;
    if (!rank_of_group || !ranks || !args) {
        snprintf(err, errlen, "out of memory for the wait-state analysis");
        status = -1;
    } else {
        for (uint32_t g = 0; g < d->nlgroups; g++)
            rank_of_group[g] = RD_NONE;
        for (uint32_t r = 0; r < world->size; r++)
            if (world->rank_to_lgroup[r] < d->nlgroups)
                rank_of_group[world->rank_to_lgroup[r]] = r;
        c.rank_of_group = rank_of_group;
        status = read_ranks(t, &c, ranks, err, errlen);
    }
    for (uint32_t r = 0; status == 0 && r < world->size; r++) {
        args[r] = &ranks[r];
        if (sp_ws_result_init(&ranks[r].result, ranks[r].in.path_count) != 0) {
            snprintf(err, errlen, "out of memory for the wait-state analysis");
            status = -1;
        }
    }
    if (status == 0 && sp_ipc_threads_run(world->size, 0, replay_rank, args, err, errlen) != 0) {
        for (uint32_t r = 0; r < world->size; r++)
            if (ranks[r].err[0]) {
                snprintf(err, errlen, "the wait-state replay failed on rank %u: %s", r,
                         ranks[r].err);
                break;
            }
        status = -1;
    }
    /* The rows: every call path with any waiting, as its regions from the root. */
    for (uint32_t r = 0; status == 0 && ranks && r < world->size; r++) {
        const sp_ws_input *in = &ranks[r].in;
        const sp_ws_result *res = &ranks[r].result;
        out->violations += res->clock_violations;
        out->unmatched += res->unmatched;
        out->skipped += res->collectives_skipped;
        /* at most a row per call path: room for all of this rank's at once */
        if (in->path_count) {
            rd_ws_row *grown = realloc(out->rows, (out->nrows + in->path_count) * sizeof *grown);
            if (!grown) {
                snprintf(err, errlen, "out of memory for the wait-state results");
                status = -1;
                break;
            }
            out->rows = grown;
            out->cap = out->nrows + in->path_count;
        }
        for (uint32_t p = 0; p < in->path_count && status == 0; p++) {
            const double *ns = res->time + (size_t)p * SP_WS_METRIC_COUNT;
            const uint64_t *n = res->count + (size_t)p * SP_WS_METRIC_COUNT;
            bool any = false;
            for (int k = 0; k < SP_WS_METRIC_COUNT; k++)
                any |= ns[k] > 0 || n[k] > 0;
            if (!any)
                continue;
            uint32_t depth = 0;
            for (uint32_t q = p; q != SP_WS_NO_PATH; q = in->path_parent[q])
                depth++;
            rd_ws_row row = {in->path_location[p], r, depth,
                             malloc(depth * sizeof(uint32_t)),
                             calloc(SP_WS_METRIC_COUNT, sizeof(double)),
                             calloc(SP_WS_METRIC_COUNT, sizeof(uint64_t))};
            if (!row.regions || !row.time || !row.count) {
                free(row.regions), free(row.time), free(row.count);
                snprintf(err, errlen, "out of memory for the wait-state results");
                status = -1;
                break;
            }
            uint32_t i = depth;
            for (uint32_t q = p; q != SP_WS_NO_PATH; q = in->path_parent[q])
                row.regions[--i] = in->path_region[q];
            for (int k = 0; k < SP_WS_METRIC_COUNT; k++) {
                /* seconds, or for a count metric ("occ") the number of instances */
                row.time[k] = strcmp(sp_ws_metric_unit[k], "occ") ? ns[k] * 1e-9 : ns[k];
                row.count[k] = n[k];
            }
            out->rows[out->nrows++] = row;
        }
    }
    for (uint32_t r = 0; ranks && r < world->size; r++) {
        sp_ws_input_free(&ranks[r].in);
        sp_ws_result_free(&ranks[r].result);
    }
    free(ranks);
    free(args);
    free(rank_of_group);
    if (status != 0)
        rd_ws_free(out);
    return status;
}

void rd_ws_free(rd_ws *ws)
{
    for (size_t i = 0; i < ws->nrows; i++) {
        free(ws->rows[i].regions);
        free(ws->rows[i].time);
        free(ws->rows[i].count);
    }
    free(ws->rows);
    ws->rows = NULL;
    ws->nrows = ws->cap = 0;
}

uint32_t rd_ws_metrics(const char *const **names, const int **parents)
{
    *names = sp_ws_metric_names;
    *parents = sp_ws_metric_parent;
    return SP_WS_METRIC_COUNT;
}
