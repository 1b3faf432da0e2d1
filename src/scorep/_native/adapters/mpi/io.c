/* MPI-IO as Score-P's MPI adapter records it (its SCOREP_Mpi_Io.c): every MPI_File_* call
 * is a region of role file I/O (the io group), and the calls that create, use and destroy
 * files record the I/O events of the MPI-IO paradigm through the core's I/O API (core/io.h,
 * core/events.h), the same records as POSIX and ISO C I/O:
 *
 *   - MPI_File_open defines an I/O handle (name "", its file, its communicator) with a unify
 *     key counting the files opened on that communicator, so that the members' handles of a
 *     collectively opened file are one handle of the experiment; IoCreateHandle with the
 *     access mode and flags of `amode`. A POSIX handle the MPI library creates meanwhile
 *     (with I/O recording on) gets it as its parent.
 *   - MPI_File_close: IoDestroyHandle.
 *   - reads and writes: IoOperationBegin (the bytes asked for: count times the type's size;
 *     collective for _all, _at_all, _ordered) and IoOperationComplete (the bytes moved, from
 *     the status); non-blocking ones (MPI_File_iread...) IoOperationIssued, then their
 *     completion (or IoOperationCancelled) in the MPI_Wait/Test that completes the request,
 *     IoOperationTest for tests that found it unfinished (xreqtest); split collectives
 *     (_begin/_end) begin and are issued in _begin and complete in _end.
 *   - MPI_File_seek, MPI_File_seek_shared: IoSeek with the resulting position.
 *
 * The profile gets Score-P's io_bytes_read / io_bytes_written metrics with the MPI I/O
 * paradigm's part. Generated from Open MPI's mpi.h prototypes (the compiler checks them
 * against it). */
#include "adapters/mpi/mpi_adapter.h"

#include "core/events.h"
#include "core/io.h"

#define MPI_IO SP_IO_PARADIGM_MPI

static uint64_t native(MPI_File fh)
{
    return (uint64_t)(uintptr_t)fh;
}

static sp_io_access_mode access_mode(int amode)
{
    if (amode & MPI_MODE_WRONLY)
        return SP_IO_ACCESS_WRITE_ONLY;
    if (amode & MPI_MODE_RDWR)
        return SP_IO_ACCESS_READ_WRITE;
    return SP_IO_ACCESS_READ_ONLY;
}

static uint32_t creation_flags(int amode)
{
    return (amode & MPI_MODE_CREATE ? SP_IO_CREATION_CREATE : 0) |
           (amode & MPI_MODE_EXCL ? SP_IO_CREATION_EXCLUSIVE : 0);
}

static uint32_t status_flags(int amode)
{
    /* Score-P maps MPI_MODE_DELETE_ON_CLOSE to CLOSE_ON_EXEC; OTF2 has the right flag. */
    return (amode & MPI_MODE_APPEND ? SP_IO_STATUS_APPEND : 0) |
           (amode & MPI_MODE_DELETE_ON_CLOSE ? SP_IO_STATUS_DELETE_ON_CLOSE : 0);
}

static sp_io_seek_whence seek_whence(int whence)
{
    switch (whence) {
    case MPI_SEEK_CUR: return SP_IO_SEEK_FROM_CURRENT;
    case MPI_SEEK_END: return SP_IO_SEEK_FROM_END;
    default: return SP_IO_SEEK_FROM_START;
    }
}

/* The defined handle of an open file (SP_NO_ID: none, or the io group is off). */
static uint32_t handle_of(MPI_File fh)
{
    if (!spmpi_on(G_IO))
        return SP_NO_ID;
    sp_location *loc = sp_event_section_begin();
    if (!loc)
        return SP_NO_ID;
    uint32_t handle = sp_io_handle_lookup(MPI_IO, native(fh));
    sp_event_section_end(loc);
    return handle;
}

/* An operation on a file, begun before the call. */
typedef struct {
    uint32_t handle; /* SP_NO_ID: nothing is recorded */
    int type_size;
    uint64_t matching;
} io_op;

