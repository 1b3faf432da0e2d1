/* The end, step 1: the OTF2 archive is opened and every location's raw records (spilled
 * ones first, then those in memory) are encoded into its event file. */
#include "substrates/trace/trace_internal.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <otf2/OTF2_Pthread_Locks.h>

/* ---- OTF2's messages and our one error convention --------------------------------------- */

/* OTF2's error callback is process-wide and carries no context we own, hence this
 * file-level state; only the finalizing thread writes the trace. */
static char otf2_message[300];
static OTF2_ErrorCallback previous_callback;

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

void sp_trace_capture_otf2_messages(void)
{
    otf2_message[0] = '\0';
    previous_callback = OTF2_Error_RegisterCallback(keep_otf2_message, NULL);
}

void sp_trace_release_otf2_messages(char *err, size_t errlen)
{
    OTF2_Error_RegisterCallback(previous_callback, NULL);
    previous_callback = NULL;
    if (err[0] && otf2_message[0]) {
        size_t used = strlen(err);
        snprintf(err + used, errlen - used, " (%s)", otf2_message);
    }
}

int sp_trace_check(OTF2_ErrorCode status, const char *what, char *err, size_t errlen)
{
    if (status == OTF2_SUCCESS)
        return 0;
    sp_trace.broken = true;
    return sp_error(err, errlen, "OTF2 %s failed: %s (%s)", what, OTF2_Error_GetName(status),
                    OTF2_Error_GetDescription(status));
}

/* ---- records to events ------------------------------------------------------------------ */

/* As Score-P records it: the program (the script's path), its own arguments (argv[1:]), and
 * the process id, plus the thread id when the program began on another thread than the
 * process's first. */
static OTF2_ErrorCode program_begin(OTF2_EvtWriter *writer, uint64_t time)
{
    sp_measurement *m = sp_trace.meas;
    uint32_t name = sp_defs_string(&m->defs, m->config.program_path);
    uint32_t argc = m->config.program_argc;
    OTF2_StringRef *args = argc ? calloc(argc, sizeof *args) : NULL;
    OTF2_AttributeList *attributes = OTF2_AttributeList_New();
    OTF2_ErrorCode s = OTF2_ERROR_MEM_ALLOC_FAILED;
    if ((argc && !args) || !attributes)
        goto out;
    for (uint32_t i = 0; i < argc; i++)
        args[i] = sp_defs_string(&m->defs, m->config.program_args[i]);
    s = OTF2_AttributeList_AddUint64(attributes, SP_TRACE_ATTRIBUTE_PROCESS_ID,
                                     sp_trace.process_id);
    if (s == OTF2_SUCCESS && sp_trace.thread_id != sp_trace.process_id)
        s = OTF2_AttributeList_AddUint64(attributes, SP_TRACE_ATTRIBUTE_THREAD_ID,
                                         sp_trace.thread_id);
    if (s == OTF2_SUCCESS)
        s = OTF2_EvtWriter_ProgramBegin(writer, attributes, time, name, argc, args);
out:
    if (attributes)
        OTF2_AttributeList_Delete(attributes);
    free(args);
    return s;
}

/* Ticks of the recording timer to CLOCK_MONOTONIC nanoseconds. */
static inline uint64_t to_ns(uint64_t ticks)
{
    const sp_measurement *m = sp_trace.meas;
    if (sp_clock_timer == SP_TIMER_CLOCK_GETTIME)
        return ticks;
    int64_t delta = (int64_t)(ticks - m->start.ticks);
    return m->start.monotonic_ns + (uint64_t)((double)delta * sp_trace.ns_per_tick + 0.5);
}

