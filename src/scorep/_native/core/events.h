/* The events adapters hand to the core, each on the calling thread's location with a
 * timestamp of the measurement clock (sp_clock_now). The core keeps the location's call
 * stack and time order, and dispatches each event to the substrates that record. */
#ifndef SCOREP_CORE_EVENTS_H
#define SCOREP_CORE_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/defs.h"
#include "core/location.h"

/* A parameter's value as recorded: `value` holds an int64, the bits of a uint64 or a
 * string id, as `type` (sp_param_type) says. */
typedef struct {
    uint8_t type;
    int64_t value;
} sp_parameter_value;

void sp_enter(sp_location *loc, uint32_t region, uintptr_t key, uint64_t time);

/* Leaves the innermost frame with `key`, closing any frames opened inside it first.
 * Returns false (and records nothing) when no open frame has that key. */
bool sp_leave(sp_location *loc, uintptr_t key, uint64_t time);

/* A named region's end that matched no begin: recorded as error_region with the parameter
 * leave-region=<name>; prints the original bindings' two-line message once. */
void sp_region_exit_without_enter(sp_location *loc, const char *region_name, uint64_t time);

void sp_parameter_int(sp_location *loc, uint32_t parameter, int64_t value, uint64_t time);
void sp_parameter_uint(sp_location *loc, uint32_t parameter, uint64_t value, uint64_t time);
void sp_parameter_string(sp_location *loc, uint32_t parameter, uint32_t string, uint64_t time);

void sp_set_recording(bool on, uint64_t time);

/* A line of a function chosen for line-level profiling ran: `hits` more executions (0 when
 * a resumed generator continues its line) and `duration` ticks more time, measured by the
 * adapter from the line's start to the frame's next line event, yield or return. */
void sp_line(sp_location *loc, uint32_t region, uint32_t line, uint32_t hits, uint64_t duration);

/* Rewind: discard everything the location recorded since rewind_begin when rewind_end is
 * called with discard=true; the trace then shows measurement off/on for that span. */
void sp_rewind_begin(sp_location *loc, uint32_t region, uint64_t time);
/* Returns false when the region was not open (nothing done). */
bool sp_rewind_end(sp_location *loc, uint32_t region, bool discard, uint64_t time);

/* What a collective operation did, as the trace records it. */
typedef enum {
    SP_COLL_BARRIER = 0,
    SP_COLL_BCAST,
    SP_COLL_GATHER,
    SP_COLL_GATHERV,
    SP_COLL_SCATTER,
    SP_COLL_SCATTERV,
    SP_COLL_ALLGATHER,
    SP_COLL_ALLGATHERV,
    SP_COLL_ALLTOALL,
    SP_COLL_ALLTOALLV,
    SP_COLL_ALLTOALLW,
    SP_COLL_ALLREDUCE,
    SP_COLL_REDUCE,
    SP_COLL_REDUCE_SCATTER,
    SP_COLL_SCAN,
    SP_COLL_EXSCAN,
    SP_COLL_REDUCE_SCATTER_BLOCK,
    SP_COLL_CREATE_HANDLE,
    SP_COLL_DESTROY_HANDLE,
    SP_COLL_ALLOCATE,
    SP_COLL_DEALLOCATE,
    SP_COLL_CREATE_HANDLE_AND_ALLOCATE,
    SP_COLL_DESTROY_HANDLE_AND_DEALLOCATE,
} sp_collective_op;

/* The root of a collective without one. */
#define SP_NO_ROOT UINT32_MAX