static io_op op_begin(MPI_File fh, sp_io_mode mode, uint32_t flags, int count,
                      MPI_Datatype datatype)
{
    io_op op = {SP_NO_ID, 0, 0};
    if (!spmpi_on(G_IO))
        return op;
    sp_location *loc = sp_event_section_begin();
    if (!loc)
        return op;
    op.handle = sp_io_handle_lookup(MPI_IO, native(fh));
    if (op.handle != SP_NO_ID) {
        PMPI_Type_size(datatype, &op.type_size);
        op.matching = spmpi_next_request_id();
        sp_io_operation_begin(loc, sp_clock_now(), MPI_IO, op.handle, mode, flags,
                              (uint64_t)(count > 0 ? count : 0) * (uint64_t)op.type_size,
                              op.matching);
    }
    sp_event_section_end(loc);
    return op;
}

/* The bytes an operation moved, from its status (as Score-P: elements times the type's
 * size; the bytes themselves when the last element is partial). */
static uint64_t moved_bytes(const MPI_Status *status, MPI_Datatype datatype, int type_size)
{
    int n = 0;
    if (PMPI_Get_count(status, datatype, &n) == MPI_SUCCESS && n != MPI_UNDEFINED && n >= 0)
        return (uint64_t)n * (uint64_t)type_size;
    if (PMPI_Get_count(status, MPI_BYTE, &n) == MPI_SUCCESS && n != MPI_UNDEFINED && n >= 0)
        return (uint64_t)n;
    return 0;
}

static void op_complete(sp_location *loc, const io_op *op, sp_io_mode mode, int result,
                        const MPI_Status *status, MPI_Datatype datatype)
{
    if (!loc || op->handle == SP_NO_ID)
        return;
    uint64_t bytes = result == MPI_SUCCESS ? moved_bytes(status, datatype, op->type_size)
                                           : SP_IO_UNKNOWN_BYTES;
    sp_io_operation_complete(loc, sp_clock_now(), MPI_IO, op->handle, mode, bytes,
                             op->matching);
}

/* A non-blocking operation was started (request) or a split collective begun (the file):
 * issued now, completed by whatever completes `key`. */
static void op_issued(sp_location *loc, const io_op *op, sp_io_mode mode, int result,
                      request_kind kind, uint64_t key, MPI_Datatype datatype)
{
    if (!loc || op->handle == SP_NO_ID)
        return;
    uint64_t now = sp_clock_now();
    if (result != MPI_SUCCESS) {
        sp_io_operation_complete(loc, now, MPI_IO, op->handle, mode, SP_IO_UNKNOWN_BYTES,
                                 op->matching);
        return;
    }
    sp_io_operation_event(loc, now, SP_IO_OPERATION_ISSUED, MPI_IO, op->handle, op->matching);
    request_info info = {.handle = key,
                         .id = op->matching,
                         .generation = sp_measurement_generation(),
                         .kind = (uint8_t)kind,
                         .comm = op->handle,
                         .tag = (uint32_t)mode,
                         .bytes = (uint64_t)op->type_size,
                         .datatype = datatype};
    spmpi_remember_request(&info);
}

void spmpi_io_request_completed(sp_location *loc, const request_info *info,
                                const MPI_Status *status, bool cancelled)
{
    uint64_t now = sp_clock_now();
    if (cancelled)
        sp_io_operation_event(loc, now, SP_IO_OPERATION_CANCELLED, MPI_IO, info->comm, info->id);
    else
        sp_io_operation_complete(loc, now, MPI_IO, info->comm, (sp_io_mode)info->tag,
                                 moved_bytes(status, info->datatype, (int)info->bytes),
                                 info->id);
}

void spmpi_io_request_tested(sp_location *loc, const request_info *info)
{
    sp_io_operation_event(loc, sp_clock_now(), SP_IO_OPERATION_TEST, MPI_IO, info->comm,
                          info->id);
}

/* A blocking read or write (the wrapper's parameters fh, count, datatype, status). */
#define IO_BLOCKING(FN, MODE, FLAGS, CALL)                                                     \
    do {                                                                                       \
        spmpi_enter(FN);                                                                       \
        io_op op_ = op_begin(fh, MODE, FLAGS, count, datatype);                                \
        MPI_Status own_;                                                                       \
        MPI_Status *st = status == MPI_STATUS_IGNORE ? &own_ : status;                         \
        int s_ = (CALL);                                                                       \
        sp_location *loc_ = spmpi_after(FN);                                                   \
        op_complete(loc_, &op_, MODE, s_, st, datatype);                                       \
        if (loc_)                                                                              \
            spmpi_leave(loc_, FN);                                                             \
        return s_;                                                                             \
    } while (0)

/* An operation issued now (fh, count, datatype) and completed by whatever completes `KEY`,
 * which is read after the call. */
