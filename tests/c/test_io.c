/* The core's I/O handles and events without an adapter (the measurement runs with I/O
 * recording off, so nothing is patched): the bindings of native handles per paradigm, the
 * parents of handles created inside the creation of another, and the OTF2 I/O definitions
 * and records the trace substrate writes for them, read back with the OTF2 library's
 * reader. The paradigm is a parameter: MPI-IO goes through the same calls as POSIX. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <otf2/otf2.h>

#include "core/events.h"
#include "core/io.h"
#include "core/measurement.h"
#include "core/measurement_state.h" /* white-box: the core's own state */
#include "ctest.h"
#include "ctest_support.h"

static void start(char *dir)
{
    static const char *args[] = {"prog"};
    CHECK(mkdtemp(dir) != NULL);
    sp_config config = ctest_config(dir, 1 << 22);
    config.program_args = args;
    config.program_argc = 1;
    char err[256] = "";
    CHECK(sp_measurement_start(&config, err, sizeof err) == 0);
}

static void finish(void)
{
    sp_results r;
    char err[256] = "";
    CHECK(sp_measurement_finalize(0, &r, err, sizeof err) == 0);
}

static uint32_t open_handle(sp_location *loc, sp_io_paradigm paradigm, uint32_t file,
                            uint64_t native)
{
    uint32_t h = sp_io_handle_begin(loc, paradigm, "", SP_NO_ID, 0);
    sp_io_handle_complete(loc, h, file, native);
    return h;
}