static OTF2_CollectiveOp collective_op(uint64_t op)
{
    switch ((sp_collective_op)op) {
    case SP_COLL_BARRIER: return OTF2_COLLECTIVE_OP_BARRIER;
    case SP_COLL_BCAST: return OTF2_COLLECTIVE_OP_BCAST;
    case SP_COLL_GATHER: return OTF2_COLLECTIVE_OP_GATHER;
    case SP_COLL_GATHERV: return OTF2_COLLECTIVE_OP_GATHERV;
    case SP_COLL_SCATTER: return OTF2_COLLECTIVE_OP_SCATTER;
    case SP_COLL_SCATTERV: return OTF2_COLLECTIVE_OP_SCATTERV;
    case SP_COLL_ALLGATHER: return OTF2_COLLECTIVE_OP_ALLGATHER;
    case SP_COLL_ALLGATHERV: return OTF2_COLLECTIVE_OP_ALLGATHERV;
    case SP_COLL_ALLTOALL: return OTF2_COLLECTIVE_OP_ALLTOALL;
    case SP_COLL_ALLTOALLV: return OTF2_COLLECTIVE_OP_ALLTOALLV;
    case SP_COLL_ALLTOALLW: return OTF2_COLLECTIVE_OP_ALLTOALLW;
    case SP_COLL_ALLREDUCE: return OTF2_COLLECTIVE_OP_ALLREDUCE;
    case SP_COLL_REDUCE: return OTF2_COLLECTIVE_OP_REDUCE;
    case SP_COLL_REDUCE_SCATTER: return OTF2_COLLECTIVE_OP_REDUCE_SCATTER;
    case SP_COLL_SCAN: return OTF2_COLLECTIVE_OP_SCAN;
    case SP_COLL_EXSCAN: return OTF2_COLLECTIVE_OP_EXSCAN;
    case SP_COLL_REDUCE_SCATTER_BLOCK: return OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK;
    case SP_COLL_CREATE_HANDLE: return OTF2_COLLECTIVE_OP_CREATE_HANDLE;
    case SP_COLL_DESTROY_HANDLE: return OTF2_COLLECTIVE_OP_DESTROY_HANDLE;
    case SP_COLL_ALLOCATE: return OTF2_COLLECTIVE_OP_ALLOCATE;
    case SP_COLL_DEALLOCATE: return OTF2_COLLECTIVE_OP_DEALLOCATE;
    case SP_COLL_CREATE_HANDLE_AND_ALLOCATE: return OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE;
    case SP_COLL_DESTROY_HANDLE_AND_DEALLOCATE:
        return OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE;
    }
    return OTF2_COLLECTIVE_OP_BARRIER;
}

static uint32_t collective_root(uint64_t root)
{
    return root == SP_NO_ROOT ? OTF2_UNDEFINED_UINT32 : (uint32_t)root;
}

/* Raw records a kind takes (the record and its payload). */
static unsigned record_length(uint32_t kind)
{
    switch (kind) {
    case SP_REC_ENTER:
    case SP_REC_LEAVE:
    case SP_REC_MEASUREMENT_ON:
    case SP_REC_MEASUREMENT_OFF:
    case SP_REC_PROGRAM_BEGIN:
    case SP_REC_MPI_COLLECTIVE_BEGIN:
    case SP_REC_CC_LEAVE:
        return 1;
    case SP_REC_MPI_ISEND:
    case SP_REC_MPI_IRECV:
    case SP_REC_MPI_COLLECTIVE_END:
        return 3;
    default:
        return sp_trace_is_io_record(kind) ? sp_trace_io_record_length(kind) : 2;
    }
}

static bool is_mpi_record(uint32_t kind)
{
    return kind >= SP_REC_MPI_SEND && kind <= SP_REC_MPI_COLLECTIVE_END;
}