#define IO_ISSUED(FN, MODE, FLAGS, KIND, KEY, CALL)                                            \
    do {                                                                                       \
        spmpi_enter(FN);                                                                       \
        io_op op_ = op_begin(fh, MODE, (FLAGS) | SP_IO_OPERATION_NON_BLOCKING, count, datatype); \
        int s_ = (CALL);                                                                       \
        sp_location *loc_ = spmpi_after(FN);                                                   \
        op_issued(loc_, &op_, MODE, s_, KIND, KEY, datatype);                                  \
        if (loc_)                                                                              \
            spmpi_leave(loc_, FN);                                                             \
        return s_;                                                                             \
    } while (0)

/* A non-blocking one (fh, count, datatype, request): its request completes it. */
#define IO_NONBLOCKING(FN, MODE, FLAGS, CALL)                                                  \
    IO_ISSUED(FN, MODE, FLAGS, REQ_IO, (uint64_t)(uintptr_t)*request, CALL)

/* The begin of a split collective (fh, count, datatype): one per file at a time, so the
 * file's end completes it. */
#define IO_SPLIT_BEGIN(FN, MODE, FLAGS, CALL)                                                  \
    IO_ISSUED(FN, MODE, FLAGS, REQ_IO_SPLIT, native(fh), CALL)

/* Its end (fh, status). */
#define IO_SPLIT_END(FN, MODE, CALL)                                                           \
    do {                                                                                       \
        spmpi_enter(FN);                                                                       \
        MPI_Status own_;                                                                       \
        MPI_Status *st = status == MPI_STATUS_IGNORE ? &own_ : status;                         \
        int s_ = (CALL);                                                                       \
        request_info info_;                                                                    \
        bool begun_ = spmpi_take_request(native(fh), &info_) && info_.kind == REQ_IO_SPLIT;    \
        sp_location *loc_ = spmpi_after(FN);                                                   \
        if (loc_ && begun_ && info_.generation == sp_measurement_generation()) {               \
            io_op op_ = {info_.comm, (int)info_.bytes, info_.id};                              \
            op_complete(loc_, &op_, MODE, s_, st, info_.datatype);                             \
        }                                                                                      \
        if (loc_)                                                                              \
            spmpi_leave(loc_, FN);                                                             \
        return s_;                                                                             \
    } while (0)

/* ---- handles -------------------------------------------------------------------------- */

/* Same-shape MPI wrappers, a family: one per MPI function, each the same steps (enter,
 * the PMPI_ call, its records, leave) with its own arguments. The duplicates tool pairs
 * them; they are not one logic written twice. */
EXPORT int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                         MPI_File *fh)
{
    spmpi_enter(FN_FILE_OPEN);
    uint32_t handle = SP_NO_ID;
    if (spmpi_on(G_IO)) {
        /* every member counts the open, measured or not, so the keys agree */
        uint32_t key = spmpi_comm_file_key(comm);
        uint32_t comm_id = spmpi_comm_id(comm);
        sp_location *loc = sp_event_section_begin();
        if (loc) {
            handle = sp_io_handle_begin(loc, MPI_IO, "", comm_id, key);
            sp_event_section_end(loc);
        }
    }
    int s = PMPI_File_open(comm, filename, amode, info, fh);
    sp_location *loc = spmpi_after(FN_FILE_OPEN);
    if (loc) {
        if (handle != SP_NO_ID && s == MPI_SUCCESS) {
            sp_io_handle_complete(loc, handle, sp_io_file_define(filename), native(*fh));
            sp_io_create_handle(loc, sp_clock_now(), MPI_IO, handle, access_mode(amode),
                                creation_flags(amode), status_flags(amode));
        } else if (handle != SP_NO_ID) {
            sp_io_handle_drop(loc, handle);
        }
        spmpi_leave(loc, FN_FILE_OPEN);
    }
    return s;
}

EXPORT int MPI_File_close(MPI_File *fh)
{
    spmpi_enter(FN_FILE_CLOSE);
    uint64_t file = native(*fh);
    uint32_t handle = SP_NO_ID;
    if (spmpi_on(G_IO)) {
        sp_location *loc = sp_event_section_begin();
        if (loc) {
            handle = sp_io_handle_unbind(MPI_IO, file);
            sp_event_section_end(loc);
        }
    }
    int s = PMPI_File_close(fh);
    sp_location *loc = spmpi_after(FN_FILE_CLOSE);
    if (loc) {
        if (handle != SP_NO_ID && s == MPI_SUCCESS)
            sp_io_destroy_handle(loc, sp_clock_now(), MPI_IO, handle);
        else if (handle != SP_NO_ID)
            sp_io_handle_rebind(MPI_IO, file, handle); /* still open */
        spmpi_leave(loc, FN_FILE_CLOSE);
    }
    return s;
}

