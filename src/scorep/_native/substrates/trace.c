#include "substrates/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/OTF2_Pthread_Locks.h>

/* ---- memory: event chunks come out of the measurement's budget ------------------------ */

/* The chunks one OTF2 buffer holds, so that free_all can hand them all back. */
typedef struct {
    void **chunks;
    size_t count, capacity;
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
    if (held->count == held->capacity) {
        size_t cap = held->capacity ? held->capacity * 2 : 8;
        void **chunks = realloc(held->chunks, cap * sizeof *chunks);
        if (!chunks)
            return NULL;
        held->chunks = chunks;
        held->capacity = cap;
    }
    void *chunk;
    if (type == OTF2_FILETYPE_EVENTS && chunk_size == trace->meas->pool.chunk_size) {
        /* NULL makes OTF2 flush this buffer to disk and ask again; a buffer that holds
         * nothing must get a chunk or its location could never record again. */
        chunk = sp_chunk_pool_get(&trace->meas->pool, held->count == 0);
    } else {
        /* Definition buffers are small and written once, at the end. */
        chunk = malloc(chunk_size);
    }
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
    bool pooled = type == OTF2_FILETYPE_EVENTS;
    for (size_t i = 0; i < held->count; i++) {
        if (pooled)
            sp_chunk_pool_put(&trace->meas->pool, held->chunks[i]);
        else
            free(held->chunks[i]);
    }
    held->count = 0;
    if (final) {
        free(held->chunks);
        free(held);
        *per_buffer = NULL;
    }
}

/* ---- flushes: count the ones during the run, stamp their end ---------------------------- */

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef location,
                                void *caller, bool final)
{
    (void)caller;
    sp_trace *trace = user;
    if (type == OTF2_FILETYPE_EVENTS && !final && location < SP_MAX_LOCATIONS) {
        /* Location ids are the locations' indexes within this process. */
        sp_location *loc = trace->meas->locations[location];
        if (loc)
            loc->trace_flushes++;
    }
    return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef location)
{
    (void)user;
    (void)type;
    (void)location;
    return sp_clock_now();
}

static const OTF2_FlushCallbacks flush_callbacks = {
    .otf2_pre_flush = pre_flush,
    .otf2_post_flush = post_flush,
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
    if (!loc->trace_writer) {
        sp_trace_check(trace, OTF2_ERROR_MEM_ALLOC_FAILED, "GetEvtWriter");
        return -1;
    }
    return 0;
}

void sp_trace_program_begin(sp_trace *trace, sp_location *loc, uint64_t time)
{
    sp_measurement *m = trace->meas;
    uint32_t name = sp_defs_string(&m->defs, m->config.program_name);
    uint32_t argc = m->config.program_argc;
    OTF2_StringRef *args = argc ? calloc(argc, sizeof *args) : NULL;
    if (argc && !args)
        argc = 0;
    for (uint32_t i = 0; i < argc; i++)
        args[i] = sp_defs_string(&m->defs, m->config.program_args[i]);
    sp_trace_check(trace, OTF2_EvtWriter_ProgramBegin(loc->trace_writer, NULL, time, name, argc, args),
                   "ProgramBegin");
    free(args);
}

void sp_trace_program_end(sp_trace *trace, sp_location *loc, uint64_t time, int64_t exit_status)
{
    sp_trace_check(trace, OTF2_EvtWriter_ProgramEnd(loc->trace_writer, NULL, time, exit_status),
                   "ProgramEnd");
}

void sp_trace_measurement_on_off(sp_trace *trace, sp_location *loc, uint64_t time, bool on)
{
    sp_trace_check(trace,
                   OTF2_EvtWriter_MeasurementOnOff(loc->trace_writer, NULL, time,
                                                   on ? OTF2_MEASUREMENT_ON : OTF2_MEASUREMENT_OFF),
                   "MeasurementOnOff");
}

void sp_trace_parameter_int(sp_trace *trace, sp_location *loc, uint64_t time, uint32_t parameter,
                            int64_t value)
{
    sp_trace_check(trace, OTF2_EvtWriter_ParameterInt(loc->trace_writer, NULL, time, parameter, value),
                   "ParameterInt");
}

void sp_trace_parameter_uint(sp_trace *trace, sp_location *loc, uint64_t time, uint32_t parameter,
                             uint64_t value)
{
    sp_trace_check(trace,
                   OTF2_EvtWriter_ParameterUnsignedInt(loc->trace_writer, NULL, time, parameter, value),
                   "ParameterUnsignedInt");
}

void sp_trace_parameter_string(sp_trace *trace, sp_location *loc, uint64_t time,
                               uint32_t parameter, uint32_t string)
{
    sp_trace_check(trace,
                   OTF2_EvtWriter_ParameterString(loc->trace_writer, NULL, time, parameter, string),
                   "ParameterString");
}

void sp_trace_store_rewind_point(sp_trace *trace, sp_location *loc, uint32_t id)
{
    sp_trace_check(trace, OTF2_EvtWriter_StoreRewindPoint(loc->trace_writer, id), "StoreRewindPoint");
}

bool sp_trace_rewind(sp_trace *trace, sp_location *loc, uint32_t id)
{
    /* Fails when the buffer was flushed since the point was stored (the events are on
     * disk already); the caller then keeps them. */
    (void)trace;
    if (OTF2_EvtWriter_Rewind(loc->trace_writer, id) != OTF2_SUCCESS)
        return false;
    OTF2_EvtWriter_ClearRewindPoint(loc->trace_writer, id);
    return true;
}

void sp_trace_clear_rewind_point(sp_trace *trace, sp_location *loc, uint32_t id)
{
    (void)trace;
    /* A flush may already have cleared it; that is not an error. */
    OTF2_EvtWriter_ClearRewindPoint(loc->trace_writer, id);
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
