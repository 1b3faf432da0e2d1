/* I/O handles of the running measurement (Score-P's I/O management): the definitions of
 * files and handles, the handles being created on each location, and which native handle
 * (a file descriptor, a FILE *, an MPI_File) each defined handle is right now.
 *
 * An I/O adapter's wrapper, inside an event section (sp_event_section_begin/end):
 *
 *     open:  h = sp_io_handle_begin(loc, POSIX, "", SP_NO_ID, 0)   before the call
 *            sp_io_handle_complete(loc, h, sp_io_file_define(path), fd)  after it succeeded
 *            (or sp_io_handle_drop(loc, h)), then the sp_io_create_handle event;
 *     read:  h = sp_io_handle_lookup(POSIX, fd): SP_NO_ID for a descriptor the measurement
 *            does not know (a socket, a pipe): the call is recorded, without I/O events;
 *     close: h = sp_io_handle_unbind(POSIX, fd); sp_io_handle_rebind when the close failed.
 *
 * The native handle is a uint64_t key per paradigm; the paradigm is a parameter
 * everywhere, so MPI-IO uses the same functions with SP_IO_PARADIGM_MPI. All functions are
 * thread-safe (one lock per paradigm for the bindings, the definitions' lock otherwise) and
 * return SP_NO_ID when no measurement runs or memory ran out. */
#ifndef SCOREP_CORE_IO_H
#define SCOREP_CORE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "core/defs.h"
#include "core/location.h"

/* Which I/O events a recorded I/O function writes per call (the I/O adapter's table):
 * scorep-score estimates a trace's I/O records from it, through the bindings. */
typedef enum {
    SP_IO_CALL_NONE = 0, /* enter and leave only */
    SP_IO_CALL_CREATE,   /* IoCreateHandle, `count` of them */
    SP_IO_CALL_DESTROY,  /* IoDestroyHandle, `count` of them */
    SP_IO_CALL_SEEK,     /* IoSeek */
    SP_IO_CALL_TRANSFER, /* IoOperationBegin and IoOperationComplete with the bytes moved */
    SP_IO_CALL_FLUSH,    /* the same pair with no bytes */
    SP_IO_CALL_DUPLICATE, /* IoDuplicateHandle */
} sp_io_call_class;

typedef struct sp_io_call {
    const char *region; /* the function's region name */
    sp_io_call_class events;
    uint32_t count;
} sp_io_call;

/* The I/O adapter describes its functions once, from its constructor; the table must live
 * as long as the library. sp_io_calls returns it (NULL, 0: no I/O adapter). */
void sp_io_describe_calls(const sp_io_call *calls, size_t count);
const sp_io_call *sp_io_calls(size_t *count);

/* The file `path` names: its absolute, resolved path where it exists (as Score-P's
 * realpath), else the path as given. Defined once per path. */
uint32_t sp_io_file_define(const char *path);

/* A handle that was open before the measurement started (standard streams, inherited
 * descriptors), bound to `native`. `unify_key` non-zero merges it with the handles of the
 * other processes that have the same key, name and paradigm. */
uint32_t sp_io_handle_precreated(sp_io_paradigm paradigm, uint64_t native, const char *name,
                                 uint32_t file, uint32_t flags, sp_io_access_mode mode,
                                 uint32_t status_flags, uint32_t unify_key);

/* A handle that stands for no native handle (Score-P's "sync - commit buffer cache to
 * disk" for sync(), "all open output streams" for fflush(NULL)): defined, never bound. */
uint32_t sp_io_handle_proxy(sp_io_paradigm paradigm, const char *name);

/* Creation: the handle is defined before the call (a handle the call creates meanwhile
 * through a lower paradigm gets it as its parent) and bound when the call succeeded. */
uint32_t sp_io_handle_begin(sp_location *loc, sp_io_paradigm paradigm, const char *name,
                            uint32_t comm, uint32_t unify_key);
void sp_io_handle_complete(sp_location *loc, uint32_t handle, uint32_t file, uint64_t native);
void sp_io_handle_drop(sp_location *loc, uint32_t handle);

/* A new handle for `native` that duplicates `old` (dup, dup2, fcntl F_DUPFD): its name,
 * file and parent, no flags. A handle still bound to `native` is replaced. */
uint32_t sp_io_handle_duplicate(sp_io_paradigm paradigm, uint32_t old, uint64_t native);

uint32_t sp_io_handle_lookup(sp_io_paradigm paradigm, uint64_t native);
/* Removes the binding; returns the handle that was bound (SP_NO_ID: none). */
uint32_t sp_io_handle_unbind(sp_io_paradigm paradigm, uint64_t native);
/* Binds `handle` to `native` again (a close that failed leaves the handle open). */
void sp_io_handle_rebind(sp_io_paradigm paradigm, uint64_t native, uint32_t handle);

/* The file of a handle (SP_NO_ID: none or unknown). */
uint32_t sp_io_handle_file(uint32_t handle);

#endif