OTF2_ErrorCode sp_trace_encode_records(sp_trace_location *tl, const sp_trace_record *r,
                                       const sp_trace_record *end)
{
    OTF2_EvtWriter *w = tl->writer;
    for (; r < end; r += record_length(r->kind)) {
        const sp_trace_payload *p = (const sp_trace_payload *)(r + 1);
        const sp_trace_payload *q = (const sp_trace_payload *)(r + 2);
        uint64_t t = to_ns(r->time);
        if (is_mpi_record(r->kind) && !sp_trace.collective)
            continue; /* a process's own part of an experiment cannot define its peers:
                       * only its MPI calls (regions) remain */
        OTF2_ErrorCode s;
        switch (r->kind) {
        case SP_REC_ENTER: s = OTF2_EvtWriter_Enter(w, NULL, t, r->ref); break;
        case SP_REC_LEAVE: s = OTF2_EvtWriter_Leave(w, NULL, t, r->ref); break;
        case SP_REC_PARAMETER_INT:
            s = OTF2_EvtWriter_ParameterInt(w, NULL, t, r->ref, (int64_t)p->a);
            break;
        case SP_REC_PARAMETER_UINT:
            s = OTF2_EvtWriter_ParameterUnsignedInt(w, NULL, t, r->ref, p->a);
            break;
        case SP_REC_PARAMETER_STRING:
            s = OTF2_EvtWriter_ParameterString(w, NULL, t, r->ref, (OTF2_StringRef)p->a);
            break;
        case SP_REC_MEASUREMENT_ON:
        case SP_REC_MEASUREMENT_OFF:
            s = OTF2_EvtWriter_MeasurementOnOff(w, NULL, t,
                                                r->kind == SP_REC_MEASUREMENT_ON
                                                    ? OTF2_MEASUREMENT_ON
                                                    : OTF2_MEASUREMENT_OFF);
            break;
        case SP_REC_PROGRAM_BEGIN: s = program_begin(w, t); break;
        case SP_REC_PROGRAM_END: s = OTF2_EvtWriter_ProgramEnd(w, NULL, t, (int64_t)p->a); break;
        case SP_REC_BUFFER_FLUSH: s = OTF2_EvtWriter_BufferFlush(w, NULL, t, to_ns(p->a)); break;
        case SP_REC_MPI_SEND:
            s = OTF2_EvtWriter_MpiSend(w, NULL, t, (uint32_t)(p->b >> 32), r->ref, (uint32_t)p->b,
                                       p->a);
            break;
        case SP_REC_MPI_RECV:
            s = OTF2_EvtWriter_MpiRecv(w, NULL, t, (uint32_t)(p->b >> 32), r->ref, (uint32_t)p->b,
                                       p->a);
            break;
        case SP_REC_MPI_ISEND:
            s = OTF2_EvtWriter_MpiIsend(w, NULL, t, (uint32_t)(p->b >> 32), r->ref,
                                        (uint32_t)p->b, p->a, q->a);
            break;
        case SP_REC_MPI_IRECV:
            s = OTF2_EvtWriter_MpiIrecv(w, NULL, t, (uint32_t)(p->b >> 32), r->ref,
                                        (uint32_t)p->b, p->a, q->a);
            break;
        case SP_REC_MPI_ISEND_COMPLETE: s = OTF2_EvtWriter_MpiIsendComplete(w, NULL, t, p->a); break;
        case SP_REC_MPI_IRECV_REQUEST: s = OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t, p->a); break;
        case SP_REC_MPI_REQUEST_TEST: s = OTF2_EvtWriter_MpiRequestTest(w, NULL, t, p->a); break;
        case SP_REC_MPI_COLLECTIVE_BEGIN: s = OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t); break;
        case SP_REC_MPI_COLLECTIVE_END:
            s = OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t, collective_op(q->a), r->ref,
                                                collective_root(q->b), p->a, p->b);
            break;
        default:
            if (sp_trace_is_context_record(r->kind))
                s = sp_trace_encode_context(w, r, t);
            else if (sp_trace_is_io_record(r->kind))
                s = sp_trace_encode_io(w, r, t);
            else
                return OTF2_ERROR_INVALID_DATA;
            break;
        }
        /* After a failed write (full disk, file size limit) the writer's buffer is
         * unusable: writing on would crash inside OTF2. */
        if (s != OTF2_SUCCESS)
            return s;
    }
    return OTF2_SUCCESS;
}