/* One MPI event as the substrates receive it (the core fills it from the calls below). */
typedef enum {
    SP_MPI_SEND,
    SP_MPI_RECV,
    SP_MPI_ISEND,
    SP_MPI_IRECV,
    SP_MPI_ISEND_COMPLETE,
    SP_MPI_IRECV_REQUEST,
    SP_MPI_REQUEST_TEST,
    SP_MPI_REQUEST_CANCELLED,
    SP_MPI_COLLECTIVE_BEGIN,
    SP_MPI_COLLECTIVE_END,
    SP_MPI_ICOLL_REQUEST,  /* a non-blocking collective started */
    SP_MPI_ICOLL_COMPLETE, /* ... and completed */
    SP_MPI_COMM_CREATE,
    SP_MPI_COMM_DESTROY,
    /* one-sided communication: `comm` is the window */
    SP_RMA_WIN_CREATE,
    SP_RMA_WIN_DESTROY,
    SP_RMA_COLLECTIVE_BEGIN,
    SP_RMA_COLLECTIVE_END,
    SP_RMA_GROUP_SYNC,
    SP_RMA_REQUEST_LOCK,
    SP_RMA_ACQUIRE_LOCK,
    SP_RMA_TRY_LOCK,
    SP_RMA_RELEASE_LOCK,
    SP_RMA_SYNC,
    SP_RMA_WAIT_CHANGE,
    SP_RMA_PUT,
    SP_RMA_GET,
    SP_RMA_ATOMIC,
    SP_RMA_OP_COMPLETE_BLOCKING,
    SP_RMA_OP_COMPLETE_NON_BLOCKING,
    SP_RMA_OP_TEST,
    SP_RMA_OP_COMPLETE_REMOTE,
} sp_mpi_event_kind;

/* RMA synchronisation levels (bits), lock and atomic types, direct sync types: OTF2's. */
enum { SP_RMA_SYNC_LEVEL_NONE = 0, SP_RMA_SYNC_LEVEL_PROCESS = 1, SP_RMA_SYNC_LEVEL_MEMORY = 2 };
enum { SP_LOCK_EXCLUSIVE = 0, SP_LOCK_SHARED = 1 };
enum {
    SP_RMA_ATOMIC_ACCUMULATE = 0,
    SP_RMA_ATOMIC_COMPARE_AND_SWAP = 3,
    SP_RMA_ATOMIC_FETCH_AND_ACCUMULATE = 7,
};
enum { SP_RMA_SYNC_MEMORY = 0, SP_RMA_SYNC_NOTIFY_IN = 1, SP_RMA_SYNC_NOTIFY_OUT = 2 };
/* The target of an RMA lock on every process of the window. */
#define SP_RMA_ALL_TARGETS UINT32_MAX

typedef struct {
    sp_mpi_event_kind kind;
    uint32_t comm; /* communicator id; RMA: window id */
    uint32_t peer; /* partner's rank in `comm` (point to point), target rank (RMA) */
    uint32_t tag;
    uint32_t root; /* collectives; SP_NO_ROOT when there is none */
    sp_collective_op op;
    uint32_t detail; /* RMA: sync level, lock type, atomic type or sync type */
    uint32_t group;  /* RMA group sync: the group's communicator id (SP_COMM_GROUP) */
    uint64_t request; /* request id; RMA: matching id or lock id */
    uint64_t bytes_sent, bytes_received; /* RMA: bytes put, bytes got */
} sp_mpi_event;

/* MPI events of the calling thread's location (the frame of the MPI call is open). Ranks
 * are ranks in the communicator, `comm` a communicator id of the definitions. */
void sp_mpi_send(sp_location *loc, uint64_t time, uint32_t receiver, uint32_t comm,
                 uint32_t tag, uint64_t bytes);
void sp_mpi_recv(sp_location *loc, uint64_t time, uint32_t sender, uint32_t comm, uint32_t tag,
                 uint64_t bytes);
void sp_mpi_isend(sp_location *loc, uint64_t time, uint32_t receiver, uint32_t comm,
                  uint32_t tag, uint64_t bytes, uint64_t request);
void sp_mpi_isend_complete(sp_location *loc, uint64_t time, uint64_t request);
void sp_mpi_irecv_request(sp_location *loc, uint64_t time, uint64_t request);
void sp_mpi_irecv(sp_location *loc, uint64_t time, uint32_t sender, uint32_t comm, uint32_t tag,
                  uint64_t bytes, uint64_t request);
void sp_mpi_request_test(sp_location *loc, uint64_t time, uint64_t request);
void sp_mpi_request_cancelled(sp_location *loc, uint64_t time, uint64_t request);
void sp_mpi_collective_begin(sp_location *loc, uint64_t time);
void sp_mpi_collective_end(sp_location *loc, uint64_t time, sp_collective_op op, uint32_t comm,
                           uint32_t root, uint64_t sent, uint64_t received);
