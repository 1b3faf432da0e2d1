/* The trace's part of the wait-state analysis at the end of a run (core/waitstates.h): the
 * MPI operations of this process, read from the raw records still in memory (and spilled
 * to disk) before they are encoded and fed to the core's builder (core/waitstates_build.h),
 * the same one that reads an OTF2 archive offline (reader/rd_waitstates.c). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/waitstates.h"
#include "core/waitstates_build.h"
#include "substrates/trace/trace.h"
#include "substrates/trace/trace_internal.h"

/* Reads this process's records into the builder (core/waitstates_build.h). */
typedef struct {
    sp_measurement *m;
    sp_ws_builder *b;
    double ns_per_tick;
    bool failed; /* a spilled chunk could not be read */
} ws_reader;

static int64_t to_common_ns(void *ctx, uint64_t ticks)
{
    const ws_reader *rd = ctx;
    const sp_measurement *m = rd->m;
    int64_t ns;
    if (sp_clock_timer == SP_TIMER_CLOCK_GETTIME)
        ns = (int64_t)ticks;
    else
        ns = (int64_t)m->start.monotonic_ns +
             (int64_t)((double)(int64_t)(ticks - m->start.ticks) * rd->ns_per_tick + 0.5);
    /* The root's clock: the offsets measured at the start and the end, interpolated. */
    const sp_clock_sync *s = &m->clock_sync;
    int64_t offset = s->offset_begin_ns;
    if (s->sync_end_ns > s->sync_begin_ns) {
        double f = ((double)ns - (double)s->sync_begin_ns) /
                   (double)(s->sync_end_ns - s->sync_begin_ns);
        if (f > 1)
            f = 1;
        if (f > 0)
            offset += (int64_t)(f * (double)(s->offset_end_ns - s->offset_begin_ns));
    }
    return ns + offset;
}

/* The builder's questions, answered from the measurement's definitions. */
static const char *region_name(void *ctx, uint32_t region)
{
    const sp_defs *defs = &((sp_measurement *)ctx)->defs;
    return sp_defs_str(defs, defs->regions[region].name);
}

static bool comm_of(void *ctx, uint32_t comm, uint64_t *key, uint32_t *size)
{
    const sp_comm *c = &((sp_measurement *)ctx)->defs.comms[comm];
    if (c->kind == SP_COMM_INTER || c->kind == SP_COMM_GROUP)
        return false;
    *key = c->key;
    *size = c->size;
    return true;
}

static uint32_t member_of(void *ctx, uint32_t comm, uint32_t i)
{
    uint64_t process = ((sp_measurement *)ctx)->defs.comms[comm].members[i];
    /* another world's ranks (MPI_Comm_spawn) are not in this group */
    return SP_PROCESS_WORLD(process) != 0 ? SP_WS_NO_RANK : SP_PROCESS_RANK(process);
}

static bool window_of(void *ctx, uint32_t win, uint64_t *key, uint32_t *comm)
{
    const sp_rma_win *w = &((sp_measurement *)ctx)->defs.wins[win];
    *key = w->key;
    *comm = w->comm;
    return true;
}

static bool group_of(void *ctx, uint32_t group, uint32_t *size)
{
    const sp_comm *c = &((sp_measurement *)ctx)->defs.comms[group];
    if (c->kind != SP_COMM_GROUP)
        return false;
    *size = c->size;
    return true;
}

static int64_t ns_already(void *ctx, uint64_t time)
{
    (void)ctx;
    return (int64_t)time;
}

