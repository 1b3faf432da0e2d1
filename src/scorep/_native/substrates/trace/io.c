/* I/O in the trace: raw records on the event path, OTF2 I/O events at the end, and the
 * I/O definitions (Score-P's IoParadigm, IoRegularFile, IoHandle, IoPreCreatedHandleState).
 * Every record names its handle; the handle names its paradigm, so POSIX, ISO C and
 * MPI-IO share these records. */
#include "substrates/trace/trace_internal.h"

#include <stdlib.h>

/* The core's I/O values are OTF2's (core/defs.h promises it; checked here, where both are
 * known). */
_Static_assert((int)SP_IO_ACCESS_READ_ONLY == (int)OTF2_IO_ACCESS_MODE_READ_ONLY &&
                   (int)SP_IO_ACCESS_WRITE_ONLY == (int)OTF2_IO_ACCESS_MODE_WRITE_ONLY &&
                   (int)SP_IO_ACCESS_READ_WRITE == (int)OTF2_IO_ACCESS_MODE_READ_WRITE &&
                   (int)SP_IO_ACCESS_EXECUTE_ONLY == (int)OTF2_IO_ACCESS_MODE_EXECUTE_ONLY &&
                   (int)SP_IO_ACCESS_SEARCH_ONLY == (int)OTF2_IO_ACCESS_MODE_SEARCH_ONLY,
               "access modes are OTF2's");
_Static_assert((int)SP_IO_HANDLE_PRE_CREATED == (int)OTF2_IO_HANDLE_FLAG_PRE_CREATED &&
                   (int)SP_IO_HANDLE_ALL_PROXY == (int)OTF2_IO_HANDLE_FLAG_ALL_PROXY,
               "handle flags are OTF2's");
_Static_assert((int)SP_IO_CREATION_CREATE == (int)OTF2_IO_CREATION_FLAG_CREATE &&
                   (int)SP_IO_CREATION_TRUNCATE == (int)OTF2_IO_CREATION_FLAG_TRUNCATE &&
                   (int)SP_IO_CREATION_DIRECTORY == (int)OTF2_IO_CREATION_FLAG_DIRECTORY &&
                   (int)SP_IO_CREATION_EXCLUSIVE == (int)OTF2_IO_CREATION_FLAG_EXCLUSIVE &&
                   (int)SP_IO_CREATION_NO_CONTROLLING_TERMINAL == (int)OTF2_IO_CREATION_FLAG_NO_CONTROLLING_TERMINAL &&
                   (int)SP_IO_CREATION_NO_FOLLOW == (int)OTF2_IO_CREATION_FLAG_NO_FOLLOW &&
                   (int)SP_IO_CREATION_PATH == (int)OTF2_IO_CREATION_FLAG_PATH &&
                   (int)SP_IO_CREATION_TEMPORARY_FILE == (int)OTF2_IO_CREATION_FLAG_TEMPORARY_FILE &&
                   (int)SP_IO_CREATION_LARGEFILE == (int)OTF2_IO_CREATION_FLAG_LARGEFILE &&
                   (int)SP_IO_CREATION_NO_SEEK == (int)OTF2_IO_CREATION_FLAG_NO_SEEK &&
                   (int)SP_IO_CREATION_UNIQUE == (int)OTF2_IO_CREATION_FLAG_UNIQUE,
               "creation flags are OTF2's");
_Static_assert((int)SP_IO_STATUS_CLOSE_ON_EXEC == (int)OTF2_IO_STATUS_FLAG_CLOSE_ON_EXEC &&
                   (int)SP_IO_STATUS_APPEND == (int)OTF2_IO_STATUS_FLAG_APPEND &&
                   (int)SP_IO_STATUS_NON_BLOCKING == (int)OTF2_IO_STATUS_FLAG_NON_BLOCKING &&
                   (int)SP_IO_STATUS_ASYNC == (int)OTF2_IO_STATUS_FLAG_ASYNC &&
                   (int)SP_IO_STATUS_SYNC == (int)OTF2_IO_STATUS_FLAG_SYNC &&
                   (int)SP_IO_STATUS_DATA_SYNC == (int)OTF2_IO_STATUS_FLAG_DATA_SYNC &&
                   (int)SP_IO_STATUS_AVOID_CACHING == (int)OTF2_IO_STATUS_FLAG_AVOID_CACHING &&
                   (int)SP_IO_STATUS_NO_ACCESS_TIME == (int)OTF2_IO_STATUS_FLAG_NO_ACCESS_TIME &&
                   (int)SP_IO_STATUS_DELETE_ON_CLOSE == (int)OTF2_IO_STATUS_FLAG_DELETE_ON_CLOSE,
               "status flags are OTF2's");
_Static_assert((int)SP_IO_SEEK_FROM_START == (int)OTF2_IO_SEEK_FROM_START &&
                   (int)SP_IO_SEEK_FROM_CURRENT == (int)OTF2_IO_SEEK_FROM_CURRENT &&
                   (int)SP_IO_SEEK_FROM_END == (int)OTF2_IO_SEEK_FROM_END &&
                   (int)SP_IO_SEEK_DATA == (int)OTF2_IO_SEEK_DATA && (int)SP_IO_SEEK_HOLE == (int)OTF2_IO_SEEK_HOLE,
               "seek options are OTF2's");
