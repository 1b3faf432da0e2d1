/* The end, step 1: the OTF2 archive is opened and every location's raw records (spilled
 * ones first, then those in memory) are encoded into its event file. */
#include "substrates/trace/trace_internal.h"

#include "core/files.h"
#include "core/part.h"

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

/* While the records of an adopted part (core/part.h) are encoded: its program's strings
 * (its own ids, mapped by its own tables) and times that are nanoseconds already. File
 * state for the same reason as sp_trace: only the finalizing thread encodes. */
static struct {
    bool active;
    uint32_t name, argc;
    uint32_t rank; /* its location group (for its per-process metrics) */
    const uint32_t *args;
} foreign;

/* As Score-P records it: the program (the script's path), its own arguments (argv[1:]), and
 * the process id, plus the thread id when the program began on another thread than the
 * process's first. */
static OTF2_ErrorCode program_begin(OTF2_EvtWriter *writer, uint64_t time)
{
    if (foreign.active) {
        OTF2_StringRef args[64];
        uint32_t argc = foreign.argc < 64 ? foreign.argc : 64;
        for (uint32_t i = 0; i < argc; i++)
            args[i] = foreign.args[i];
        return OTF2_EvtWriter_ProgramBegin(writer, NULL, time, foreign.name, argc, args);
    }
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
    if (sp_clock_timer == SP_TIMER_CLOCK_GETTIME || foreign.active)
        return ticks;
    int64_t delta = (int64_t)(ticks - m->start.ticks);
    return m->start.monotonic_ns + (uint64_t)((double)delta * sp_trace.ns_per_tick + 0.5);
}

uint64_t sp_trace_last_event_ns(const sp_measurement *m)
{
    uint64_t last = m->end.ticks;
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs; i++)
        if (m->locations[i]->last_time > last)
            last = m->locations[i]->last_time;
    return to_ns(last);
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
unsigned sp_trace_record_length(const sp_trace_record *r)
{
    uint32_t kind = r->kind;
    switch (kind) {
    case SP_REC_ENTER:
    case SP_REC_LEAVE:
    case SP_REC_MEASUREMENT_ON:
    case SP_REC_MEASUREMENT_OFF:
    case SP_REC_PROGRAM_BEGIN:
    case SP_REC_MPI_COLLECTIVE_BEGIN:
    case SP_REC_CC_LEAVE:
    case SP_REC_MPI_COMM_CREATE:
    case SP_REC_MPI_COMM_DESTROY:
    case SP_REC_RMA_WIN_CREATE:
    case SP_REC_RMA_WIN_DESTROY:
    case SP_REC_RMA_COLLECTIVE_BEGIN:
    case SP_REC_RMA_WAIT_CHANGE:
        return 1;
    case SP_REC_MPI_ISEND:
    case SP_REC_MPI_IRECV:
    case SP_REC_MPI_COLLECTIVE_END:
    case SP_REC_MPI_ICOLL_COMPLETE:
    case SP_REC_RMA_COLLECTIVE_END:
    case SP_REC_RMA_PUT:
    case SP_REC_RMA_GET:
    case SP_REC_RMA_ATOMIC:
        return 3;
    case SP_REC_METRIC:
        return sp_trace_metric_record_length(r->ref);
    default:
        return sp_trace_is_io_record(kind) ? sp_trace_io_record_length(kind) : 2;
    }
}