void sp_mpi_icoll_request(sp_location *loc, uint64_t time, uint64_t request);
void sp_mpi_icoll_complete(sp_location *loc, uint64_t time, sp_collective_op op, uint32_t comm,
                           uint32_t root, uint64_t sent, uint64_t received, uint64_t request);
void sp_mpi_comm_create(sp_location *loc, uint64_t time, uint32_t comm);
void sp_mpi_comm_destroy(sp_location *loc, uint64_t time, uint32_t comm);

/* One-sided communication on window `win` (an id of sp_rma_win_define). */
void sp_rma_win_create(sp_location *loc, uint64_t time, uint32_t win);
void sp_rma_win_destroy(sp_location *loc, uint64_t time, uint32_t win);
void sp_rma_collective_begin(sp_location *loc, uint64_t time);
void sp_rma_collective_end(sp_location *loc, uint64_t time, sp_collective_op op,
                           uint32_t sync_level, uint32_t win, uint32_t root, uint64_t sent,
                           uint64_t received);
void sp_rma_group_sync(sp_location *loc, uint64_t time, uint32_t sync_level, uint32_t win,
                       uint32_t group);
/* kind: SP_RMA_REQUEST_LOCK, SP_RMA_ACQUIRE_LOCK or SP_RMA_TRY_LOCK */
void sp_rma_lock(sp_location *loc, uint64_t time, sp_mpi_event_kind kind, uint32_t win,
                 uint32_t target, uint64_t lock, uint32_t lock_type);
void sp_rma_release_lock(sp_location *loc, uint64_t time, uint32_t win, uint32_t target,
                         uint64_t lock);
void sp_rma_sync(sp_location *loc, uint64_t time, uint32_t win, uint32_t target,
                 uint32_t sync_type);
void sp_rma_wait_change(sp_location *loc, uint64_t time, uint32_t win);
void sp_rma_put(sp_location *loc, uint64_t time, uint32_t win, uint32_t target, uint64_t bytes,
                uint64_t matching);
void sp_rma_get(sp_location *loc, uint64_t time, uint32_t win, uint32_t target, uint64_t bytes,
                uint64_t matching);
void sp_rma_atomic(sp_location *loc, uint64_t time, uint32_t win, uint32_t target,
                   uint32_t type, uint64_t put, uint64_t got, uint64_t matching);
/* kind: one of SP_RMA_OP_COMPLETE_BLOCKING .. SP_RMA_OP_COMPLETE_REMOTE */
void sp_rma_op(sp_location *loc, uint64_t time, sp_mpi_event_kind kind, uint32_t win,
               uint64_t matching);

/* ---- I/O ------------------------------------------------------------------------------- */

/* One I/O event as the substrates receive it. Every event names its paradigm, so that the
 * same records serve POSIX, ISO C and MPI-IO (Score-P's IoCreateHandle, IoDestroyHandle,
 * IoDuplicateHandle, IoSeek, IoOperationBegin, IoOperationComplete). */
typedef enum {
    SP_IO_CREATE_HANDLE,
    SP_IO_DESTROY_HANDLE,
    SP_IO_DUPLICATE_HANDLE,
    SP_IO_SEEK,
    SP_IO_OPERATION_BEGIN,
    SP_IO_OPERATION_COMPLETE,
    /* non-blocking operations (MPI-IO): issued by the call that began them, then tested,
     * completed or cancelled later; `matching_id` pairs them */
    SP_IO_OPERATION_ISSUED,
    SP_IO_OPERATION_TEST,
    SP_IO_OPERATION_CANCELLED,
} sp_io_event_kind;

typedef struct {
    sp_io_event_kind kind;
    uint8_t paradigm;      /* sp_io_paradigm */
    uint8_t mode;          /* sp_io_mode (operations), sp_io_access_mode (creation) */
    uint32_t handle;       /* io handle id; DUPLICATE: the old one */
    uint32_t new_handle;   /* DUPLICATE */
    uint32_t flags;        /* creation flags, operation flags, or the seek's whence */
    uint32_t status_flags; /* CREATE, DUPLICATE */
    uint64_t bytes;        /* requested (BEGIN) or done (COMPLETE); SP_IO_UNKNOWN_BYTES */
    int64_t offset;        /* SEEK: as requested */
    uint64_t offset_result; /* SEEK: the resulting offset */
    uint64_t matching_id;  /* pairs an operation's begin and completion */
} sp_io_event;