int sp_trace_wait_state_records(sp_ws_builder *b, const sp_trace_record *r,
                                const sp_trace_record *end,
                                int64_t (*to_ns)(void *ctx, uint64_t time), void *ctx)
{
    if (!to_ns)
        to_ns = ns_already;
    int status = 0;
    while (r < end && status == 0) {
        unsigned len = sp_trace_record_length(r);
        const sp_trace_payload *p = (const sp_trace_payload *)(r + 1);
        switch (r->kind) {
        case SP_REC_ENTER:
            status = sp_ws_builder_enter(b, r->ref, to_ns(ctx, r->time));
            break;
        case SP_REC_LEAVE:
            status = sp_ws_builder_leave(b, to_ns(ctx, r->time));
            break;
        /* point to point: peer << 32 | tag in payload b, the bytes in a */
        case SP_REC_MPI_SEND:
        case SP_REC_MPI_ISEND: {
            /* MPI_Isend's record carries its request in a second payload */
            uint64_t request = r->kind == SP_REC_MPI_ISEND
                                   ? ((const sp_trace_payload *)(r + 2))->a
                                   : SP_WS_NO_REQUEST;
            status = sp_ws_builder_send(b, r->ref, (uint32_t)(p->b >> 32), (uint32_t)p->b,
                                        p->a, r->kind == SP_REC_MPI_SEND, request);
            break;
        }
        case SP_REC_MPI_ISEND_COMPLETE:
            status = sp_ws_builder_isend_complete(b, p->a);
            break;
        case SP_REC_RMA_GROUP_SYNC: /* ref: the window, b: the group's communicator id */
            status = sp_ws_builder_rma_group_sync(b, r->ref, (uint32_t)p->b);
            break;
        case SP_REC_MPI_RECV:
        case SP_REC_MPI_IRECV: {
            /* MPI_Irecv's completion carries its request in a second payload */
            uint64_t request = r->kind == SP_REC_MPI_IRECV
                                   ? ((const sp_trace_payload *)(r + 2))->a
                                   : SP_WS_NO_REQUEST;
            status = sp_ws_builder_recv(b, r->ref, (uint32_t)(p->b >> 32), (uint32_t)p->b,
                                        p->a, request);
            break;
        }
        case SP_REC_RMA_COLLECTIVE_END: /* ref: the window */
            status = sp_ws_builder_rma_collective(b, r->ref);
            break;
        case SP_REC_MPI_IRECV_REQUEST:
            status = sp_ws_builder_irecv_request(b, p->a);
            break;
        case SP_REC_MPI_COLLECTIVE_END: {
            const sp_trace_payload *q = (const sp_trace_payload *)(r + 2);
            status = sp_ws_builder_collective(b, r->ref, (uint8_t)q->a, q->b);
            break;
        }
        default:
            break;
        }
        r += len ? len : 1;
    }
    return status;
}

static void read_records(ws_reader *rd, const sp_trace_record *r, const sp_trace_record *end)
{
    if (sp_trace_wait_state_records(rd->b, r, end, to_common_ns, rd) != 0)
        rd->failed = true;
}

static void read_spill(ws_reader *rd, sp_trace_location *tl, void *buffer)
{
    char path[4200];
    sp_trace_spill_path(tl, path, sizeof path);
    FILE *f = tl->spill ? tl->spill : tl->spill_closed ? fopen(path, "rb") : NULL;
    if (!f)
        return;
    rewind(f);
    uint64_t bytes;
    while (!rd->failed && fread(&bytes, sizeof bytes, 1, f) == 1) {
        if (bytes > SP_TRACE_CHUNK_SIZE || fread(buffer, 1, bytes, f) != bytes) {
            rd->failed = true;
            break;
        }
        read_records(rd, buffer, (const sp_trace_record *)((char *)buffer + bytes));
    }
    if (f != tl->spill)
        fclose(f);
    else
        fseek(f, 0, SEEK_END); /* the encoder reads it again from the start */
}

int sp_trace_wait_state_input(sp_measurement *m, sp_ws_input *in, char *err, size_t errlen)
{
    memset(in, 0, sizeof *in);
    ws_reader rd = {.m = m};
    uint64_t ticks = m->end.ticks - m->start.ticks;
    uint64_t ns = m->end.monotonic_ns - m->start.monotonic_ns;
    rd.ns_per_tick = ticks ? (double)ns / (double)ticks : 1.0;
    sp_ws_source source = {
        .ctx = m,
        .group_size = m->ipc.size,
        .region_count = m->defs.region_count,
        .comm_count = m->defs.comm_count,
        .win_count = m->defs.win_count,
        .region_name = region_name,
        .comm = comm_of,
        .member = member_of,
        .window = window_of,
        .group_count = m->defs.comm_count, /* groups are communicators of their own kind */
        .group = group_of,
        .group_member = member_of,
    };
    rd.b = sp_ws_builder_new(&source, in);
    void *buffer = malloc(SP_TRACE_CHUNK_SIZE);
    if (!rd.b || !buffer)
        rd.failed = true;
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t l = 0; l < nlocs && !rd.failed; l++) {
        sp_trace_location *tl = trace_location(m->locations[l]);
        if (!tl)
            continue;
        if (sp_ws_builder_location(rd.b, l) != 0)
            break;
        read_spill(&rd, tl, buffer);
        sp_trace_retire_current_chunk(tl);
        for (raw_chunk *c = tl->full_first; c && !rd.failed; c = c->next)
            read_records(&rd, CHUNK_RECORDS(c), c->used_end);
    }
    free(buffer);
    if (sp_ws_builder_finish(rd.b) != 0 || rd.failed) {
        sp_ws_input_free(in);
        return sp_error(err, errlen, "out of memory or unreadable records in the wait-state analysis");
    }
    return 0;
}
