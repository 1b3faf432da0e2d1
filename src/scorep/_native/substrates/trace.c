#include "substrates/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (trace->errors++ == 0)
        snprintf(trace->first_error, sizeof trace->first_error, "%s: %s", what,
                 OTF2_Error_GetName(status));
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

static void encode_records(sp_trace *trace, sp_location *loc, const sp_trace_record *r,
                           const sp_trace_record *end)
{
    OTF2_EvtWriter *w = loc->trace_writer;
    while (r < end) {
        const sp_trace_payload *p = (const sp_trace_payload *)(r + 1);
        switch (r->kind) {
        case SP_REC_ENTER:
            check(trace, OTF2_EvtWriter_Enter(w, NULL, r->time, r->ref), "Enter");
            r++;
            break;
        case SP_REC_LEAVE:
            check(trace, OTF2_EvtWriter_Leave(w, NULL, r->time, r->ref), "Leave");
            r++;
            break;
        case SP_REC_PARAMETER_INT:
            check(trace, OTF2_EvtWriter_ParameterInt(w, NULL, r->time, r->ref, (int64_t)p->value),
                  "ParameterInt");
            r += 2;
            break;
        case SP_REC_PARAMETER_UINT:
            check(trace, OTF2_EvtWriter_ParameterUnsignedInt(w, NULL, r->time, r->ref, p->value),
                  "ParameterUnsignedInt");
            r += 2;
            break;
        case SP_REC_PARAMETER_STRING:
            check(trace, OTF2_EvtWriter_ParameterString(w, NULL, r->time, r->ref,
                                                        (OTF2_StringRef)p->value),
                  "ParameterString");
            r += 2;
            break;
        case SP_REC_MEASUREMENT_ON:
        case SP_REC_MEASUREMENT_OFF:
            check(trace, OTF2_EvtWriter_MeasurementOnOff(w, NULL, r->time,
                                                         r->kind == SP_REC_MEASUREMENT_ON
                                                             ? OTF2_MEASUREMENT_ON
                                                             : OTF2_MEASUREMENT_OFF),
                  "MeasurementOnOff");
            r++;
            break;
        case SP_REC_PROGRAM_BEGIN:
            check(trace, program_begin(trace, w, r->time), "ProgramBegin");
            r++;
            break;
        case SP_REC_PROGRAM_END:
            check(trace, OTF2_EvtWriter_ProgramEnd(w, NULL, r->time, (int64_t)p->value),
                  "ProgramEnd");
            r += 2;
            break;
        case SP_REC_BUFFER_FLUSH:
            check(trace, OTF2_EvtWriter_BufferFlush(w, NULL, r->time, p->value), "BufferFlush");
            r += 2;
            break;
        default:
            check(trace, OTF2_ERROR_INVALID_DATA, "unknown raw record");
            return;
        }
    }
}

/* Encodes the location's full chunks and gives them back to the budget. */
static void encode_full_chunks(sp_trace *trace, sp_location *loc)
{
    raw_chunk *chunk = loc->trace_full_first;
    while (chunk) {
        raw_chunk *next = chunk->next;
        encode_records(trace, loc, CHUNK_RECORDS(chunk), chunk->used_end);
        sp_chunk_pool_put(&trace->meas->pool, chunk);
        chunk = next;
    }
    loc->trace_full_first = loc->trace_full_last = NULL;
}

void sp_trace_flush_location(sp_trace *trace, sp_location *loc)
{
    if (!loc->trace_full_first)
        return;
    uint64_t begin = loc->last_time;
    encode_full_chunks(trace, loc);
    loc->trace_flushes++;
    sp_trace_record_put_value(trace, loc, begin, SP_REC_BUFFER_FLUSH, 0, sp_clock_now());
}

