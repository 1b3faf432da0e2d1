#include "substrates/trace.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <otf2/OTF2_Pthread_Locks.h>

/* ---- raw chunks ---------------------------------------------------------------------- */

typedef struct raw_chunk {
    struct raw_chunk *next;
    sp_trace_record *used_end; /* set when the chunk is full */
} raw_chunk;

#define CHUNK_RECORDS(c) ((sp_trace_record *)((char *)(c) + sizeof(raw_chunk)))
#define CHUNK_END(c) ((sp_trace_record *)((char *)(c) + SP_TRACE_CHUNK_SIZE))

/* Where records go when not even an over-budget chunk could be allocated: they are lost
 * (counted), and the next record tries again. Per thread, so that no two locations share
 * it. */
static SP_TLS sp_trace_record lost_records[4];

static void use_chunk(sp_location *loc, raw_chunk *chunk)
{
    chunk->next = NULL;
    chunk->used_end = NULL;
    loc->trace_chunk = chunk;
    loc->trace_pos = CHUNK_RECORDS(chunk);
    loc->trace_end = CHUNK_END(chunk);
}

static void retire_current_chunk(sp_location *loc)
{
    raw_chunk *chunk = loc->trace_chunk;
    if (!chunk)
        return;
    chunk->used_end = loc->trace_pos;
    chunk->next = NULL;
    if (loc->trace_full_last)
        ((raw_chunk *)loc->trace_full_last)->next = chunk;
    else
        loc->trace_full_first = chunk;
    loc->trace_full_last = chunk;
    loc->trace_chunk = NULL;
    loc->trace_pos = loc->trace_end = NULL;
}

/* ---- encoding raw records into OTF2 -------------------------------------------------- */

static inline void check(sp_trace *trace, OTF2_ErrorCode status, const char *what)
{
    if (status == OTF2_SUCCESS)
        return;
    /* The reason itself comes from OTF2's own message (see keep_otf2_message). */
    if (trace->errors++ == 0)
        snprintf(trace->first_error, sizeof trace->first_error, "%s (OTF2 error %d)", what,
                 (int)status);
}

static OTF2_ErrorCode program_begin(sp_trace *trace, OTF2_EvtWriter *writer, uint64_t time)
{
    sp_measurement *m = trace->meas;
    uint32_t name = sp_defs_string(&m->defs, m->config.program_name);
    uint32_t argc = m->config.program_argc;
    OTF2_StringRef *args = argc ? calloc(argc, sizeof *args) : NULL;
    if (argc && !args)
        argc = 0;
    for (uint32_t i = 0; i < argc; i++)
        args[i] = sp_defs_string(&m->defs, m->config.program_args[i]);
    OTF2_ErrorCode s = OTF2_EvtWriter_ProgramBegin(writer, NULL, time, name, argc, args);
    free(args);
    return s;
}

/* Ticks of the recording timer to CLOCK_MONOTONIC nanoseconds. */
static inline uint64_t to_ns(const sp_trace *trace, uint64_t ticks)
{
    const sp_measurement *m = trace->meas;
    if (sp_clock_timer == SP_TIMER_CLOCK_GETTIME)
        return ticks;
    int64_t delta = (int64_t)(ticks - m->start.ticks);
    return m->start.monotonic_ns + (uint64_t)((double)delta * trace->ns_per_tick + 0.5);
}

static OTF2_CollectiveOp collective_op(uint64_t op)
{
    return (OTF2_CollectiveOp)op;
}

