/* Raw records in memory: chunks of the budget per location, flushes to a spill file when
 * the budget is used up, rewinding, and the substrate's life cycle. */
#include "substrates/trace/trace_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

sp_trace_state sp_trace;

/* Where records go when not even an over-budget chunk could be allocated: they are lost
 * (counted), and the next record tries again. Per thread, so that no two locations share
 * it. */
static SP_TLS sp_trace_record lost_records[4];

static void use_chunk(sp_trace_location *tl, raw_chunk *chunk)
{
    chunk->next = NULL;
    chunk->used_end = NULL;
    tl->chunk = chunk;
    tl->pos = CHUNK_RECORDS(chunk);
    tl->end = CHUNK_END(chunk);
}

void sp_trace_retire_current_chunk(sp_trace_location *tl)
{
    raw_chunk *chunk = tl->chunk;
    if (!chunk)
        return;
    chunk->used_end = tl->pos;
    chunk->next = NULL;
    if (tl->full_last)
        ((raw_chunk *)tl->full_last)->next = chunk;
    else
        tl->full_first = chunk;
    tl->full_last = chunk;
    tl->chunk = NULL;
    tl->pos = tl->end = NULL;
}

/* ---- flushes: full chunks go to a spill file during the run ---------------------------- */

static bool can_spill(void)
{
    return sp_trace.spill_prefix[0] != '\0';
}

void sp_trace_spill_path(const sp_trace_location *tl, char *path, size_t size)
{
    snprintf(path, size, "%s%u.raw", sp_trace.spill_prefix, tl->location->index);
}

static void spill_failed(int error)
{
    if (sp_trace.spill_failures++ == 0)
        snprintf(sp_trace.spill_error, sizeof sp_trace.spill_error, "%s", strerror(error));
}

/* Writes the location's full chunks to its spill file and gives them back to the budget.
 * Returns false when the file cannot be written (the chunks stay in memory). */
static bool spill_full_chunks(sp_trace_location *tl)
{
    if (!tl->spill) {
        char path[4200];
        sp_trace_spill_path(tl, path, sizeof path);
        tl->spill = fopen(path, tl->spill_closed ? "a+b" : "w+b");
        if (tl->spill && tl->spill_closed && fseek(tl->spill, 0, SEEK_END) != 0) {
            fclose(tl->spill);
            tl->spill = NULL;
        }
        if (!tl->spill) {
            spill_failed(errno);
            return false;
        }
        /* Unbuffered (chunks are written whole anyway): a forked child that exits must find
         * no stdio buffer of ours to flush into the parent's file. */
        setvbuf(tl->spill, NULL, _IONBF, 0);
        tl->spill_closed = false;
    }
    FILE *f = tl->spill;
    raw_chunk *chunk = tl->full_first;
    while (chunk) {
        raw_chunk *next = chunk->next;
        uint64_t bytes = (uint64_t)((char *)chunk->used_end - (char *)CHUNK_RECORDS(chunk));
        long good = ftell(f);
        if (fwrite(&bytes, sizeof bytes, 1, f) != 1 ||
            fwrite(CHUNK_RECORDS(chunk), 1, bytes, f) != bytes) {
            /* A full disk or file size limit: the chunk stays in memory (over budget) and
             * the part of it that was written is cut off again, so the file stays whole. */
            spill_failed(errno);
            clearerr(f);
            if (good < 0 || ftruncate(fileno(f), good) != 0 || fseek(f, good, SEEK_SET) != 0) {
                /* The file cannot be repaired: give up spilling for this location. */
                fclose(f);
                tl->spill = NULL;
                char path[4200];
                sp_trace_spill_path(tl, path, sizeof path);
                unlink(path);
                sp_trace.spill_prefix[0] = '\0';
            }
            tl->full_first = chunk;
            return false;
        }
        sp_chunk_pool_put(&sp_trace.meas->pool, chunk);
        chunk = next;
    }
    tl->full_first = tl->full_last = NULL;
    return true;
}