static int seek(int fn, MPI_File fh, MPI_Offset offset, int whence, bool shared)
{
    spmpi_enter(fn);
    uint32_t handle = handle_of(fh);
    int s = shared ? PMPI_File_seek_shared(fh, offset, whence) : PMPI_File_seek(fh, offset, whence);
    sp_location *loc = spmpi_after(fn);
    if (loc) {
        if (handle != SP_NO_ID && s == MPI_SUCCESS) {
            MPI_Offset position = 0;
            if (shared)
                PMPI_File_get_position_shared(fh, &position);
            else
                PMPI_File_get_position(fh, &position);
            sp_io_seek(loc, sp_clock_now(), MPI_IO, handle, (int64_t)offset,
                       seek_whence(whence), (uint64_t)position);
        }
        spmpi_leave(loc, fn);
    }
    return s;
}

EXPORT int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    return seek(FN_FILE_SEEK, fh, offset, whence, false);
}

EXPORT int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    return seek(FN_FILE_SEEK_SHARED, fh, offset, whence, true);
}

/* ---- reads and writes ------------------------------------------------------------------ */

EXPORT int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    IO_BLOCKING(FN_FILE_READ, SP_IO_MODE_READ, 0, PMPI_File_read(fh, buf, count, datatype, st));
}

EXPORT int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    IO_BLOCKING(FN_FILE_READ_ALL, SP_IO_MODE_READ, SP_IO_OPERATION_COLLECTIVE, PMPI_File_read_all(fh, buf, count, datatype, st));
}

EXPORT int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    IO_BLOCKING(FN_FILE_READ_AT, SP_IO_MODE_READ, 0, PMPI_File_read_at(fh, offset, buf, count, datatype, st));
}

EXPORT int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    IO_BLOCKING(FN_FILE_READ_AT_ALL, SP_IO_MODE_READ, SP_IO_OPERATION_COLLECTIVE, PMPI_File_read_at_all(fh, offset, buf, count, datatype, st));
}

EXPORT int MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    IO_BLOCKING(FN_FILE_READ_SHARED, SP_IO_MODE_READ, 0, PMPI_File_read_shared(fh, buf, count, datatype, st));
}

EXPORT int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    IO_BLOCKING(FN_FILE_READ_ORDERED, SP_IO_MODE_READ, SP_IO_OPERATION_COLLECTIVE, PMPI_File_read_ordered(fh, buf, count, datatype, st));
}

EXPORT int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    IO_BLOCKING(FN_FILE_WRITE, SP_IO_MODE_WRITE, 0, PMPI_File_write(fh, buf, count, datatype, st));
}

EXPORT int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    IO_BLOCKING(FN_FILE_WRITE_ALL, SP_IO_MODE_WRITE, SP_IO_OPERATION_COLLECTIVE, PMPI_File_write_all(fh, buf, count, datatype, st));
}

EXPORT int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    IO_BLOCKING(FN_FILE_WRITE_AT, SP_IO_MODE_WRITE, 0, PMPI_File_write_at(fh, offset, buf, count, datatype, st));
}

EXPORT int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    IO_BLOCKING(FN_FILE_WRITE_AT_ALL, SP_IO_MODE_WRITE, SP_IO_OPERATION_COLLECTIVE, PMPI_File_write_at_all(fh, offset, buf, count, datatype, st));
}

EXPORT int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    IO_BLOCKING(FN_FILE_WRITE_SHARED, SP_IO_MODE_WRITE, 0, PMPI_File_write_shared(fh, buf, count, datatype, st));
}

EXPORT int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    IO_BLOCKING(FN_FILE_WRITE_ORDERED, SP_IO_MODE_WRITE, SP_IO_OPERATION_COLLECTIVE, PMPI_File_write_ordered(fh, buf, count, datatype, st));
}

EXPORT int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    IO_NONBLOCKING(FN_FILE_IREAD, SP_IO_MODE_READ, 0, PMPI_File_iread(fh, buf, count, datatype, request));
}

EXPORT int MPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    IO_NONBLOCKING(FN_FILE_IREAD_ALL, SP_IO_MODE_READ, SP_IO_OPERATION_COLLECTIVE, PMPI_File_iread_all(fh, buf, count, datatype, request));
}