_Static_assert((int)SP_IO_MODE_READ == (int)OTF2_IO_OPERATION_MODE_READ &&
                   (int)SP_IO_MODE_WRITE == (int)OTF2_IO_OPERATION_MODE_WRITE &&
                   (int)SP_IO_MODE_FLUSH == (int)OTF2_IO_OPERATION_MODE_FLUSH,
               "operation modes are OTF2's");
_Static_assert((int)SP_IO_OPERATION_NON_BLOCKING == (int)OTF2_IO_OPERATION_FLAG_NON_BLOCKING &&
                   (int)SP_IO_OPERATION_COLLECTIVE == (int)OTF2_IO_OPERATION_FLAG_COLLECTIVE,
               "operation flags are OTF2's");
_Static_assert(SP_IO_UNKNOWN_BYTES == OTF2_UNDEFINED_UINT64, "unknown bytes are OTF2's");

/* ---- the event path ------------------------------------------------------------------- */

void sp_trace_io(sp_trace_location *tl, uint64_t time, const sp_io_event *e)
{
    switch (e->kind) {
    case SP_IO_CREATE_HANDLE:
        sp_trace_put_value(tl, time, SP_REC_IO_CREATE_HANDLE, e->handle,
                           (uint64_t)e->flags | (uint64_t)e->status_flags << 32, e->mode);
        break;
    case SP_IO_DESTROY_HANDLE:
        sp_trace_put(tl, time, SP_REC_IO_DESTROY_HANDLE, e->handle);
        break;
    case SP_IO_DUPLICATE_HANDLE:
        sp_trace_put_value(tl, time, SP_REC_IO_DUPLICATE_HANDLE, e->handle, e->new_handle,
                           e->status_flags);
        break;
    case SP_IO_SEEK:
        sp_trace_put_values(tl, time, SP_REC_IO_SEEK, e->handle, (uint64_t)e->offset,
                            e->offset_result, e->flags, 0);
        break;
    case SP_IO_OPERATION_BEGIN:
        /* Matching ids are small counters (1 and 2 for blocking POSIX and ISO C calls,
         * request numbers for MPI-IO): 56 bits keep them whole. */
        sp_trace_put_value(tl, time, SP_REC_IO_OPERATION_BEGIN, e->handle, e->bytes,
                           e->matching_id << 8 | (uint64_t)(e->flags & 0x3f) << 2 |
                               (e->mode & 3));
        break;
    case SP_IO_OPERATION_COMPLETE:
        sp_trace_put_value(tl, time, SP_REC_IO_OPERATION_COMPLETE, e->handle, e->bytes,
                           e->matching_id);
        break;
    case SP_IO_OPERATION_ISSUED:
    case SP_IO_OPERATION_TEST:
    case SP_IO_OPERATION_CANCELLED:
        sp_trace_put_value(tl, time,
                           SP_REC_IO_OPERATION_ISSUED + (uint32_t)(e->kind - SP_IO_OPERATION_ISSUED),
                           e->handle, e->matching_id, 0);
        break;
    }
}

/* ---- the end: records into events --------------------------------------------------------- */

unsigned sp_trace_io_record_length(uint32_t kind)
{
    switch (kind) {
    case SP_REC_IO_DESTROY_HANDLE: return 1;
    case SP_REC_IO_SEEK: return 3;
    default: return 2;
    }
}

OTF2_ErrorCode sp_trace_encode_io(OTF2_EvtWriter *w, const sp_trace_record *r, uint64_t t)
{
    const sp_trace_payload *p = (const sp_trace_payload *)(r + 1);
    const sp_trace_payload *q = (const sp_trace_payload *)(r + 2);
    switch (r->kind) {
    case SP_REC_IO_CREATE_HANDLE:
        return OTF2_EvtWriter_IoCreateHandle(w, NULL, t, r->ref, (OTF2_IoAccessMode)p->b,
                                             (OTF2_IoCreationFlag)(uint32_t)p->a,
                                             (OTF2_IoStatusFlag)(p->a >> 32));
    case SP_REC_IO_DESTROY_HANDLE:
        return OTF2_EvtWriter_IoDestroyHandle(w, NULL, t, r->ref);
    case SP_REC_IO_DUPLICATE_HANDLE:
        return OTF2_EvtWriter_IoDuplicateHandle(w, NULL, t, r->ref, (OTF2_IoHandleRef)p->a,
                                                (OTF2_IoStatusFlag)p->b);
    case SP_REC_IO_SEEK:
        return OTF2_EvtWriter_IoSeek(w, NULL, t, r->ref, (int64_t)p->a, (OTF2_IoSeekOption)q->a,
                                     p->b);
    case SP_REC_IO_OPERATION_BEGIN:
        return OTF2_EvtWriter_IoOperationBegin(w, NULL, t, r->ref,
                                               (OTF2_IoOperationMode)(p->b & 3),
                                               (OTF2_IoOperationFlag)((p->b >> 2) & 0x3f), p->a,
                                               p->b >> 8);
    case SP_REC_IO_OPERATION_COMPLETE:
        return OTF2_EvtWriter_IoOperationComplete(w, NULL, t, r->ref, p->a, p->b);
    case SP_REC_IO_OPERATION_ISSUED:
        return OTF2_EvtWriter_IoOperationIssued(w, NULL, t, r->ref, p->a);
    case SP_REC_IO_OPERATION_TEST:
        return OTF2_EvtWriter_IoOperationTest(w, NULL, t, r->ref, p->a);
    case SP_REC_IO_OPERATION_CANCELLED:
        return OTF2_EvtWriter_IoOperationCancelled(w, NULL, t, r->ref, p->a);
    }
    return OTF2_ERROR_INVALID_DATA;
}