static void put_flush_record(sp_trace_location *tl, uint64_t begin)
{
    uint64_t end = sp_clock_now();
    sp_trace_put_value(tl, begin, SP_REC_BUFFER_FLUSH, 0, end, 0);
    sp_location_paused(tl->location, begin, end);
}

/* The chunk pool's reclaim callback: the profile (or anyone) needs memory and the budget
 * is used up, so the asking location's full trace chunks go to disk. */
static bool reclaim_by_flushing(void *user, void *requester)
{
    (void)user;
    sp_trace_location *tl = trace_location(requester);
    if (!tl || !tl->full_first || !can_spill())
        return false;
    uint64_t begin = tl->location->last_time;
    if (!spill_full_chunks(tl))
        return false;
    tl->flushes++;
    put_flush_record(tl, begin);
    return true;
}

sp_trace_record *sp_trace_next_chunk(sp_trace_location *tl, unsigned count)
{
    sp_chunk_pool *pool = &sp_trace.meas->pool;
    if (!tl->chunk) {
        if (tl->end != lost_records)
            tl->lost_records++; /* it wrote into the sink (not a retired location) */
    } else {
        sp_trace_retire_current_chunk(tl);
    }
    raw_chunk *chunk = sp_chunk_pool_get(pool, false);
    uint64_t flush_begin = 0;
    if (!chunk) {
        /* The budget is used up: this location's records go to disk now. The pause is
         * real (the program waits), so the trace shows it. Until the experiment directory
         * exists (MPI not initialized yet) the chunk is taken over budget instead. */
        if (can_spill()) {
            flush_begin = tl->location->last_time;
            if (spill_full_chunks(tl))
                tl->flushes++;
            else
                flush_begin = 0;
        }
        chunk = sp_chunk_pool_get(pool, true);
    }
    if (!chunk) {
        tl->pos = lost_records;
        tl->end = lost_records + 4;
        return lost_records; /* count <= 3 always fits */
    }
    use_chunk(tl, chunk);
    if (flush_begin) {
        uint64_t end = sp_clock_now();
        sp_trace_record *r = tl->pos;
        r->time = flush_begin;
        r->kind = SP_REC_BUFFER_FLUSH;
        r->ref = 0;
        ((sp_trace_payload *)(r + 1))->a = end;
        tl->pos = r + 2;
        sp_location_paused(tl->location, flush_begin, end);
    }
    (void)count; /* a fresh chunk holds far more than any record needs */
    return tl->pos;
}

void sp_trace_program_begin(sp_trace_location *tl, uint64_t time)
{
    sp_trace.process_id = (uint64_t)getpid();
    sp_trace.thread_id = (uint64_t)syscall(SYS_gettid);
    sp_trace_put(tl, time, SP_REC_PROGRAM_BEGIN, 0);
}

/* ---- rewinding ----------------------------------------------------------------------- */

bool sp_trace_mark(sp_trace_location *tl, sp_substrate_mark *mark)
{
    mark->word[0] = (uintptr_t)tl->chunk;
    mark->word[1] = (uintptr_t)tl->pos;
    mark->word[2] = tl->flushes;
    return true;
}

bool sp_trace_rewind(sp_trace_location *tl, const sp_substrate_mark *mark)
{
    raw_chunk *chunk = (raw_chunk *)mark->word[0];
    sp_trace_record *pos = (sp_trace_record *)mark->word[1];
    if (mark->word[2] != tl->flushes || !chunk)
        return false;
    if (chunk == tl->chunk) {
        tl->pos = pos;
        return true;
    }
    raw_chunk *prev = NULL, *c = tl->full_first;
    while (c && c != chunk) {
        prev = c;
        c = c->next;
    }
    if (!c)
        return false;
    for (raw_chunk *x = c->next; x;) {
        raw_chunk *next = x->next;
        sp_chunk_pool_put(&sp_trace.meas->pool, x);
        x = next;
    }
    sp_chunk_pool_put(&sp_trace.meas->pool, tl->chunk);
    if (prev)
        prev->next = NULL;
    else
        tl->full_first = NULL;
    tl->full_last = prev;
    use_chunk(tl, c);
    tl->pos = pos;
    return true;
}