EXPORT int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    IO_NONBLOCKING(FN_FILE_IREAD_AT, SP_IO_MODE_READ, 0, PMPI_File_iread_at(fh, offset, buf, count, datatype, request));
}

EXPORT int MPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    IO_NONBLOCKING(FN_FILE_IREAD_AT_ALL, SP_IO_MODE_READ, SP_IO_OPERATION_COLLECTIVE, PMPI_File_iread_at_all(fh, offset, buf, count, datatype, request));
}

EXPORT int MPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    IO_NONBLOCKING(FN_FILE_IREAD_SHARED, SP_IO_MODE_READ, 0, PMPI_File_iread_shared(fh, buf, count, datatype, request));
}

EXPORT int MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    IO_NONBLOCKING(FN_FILE_IWRITE, SP_IO_MODE_WRITE, 0, PMPI_File_iwrite(fh, buf, count, datatype, request));
}

EXPORT int MPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    IO_NONBLOCKING(FN_FILE_IWRITE_ALL, SP_IO_MODE_WRITE, SP_IO_OPERATION_COLLECTIVE, PMPI_File_iwrite_all(fh, buf, count, datatype, request));
}

EXPORT int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    IO_NONBLOCKING(FN_FILE_IWRITE_AT, SP_IO_MODE_WRITE, 0, PMPI_File_iwrite_at(fh, offset, buf, count, datatype, request));
}

EXPORT int MPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    IO_NONBLOCKING(FN_FILE_IWRITE_AT_ALL, SP_IO_MODE_WRITE, SP_IO_OPERATION_COLLECTIVE, PMPI_File_iwrite_at_all(fh, offset, buf, count, datatype, request));
}

EXPORT int MPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    IO_NONBLOCKING(FN_FILE_IWRITE_SHARED, SP_IO_MODE_WRITE, 0, PMPI_File_iwrite_shared(fh, buf, count, datatype, request));
}

EXPORT int MPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    IO_SPLIT_BEGIN(FN_FILE_READ_ALL_BEGIN, SP_IO_MODE_READ, SP_IO_OPERATION_COLLECTIVE, PMPI_File_read_all_begin(fh, buf, count, datatype));
}

EXPORT int MPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    IO_SPLIT_END(FN_FILE_READ_ALL_END, SP_IO_MODE_READ, PMPI_File_read_all_end(fh, buf, st));
}

EXPORT int MPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype)
{
    IO_SPLIT_BEGIN(FN_FILE_READ_AT_ALL_BEGIN, SP_IO_MODE_READ, SP_IO_OPERATION_COLLECTIVE, PMPI_File_read_at_all_begin(fh, offset, buf, count, datatype));
}

EXPORT int MPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    IO_SPLIT_END(FN_FILE_READ_AT_ALL_END, SP_IO_MODE_READ, PMPI_File_read_at_all_end(fh, buf, st));
}

EXPORT int MPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    IO_SPLIT_BEGIN(FN_FILE_READ_ORDERED_BEGIN, SP_IO_MODE_READ, SP_IO_OPERATION_COLLECTIVE, PMPI_File_read_ordered_begin(fh, buf, count, datatype));
}

EXPORT int MPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    IO_SPLIT_END(FN_FILE_READ_ORDERED_END, SP_IO_MODE_READ, PMPI_File_read_ordered_end(fh, buf, st));
}

EXPORT int MPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    IO_SPLIT_BEGIN(FN_FILE_WRITE_ALL_BEGIN, SP_IO_MODE_WRITE, SP_IO_OPERATION_COLLECTIVE, PMPI_File_write_all_begin(fh, buf, count, datatype));
}

EXPORT int MPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    IO_SPLIT_END(FN_FILE_WRITE_ALL_END, SP_IO_MODE_WRITE, PMPI_File_write_all_end(fh, buf, st));
}

EXPORT int MPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype)
{
    IO_SPLIT_BEGIN(FN_FILE_WRITE_AT_ALL_BEGIN, SP_IO_MODE_WRITE, SP_IO_OPERATION_COLLECTIVE, PMPI_File_write_at_all_begin(fh, offset, buf, count, datatype));
}

EXPORT int MPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    IO_SPLIT_END(FN_FILE_WRITE_AT_ALL_END, SP_IO_MODE_WRITE, PMPI_File_write_at_all_end(fh, buf, st));
}