size_t sp_trace_event_record_counts(sp_trace_event_records *out, size_t cap)
{
    static const struct {
        const char *event;
        uint32_t kind;
    } events[] = {
        {"enter", SP_REC_ENTER},
        {"leave", SP_REC_LEAVE},
        {"parameter", SP_REC_PARAMETER_INT},
        {"program_begin", SP_REC_PROGRAM_BEGIN},
        {"program_end", SP_REC_PROGRAM_END},
        {"measurement_on", SP_REC_MEASUREMENT_ON},
        {"measurement_off", SP_REC_MEASUREMENT_OFF},
        {"buffer_flush", SP_REC_BUFFER_FLUSH},
        {"sample", SP_REC_CC_SAMPLE},
        {"io_create_handle", SP_REC_IO_CREATE_HANDLE},
        {"io_destroy_handle", SP_REC_IO_DESTROY_HANDLE},
        {"io_duplicate_handle", SP_REC_IO_DUPLICATE_HANDLE},
        {"io_seek", SP_REC_IO_SEEK},
        {"io_operation_begin", SP_REC_IO_OPERATION_BEGIN},
        {"io_operation_complete", SP_REC_IO_OPERATION_COMPLETE},
    };
    size_t n = sizeof events / sizeof events[0];
    for (size_t i = 0; i < n && i < cap; i++) {
        sp_trace_record r = {0, events[i].kind, 0};
        out[i] = (sp_trace_event_records){events[i].event, sp_trace_record_length(&r)};
    }
    return n;
}

static uint32_t target_rank(uint64_t target)
{
    return (uint32_t)target == SP_RMA_ALL_TARGETS ? OTF2_UNDEFINED_UINT32 : (uint32_t)target;
}

/* The one-sided records (the window is r->ref). */
static OTF2_ErrorCode encode_rma(OTF2_EvtWriter *w, const sp_trace_record *r, uint64_t t)
{
    const sp_trace_payload *p = (const sp_trace_payload *)(r + 1);
    const sp_trace_payload *q = (const sp_trace_payload *)(r + 2);
    switch (r->kind) {
    case SP_REC_RMA_WIN_CREATE: return OTF2_EvtWriter_RmaWinCreate(w, NULL, t, r->ref);
    case SP_REC_RMA_WIN_DESTROY: return OTF2_EvtWriter_RmaWinDestroy(w, NULL, t, r->ref);
    case SP_REC_RMA_COLLECTIVE_BEGIN: return OTF2_EvtWriter_RmaCollectiveBegin(w, NULL, t);
    case SP_REC_RMA_COLLECTIVE_END:
        return OTF2_EvtWriter_RmaCollectiveEnd(w, NULL, t, collective_op(q->a & 0xffff),
                                               (OTF2_RmaSyncLevel)((q->a >> 16) & 0xffff),
                                               r->ref, collective_root(q->a >> 32), p->a,
                                               p->b);
    case SP_REC_RMA_GROUP_SYNC:
        /* The group of communicator c is OTF2 group 1 + 2c (see defs.c). */
        return OTF2_EvtWriter_RmaGroupSync(w, NULL, t, (OTF2_RmaSyncLevel)p->a, r->ref,
                                           (OTF2_GroupRef)p->b);
    case SP_REC_RMA_REQUEST_LOCK:
        return OTF2_EvtWriter_RmaRequestLock(w, NULL, t, r->ref, target_rank(p->a), p->b,
                                             (OTF2_LockType)(p->a >> 32));
    case SP_REC_RMA_ACQUIRE_LOCK:
        return OTF2_EvtWriter_RmaAcquireLock(w, NULL, t, r->ref, target_rank(p->a), p->b,
                                             (OTF2_LockType)(p->a >> 32));
    case SP_REC_RMA_TRY_LOCK:
        return OTF2_EvtWriter_RmaTryLock(w, NULL, t, r->ref, target_rank(p->a), p->b,
                                         (OTF2_LockType)(p->a >> 32));
    case SP_REC_RMA_RELEASE_LOCK:
        return OTF2_EvtWriter_RmaReleaseLock(w, NULL, t, r->ref, target_rank(p->a), p->b);
    case SP_REC_RMA_SYNC:
        return OTF2_EvtWriter_RmaSync(w, NULL, t, r->ref, target_rank(p->a),
                                      (OTF2_RmaSyncType)p->b);
    case SP_REC_RMA_WAIT_CHANGE: return OTF2_EvtWriter_RmaWaitChange(w, NULL, t, r->ref);
    case SP_REC_RMA_PUT:
        return OTF2_EvtWriter_RmaPut(w, NULL, t, r->ref, (uint32_t)p->b, p->a, q->a);
    case SP_REC_RMA_GET:
        return OTF2_EvtWriter_RmaGet(w, NULL, t, r->ref, (uint32_t)p->b, p->a, q->a);
    case SP_REC_RMA_ATOMIC:
        return OTF2_EvtWriter_RmaAtomic(w, NULL, t, r->ref, (uint32_t)q->a,
                                        (OTF2_RmaAtomicType)(q->a >> 32), p->a, p->b, q->b);
    case SP_REC_RMA_OP_COMPLETE_BLOCKING:
        return OTF2_EvtWriter_RmaOpCompleteBlocking(w, NULL, t, r->ref, p->a);
    case SP_REC_RMA_OP_COMPLETE_NON_BLOCKING:
        return OTF2_EvtWriter_RmaOpCompleteNonBlocking(w, NULL, t, r->ref, p->a);
    case SP_REC_RMA_OP_TEST: return OTF2_EvtWriter_RmaOpTest(w, NULL, t, r->ref, p->a);
    case SP_REC_RMA_OP_COMPLETE_REMOTE:
        return OTF2_EvtWriter_RmaOpCompleteRemote(w, NULL, t, r->ref, p->a);
    }
    return OTF2_ERROR_INVALID_DATA;
}