void sp_trace_mpi(sp_trace_location *tl, uint64_t time, const sp_mpi_event *e)
{
    uint64_t peer_tag = (uint64_t)e->peer << 32 | e->tag;
    switch (e->kind) {
    case SP_MPI_SEND:
        sp_trace_put_value(tl, time, SP_REC_MPI_SEND, e->comm, e->bytes_sent, peer_tag);
        break;
    case SP_MPI_RECV:
        sp_trace_put_value(tl, time, SP_REC_MPI_RECV, e->comm, e->bytes_received, peer_tag);
        break;
    case SP_MPI_ISEND:
        sp_trace_put_values(tl, time, SP_REC_MPI_ISEND, e->comm, e->bytes_sent, peer_tag,
                            e->request, 0);
        break;
    case SP_MPI_IRECV:
        sp_trace_put_values(tl, time, SP_REC_MPI_IRECV, e->comm, e->bytes_received, peer_tag,
                            e->request, 0);
        break;
    case SP_MPI_ISEND_COMPLETE:
        sp_trace_put_value(tl, time, SP_REC_MPI_ISEND_COMPLETE, 0, e->request, 0);
        break;
    case SP_MPI_IRECV_REQUEST:
        sp_trace_put_value(tl, time, SP_REC_MPI_IRECV_REQUEST, 0, e->request, 0);
        break;
    case SP_MPI_REQUEST_TEST:
        sp_trace_put_value(tl, time, SP_REC_MPI_REQUEST_TEST, 0, e->request, 0);
        break;
    case SP_MPI_COLLECTIVE_BEGIN:
        sp_trace_put(tl, time, SP_REC_MPI_COLLECTIVE_BEGIN, 0);
        break;
    case SP_MPI_COLLECTIVE_END:
        sp_trace_put_values(tl, time, SP_REC_MPI_COLLECTIVE_END, e->comm, e->bytes_sent,
                            e->bytes_received, e->op, e->root);
        break;
    }
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
    (void)user, (void)location;
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
    void *chunk = pooled ? sp_chunk_pool_get(&sp_trace.meas->pool, true) : malloc(chunk_size);
    if (chunk)
        held->chunks[held->count++] = chunk;
    return chunk;
}