/* I/O events of the calling thread's location, inside the frame of the I/O call's region
 * (the profile adds the bytes of a completed read or write to that call path). */
void sp_io_create_handle(sp_location *loc, uint64_t time, sp_io_paradigm paradigm,
                         uint32_t handle, sp_io_access_mode mode, uint32_t creation_flags,
                         uint32_t status_flags);
void sp_io_destroy_handle(sp_location *loc, uint64_t time, sp_io_paradigm paradigm,
                          uint32_t handle);
void sp_io_duplicate_handle(sp_location *loc, uint64_t time, sp_io_paradigm paradigm,
                            uint32_t old_handle, uint32_t new_handle, uint32_t status_flags);
void sp_io_seek(sp_location *loc, uint64_t time, sp_io_paradigm paradigm, uint32_t handle,
                int64_t offset, sp_io_seek_whence whence, uint64_t offset_result);
void sp_io_operation_begin(sp_location *loc, uint64_t time, sp_io_paradigm paradigm,
                           uint32_t handle, sp_io_mode mode, uint32_t operation_flags,
                           uint64_t bytes_request, uint64_t matching_id);
/* `bytes_result` is SP_IO_UNKNOWN_BYTES for a failed operation. */
void sp_io_operation_complete(sp_location *loc, uint64_t time, sp_io_paradigm paradigm,
                              uint32_t handle, sp_io_mode mode, uint64_t bytes_result,
                              uint64_t matching_id);

/* ---- calling contexts and samples (SCOREP_ENABLE_UNWINDING) ---------------------------- */

/* Reads the calling thread's own call stack (`loc` is its location): writes up to
 * `capacity` frames into `frames`, outermost first, and returns how many the stack has (when
 * that is more than `capacity` it is called again with room for all). */
typedef uint32_t (*sp_unwinder)(sp_location *loc, sp_context_frame *frames, uint32_t capacity);

/* While an unwinder is set, every enter records where in the program's own call stack it
 * happened (Score-P's unwinding): regions entered through events (user regions, MPI, I/O)
 * and samples of the program's functions share one call tree. NULL switches it off. */
void sp_set_unwinder(sp_unwinder unwinder);

/* Samples are recorded into a thread's location by another thread (a sampler that sees
 * every thread's stack) between sp_sample_begin, which fails while the location's own
 * thread is inside an event section (then try at the next sample), and sp_sample_end. */
bool sp_sample_begin(sp_location *loc);
void sp_sample_end(sp_location *loc);

/* A sample of `loc`'s thread at `time`: its call stack `frames` (outermost first) stands for
 * `weight` ticks of the thread's time since the sample before it (at most the time since the
 * innermost open frame was entered: the rest belongs to its caller). What it cannot take is
 * owed to the next samples (loc->sample_owed). Returns the ticks owed by earlier samples
 * that this one dropped because a recorded region took part of its room: time no sample
 * stands for, for the caller to count (MANIFEST.md). */
uint64_t sp_sample(sp_location *loc, uint64_t time, const sp_context_frame *frames,
                   uint32_t count, uint64_t weight);
/* A non-blocking operation's later events (kind: SP_IO_OPERATION_ISSUED, _TEST, _CANCELLED):
 * Score-P's IoOperationIssued, IoOperationTest, IoOperationCancelled. */
void sp_io_operation_event(sp_location *loc, uint64_t time, sp_io_event_kind kind,
                           sp_io_paradigm paradigm, uint32_t handle, uint64_t matching_id);

/* Threads that record without the GIL (MPI wrappers) bracket each recording section so
 * that the end of the measurement never pulls their location away mid-event. Returns
 * the location to record into, or NULL (then do not call sp_event_section_end). */
sp_location *sp_event_section_begin(void);
void sp_event_section_end(sp_location *loc);

#endif