OTF2_ErrorCode sp_trace_encode_records(sp_trace_location *tl, const sp_trace_record *r,
                                       const sp_trace_record *end)
{
    OTF2_EvtWriter *w = tl->writer;
    /* Samples taken apart from the events (the Jupyter kernel's monitor) go into the
     * process's first location in time order (core/metrics.h). */
    bool samples = sp_trace.meas->metrics.samples.count != 0 && !foreign.active &&
                   tl->location->is_main;
    /* The location group: (thread << 32) | group, final before the encoding (a rank's, a
     * child process's number, 0 for a process alone). */
    uint32_t rank = foreign.active ? foreign.rank : (uint32_t)tl->location->id;
    /* A process's own part of an experiment cannot define its peers: only its MPI calls
     * (regions) remain. */
    bool skip_mpi = !sp_trace.collective;
    for (unsigned length; r < end; r += length) {
        uint64_t t = to_ns(r->time);
        if (__builtin_expect(samples, 0)) {
            OTF2_ErrorCode status = sp_trace_encode_samples(w, t);
            if (status != OTF2_SUCCESS)
                return status;
        }
        /* The common records first: one record each, no further checks. */
        if (r->kind == SP_REC_ENTER || r->kind == SP_REC_LEAVE) {
            length = 1;
            OTF2_ErrorCode s = r->kind == SP_REC_ENTER ? OTF2_EvtWriter_Enter(w, NULL, t, r->ref)
                                                       : OTF2_EvtWriter_Leave(w, NULL, t, r->ref);
            if (s != OTF2_SUCCESS)
                return s;
            continue;
        }
        length = sp_trace_record_length(r);
        const sp_trace_payload *p = (const sp_trace_payload *)(r + 1);
        const sp_trace_payload *q = (const sp_trace_payload *)(r + 2);
        if (skip_mpi && r->kind >= SP_REC_MPI_FIRST && r->kind <= SP_REC_MPI_LAST)
            continue;
        OTF2_ErrorCode s;
        switch (r->kind) {
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
        case SP_REC_METRIC: s = sp_trace_encode_metric(w, r, t, rank); break;
        case SP_REC_MPI_REQUEST_CANCELLED:
            s = OTF2_EvtWriter_MpiRequestCancelled(w, NULL, t, p->a);
            break;
        case SP_REC_MPI_ICOLL_REQUEST:
            s = OTF2_EvtWriter_NonBlockingCollectiveRequest(w, NULL, t, p->a);
            break;
        case SP_REC_MPI_ICOLL_COMPLETE:
            s = OTF2_EvtWriter_NonBlockingCollectiveComplete(
                w, NULL, t, collective_op(q->a & 0xffffffffu), r->ref,
                collective_root(q->a >> 32), p->a, p->b, q->b);
            break;
        case SP_REC_MPI_COMM_CREATE: s = OTF2_EvtWriter_CommCreate(w, NULL, t, r->ref); break;
        case SP_REC_MPI_COMM_DESTROY: s = OTF2_EvtWriter_CommDestroy(w, NULL, t, r->ref); break;
        default:
            if (sp_trace_is_context_record(r->kind))
                s = sp_trace_encode_context(w, r, t);
            else if (sp_trace_is_io_record(r->kind))
                s = sp_trace_encode_io(w, r, t);
            else if (r->kind >= SP_REC_RMA_WIN_CREATE && r->kind <= SP_REC_MPI_LAST)
                s = encode_rma(w, r, t);
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
    case SP_MPI_REQUEST_CANCELLED:
        sp_trace_put_value(tl, time, SP_REC_MPI_REQUEST_CANCELLED, 0, e->request, 0);
        break;
    case SP_MPI_COLLECTIVE_BEGIN:
        sp_trace_put(tl, time, SP_REC_MPI_COLLECTIVE_BEGIN, 0);
        break;
    case SP_MPI_COLLECTIVE_END:
        sp_trace_put_values(tl, time, SP_REC_MPI_COLLECTIVE_END, e->comm, e->bytes_sent,
                            e->bytes_received, e->op, e->root);
        break;
    case SP_MPI_ICOLL_REQUEST:
        sp_trace_put_value(tl, time, SP_REC_MPI_ICOLL_REQUEST, 0, e->request, 0);
        break;
    case SP_MPI_ICOLL_COMPLETE:
        sp_trace_put_values(tl, time, SP_REC_MPI_ICOLL_COMPLETE, e->comm, e->bytes_sent,
                            e->bytes_received, (uint64_t)e->root << 32 | e->op, e->request);
        break;
    case SP_MPI_COMM_CREATE: sp_trace_put(tl, time, SP_REC_MPI_COMM_CREATE, e->comm); break;
    case SP_MPI_COMM_DESTROY: sp_trace_put(tl, time, SP_REC_MPI_COMM_DESTROY, e->comm); break;
    case SP_RMA_WIN_CREATE: sp_trace_put(tl, time, SP_REC_RMA_WIN_CREATE, e->comm); break;
    case SP_RMA_WIN_DESTROY: sp_trace_put(tl, time, SP_REC_RMA_WIN_DESTROY, e->comm); break;
    case SP_RMA_COLLECTIVE_BEGIN: sp_trace_put(tl, time, SP_REC_RMA_COLLECTIVE_BEGIN, 0); break;
    case SP_RMA_COLLECTIVE_END:
        sp_trace_put_values(tl, time, SP_REC_RMA_COLLECTIVE_END, e->comm, e->bytes_sent,
                            e->bytes_received,
                            (uint64_t)e->root << 32 | (uint64_t)e->detail << 16 | e->op, 0);
        break;
    case SP_RMA_GROUP_SYNC:
        /* The group's OTF2 id comes from the communicator id through a mapping table. */
        sp_trace_put_value(tl, time, SP_REC_RMA_GROUP_SYNC, e->comm, e->detail, e->group);
        break;
    case SP_RMA_REQUEST_LOCK:
    case SP_RMA_ACQUIRE_LOCK:
    case SP_RMA_TRY_LOCK:
        sp_trace_put_value(tl, time,
                           e->kind == SP_RMA_REQUEST_LOCK   ? SP_REC_RMA_REQUEST_LOCK
                           : e->kind == SP_RMA_ACQUIRE_LOCK ? SP_REC_RMA_ACQUIRE_LOCK
                                                            : SP_REC_RMA_TRY_LOCK,
                           e->comm, (uint64_t)e->detail << 32 | e->peer, e->request);
        break;
    case SP_RMA_RELEASE_LOCK:
        sp_trace_put_value(tl, time, SP_REC_RMA_RELEASE_LOCK, e->comm, e->peer, e->request);
        break;
    case SP_RMA_SYNC:
        sp_trace_put_value(tl, time, SP_REC_RMA_SYNC, e->comm, e->peer, e->detail);
        break;
    case SP_RMA_WAIT_CHANGE: sp_trace_put(tl, time, SP_REC_RMA_WAIT_CHANGE, e->comm); break;
    case SP_RMA_PUT:
        sp_trace_put_values(tl, time, SP_REC_RMA_PUT, e->comm, e->bytes_sent, e->peer,
                            e->request, 0);
        break;
    case SP_RMA_GET:
        sp_trace_put_values(tl, time, SP_REC_RMA_GET, e->comm, e->bytes_received, e->peer,
                            e->request, 0);
        break;
    case SP_RMA_ATOMIC:
        sp_trace_put_values(tl, time, SP_REC_RMA_ATOMIC, e->comm, e->bytes_sent,
                            e->bytes_received, (uint64_t)e->detail << 32 | e->peer, e->request);
        break;
    case SP_RMA_OP_COMPLETE_BLOCKING:
    case SP_RMA_OP_COMPLETE_NON_BLOCKING:
    case SP_RMA_OP_TEST:
    case SP_RMA_OP_COMPLETE_REMOTE:
        sp_trace_put_value(tl, time,
                           SP_REC_RMA_OP_COMPLETE_BLOCKING +
                               (uint32_t)(e->kind - SP_RMA_OP_COMPLETE_BLOCKING),
                           e->comm, e->request, 0);
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

static int encode_parts(sp_measurement *m, char *err, size_t errlen);

static int encode_events(sp_measurement *m, const char *dir, char *err, size_t errlen)
{
    sp_trace_samples_rewind();
    if (open_archive(m, dir, err, errlen) != 0)
        return -1;
    void *buffer = malloc(SP_TRACE_CHUNK_SIZE);
    if (!buffer)
        return sp_error(err, errlen, "out of memory while writing the trace");
    int status = 0;
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs && status == 0; i++)
        status = encode_location(trace_location(m->locations[i]), buffer, err, errlen);
    if (status == 0)
        status = encode_parts(m, err, errlen);
    free(buffer);
    if (status == 0)
        status = sp_trace_adopt_events(m, dir, err, errlen);
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
    sp_dir_remove_flat(path);
    snprintf(path, sizeof path, "%s/traces.otf2", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/traces.def", dir);
    unlink(path);
}

/* ---- parts (core/part.h) -------------------------------------------------------------- */

static void ns_per_tick_now(const sp_measurement *m)
{
    uint64_t ticks = m->end.ticks - m->start.ticks;
    uint64_t ns = m->end.monotonic_ns - m->start.monotonic_ns;
    sp_trace.ns_per_tick = ticks ? (double)ns / (double)ticks : 1.0;
}

/* Records of one chunk with their times (and a flush's end) in nanoseconds. */
static void append_in_ns(sp_buffer *b, const sp_trace_record *r, const sp_trace_record *end)
{
    for (; r < end; r += sp_trace_record_length(r)) {
        unsigned n = sp_trace_record_length(r);
        if (r + n > end)
            break;
        sp_trace_record head = *r;
        head.time = to_ns(r->time);
        sp_buffer_put(b, &head, sizeof head);
        if (r->kind == SP_REC_BUFFER_FLUSH) {
            sp_trace_payload flush = *(const sp_trace_payload *)(r + 1);
            flush.a = to_ns(flush.a);
            sp_buffer_put(b, &flush, sizeof flush);
        } else if (n > 1) {
            sp_buffer_put(b, r + 1, (n - 1) * sizeof *r);
        }
    }
}

void sp_trace_part(sp_measurement *m, sp_buffer *b)
{
    ns_per_tick_now(m);
    sp_buffer_u32(b, sp_defs_string(&m->defs, m->config.program_name));
    sp_buffer_u32(b, m->config.program_argc);
    for (uint32_t i = 0; i < m->config.program_argc; i++)
        sp_buffer_u32(b, sp_defs_string(&m->defs, m->config.program_args[i]));
    void *chunk = malloc(SP_TRACE_CHUNK_SIZE);
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs && chunk; i++) {
        sp_trace_location *tl = trace_location(m->locations[i]);
        size_t at = b->size;
        sp_buffer_u64(b, 0); /* the byte count, known at the end */
        sp_trace_retire_current_chunk(tl);
        FILE *f = tl->spill;
        char path[4200];
        sp_trace_spill_path(tl, path, sizeof path);
        if (!f && tl->spill_closed)
            f = fopen(path, "rb");
        if (f) {
            rewind(f);
            uint64_t bytes;
            while (fread(&bytes, sizeof bytes, 1, f) == 1 && bytes <= SP_TRACE_CHUNK_SIZE &&
                   fread(chunk, 1, bytes, f) == bytes)
                append_in_ns(b, chunk, (sp_trace_record *)((char *)chunk + bytes));
            fclose(f);
            tl->spill = NULL;
            tl->spill_closed = false;
            unlink(path);
        }
        for (raw_chunk *c = tl->full_first; c; c = c->next)
            append_in_ns(b, CHUNK_RECORDS(c), c->used_end);
        uint64_t size = b->size - at - sizeof(uint64_t);
        if (!b->failed)
            memcpy(b->data + at, &size, sizeof size);
    }
    if (!chunk)
        b->failed = true;
    free(chunk);
}

/* The root encodes the records of each adopted part into event files of its locations. */
static int encode_parts(sp_measurement *m, char *err, size_t errlen)
{
    int status = 0;
    for (uint32_t k = 0; k < m->part_count && status == 0; k++) {
        sp_part *p = &m->parts[k];
        sp_reader r;
        sp_reader_init(&r, p->c.section[sp_trace.slot], p->c.section_size[sp_trace.slot]);
        foreign.rank = p->rank;
        foreign.name = sp_reader_u32(&r);
        foreign.argc = sp_reader_u32(&r);
        foreign.args = (const uint32_t *)(r.data + r.pos);
        if (foreign.argc > r.size / 4)
            continue; /* damaged: its locations stay without events */
        r.pos += (size_t)foreign.argc * 4;
        foreign.active = true;
        for (uint32_t i = 0; i < p->c.location_count && status == 0 && !r.failed; i++) {
            uint64_t bytes = sp_reader_u64(&r);
            if (r.failed || bytes > r.size - r.pos)
                break;
            sp_trace_location tl = {0};
            tl.writer = OTF2_Archive_GetEvtWriter(sp_trace.archive, p->location_ids[i]);
            if (!tl.writer) {
                status = sp_error(err, errlen, "OTF2 GetEvtWriter failed");
                break;
            }
            /* Records are 16 bytes: copied out, the file's data need not be aligned. */
            sp_trace_record *copy = malloc(bytes ? bytes : 1);
            if (!copy) {
                status = sp_error(err, errlen, "out of memory while writing the trace");
                break;
            }
            memcpy(copy, r.data + r.pos, bytes);
            r.pos += bytes;
            status = sp_trace_check(sp_trace_encode_records(&tl, copy,
                                                            (sp_trace_record *)((char *)copy +
                                                                                bytes)),
                                    "writing the events", err, errlen);
            free(copy);
            if (status == 0)
                status = sp_trace_check(OTF2_EvtWriter_GetNumberOfEvents(tl.writer,
                                                                         &p->location_events[i]),
                                        "GetNumberOfEvents", err, errlen);
            if (status == 0)
                status = sp_trace_check(OTF2_Archive_CloseEvtWriter(sp_trace.archive, tl.writer),
                                        "CloseEvtWriter", err, errlen);
        }
        foreign.active = false;
    }
    return status;
}

int sp_trace_encode(sp_measurement *m, const char *dir, char *err, size_t errlen)
{
    sp_trace.collective = m->collective;
    ns_per_tick_now(m);
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