static void free_all_chunks(void *user, OTF2_FileType type, OTF2_LocationRef location,
                            void **per_buffer, bool final)
{
    (void)user, (void)location;
    buffer_chunks *held = *per_buffer;
    if (!held)
        return;
    for (size_t i = 0; i < held->count; i++) {
        if (type == OTF2_FILETYPE_EVENTS)
            sp_chunk_pool_put(&sp_trace.meas->pool, held->chunks[i]);
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

/* ---- the archive ------------------------------------------------------------------------ */

static int encode_spill(sp_trace_location *tl, void *buffer, char *err, size_t errlen)
{
    FILE *f = tl->spill;
    char path[4200];
    sp_trace_spill_path(tl, path, sizeof path);
    if (!f && tl->spill_closed) {
        f = fopen(path, "rb");
        tl->spill_closed = false;
        if (!f)
            return sp_error(err, errlen, "reopening the spill file %s failed", path);
    }
    if (!f)
        return 0;
    rewind(f);
    int status = 0;
    uint64_t bytes;
    while (status == 0 && fread(&bytes, sizeof bytes, 1, f) == 1) {
        if (bytes > SP_TRACE_CHUNK_SIZE || fread(buffer, 1, bytes, f) != bytes) {
            status = sp_error(err, errlen, "reading the spill file %s failed", path);
            break;
        }
        status = sp_trace_check(sp_trace_encode_records(tl, buffer,
                                                        (sp_trace_record *)((char *)buffer + bytes)),
                                "writing the events", err, errlen);
    }
    fclose(f);
    tl->spill = NULL;
    unlink(path);
    return status;
}

static int encode_location(sp_trace_location *tl, void *buffer, char *err, size_t errlen)
{
    OTF2_Archive *archive = sp_trace.archive;
    tl->writer = OTF2_Archive_GetEvtWriter(archive, tl->location->id);
    if (!tl->writer)
        return sp_error(err, errlen, "OTF2 GetEvtWriter failed");
    sp_trace_retire_current_chunk(tl);
    int status = encode_spill(tl, buffer, err, errlen);
    for (raw_chunk *chunk = tl->full_first; chunk;) {
        raw_chunk *next = chunk->next;
        if (status == 0)
            status = sp_trace_check(sp_trace_encode_records(tl, CHUNK_RECORDS(chunk),
                                                            chunk->used_end),
                                    "writing the events", err, errlen);
        sp_chunk_pool_put(&sp_trace.meas->pool, chunk);
        chunk = next;
    }
    tl->full_first = tl->full_last = NULL;
    if (status != 0)
        return -1;
    if (sp_trace_check(OTF2_EvtWriter_GetNumberOfEvents(tl->writer, &tl->events),
                       "GetNumberOfEvents", err, errlen) != 0 ||
        sp_trace_check(OTF2_Archive_CloseEvtWriter(archive, tl->writer), "CloseEvtWriter", err,
                       errlen) != 0)
        return -1;
    tl->writer = NULL;
    return 0;
}

static int open_archive(sp_measurement *m, const char *dir, char *err, size_t errlen)
{
    sp_trace.archive = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, SP_TRACE_CHUNK_SIZE,
                                         OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT, OTF2_SUBSTRATE_POSIX,
                                         OTF2_COMPRESSION_NONE);
    if (!sp_trace.archive)
        return sp_error(err, errlen, "could not create the OTF2 archive in %s", dir);
    OTF2_Archive *a = sp_trace.archive;
    if (sp_trace_check(OTF2_Archive_SetFlushCallbacks(a, &flush_callbacks, NULL),
                       "SetFlushCallbacks", err, errlen) != 0 ||
        sp_trace_check(OTF2_Archive_SetMemoryCallbacks(a, &memory_callbacks, NULL),
                       "SetMemoryCallbacks", err, errlen) != 0)
        return -1;
    OTF2_ErrorCode s = sp_trace.collective
                           ? OTF2_Archive_SetCollectiveCallbacks(a, &sp_trace_ipc_collectives,
                                                                 (void *)&m->ipc, NULL, NULL)
                           : OTF2_Archive_SetSerialCollectiveCallbacks(a);
    if (sp_trace_check(s, "SetCollectiveCallbacks", err, errlen) != 0 ||
        sp_trace_check(OTF2_Pthread_Archive_SetLockingCallbacks(a, NULL), "SetLockingCallbacks",
                       err, errlen) != 0 ||
        sp_trace_check(OTF2_Archive_SetCreator(a, m->config.creator), "SetCreator", err,
                       errlen) != 0 ||
        sp_trace_check(OTF2_Archive_SetMachineName(a, m->config.machine_name), "SetMachineName",
                       err, errlen) != 0 ||
        sp_trace_check(OTF2_Archive_SetDescription(a, m->config.program_name), "SetDescription",
                       err, errlen) != 0)
        return -1;
    return sp_trace_check(OTF2_Archive_OpenEvtFiles(a), "OpenEvtFiles", err, errlen);
}

static int encode_events(sp_measurement *m, const char *dir, char *err, size_t errlen)
{
    if (open_archive(m, dir, err, errlen) != 0)
        return -1;
    void *buffer = malloc(SP_TRACE_CHUNK_SIZE);
    if (!buffer)
        return sp_error(err, errlen, "out of memory while writing the trace");
    int status = 0;
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs && status == 0; i++)
        status = encode_location(trace_location(m->locations[i]), buffer, err, errlen);
    free(buffer);
    if (status != 0)
        return -1;
    return sp_trace_check(OTF2_Archive_CloseEvtFiles(sp_trace.archive), "CloseEvtFiles", err,
                          errlen);
}

/* Removes what a failed encoding left in `dir` (traces.otf2, traces.def, traces/), so that
 * no half-written trace remains. */
static void remove_trace_files(const char *dir)
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

int sp_trace_encode(sp_measurement *m, const char *dir, char *err, size_t errlen)
{
    sp_trace.collective = m->collective;
    uint64_t ticks = m->end.ticks - m->start.ticks;
    uint64_t ns = m->end.monotonic_ns - m->start.monotonic_ns;
    sp_trace.ns_per_tick = ticks ? (double)ns / (double)ticks : 1.0;
    sp_trace_capture_otf2_messages();
    int status = encode_events(m, dir, err, errlen);
    sp_trace_release_otf2_messages(err, errlen);
    if (status == 0 || sp_trace.collective)
        return status;
    /* A full disk or a file size limit: no half-written trace stays, and the profile
     * (much smaller) is still written. Processes writing together cannot leave the
     * collective write alone, so they report the failure instead. */
    snprintf(sp_trace.error, sizeof sp_trace.error, "%s", err);
    err[0] = '\0';
    sp_trace_stop(m);
    remove_trace_files(dir);
    return 0;
}

uint64_t sp_trace_location_events(const sp_location *loc)
{
    const sp_trace_location *tl = trace_location(loc);
    return tl ? tl->events : 0;
}