/* ---- life cycle ---------------------------------------------------------------------- */

int sp_trace_start(sp_measurement *m, unsigned slot, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    memset(&sp_trace, 0, sizeof sp_trace);
    sp_trace.meas = m;
    sp_trace.slot = slot;
    sp_chunk_pool_set_reclaim(&m->pool, reclaim_by_flushing, NULL);
    return 0;
}

void sp_trace_set_spill_dir(const char *dir)
{
    char host[256] = "host";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    snprintf(sp_trace.spill_prefix, sizeof sp_trace.spill_prefix, "%s/.scorep-spill-%s-%ld-",
             dir, host, (long)getpid());
}

int sp_trace_location_open(sp_location *loc)
{
    sp_trace_location *tl = calloc(1, sizeof *tl);
    if (!tl)
        return -1;
    tl->location = loc;
    raw_chunk *chunk = sp_chunk_pool_get(&sp_trace.meas->pool, true);
    if (!chunk) {
        free(tl);
        return -1;
    }
    use_chunk(tl, chunk);
    loc->substrate[sp_trace.slot] = tl;
    return sp_trace_contexts_open(tl);
}

void sp_trace_location_retire(sp_location *loc)
{
    sp_trace_location *tl = trace_location(loc);
    if (!tl || !can_spill())
        return;
    sp_trace_retire_current_chunk(tl);
    /* An empty window at the sink's start: the next record asks for a new chunk, and
     * sp_trace_next_chunk tells this apart from records lost in the sink. */
    tl->pos = tl->end = lost_records;
    if (tl->full_first && !spill_full_chunks(tl))
        return;
    if (tl->spill) {
        fclose(tl->spill);
        tl->spill = NULL;
        tl->spill_closed = true;
    }
}

static void remove_spill_file(sp_trace_location *tl)
{
    if (!tl->spill && !tl->spill_closed)
        return;
    if (tl->spill)
        fclose(tl->spill);
    tl->spill = NULL;
    tl->spill_closed = false;
    char path[4200];
    sp_trace_spill_path(tl, path, sizeof path);
    unlink(path);
}

void sp_trace_location_free(sp_location *loc)
{
    if (!sp_trace.meas)
        return;
    sp_trace_location *tl = trace_location(loc);
    if (!tl)
        return;
    remove_spill_file(tl);
    sp_trace_contexts_free(tl);
    /* The chunks are the pool's: it goes away as a whole with the measurement. */
    free(tl);
    loc->substrate[sp_trace.slot] = NULL;
}

void sp_trace_results(sp_measurement *m, sp_results *r)
{
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs; i++) {
        sp_trace_location *tl = trace_location(m->locations[i]);
        if (tl) {
            r->trace_flushes += tl->flushes;
            r->trace_lost_records += tl->lost_records;
        }
    }
    sp_trace_adopted_results(m, r);
    r->trace_spill_failures = sp_trace.spill_failures;
    snprintf(r->trace_spill_error, sizeof r->trace_spill_error, "%s", sp_trace.spill_error);
    snprintf(r->trace_error, sizeof r->trace_error, "%s", sp_trace.error);
}

void sp_trace_stop(sp_measurement *m)
{
    /* After a failed write OTF2's buffers are broken and closing the archive would flush
     * them again and crash: such an archive is left unclosed (its memory is lost). */
    if (sp_trace.archive && !sp_trace.broken)
        OTF2_Archive_Close(sp_trace.archive);
    sp_trace.archive = NULL;
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs; i++) {
        sp_trace_location *tl = m->locations[i] ? trace_location(m->locations[i]) : NULL;
        if (tl)
            remove_spill_file(tl);
    }
    sp_chunk_pool_set_reclaim(&m->pool, NULL, NULL);
}