static void encode_records(sp_trace *trace, sp_location *loc, const sp_trace_record *r,
                           const sp_trace_record *end)
{
    OTF2_EvtWriter *w = loc->trace_writer;
    /* After a failed write (full disk, file size limit) the writer's buffer is unusable:
     * writing on would crash inside OTF2. */
    while (r < end && !trace->errors) {
        const sp_trace_payload *p = (const sp_trace_payload *)(r + 1);
        const sp_trace_payload *q = (const sp_trace_payload *)(r + 2);
        uint64_t t = to_ns(trace, r->time);
        if (r->kind >= SP_REC_MPI_SEND && !trace->collective) {
            /* A rank's own part of an experiment cannot define its peers: its messages
             * and collectives refer to them, so only its MPI calls (regions) remain. */
            r += r->kind == SP_REC_MPI_ISEND || r->kind == SP_REC_MPI_IRECV ||
                         r->kind == SP_REC_MPI_COLLECTIVE_END
                     ? 3
                     : r->kind == SP_REC_MPI_COLLECTIVE_BEGIN ? 1 : 2;
            continue;
        }
        switch (r->kind) {
        case SP_REC_ENTER:
            check(trace, OTF2_EvtWriter_Enter(w, NULL, t, r->ref), "Enter");
            r++;
            break;
        case SP_REC_LEAVE:
            check(trace, OTF2_EvtWriter_Leave(w, NULL, t, r->ref), "Leave");
            r++;
            break;
        case SP_REC_PARAMETER_INT:
            check(trace, OTF2_EvtWriter_ParameterInt(w, NULL, t, r->ref, (int64_t)p->a),
                  "ParameterInt");
            r += 2;
            break;
        case SP_REC_PARAMETER_UINT:
            check(trace, OTF2_EvtWriter_ParameterUnsignedInt(w, NULL, t, r->ref, p->a),
                  "ParameterUnsignedInt");
            r += 2;
            break;
        case SP_REC_PARAMETER_STRING:
            check(trace, OTF2_EvtWriter_ParameterString(w, NULL, t, r->ref, (OTF2_StringRef)p->a),
                  "ParameterString");
            r += 2;
            break;
        case SP_REC_MEASUREMENT_ON:
        case SP_REC_MEASUREMENT_OFF:
            check(trace, OTF2_EvtWriter_MeasurementOnOff(w, NULL, t,
                                                         r->kind == SP_REC_MEASUREMENT_ON
                                                             ? OTF2_MEASUREMENT_ON
                                                             : OTF2_MEASUREMENT_OFF),
                  "MeasurementOnOff");
            r++;
            break;
        case SP_REC_PROGRAM_BEGIN:
            check(trace, program_begin(trace, w, t), "ProgramBegin");
            r++;
            break;
        case SP_REC_PROGRAM_END:
            check(trace, OTF2_EvtWriter_ProgramEnd(w, NULL, t, (int64_t)p->a), "ProgramEnd");
            r += 2;
            break;
        case SP_REC_BUFFER_FLUSH:
            check(trace, OTF2_EvtWriter_BufferFlush(w, NULL, t, to_ns(trace, p->a)), "BufferFlush");
            r += 2;
            break;
        case SP_REC_MPI_SEND:
            check(trace, OTF2_EvtWriter_MpiSend(w, NULL, t, (uint32_t)(p->b >> 32), r->ref,
                                                (uint32_t)p->b, p->a),
                  "MpiSend");
            r += 2;
            break;
        case SP_REC_MPI_RECV:
            check(trace, OTF2_EvtWriter_MpiRecv(w, NULL, t, (uint32_t)(p->b >> 32), r->ref,
                                                (uint32_t)p->b, p->a),
                  "MpiRecv");
            r += 2;
            break;
        case SP_REC_MPI_ISEND:
            check(trace, OTF2_EvtWriter_MpiIsend(w, NULL, t, (uint32_t)(p->b >> 32), r->ref,
                                                 (uint32_t)p->b, p->a, q->a),
                  "MpiIsend");
            r += 3;
            break;
        case SP_REC_MPI_IRECV:
            check(trace, OTF2_EvtWriter_MpiIrecv(w, NULL, t, (uint32_t)(p->b >> 32), r->ref,
                                                 (uint32_t)p->b, p->a, q->a),
                  "MpiIrecv");
            r += 3;
            break;
        case SP_REC_MPI_ISEND_COMPLETE:
            check(trace, OTF2_EvtWriter_MpiIsendComplete(w, NULL, t, p->a), "MpiIsendComplete");
            r += 2;
            break;
        case SP_REC_MPI_IRECV_REQUEST:
            check(trace, OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t, p->a), "MpiIrecvRequest");
            r += 2;
            break;
        case SP_REC_MPI_REQUEST_TEST:
            check(trace, OTF2_EvtWriter_MpiRequestTest(w, NULL, t, p->a), "MpiRequestTest");
            r += 2;
            break;
        case SP_REC_MPI_COLLECTIVE_BEGIN:
            check(trace, OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t), "MpiCollectiveBegin");
            r++;
            break;
        case SP_REC_MPI_COLLECTIVE_END:
            check(trace, OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t, collective_op(q->a), r->ref,
                                                         (uint32_t)q->b, p->a, p->b),
                  "MpiCollectiveEnd");
            r += 3;
            break;
        default:
            check(trace, OTF2_ERROR_INVALID_DATA, "unknown raw record");
            return;
        }
    }
}

/* ---- flushes: full chunks go to a spill file during the run ---------------------------- */

static bool can_spill(const sp_trace *trace)
{
    return trace->spill_prefix[0] != '\0';
}

static void spill_path(const sp_trace *trace, const sp_location *loc, char *path, size_t size)
{
    snprintf(path, size, "%s%u.raw", trace->spill_prefix, loc->index);
}

/* Writes the location's full chunks to its spill file and gives them back to the budget.
 * Returns false when the file cannot be written (the chunks stay in memory). */