static void test_bindings_per_paradigm(void)
{
    char dir[] = "/tmp/scorep-ctest-io-XXXXXX";
    CHECK(sp_io_handle_lookup(SP_IO_PARADIGM_POSIX, 3) == SP_NO_ID); /* no measurement */
    start(dir);
    sp_location *loc = sp_location_attach(1, "main", true);
    CHECK(loc != NULL);
    uint32_t file = sp_io_file_define("/no/such/file");
    CHECK(file != SP_NO_ID);
    CHECK_EQ_U64(sp_io_file_define("/no/such/file"), file); /* once per path */
    enum { N = 5000 };
    static uint32_t handles[N];
    for (uint64_t i = 0; i < N; i++)
        handles[i] = open_handle(loc, SP_IO_PARADIGM_MPI, file, 1000 + i);
    for (uint64_t i = 0; i < N; i++) {
        CHECK_EQ_U64(sp_io_handle_lookup(SP_IO_PARADIGM_MPI, 1000 + i), handles[i]);
        CHECK_EQ_U64(sp_io_handle_lookup(SP_IO_PARADIGM_POSIX, 1000 + i), SP_NO_ID);
    }
    CHECK_EQ_U64(sp_io_handle_file(handles[17]), file);
    for (uint64_t i = 0; i < N; i += 2)
        CHECK_EQ_U64(sp_io_handle_unbind(SP_IO_PARADIGM_MPI, 1000 + i), handles[i]);
    CHECK_EQ_U64(sp_io_handle_unbind(SP_IO_PARADIGM_MPI, 1000), SP_NO_ID); /* twice */
    for (uint64_t i = 0; i < N; i++)
        CHECK_EQ_U64(sp_io_handle_lookup(SP_IO_PARADIGM_MPI, 1000 + i),
                     i % 2 ? handles[i] : SP_NO_ID);
    /* a close that failed binds the handle again */
    sp_io_handle_rebind(SP_IO_PARADIGM_MPI, 1000, handles[0]);
    CHECK_EQ_U64(sp_io_handle_lookup(SP_IO_PARADIGM_MPI, 1000), handles[0]);

    /* FILE * addresses are not reused like descriptors: many keys bound and unbound one
     * after the other, the bound ones stay found among the removed slots */
    for (uint64_t i = 0; i < 200000; i++) {
        uint64_t key = 0x7f0000000000 + i * 48;
        uint32_t h = open_handle(loc, SP_IO_PARADIGM_ISOC, file, key);
        CHECK_EQ_U64(sp_io_handle_lookup(SP_IO_PARADIGM_ISOC, key), h);
        if (i % 1000)
            CHECK_EQ_U64(sp_io_handle_unbind(SP_IO_PARADIGM_ISOC, key), h);
    }
    for (uint64_t i = 0; i < 200000; i += 1000)
        CHECK(sp_io_handle_lookup(SP_IO_PARADIGM_ISOC, 0x7f0000000000 + i * 48) != SP_NO_ID);

    /* dup2 onto a bound descriptor replaces its binding; the copy has the file */
    uint32_t a = open_handle(loc, SP_IO_PARADIGM_POSIX, file, 5);
    uint32_t b = open_handle(loc, SP_IO_PARADIGM_POSIX, sp_io_file_define("/other"), 6);
    uint32_t copy = sp_io_handle_duplicate(SP_IO_PARADIGM_POSIX, a, 6);
    CHECK(copy != SP_NO_ID && copy != a && copy != b);
    CHECK_EQ_U64(sp_io_handle_lookup(SP_IO_PARADIGM_POSIX, 6), copy);
    CHECK_EQ_U64(sp_io_handle_file(copy), file);

    /* a handle created while another is being created (fopen's open) gets it as parent;
     * a failed creation leaves no binding and no creation open */
    uint32_t outer = sp_io_handle_begin(loc, SP_IO_PARADIGM_ISOC, "", SP_NO_ID, 0);
    uint32_t failed = sp_io_handle_begin(loc, SP_IO_PARADIGM_POSIX, "", SP_NO_ID, 0);
    sp_io_handle_drop(loc, failed);
    uint32_t inner = open_handle(loc, SP_IO_PARADIGM_POSIX, file, 9);
    sp_io_handle_complete(loc, outer, file, 0x5000);
    uint32_t after = open_handle(loc, SP_IO_PARADIGM_POSIX, file, 10);
    pthread_mutex_lock(&sp_meas.defs.lock);
    CHECK_EQ_U64(sp_meas.defs.io_handles[inner].parent, outer);
    CHECK_EQ_U64(sp_meas.defs.io_handles[failed].parent, outer);
    CHECK_EQ_U64(sp_meas.defs.io_handles[outer].parent, SP_NO_ID);
    CHECK_EQ_U64(sp_meas.defs.io_handles[after].parent, SP_NO_ID);
    pthread_mutex_unlock(&sp_meas.defs.lock);
    CHECK_EQ_U64(loc->io_creating_depth, 0);
    finish();
    CHECK(sp_io_handle_lookup(SP_IO_PARADIGM_POSIX, 9) == SP_NO_ID); /* gone with it */
    ctest_remove_tree(dir);
}

typedef struct {
    unsigned paradigms, handles, files, handles_with_parent, pre_created;
    char paradigm_ids[3][16];
    unsigned creates, destroys, seeks, begins, completes, failed, collective;
    uint64_t bytes_written, bytes_read, seek_result, matching_errors;
    uint64_t open_matching[4];
    unsigned open_count;
} io_read_back;