sp_trace_record *sp_trace_next_chunk(sp_trace *trace, sp_location *loc, unsigned count)
{
    sp_chunk_pool *pool = &trace->meas->pool;
    if (!loc->trace_chunk)
        loc->trace_lost_records++; /* it wrote into the sink */
    else
        retire_current_chunk(loc);
    raw_chunk *chunk = sp_chunk_pool_get(pool, false);
    uint64_t flush_begin = 0;
    if (!chunk) {
        /* The budget is used up: this location's records go to disk now. The pause is
         * real (the program waits), so the trace shows it. */
        flush_begin = loc->last_time;
        encode_full_chunks(trace, loc);
        loc->trace_flushes++;
        chunk = sp_chunk_pool_get(pool, true);
    }
    if (!chunk) {
        loc->trace_pos = lost_records;
        loc->trace_end = lost_records + 4;
        return lost_records; /* count <= 2 always fits */
    }
    use_chunk(loc, chunk);
    if (flush_begin) {
        sp_trace_record *r = loc->trace_pos;
        r->time = flush_begin;
        r->kind = SP_REC_BUFFER_FLUSH;
        r->ref = 0;
        ((sp_trace_payload *)(r + 1))->value = sp_clock_now();
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

/* No post-flush callback: OTF2 would mark every encoding-time flush as a pause of the
 * program; the real pauses are recorded as BufferFlush records of our own. */
static const OTF2_FlushCallbacks flush_callbacks = {
    .otf2_pre_flush = pre_flush,
    .otf2_post_flush = NULL,
};

static const OTF2_MemoryCallbacks memory_callbacks = {
    .otf2_allocate = allocate_chunk,
    .otf2_free_all = free_all_chunks,
};

static int fail(sp_trace *trace, OTF2_ErrorCode status, const char *what, char *err,
                size_t errlen)
{
    snprintf(err, errlen, "OTF2 %s failed: %s (%s)", what, OTF2_Error_GetName(status),
             OTF2_Error_GetDescription(status));
    (void)trace;
    return -1;
}

int sp_trace_open(sp_trace *trace, sp_measurement *meas, char *err, size_t errlen)
{
    trace->meas = meas;
    trace->errors = 0;
    trace->first_error[0] = '\0';
    trace->archive = OTF2_Archive_Open(meas->config.experiment_dir, "traces", OTF2_FILEMODE_WRITE,
                                       SP_TRACE_CHUNK_SIZE, OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT,
                                       OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!trace->archive) {
        snprintf(err, errlen, "could not create the OTF2 archive in %s",
                 meas->config.experiment_dir);
        return -1;
    }
    OTF2_ErrorCode s;
    if ((s = OTF2_Archive_SetFlushCallbacks(trace->archive, &flush_callbacks, trace)) != OTF2_SUCCESS)
        return fail(trace, s, "SetFlushCallbacks", err, errlen);
    if ((s = OTF2_Archive_SetMemoryCallbacks(trace->archive, &memory_callbacks, trace)) != OTF2_SUCCESS)
        return fail(trace, s, "SetMemoryCallbacks", err, errlen);
    if ((s = OTF2_Archive_SetSerialCollectiveCallbacks(trace->archive)) != OTF2_SUCCESS)
        return fail(trace, s, "SetSerialCollectiveCallbacks", err, errlen);
    if ((s = OTF2_Pthread_Archive_SetLockingCallbacks(trace->archive, NULL)) != OTF2_SUCCESS)
        return fail(trace, s, "SetLockingCallbacks", err, errlen);
    OTF2_Archive_SetCreator(trace->archive, meas->config.creator);
    OTF2_Archive_SetMachineName(trace->archive, meas->config.machine_name);
    OTF2_Archive_SetDescription(trace->archive, meas->config.program_name);
    if ((s = OTF2_Archive_OpenEvtFiles(trace->archive)) != OTF2_SUCCESS)
        return fail(trace, s, "OpenEvtFiles", err, errlen);
    return 0;
}

int sp_trace_location_open(sp_trace *trace, sp_location *loc)
{
    loc->trace_writer = OTF2_Archive_GetEvtWriter(trace->archive, loc->id);
    raw_chunk *chunk = sp_chunk_pool_get(&trace->meas->pool, true);
    if (!loc->trace_writer || !chunk) {
        sp_chunk_pool_put(&trace->meas->pool, chunk);
        check(trace, OTF2_ERROR_MEM_ALLOC_FAILED, "GetEvtWriter");
        return -1;
    }
    use_chunk(loc, chunk);
    return 0;
}

/* ---- closing: event files, local and global definitions -------------------------------- */

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

#define CHECK_OTF2(call, what)                                                                 \
    do {                                                                                       \
        OTF2_ErrorCode status_ = (call);                                                       \
        if (status_ != OTF2_SUCCESS) {                                                         \
            fail(trace, status_, what, err, errlen);                                           \
            goto failed;                                                                       \
        }                                                                                      \
    } while (0)

int sp_trace_close(sp_trace *trace, char *err, size_t errlen)
{
    sp_measurement *m = trace->meas;
    sp_defs *defs = &m->defs;
    uint32_t nlocs = atomic_load(&m->location_count);
    uint64_t *events = calloc(nlocs ? nlocs : 1, sizeof *events);
    uint32_t *location_names = calloc(nlocs ? nlocs : 1, sizeof *location_names);
    if (!events || !location_names) {
        snprintf(err, errlen, "out of memory while writing the trace");
        goto failed;
    }
    for (uint32_t i = 0; i < nlocs; i++) {
        sp_location *loc = m->locations[i];
        retire_current_chunk(loc);
        encode_full_chunks(trace, loc);
        location_names[i] = sp_defs_string(defs, loc->name);
        CHECK_OTF2(OTF2_EvtWriter_GetNumberOfEvents(loc->trace_writer, &events[i]),
                   "GetNumberOfEvents");
        CHECK_OTF2(OTF2_Archive_CloseEvtWriter(trace->archive, loc->trace_writer), "CloseEvtWriter");
        loc->trace_writer = NULL;
    }
    CHECK_OTF2(OTF2_Archive_CloseEvtFiles(trace->archive), "CloseEvtFiles");

    /* Empty local definition files keep readers from warning about missing ones. */
    CHECK_OTF2(OTF2_Archive_OpenDefFiles(trace->archive), "OpenDefFiles");
    for (uint32_t i = 0; i < nlocs; i++) {
        OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(trace->archive, m->locations[i]->id);
        if (!dw) {
            snprintf(err, errlen, "OTF2 GetDefWriter failed");
            goto failed;
        }
        CHECK_OTF2(OTF2_Archive_CloseDefWriter(trace->archive, dw), "CloseDefWriter");
    }
    CHECK_OTF2(OTF2_Archive_CloseDefFiles(trace->archive), "CloseDefFiles");

    uint32_t machine = sp_defs_string(defs, m->config.machine_name);
    uint32_t machine_class = sp_defs_string(defs, "machine");
    uint32_t node = sp_defs_string(defs, m->config.node_name);
    uint32_t node_class = sp_defs_string(defs, "node");
    uint32_t group_name = sp_defs_string(defs, "Process");

    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(trace->archive);
    if (!g) {
        snprintf(err, errlen, "OTF2 GetGlobalDefWriter failed");
        goto failed;
    }
    uint64_t start = m->start.ticks;
    uint64_t length = 1;
    for (uint32_t i = 0; i < nlocs; i++)
        if (m->locations[i]->last_time - start + 1 > length)
            length = m->locations[i]->last_time - start + 1;
    sp_clock_anchor end_anchor = m->end;
    CHECK_OTF2(OTF2_GlobalDefWriter_WriteClockProperties(
                   g, sp_clock_ticks_per_second(&m->start, &end_anchor), start, length,
                   m->start.realtime_ns),
               "WriteClockProperties");
    for (uint32_t i = 0; i < defs->strings.count; i++)
        CHECK_OTF2(OTF2_GlobalDefWriter_WriteString(g, i, sp_defs_str(defs, i)), "WriteString");
    CHECK_OTF2(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine, machine_class,
                                                        OTF2_UNDEFINED_SYSTEM_TREE_NODE),
               "WriteSystemTreeNode");
    CHECK_OTF2(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1, node, node_class, 0),
               "WriteSystemTreeNode");
    CHECK_OTF2(OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, group_name,
                                                       OTF2_LOCATION_GROUP_TYPE_PROCESS, 1,
                                                       OTF2_UNDEFINED_LOCATION_GROUP),
               "WriteLocationGroup");
    for (uint32_t i = 0; i < nlocs; i++)
        CHECK_OTF2(OTF2_GlobalDefWriter_WriteLocation(g, m->locations[i]->id, location_names[i],
                                                      OTF2_LOCATION_TYPE_CPU_THREAD, events[i], 0),
                   "WriteLocation");
    for (uint32_t i = 0; i < defs->region_count; i++) {
        const sp_region *r = &defs->regions[i];
        CHECK_OTF2(OTF2_GlobalDefWriter_WriteRegion(
                       g, i, r->name, r->canonical, 0, otf2_role(r->role),
                       otf2_paradigm(r->paradigm), OTF2_REGION_FLAG_NONE, r->file,
                       r->begin_line < 0 ? 0 : (uint32_t)r->begin_line,
                       r->end_line < 0 ? 0 : (uint32_t)r->end_line),
                   "WriteRegion");
    }
    for (uint32_t i = 0; i < defs->parameter_count; i++)
        CHECK_OTF2(OTF2_GlobalDefWriter_WriteParameter(g, i, defs->parameters[i].name,
                                                       otf2_parameter_type(defs->parameters[i].type)),
                   "WriteParameter");
    CHECK_OTF2(OTF2_Archive_CloseGlobalDefWriter(trace->archive, g), "CloseGlobalDefWriter");
    CHECK_OTF2(OTF2_Archive_Close(trace->archive), "Close");
    trace->archive = NULL;
    free(events);
    free(location_names);
    if (trace->errors) {
        snprintf(err, errlen, "%llu OTF2 event write(s) failed, the first: %s",
                 (unsigned long long)trace->errors, trace->first_error);
        return -1;
    }
    return 0;

failed:
    free(events);
    free(location_names);
    sp_trace_abort(trace);
    return -1;
}

void sp_trace_abort(sp_trace *trace)
{
    if (trace->archive)
        OTF2_Archive_Close(trace->archive);
    trace->archive = NULL;
}