static bool spill_full_chunks(sp_trace *trace, sp_location *loc)
{
    if (!loc->trace_spill) {
        char path[4200];
        spill_path(trace, loc, path, sizeof path);
        loc->trace_spill = fopen(path, loc->trace_spill_closed ? "a+b" : "w+b");
        if (loc->trace_spill && loc->trace_spill_closed &&
            fseek(loc->trace_spill, 0, SEEK_END) != 0) {
            fclose(loc->trace_spill);
            loc->trace_spill = NULL;
        }
        if (!loc->trace_spill) {
            if (trace->spill_failures++ == 0)
                snprintf(trace->spill_error, sizeof trace->spill_error, "%s", strerror(errno));
            return false;
        }
        /* Unbuffered (chunks are written whole anyway): a forked child that exits must find
         * no stdio buffer of ours to flush into the parent's file. */
        setvbuf(loc->trace_spill, NULL, _IONBF, 0);
        loc->trace_spill_closed = false;
    }
    FILE *f = loc->trace_spill;
    raw_chunk *chunk = loc->trace_full_first;
    while (chunk) {
        raw_chunk *next = chunk->next;
        uint64_t bytes = (uint64_t)((char *)chunk->used_end - (char *)CHUNK_RECORDS(chunk));
        long good = ftell(f);
        if (fwrite(&bytes, sizeof bytes, 1, f) != 1 ||
            fwrite(CHUNK_RECORDS(chunk), 1, bytes, f) != bytes) {
            /* A full disk or file size limit: the chunk stays in memory (over budget) and
             * the part of it that was written is cut off again, so the file stays whole. */
            int error = errno;
            if (trace->spill_failures++ == 0)
                snprintf(trace->spill_error, sizeof trace->spill_error, "%s",
                         strerror(error));
            clearerr(f);
            if (good < 0 || ftruncate(fileno(f), good) != 0 || fseek(f, good, SEEK_SET) != 0) {
                /* The file cannot be repaired: give up spilling for this location. */
                fclose(f);
                loc->trace_spill = NULL;
                char path[4200];
                spill_path(trace, loc, path, sizeof path);
                unlink(path);
                trace->spill_prefix[0] = '\0';
            }
            loc->trace_full_first = chunk;
            return false;
        }
        sp_chunk_pool_put(&trace->meas->pool, chunk);
        chunk = next;
    }
    loc->trace_full_first = loc->trace_full_last = NULL;
    return true;
}

void sp_trace_location_retire(sp_trace *trace, sp_location *loc)
{
    if (!can_spill(trace))
        return;
    retire_current_chunk(loc);
    /* An empty window at the sink's start: the next record asks for a new chunk, and
     * sp_trace_next_chunk tells this apart from records lost in the sink. */
    loc->trace_pos = loc->trace_end = lost_records;
    if (loc->trace_full_first && !spill_full_chunks(trace, loc))
        return;
    if (loc->trace_spill) {
        fclose(loc->trace_spill);
        loc->trace_spill = NULL;
        loc->trace_spill_closed = true;
    }
}

void sp_trace_flush_location(sp_trace *trace, sp_location *loc)
{
    if (!loc->trace_full_first || !can_spill(trace))
        return;
    uint64_t begin = loc->last_time;
    if (!spill_full_chunks(trace, loc))
        return;
    loc->trace_flushes++;
    sp_trace_record_put_value(trace, loc, begin, SP_REC_BUFFER_FLUSH, 0, sp_clock_now(), 0);
}

sp_trace_record *sp_trace_next_chunk(sp_trace *trace, sp_location *loc, unsigned count)
{
    sp_chunk_pool *pool = &trace->meas->pool;
    if (!loc->trace_chunk) {
        if (loc->trace_end != lost_records)
            loc->trace_lost_records++; /* it wrote into the sink (not a retired location) */
    } else
        retire_current_chunk(loc);
    raw_chunk *chunk = sp_chunk_pool_get(pool, false);
    uint64_t flush_begin = 0;
    if (!chunk) {
        /* The budget is used up: this location's records go to disk now. The pause is
         * real (the program waits), so the trace shows it. Until the experiment directory
         * exists (MPI not initialized yet) the chunk is taken over budget instead. */
        if (can_spill(trace)) {
            flush_begin = loc->last_time;
            if (spill_full_chunks(trace, loc))
                loc->trace_flushes++;
            else
                flush_begin = 0;
        }
        chunk = sp_chunk_pool_get(pool, true);
    }
    if (!chunk) {
        loc->trace_pos = lost_records;
        loc->trace_end = lost_records + 4;
        return lost_records; /* count <= 3 always fits */
    }
    use_chunk(loc, chunk);
    if (flush_begin) {
        sp_trace_record *r = loc->trace_pos;
        r->time = flush_begin;
        r->kind = SP_REC_BUFFER_FLUSH;
        r->ref = 0;
        ((sp_trace_payload *)(r + 1))->a = sp_clock_now();
        loc->trace_pos = r + 2;
    }
    (void)count; /* a fresh chunk holds far more than any record needs */
    return loc->trace_pos;
}

void sp_trace_mark(sp_location *loc, void **chunk, void **pos, uint32_t *flushes)
{
    *chunk = loc->trace_chunk;
    *pos = loc->trace_pos;
    *flushes = loc->trace_flushes;
}