static OTF2_CallbackCode on_string(void *user, OTF2_StringRef self, const char *s)
{
    (void)user, (void)self, (void)s;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_paradigm(void *user, OTF2_IoParadigmRef self,
                                     OTF2_StringRef ident, OTF2_StringRef name,
                                     OTF2_IoParadigmClass cls, OTF2_IoParadigmFlag flags,
                                     uint8_t n, const OTF2_IoParadigmProperty *props,
                                     const OTF2_Type *types, const OTF2_AttributeValue *values)
{
    (void)self, (void)ident, (void)name, (void)cls, (void)flags, (void)n, (void)props;
    (void)types, (void)values;
    ((io_read_back *)user)->paradigms++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_file(void *user, OTF2_IoFileRef self, OTF2_StringRef name,
                                 OTF2_SystemTreeNodeRef scope)
{
    (void)self, (void)name, (void)scope;
    ((io_read_back *)user)->files++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_handle(void *user, OTF2_IoHandleRef self, OTF2_StringRef name,
                                   OTF2_IoFileRef file, OTF2_IoParadigmRef paradigm,
                                   OTF2_IoHandleFlag flags, OTF2_CommRef comm,
                                   OTF2_IoHandleRef parent)
{
    (void)self, (void)name, (void)file, (void)paradigm, (void)comm;
    io_read_back *rb = user;
    rb->handles++;
    if (parent != OTF2_UNDEFINED_IO_HANDLE)
        rb->handles_with_parent++;
    if (flags & OTF2_IO_HANDLE_FLAG_PRE_CREATED)
        rb->pre_created++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_create(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                   OTF2_AttributeList *a, OTF2_IoHandleRef h,
                                   OTF2_IoAccessMode mode, OTF2_IoCreationFlag creation,
                                   OTF2_IoStatusFlag status)
{
    (void)loc, (void)t, (void)a, (void)h, (void)status;
    io_read_back *rb = user;
    if (mode == OTF2_IO_ACCESS_MODE_READ_WRITE && (creation & OTF2_IO_CREATION_FLAG_CREATE))
        rb->creates++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_destroy(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                    OTF2_AttributeList *a, OTF2_IoHandleRef h)
{
    (void)loc, (void)t, (void)a, (void)h;
    ((io_read_back *)user)->destroys++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_seek(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                 OTF2_AttributeList *a, OTF2_IoHandleRef h, int64_t offset,
                                 OTF2_IoSeekOption whence, uint64_t result)
{
    (void)loc, (void)t, (void)a, (void)h;
    io_read_back *rb = user;
    if (offset == -4 && whence == OTF2_IO_SEEK_FROM_END)
        rb->seeks++;
    rb->seek_result = result;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_begin(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                  OTF2_AttributeList *a, OTF2_IoHandleRef h,
                                  OTF2_IoOperationMode mode, OTF2_IoOperationFlag flags,
                                  uint64_t request, uint64_t matching)
{
    (void)loc, (void)t, (void)a, (void)h, (void)mode, (void)request;
    io_read_back *rb = user;
    rb->begins++;
    if (flags & OTF2_IO_OPERATION_FLAG_COLLECTIVE)
        rb->collective++;
    if (rb->open_count < 4)
        rb->open_matching[rb->open_count++] = matching;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_complete(OTF2_LocationRef loc, OTF2_TimeStamp t, void *user,
                                     OTF2_AttributeList *a, OTF2_IoHandleRef h,
                                     uint64_t bytes, uint64_t matching)
{
    (void)loc, (void)t, (void)a, (void)h;
    io_read_back *rb = user;
    rb->completes++;
    if (!rb->open_count || rb->open_matching[--rb->open_count] != matching)
        rb->matching_errors++;
    if (bytes == OTF2_UNDEFINED_UINT64)
        rb->failed++;
    else if (bytes == 10)
        rb->bytes_written += bytes;
    else
        rb->bytes_read += bytes;
    return OTF2_CALLBACK_SUCCESS;
}

static void io_definition_callbacks(OTF2_GlobalDefReaderCallbacks *callbacks)
{
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(callbacks, on_string);
    OTF2_GlobalDefReaderCallbacks_SetIoParadigmCallback(callbacks, on_paradigm);
    OTF2_GlobalDefReaderCallbacks_SetIoRegularFileCallback(callbacks, on_file);
    OTF2_GlobalDefReaderCallbacks_SetIoHandleCallback(callbacks, on_handle);
}

static void io_event_callbacks(OTF2_GlobalEvtReaderCallbacks *callbacks)
{
    OTF2_GlobalEvtReaderCallbacks_SetIoCreateHandleCallback(callbacks, on_create);
    OTF2_GlobalEvtReaderCallbacks_SetIoDestroyHandleCallback(callbacks, on_destroy);
    OTF2_GlobalEvtReaderCallbacks_SetIoSeekCallback(callbacks, on_seek);
    OTF2_GlobalEvtReaderCallbacks_SetIoOperationBeginCallback(callbacks, on_begin);
    OTF2_GlobalEvtReaderCallbacks_SetIoOperationCompleteCallback(callbacks, on_complete);
}

/* The test's one location: 0, the main thread. */
static void read_io(const char *dir, io_read_back *rb)
{
    memset(rb, 0, sizeof *rb);
    OTF2_Reader *reader = ctest_trace_open(dir, io_definition_callbacks, rb);
    if (reader)
        ctest_trace_read_events(reader, (const uint64_t[]){0}, 1, io_event_callbacks, rb);
}

/* One I/O call: its region entered, the events inside, the region left. */
#define IO_CALL(loc, region, events)                                                   \
    do {                                                                               \
        sp_enter(loc, region, SP_KEY_NAMED | region, sp_clock_now());                  \
        events;                                                                        \
        CHECK(sp_leave(loc, SP_KEY_NAMED | region, sp_clock_now()));                   \
    } while (0)

static void test_trace_io_records(void)
{
    char dir[] = "/tmp/scorep-ctest-io-XXXXXX";
    start(dir);
    sp_location *loc = sp_location_attach(1, "main", true);
    CHECK(loc != NULL);
    uint32_t open_r = sp_region_define_paradigm("open", SP_PARADIGM_IO, SP_ROLE_FILE_IO,
                                                SP_REGION_IO);
    uint32_t write_r = sp_region_define_paradigm("write", SP_PARADIGM_IO, SP_ROLE_FILE_IO,
                                                 SP_REGION_IO);
    uint32_t read_r = sp_region_define_paradigm("read", SP_PARADIGM_IO, SP_ROLE_FILE_IO,
                                                SP_REGION_IO);
    uint32_t lseek_r = sp_region_define_paradigm("lseek", SP_PARADIGM_IO, SP_ROLE_FILE_IO,
                                                 SP_REGION_IO);
    uint32_t close_r = sp_region_define_paradigm("close", SP_PARADIGM_IO,
                                                 SP_ROLE_FILE_IO_METADATA, SP_REGION_IO);
    uint32_t mpi_r = sp_region_define_paradigm("MPI_File_write_all", SP_PARADIGM_IO,
                                               SP_ROLE_FILE_IO, SP_REGION_IO);
    CHECK(open_r != SP_NO_ID && mpi_r != SP_NO_ID);
    uint32_t file = sp_io_file_define("/tmp/scorep-ctest-io-data");
    const uint32_t create = SP_IO_CREATION_CREATE | SP_IO_CREATION_TRUNCATE;
    uint32_t fd = SP_NO_ID, mh = SP_NO_ID;
    uint64_t matching = 0;
    for (int round = 0; round < 3; round++) {
        IO_CALL(loc, open_r, {
            fd = sp_io_handle_begin(loc, SP_IO_PARADIGM_POSIX, "", SP_NO_ID, 0);
            sp_io_handle_complete(loc, fd, file, 3);
            sp_io_create_handle(loc, sp_clock_now(), SP_IO_PARADIGM_POSIX, fd,
                                SP_IO_ACCESS_READ_WRITE, create, 0);
        });
        IO_CALL(loc, write_r, {
            sp_io_operation_begin(loc, sp_clock_now(), SP_IO_PARADIGM_POSIX, fd,
                                  SP_IO_MODE_WRITE, 0, 10, ++matching);
            sp_io_operation_complete(loc, sp_clock_now(), SP_IO_PARADIGM_POSIX, fd,
                                     SP_IO_MODE_WRITE, 10, matching);
        });
        IO_CALL(loc, lseek_r, sp_io_seek(loc, sp_clock_now(), SP_IO_PARADIGM_POSIX, fd, -4,
                                         SP_IO_SEEK_FROM_END, 6));
        IO_CALL(loc, read_r, {
            sp_io_operation_begin(loc, sp_clock_now(), SP_IO_PARADIGM_POSIX, fd,
                                  SP_IO_MODE_READ, 0, 100, ++matching);
            sp_io_operation_complete(loc, sp_clock_now(), SP_IO_PARADIGM_POSIX, fd,
                                     SP_IO_MODE_READ, 4, matching);
        });
        IO_CALL(loc, read_r, { /* a read that failed */
            sp_io_operation_begin(loc, sp_clock_now(), SP_IO_PARADIGM_POSIX, fd,
                                  SP_IO_MODE_READ, 0, 100, ++matching);
            sp_io_operation_complete(loc, sp_clock_now(), SP_IO_PARADIGM_POSIX, fd,
                                     SP_IO_MODE_READ, SP_IO_UNKNOWN_BYTES, matching);
        });
        IO_CALL(loc, close_r, {
            CHECK_EQ_U64(sp_io_handle_unbind(SP_IO_PARADIGM_POSIX, 3), fd);
            sp_io_destroy_handle(loc, sp_clock_now(), SP_IO_PARADIGM_POSIX, fd);
        });
    }
    /* MPI-IO through the same calls: a handle of its own paradigm, a collective write
     * nesting the POSIX write it does underneath */
    mh = sp_io_handle_begin(loc, SP_IO_PARADIGM_MPI, "", SP_NO_ID, 0);
    sp_io_handle_complete(loc, mh, file, 0xabc);
    uint32_t under = sp_io_handle_duplicate(SP_IO_PARADIGM_POSIX, fd, 4);
    IO_CALL(loc, mpi_r, {
        sp_io_operation_begin(loc, sp_clock_now(), SP_IO_PARADIGM_MPI, mh, SP_IO_MODE_WRITE,
                              SP_IO_OPERATION_COLLECTIVE, 10, ++matching);
        uint64_t outer = matching;
        IO_CALL(loc, write_r, {
            sp_io_operation_begin(loc, sp_clock_now(), SP_IO_PARADIGM_POSIX, under,
                                  SP_IO_MODE_WRITE, 0, 10, ++matching);
            sp_io_operation_complete(loc, sp_clock_now(), SP_IO_PARADIGM_POSIX, under,
                                     SP_IO_MODE_WRITE, 10, matching);
        });
        sp_io_operation_complete(loc, sp_clock_now(), SP_IO_PARADIGM_MPI, mh,
                                 SP_IO_MODE_WRITE, 10, outer);
    });
    finish();

    io_read_back rb;
    read_io(dir, &rb);
    CHECK_EQ_U64(rb.paradigms, 2); /* the paradigms with a handle: POSIX and MPI */
    CHECK_EQ_U64(rb.files, 1);
    CHECK_EQ_U64(rb.handles, 3 + 1 + 1);
    CHECK_EQ_U64(rb.handles_with_parent, 0);
    CHECK_EQ_U64(rb.creates, 3);
    CHECK_EQ_U64(rb.destroys, 3);
    CHECK_EQ_U64(rb.seeks, 3);
    CHECK_EQ_U64(rb.seek_result, 6);
    CHECK_EQ_U64(rb.begins, 3 * 3 + 2);
    CHECK_EQ_U64(rb.completes, rb.begins);
    CHECK_EQ_U64(rb.matching_errors, 0);
    CHECK_EQ_U64(rb.failed, 3);
    CHECK_EQ_U64(rb.collective, 1);
    CHECK_EQ_U64(rb.bytes_written, 3 * 10 + 2 * 10);
    CHECK_EQ_U64(rb.bytes_read, 3 * 4);
    ctest_remove_tree(dir);
}

CTEST_MAIN(test_bindings_per_paradigm, test_trace_io_records)