/* ---- the end: definitions ----------------------------------------------------------------- */

int sp_trace_write_io_mappings(OTF2_DefWriter *dw, const sp_unified_maps *u, char *err,
                               size_t errlen)
{
    if (sp_trace_check(sp_trace_write_map(dw, OTF2_MAPPING_IO_FILE, u->io_file_map,
                                          u->io_file_count),
                       "WriteMappingTable", err, errlen) != 0 ||
        sp_trace_check(sp_trace_write_map(dw, OTF2_MAPPING_IO_HANDLE, u->io_handle_map,
                                          u->io_handle_count),
                       "WriteMappingTable", err, errlen) != 0)
        return -1;
    return 0;
}

int sp_trace_intern_io_strings(sp_defs *g)
{
    for (uint32_t p = 0; p < SP_IO_PARADIGM_COUNT; p++)
        if ((g->io_paradigms_used & (1u << p)) &&
            (sp_defs_string(g, sp_io_paradigms[p].identification) == SP_NO_ID ||
             sp_defs_string(g, sp_io_paradigms[p].name) == SP_NO_ID))
            return -1;
    return 0;
}

int sp_trace_write_io_definitions(OTF2_GlobalDefWriter *gw, sp_unified *u, char *err,
                                  size_t errlen)
{
    sp_defs *g = &u->global;
    if (!g->io_paradigms_used)
        return 0;
    /* IoParadigm ids are the core's paradigm numbers: the same in every process. */
    for (uint32_t p = 0; p < SP_IO_PARADIGM_COUNT; p++) {
        if (!(g->io_paradigms_used & (1u << p)))
            continue;
        const sp_io_paradigm_info *info = &sp_io_paradigms[p];
        /* Interned before the strings were written (sp_trace_intern_io_strings). */
        uint32_t identification = sp_strings_find(&g->strings, info->identification);
        uint32_t name = sp_strings_find(&g->strings, info->name);
        if (identification == SP_NO_ID || name == SP_NO_ID)
            return sp_error(err, errlen, "the I/O paradigm names are missing from the strings");
        if (sp_trace_check(OTF2_GlobalDefWriter_WriteIoParadigm(
                               gw, (OTF2_IoParadigmRef)p, identification, name,
                               info->parallel ? OTF2_IO_PARADIGM_CLASS_PARALLEL
                                              : OTF2_IO_PARADIGM_CLASS_SERIAL,
                               info->os ? OTF2_IO_PARADIGM_FLAG_OS : OTF2_IO_PARADIGM_FLAG_NONE,
                               0, NULL, NULL, NULL),
                           "WriteIoParadigm", err, errlen) != 0)
            return -1;
    }
    /* Files are one per path for the whole experiment: their scope is the machine (the
     * system tree's root), not a node. */
    for (uint32_t f = 0; f < g->io_file_count; f++)
        if (sp_trace_check(OTF2_GlobalDefWriter_WriteIoRegularFile(gw, f, g->io_files[f].name, 0),
                           "WriteIoRegularFile", err, errlen) != 0)
            return -1;
    for (uint32_t h = 0; h < g->io_handle_count; h++) {
        const sp_io_handle *handle = &g->io_handles[h];
        if (sp_trace_check(OTF2_GlobalDefWriter_WriteIoHandle(
                               gw, h, handle->name,
                               handle->file == SP_NO_ID ? OTF2_UNDEFINED_IO_FILE : handle->file,
                               handle->paradigm, handle->flags,
                               /* communicators are defined when the group writes together */
                               handle->comm == SP_NO_ID || !sp_trace.collective
                                   ? OTF2_UNDEFINED_COMM
                                   : handle->comm,
                               handle->parent == SP_NO_ID ? OTF2_UNDEFINED_IO_HANDLE
                                                          : handle->parent),
                           "WriteIoHandle", err, errlen) != 0)
            return -1;
        if ((handle->flags & SP_IO_HANDLE_PRE_CREATED) &&
            sp_trace_check(OTF2_GlobalDefWriter_WriteIoPreCreatedHandleState(
                               gw, h, handle->access_mode, handle->status_flags),
                           "WriteIoPreCreatedHandleState", err, errlen) != 0)
            return -1;
    }
    return 0;
}