bool sp_trace_rewind(sp_trace *trace, sp_location *loc, void *chunk, void *pos, uint32_t flushes)
{
    if (flushes != loc->trace_flushes || !chunk)
        return false;
    if (chunk == loc->trace_chunk) {
        loc->trace_pos = pos;
        return true;
    }
    raw_chunk *prev = NULL, *c = loc->trace_full_first;
    while (c && c != chunk) {
        prev = c;
        c = c->next;
    }
    if (!c)
        return false;
    for (raw_chunk *x = c->next; x;) {
        raw_chunk *next = x->next;
        sp_chunk_pool_put(&trace->meas->pool, x);
        x = next;
    }
    sp_chunk_pool_put(&trace->meas->pool, loc->trace_chunk);
    if (prev)
        prev->next = NULL;
    else
        loc->trace_full_first = NULL;
    loc->trace_full_last = prev;
    use_chunk(loc, c);
    loc->trace_pos = pos;
    return true;
}

/* ---- OTF2 memory: each event writer streams through one chunk of the budget ---------- */

/* The chunks one OTF2 buffer holds, so that free_all can hand them all back. An event
 * writer holds at most one (see allocate_chunk); a definition writer one per flush. */
typedef struct {
    void *chunks[4];
    size_t count;
} buffer_chunks;

static void *allocate_chunk(void *user, OTF2_FileType type, OTF2_LocationRef location,
                            void **per_buffer, uint64_t chunk_size)
{
    (void)location;
    sp_trace *trace = user;
    buffer_chunks *held = *per_buffer;
    if (!held) {
        held = calloc(1, sizeof *held);
        if (!held)
            return NULL;
        *per_buffer = held;
    }
    bool pooled = type == OTF2_FILETYPE_EVENTS && chunk_size == SP_TRACE_CHUNK_SIZE;
    /* NULL makes OTF2 write its buffer to disk and ask again: event encoding streams
     * through one chunk of the budget. */
    if ((pooled && held->count >= 1) || held->count == sizeof held->chunks / sizeof held->chunks[0])
        return NULL;
    void *chunk = pooled ? sp_chunk_pool_get(&trace->meas->pool, true) : malloc(chunk_size);
    if (chunk)
        held->chunks[held->count++] = chunk;
    return chunk;
}

static void free_all_chunks(void *user, OTF2_FileType type, OTF2_LocationRef location,
                            void **per_buffer, bool final)
{
    (void)location;
    sp_trace *trace = user;
    buffer_chunks *held = *per_buffer;
    if (!held)
        return;
    for (size_t i = 0; i < held->count; i++) {
        if (type == OTF2_FILETYPE_EVENTS)
            sp_chunk_pool_put(&trace->meas->pool, held->chunks[i]);
        else
            free(held->chunks[i]);
    }
    held->count = 0;
    if (final) {
        free(held);
        *per_buffer = NULL;
    }
}

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef location,
                                void *caller, bool final)
{
    (void)user, (void)type, (void)location, (void)caller, (void)final;
    return OTF2_FLUSH;
}

/* No post-flush callback: OTF2 would mark its encoding-time flushes as pauses of the
 * program; the real pauses are recorded as BufferFlush records of our own. */
static const OTF2_FlushCallbacks flush_callbacks = {
    .otf2_pre_flush = pre_flush,
    .otf2_post_flush = NULL,
};

static const OTF2_MemoryCallbacks memory_callbacks = {
    .otf2_allocate = allocate_chunk,
    .otf2_free_all = free_all_chunks,
};

static int fail(OTF2_ErrorCode status, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "OTF2 %s failed: %s (%s)", what, OTF2_Error_GetName(status),
             OTF2_Error_GetDescription(status));
    return -1;
}

int sp_trace_init(sp_trace *trace, sp_measurement *meas)
{
    memset(trace, 0, sizeof *trace);
    trace->meas = meas;
    return 0;
}

void sp_trace_set_spill_dir(sp_trace *trace, const char *dir)
{
    char host[256] = "host";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    snprintf(trace->spill_prefix, sizeof trace->spill_prefix, "%s/.scorep-spill-%s-%ld-", dir,
             host, (long)getpid());
}

int sp_trace_location_open(sp_trace *trace, sp_location *loc)
{
    raw_chunk *chunk = sp_chunk_pool_get(&trace->meas->pool, true);
    if (!chunk)
        return -1;
    use_chunk(loc, chunk);
    return 0;
}

/* ---- the end: encoding ------------------------------------------------------------------- */