EXPORT int MPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    IO_SPLIT_BEGIN(FN_FILE_WRITE_ORDERED_BEGIN, SP_IO_MODE_WRITE, SP_IO_OPERATION_COLLECTIVE, PMPI_File_write_ordered_begin(fh, buf, count, datatype));
}

EXPORT int MPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    IO_SPLIT_END(FN_FILE_WRITE_ORDERED_END, SP_IO_MODE_WRITE, PMPI_File_write_ordered_end(fh, buf, st));
}

/* ---- the rest: regions only ------------------------------------------------------------- */

EXPORT int MPI_File_delete(const char *filename, MPI_Info info)
{
    SPMPI_REGION_CALL(FN_FILE_DELETE, PMPI_File_delete(filename, info));
}

EXPORT int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    SPMPI_REGION_CALL(FN_FILE_SET_SIZE, PMPI_File_set_size(fh, size));
}

EXPORT int MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    SPMPI_REGION_CALL(FN_FILE_GET_SIZE, PMPI_File_get_size(fh, size));
}

EXPORT int MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    SPMPI_REGION_CALL(FN_FILE_PREALLOCATE, PMPI_File_preallocate(fh, size));
}

EXPORT int MPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    SPMPI_REGION_CALL(FN_FILE_GET_GROUP, PMPI_File_get_group(fh, group));
}

EXPORT int MPI_File_get_amode(MPI_File fh, int *amode)
{
    SPMPI_REGION_CALL(FN_FILE_GET_AMODE, PMPI_File_get_amode(fh, amode));
}

EXPORT int MPI_File_set_info(MPI_File fh, MPI_Info info)
{
    SPMPI_REGION_CALL(FN_FILE_SET_INFO, PMPI_File_set_info(fh, info));
}

EXPORT int MPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    SPMPI_REGION_CALL(FN_FILE_GET_INFO, PMPI_File_get_info(fh, info_used));
}

EXPORT int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep, MPI_Info info)
{
    SPMPI_REGION_CALL(FN_FILE_SET_VIEW, PMPI_File_set_view(fh, disp, etype, filetype, datarep, info));
}

EXPORT int MPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep)
{
    SPMPI_REGION_CALL(FN_FILE_GET_VIEW, PMPI_File_get_view(fh, disp, etype, filetype, datarep));
}

EXPORT int MPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    SPMPI_REGION_CALL(FN_FILE_GET_POSITION, PMPI_File_get_position(fh, offset));
}

EXPORT int MPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    SPMPI_REGION_CALL(FN_FILE_GET_POSITION_SHARED, PMPI_File_get_position_shared(fh, offset));
}

EXPORT int MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    SPMPI_REGION_CALL(FN_FILE_GET_BYTE_OFFSET, PMPI_File_get_byte_offset(fh, offset, disp));
}

EXPORT int MPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    SPMPI_REGION_CALL(FN_FILE_GET_TYPE_EXTENT, PMPI_File_get_type_extent(fh, datatype, extent));
}

EXPORT int MPI_File_set_atomicity(MPI_File fh, int flag)
{
    SPMPI_REGION_CALL(FN_FILE_SET_ATOMICITY, PMPI_File_set_atomicity(fh, flag));
}

EXPORT int MPI_File_get_atomicity(MPI_File fh, int *flag)
{
    SPMPI_REGION_CALL(FN_FILE_GET_ATOMICITY, PMPI_File_get_atomicity(fh, flag));
}

EXPORT int MPI_File_sync(MPI_File fh)
{
    SPMPI_REGION_CALL(FN_FILE_SYNC, PMPI_File_sync(fh));
}

EXPORT int MPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    SPMPI_REGION_CALL(FN_FILE_CALL_ERRHANDLER, PMPI_File_call_errhandler(fh, errorcode));
}

EXPORT int MPI_File_create_errhandler(MPI_File_errhandler_function *function, MPI_Errhandler *errhandler)
{
    SPMPI_REGION_CALL(FN_FILE_CREATE_ERRHANDLER, PMPI_File_create_errhandler(function, errhandler));
}

EXPORT int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    SPMPI_REGION_CALL(FN_FILE_SET_ERRHANDLER, PMPI_File_set_errhandler(file, errhandler));
}

EXPORT int MPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    SPMPI_REGION_CALL(FN_FILE_GET_ERRHANDLER, PMPI_File_get_errhandler(file, errhandler));
}