static void encode_spill(sp_trace *trace, sp_location *loc, void *buffer)
{
    FILE *f = loc->trace_spill;
    char path[4200];
    spill_path(trace, loc, path, sizeof path);
    if (!f && loc->trace_spill_closed) {
        f = fopen(path, "rb");
        loc->trace_spill_closed = false;
        if (!f) {
            check(trace, OTF2_ERROR_FILE_INTERACTION, "reopening a spill file");
            return;
        }
    }
    if (!f)
        return;
    rewind(f);
    uint64_t bytes;
    while (fread(&bytes, sizeof bytes, 1, f) == 1) {
        if (bytes > SP_TRACE_CHUNK_SIZE || fread(buffer, 1, bytes, f) != bytes) {
            check(trace, OTF2_ERROR_FILE_INTERACTION, "reading a spill file");
            break;
        }
        encode_records(trace, loc, buffer, (sp_trace_record *)((char *)buffer + bytes));
    }
    fclose(f);
    loc->trace_spill = NULL;
    unlink(path);
}

#define CHECK_OTF2(call, what)                                                                 \
    do {                                                                                       \
        OTF2_ErrorCode status_ = (call);                                                       \
        if (status_ != OTF2_SUCCESS) {                                                         \
            fail(status_, what, err, errlen);                                                  \
            trace->errors++; /* OTF2's buffers may be broken now: never flush them again */    \
            goto failed;                                                                       \
        }                                                                                      \
    } while (0)

/* OTF2 prints every failure on stderr by itself; while the trace is written, its messages
 * are kept instead (the first one explains the failure in our one error line). OTF2's
 * callback is process-wide and carries no context we own, hence this file-level state;
 * only the finalizing thread writes the trace. */
static char otf2_message[300];

static OTF2_ErrorCode keep_otf2_message(void *user, const char *file, uint64_t line,
                                        const char *function, OTF2_ErrorCode code,
                                        const char *fmt, va_list va)
{
    (void)user, (void)file, (void)line, (void)function;
    if (!otf2_message[0]) {
        char text[200];
        vsnprintf(text, sizeof text, fmt ? fmt : "", va);
        snprintf(otf2_message, sizeof otf2_message, "%s%s%s", OTF2_Error_GetDescription(code),
                 text[0] ? ": " : "", text);
    }
    return code;
}

static int encode_events(sp_trace *trace, const char *dir, bool collective, char *err,
                         size_t errlen);

int sp_trace_encode(sp_trace *trace, const char *dir, bool collective, char *err, size_t errlen)
{
    otf2_message[0] = '\0';
    OTF2_ErrorCallback previous = OTF2_Error_RegisterCallback(keep_otf2_message, NULL);
    int status = encode_events(trace, dir, collective, err, errlen);
    OTF2_Error_RegisterCallback(previous, NULL);
    if (status != 0 && otf2_message[0]) {
        size_t used = strlen(err);
        snprintf(err + used, errlen - used, " (%s)", otf2_message);
    }
    return status;
}

void sp_trace_remove_files(const char *dir)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/traces", dir);
    DIR *d = opendir(path);
    if (d) {
        struct dirent *entry;
        while ((entry = readdir(d)) != NULL) {
            if (entry->d_name[0] == '.')
                continue;
            char file[4600];
            snprintf(file, sizeof file, "%s/%s", path, entry->d_name);
            unlink(file);
        }
        closedir(d);
        rmdir(path);
    }
    snprintf(path, sizeof path, "%s/traces.otf2", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/traces.def", dir);
    unlink(path);
}

static int encode_events(sp_trace *trace, const char *dir, bool collective, char *err,
                         size_t errlen)
{
    sp_measurement *m = trace->meas;
    trace->collective = collective;
    uint64_t ticks = m->end.ticks - m->start.ticks;
    uint64_t ns = m->end.monotonic_ns - m->start.monotonic_ns;
    trace->ns_per_tick = ticks ? (double)ns / (double)ticks : 1.0;
    void *buffer = NULL;
    trace->archive = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, SP_TRACE_CHUNK_SIZE,
                                       OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT, OTF2_SUBSTRATE_POSIX,
                                       OTF2_COMPRESSION_NONE);
    if (!trace->archive) {
        snprintf(err, errlen, "could not create the OTF2 archive in %s", dir);
        return -1;
    }
    CHECK_OTF2(OTF2_Archive_SetFlushCallbacks(trace->archive, &flush_callbacks, trace),
               "SetFlushCallbacks");
    CHECK_OTF2(OTF2_Archive_SetMemoryCallbacks(trace->archive, &memory_callbacks, trace),
               "SetMemoryCallbacks");
    if (collective)
        CHECK_OTF2(OTF2_Archive_SetCollectiveCallbacks(
                       trace->archive, (const OTF2_CollectiveCallbacks *)m->mpi.ops->otf2_collectives,
                       m->mpi.ops->otf2_data, NULL, NULL),
                   "SetCollectiveCallbacks");
    else
        CHECK_OTF2(OTF2_Archive_SetSerialCollectiveCallbacks(trace->archive),
                   "SetSerialCollectiveCallbacks");
    CHECK_OTF2(OTF2_Pthread_Archive_SetLockingCallbacks(trace->archive, NULL),
               "SetLockingCallbacks");
    OTF2_Archive_SetCreator(trace->archive, m->config.creator);
    OTF2_Archive_SetMachineName(trace->archive, m->config.machine_name);
    OTF2_Archive_SetDescription(trace->archive, m->config.program_name);
    CHECK_OTF2(OTF2_Archive_OpenEvtFiles(trace->archive), "OpenEvtFiles");
    buffer = malloc(SP_TRACE_CHUNK_SIZE);
    if (!buffer) {
        snprintf(err, errlen, "out of memory while writing the trace");
        goto failed;
    }
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs; i++) {
        sp_location *loc = m->locations[i];
        loc->trace_writer = OTF2_Archive_GetEvtWriter(trace->archive, loc->id);
        if (!loc->trace_writer) {
            snprintf(err, errlen, "OTF2 GetEvtWriter failed");
            goto failed;
        }
        retire_current_chunk(loc);
        encode_spill(trace, loc, buffer);
        for (raw_chunk *chunk = loc->trace_full_first; chunk;) {
            raw_chunk *next = chunk->next;
            encode_records(trace, loc, CHUNK_RECORDS(chunk), chunk->used_end);
            sp_chunk_pool_put(&m->pool, chunk);
            chunk = next;
        }
        loc->trace_full_first = loc->trace_full_last = NULL;
        if (trace->errors) {
            snprintf(err, errlen, "writing the events failed at a %s record", trace->first_error);
            goto failed;
        }
        CHECK_OTF2(OTF2_EvtWriter_GetNumberOfEvents(loc->trace_writer, &loc->trace_events),
                   "GetNumberOfEvents");
        CHECK_OTF2(OTF2_Archive_CloseEvtWriter(trace->archive, loc->trace_writer), "CloseEvtWriter");
        loc->trace_writer = NULL;
    }
    free(buffer);
    buffer = NULL;
    CHECK_OTF2(OTF2_Archive_CloseEvtFiles(trace->archive), "CloseEvtFiles");
    return 0;
failed:
    free(buffer);
    sp_trace_abort(trace);
    return -1;
}

/* ---- the end: definitions ------------------------------------------------------------- */

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
    }
    return OTF2_REGION_ROLE_UNKNOWN;
}

static OTF2_Paradigm otf2_paradigm(uint8_t paradigm)
{
    switch ((sp_paradigm)paradigm) {
    case SP_PARADIGM_USER: return OTF2_PARADIGM_USER;
    case SP_PARADIGM_MEASUREMENT: return OTF2_PARADIGM_MEASUREMENT_SYSTEM;
    case SP_PARADIGM_MPI: return OTF2_PARADIGM_MPI;
    case SP_PARADIGM_IO: return OTF2_PARADIGM_UNKNOWN;
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

static int write_local_definitions(sp_trace *trace, const sp_unified *u, char *err,
                                   size_t errlen)
{
    sp_measurement *m = trace->meas;
    uint32_t nlocs = atomic_load(&m->location_count);
    CHECK_OTF2(OTF2_Archive_OpenDefFiles(trace->archive), "OpenDefFiles");
    for (uint32_t i = 0; i < nlocs; i++) {
        OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(trace->archive, m->locations[i]->id);
        if (!dw) {
            snprintf(err, errlen, "OTF2 GetDefWriter failed");
            goto failed;
        }
        /* Events keep the location's own ids; unification may have merged definitions
         * (two code objects of the same name, file and line), even without MPI. An
         * identity map is not written. */
        CHECK_OTF2(write_map(dw, OTF2_MAPPING_STRING, u->string_map, u->string_count),
                   "WriteMappingTable");
        CHECK_OTF2(write_map(dw, OTF2_MAPPING_REGION, u->region_map, u->region_count),
                   "WriteMappingTable");
        CHECK_OTF2(write_map(dw, OTF2_MAPPING_PARAMETER, u->parameter_map, u->parameter_count),
                   "WriteMappingTable");
        CHECK_OTF2(write_map(dw, OTF2_MAPPING_COMM, u->comm_map, u->comm_count),
                   "WriteMappingTable");
        if (trace->collective) {
            /* Readers interpolate between the two offsets to put every rank on rank 0's
             * clock: without them a message could arrive before it was sent. */
            CHECK_OTF2(OTF2_DefWriter_WriteClockOffset(dw, m->mpi.sync_begin_ns,
                                                       m->mpi.offset_begin_ns, 0.0),
                       "WriteClockOffset");
            CHECK_OTF2(OTF2_DefWriter_WriteClockOffset(dw, m->mpi.sync_end_ns,
                                                       m->mpi.offset_end_ns, 0.0),
                       "WriteClockOffset");
        }
        CHECK_OTF2(OTF2_Archive_CloseDefWriter(trace->archive, dw), "CloseDefWriter");
    }
    CHECK_OTF2(OTF2_Archive_CloseDefFiles(trace->archive), "CloseDefFiles");
    return 0;
failed:
    return -1;
}

static const char *thread_level_name(int32_t level)
{
    static const char *const names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                        "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    return level >= 0 && level < 4 ? names[level] : NULL;
}

static int write_global_definitions(sp_trace *trace, sp_unified *u, char *err, size_t errlen)
{
    sp_measurement *m = trace->meas;
    sp_defs *g = &u->global;
    uint32_t *node_of_host = NULL;
    uint64_t *members = NULL;
    int status = -1;
    bool mpi = trace->collective;

    /* Strings the definitions below need, interned before the strings are written. */
    uint32_t machine = sp_defs_string(g, m->config.machine_name);
    uint32_t machine_class = sp_defs_string(g, "machine");
    uint32_t node_class = sp_defs_string(g, "node");
    uint32_t world_name = sp_defs_string(g, "MPI_COMM_WORLD");
    uint32_t empty = sp_defs_string(g, "");
    uint32_t level_requested = sp_defs_string(g, "MPI thread level requested");
    uint32_t level_provided = sp_defs_string(g, "MPI thread level provided");
    uint32_t *group_names = calloc(u->rank_count, sizeof *group_names);
    uint32_t *level_strings = calloc(2 * (size_t)u->rank_count, sizeof *level_strings);
    node_of_host = calloc(u->rank_count, sizeof *node_of_host);
    if (!group_names || !level_strings || !node_of_host)
        goto out;
    for (uint32_t r = 0; r < u->rank_count; r++) {
        char name[64];
        if (mpi)
            snprintf(name, sizeof name, "MPI Rank %u", u->ranks[r].rank);
        else
            snprintf(name, sizeof name, "Process");
        group_names[r] = sp_defs_string(g, name);
        const char *req = thread_level_name(u->ranks[r].thread_requested);
        const char *prov = thread_level_name(u->ranks[r].thread_provided);
        level_strings[2 * r] = req ? sp_defs_string(g, req) : SP_NO_ID;
        level_strings[2 * r + 1] = prov ? sp_defs_string(g, prov) : SP_NO_ID;
    }

    OTF2_GlobalDefWriter *gw = OTF2_Archive_GetGlobalDefWriter(trace->archive);
    if (!gw) {
        snprintf(err, errlen, "OTF2 GetGlobalDefWriter failed");
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
    CHECK_OTF2(OTF2_GlobalDefWriter_WriteClockProperties(gw, 1000000000u, begin,
                                                         end > begin ? end - begin + 1 : 1,
                                                         realtime),
               "WriteClockProperties");
    for (uint32_t i = 0; i < g->strings.count; i++)
        CHECK_OTF2(OTF2_GlobalDefWriter_WriteString(gw, i, sp_defs_str(g, i)), "WriteString");
    CHECK_OTF2(OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, machine, machine_class,
                                                        OTF2_UNDEFINED_SYSTEM_TREE_NODE),
               "WriteSystemTreeNode");
    /* One system tree node per host, in the order the hosts first appear. */
    uint32_t nodes = 0;
    for (uint32_t r = 0; r < u->rank_count; r++) {
        uint32_t found = UINT32_MAX;
        for (uint32_t q = 0; q < r && found == UINT32_MAX; q++)
            if (u->ranks[q].host == u->ranks[r].host)
                found = node_of_host[q];
        if (found == UINT32_MAX) {
            found = ++nodes;
            CHECK_OTF2(OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, found, u->ranks[r].host,
                                                                node_class, 0),
                       "WriteSystemTreeNode");
        }
        node_of_host[r] = found;
    }
    for (uint32_t r = 0; r < u->rank_count; r++) {
        CHECK_OTF2(OTF2_GlobalDefWriter_WriteLocationGroup(gw, u->ranks[r].rank, group_names[r],
                                                           OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                                           node_of_host[r],
                                                           OTF2_UNDEFINED_LOCATION_GROUP),
                   "WriteLocationGroup");
        for (int k = 0; k < 2; k++) {
            if (level_strings[2 * r + k] == SP_NO_ID)
                continue;
            OTF2_AttributeValue value;
            value.stringRef = level_strings[2 * r + k];
            CHECK_OTF2(OTF2_GlobalDefWriter_WriteLocationGroupProperty(
                           gw, u->ranks[r].rank, k ? level_provided : level_requested,
                           OTF2_TYPE_STRING, value),
                       "WriteLocationGroupProperty");
        }
    }
    for (uint32_t r = 0; r < u->rank_count; r++)
        for (uint32_t i = 0; i < u->ranks[r].location_count; i++) {
            const sp_unified_location *l = &u->ranks[r].locations[i];
            CHECK_OTF2(OTF2_GlobalDefWriter_WriteLocation(gw, l->id, l->name,
                                                          OTF2_LOCATION_TYPE_CPU_THREAD, l->events,
                                                          u->ranks[r].rank),
                       "WriteLocation");
        }
    for (uint32_t i = 0; i < g->region_count; i++) {
        const sp_region *reg = &g->regions[i];
        CHECK_OTF2(OTF2_GlobalDefWriter_WriteRegion(
                       gw, i, reg->name, reg->canonical, 0, otf2_role(reg->role),
                       otf2_paradigm(reg->paradigm), OTF2_REGION_FLAG_NONE, reg->file,
                       reg->begin_line < 0 ? 0 : (uint32_t)reg->begin_line,
                       reg->end_line < 0 ? 0 : (uint32_t)reg->end_line),
                   "WriteRegion");
    }
    for (uint32_t i = 0; i < g->parameter_count; i++)
        CHECK_OTF2(OTF2_GlobalDefWriter_WriteParameter(gw, i, g->parameters[i].name,
                                                       otf2_parameter_type(g->parameters[i].type)),
                   "WriteParameter");
    if (g->comm_count && trace->collective) {
        /* Group 0 lists every rank's first location; communicator groups index into it. */
        members = calloc(u->rank_count + 1, sizeof *members);
        if (!members)
            goto out;
        for (uint32_t r = 0; r < u->rank_count; r++)
            members[u->ranks[r].rank] = u->ranks[r].location_count ? u->ranks[r].locations[0].id : 0;
        CHECK_OTF2(OTF2_GlobalDefWriter_WriteGroup(gw, 0, empty, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                                   OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                                   u->rank_count, members),
                   "WriteGroup");
        for (uint32_t c = 0; c < g->comm_count; c++) {
            const sp_comm *comm = &g->comms[c];
            uint64_t *ranks = calloc(comm->size + 1, sizeof *ranks);
            if (!ranks)
                goto out;
            for (uint32_t k = 0; k < comm->size; k++)
                ranks[k] = comm->members[k];
            OTF2_ErrorCode s = OTF2_GlobalDefWriter_WriteGroup(
                gw, c + 1, empty,
                comm->kind == SP_COMM_SELF ? OTF2_GROUP_TYPE_COMM_SELF : OTF2_GROUP_TYPE_COMM_GROUP,
                OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                comm->kind == SP_COMM_SELF ? 0 : comm->size, ranks);
            free(ranks);
            CHECK_OTF2(s, "WriteGroup");
            CHECK_OTF2(OTF2_GlobalDefWriter_WriteComm(gw, c,
                                                      comm->kind == SP_COMM_WORLD ? world_name
                                                                                  : comm->name,
                                                      c + 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
                       "WriteComm");
        }
    }
    CHECK_OTF2(OTF2_Archive_CloseGlobalDefWriter(trace->archive, gw), "CloseGlobalDefWriter");
    status = 0;
    goto out;
failed:
out:
    if (status != 0 && err[0] == '\0')
        snprintf(err, errlen, "out of memory while writing the trace definitions");
    free(group_names);
    free(level_strings);
    free(node_of_host);
    free(members);
    return status;
}

static int write_definitions(sp_trace *trace, const sp_unified *u, char *err, size_t errlen);

int sp_trace_finish(sp_trace *trace, const sp_unified *u, char *err, size_t errlen)
{
    otf2_message[0] = '\0';
    OTF2_ErrorCallback previous = OTF2_Error_RegisterCallback(keep_otf2_message, NULL);
    int status = write_definitions(trace, u, err, errlen);
    OTF2_Error_RegisterCallback(previous, NULL);
    if (status != 0 && otf2_message[0]) {
        size_t used = strlen(err);
        snprintf(err + used, errlen - used, " (%s)", otf2_message);
    }
    return status;
}

static int write_definitions(sp_trace *trace, const sp_unified *u, char *err, size_t errlen)
{
    sp_measurement *m = trace->meas;
    if (write_local_definitions(trace, u, err, errlen) != 0)
        goto failed;
    if (!trace->collective || m->mpi.rank == 0)
        if (write_global_definitions(trace, (sp_unified *)u, err, errlen) != 0)
            goto failed;
    CHECK_OTF2(OTF2_Archive_Close(trace->archive), "Close");
    trace->archive = NULL;
    if (trace->errors) {
        snprintf(err, errlen, "%llu OTF2 event write(s) failed, the first: %s",
                 (unsigned long long)trace->errors, trace->first_error);
        return -1;
    }
    return 0;
failed:
    sp_trace_abort(trace);
    return -1;
}

void sp_trace_abort(sp_trace *trace)
{
    /* After a failed write OTF2's buffers are broken and closing the archive would flush
     * them again and crash: such an archive is left unclosed (its memory is lost). */
    if (trace->archive && !trace->errors)
        OTF2_Archive_Close(trace->archive);
    trace->archive = NULL;
    sp_measurement *m = trace->meas;
    if (!m)
        return;
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs; i++) {
        sp_location *loc = m->locations[i];
        if (loc && (loc->trace_spill || loc->trace_spill_closed)) {
            if (loc->trace_spill)
                fclose(loc->trace_spill);
            loc->trace_spill = NULL;
            loc->trace_spill_closed = false;
            char path[4200];
            spill_path(trace, loc, path, sizeof path);
            unlink(path);
        }
    }
}
