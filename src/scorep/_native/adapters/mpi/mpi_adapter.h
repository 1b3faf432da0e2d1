/* What the MPI adapter's files share. The adapter: PMPI wrappers that record MPI calls as
 * regions of paradigm MPI and their messages, collectives, one-sided operations and
 * communicators as events and definitions of the core, and the group operations the core
 * needs at the end (core/ipc.h) over a private duplicate of MPI_COMM_WORLD, so they never
 * meet the program's messages. What is recorded follows Score-P's MPI adapter (its
 * src/adapters/mpi/): the same events, byte counts and SCOREP_MPI_ENABLE_GROUPS.
 *
 * This library is loaded with RTLD_GLOBAL before the program's MPI library is used (see
 * scorep/measure/mpi.py): the dynamic linker then binds every MPI_* call of mpi4py and of any
 * other extension to these wrappers, which call the PMPI_* entry points of the MPI
 * library. Wrappers run without the GIL (mpi4py releases it), so every recording step
 * is an event section of the core (sp_event_section_begin/end). */
#ifndef SCOREP_ADAPTERS_MPI_H
#define SCOREP_ADAPTERS_MPI_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "adapters/mpi/functions.h"
#include "core/measurement.h"
#include "core/tables.h"

#define EXPORT __attribute__((visibility("default")))

/* The world as this adapter sees it. Global because PMPI wrappers carry no context; set
 * at MPI_Init (init.c), read-only after. */
extern MPI_Comm spmpi_tool_comm; /* our duplicate of MPI_COMM_WORLD */
extern MPI_Group spmpi_world_group;
extern int spmpi_world_rank, spmpi_world_size;
/* This process's world: 0, or the token its parent gave it at MPI_Comm_spawn (spawn.c). */
extern uint32_t spmpi_world;

/* ---- regions (regions.c) ----------------------------------------------------------------- */

/* The SCOREP_MPI_ENABLE_GROUPS bits in force (functions.h). Global because wrappers carry
 * no context; set when MPI is initialized, read by every wrapper. */
extern uint32_t spmpi_enabled;

/* SCOREP_MPI_ENABLE_GROUPS as Score-P reads it (init.c). */
uint32_t spmpi_parse_groups(const char *text);

static inline bool spmpi_on(uint32_t groups)
{
    return (spmpi_enabled & groups) == groups;
}

/* The enter of an MPI call (nothing when its groups are off); returns its time. The
 * location is looked up again after the call (the measurement may have ended meanwhile:
 * another thread finalized it). */
uint64_t spmpi_enter(int fn);
/* Opens the section for the events after the call; NULL: nothing to record (the
 * measurement does not run, or the function's groups are off). */
sp_location *spmpi_after(int fn);
/* Leaves the call's region and closes the section. */
void spmpi_leave(sp_location *loc, int fn);

/* A call recorded as a region only. */
#define SPMPI_REGION_CALL(FN, CALL)                                                            \
    do {                                                                                       \
        spmpi_enter(FN);                                                                       \
        int s_ = (CALL);                                                                       \
        sp_location *loc_ = spmpi_after(FN);                                                   \
        if (loc_)                                                                              \
            spmpi_leave(loc_, FN);                                                             \
        return s_;                                                                             \
    } while (0)

/* ---- communicators (comms.c) ------------------------------------------------------------- */

/* The id of a communicator of the definitions; one not seen at its creation is defined
 * now from its members. */
uint32_t spmpi_comm_id(MPI_Comm comm);
/* The same for one made without a collective this adapter saw (MPI_Comm_idup), with its
 * parent and its creation recorded. */
uint32_t spmpi_comm_adopted(MPI_Comm comm, MPI_Comm parent);
/* A communicator was created (collectively, by all its members: each must call this).
 * Agrees on its definition with the other members; `parent` is the communicator it was
 * made from (MPI_COMM_NULL: none). Returns its id (SP_NO_ID when not measuring). */
uint32_t spmpi_comm_created(MPI_Comm comm, MPI_Comm parent, bool remote_measured);
/* The id of MPI group `group` (RMA epochs), defined from its members. */
uint32_t spmpi_group_id(MPI_Group group);
/* Defines MPI_COMM_WORLD and MPI_COMM_SELF (at MPI_Init). */
void spmpi_define_world(void);
/* MPI_File_open on `comm`: the unify key of the file handle, the same on every member (as
 * Score-P: the number of files opened on the communicator so far, from 1; 0 when not
 * measuring). */
uint32_t spmpi_comm_file_key(MPI_Comm comm);
/* The key that names the communicator on every member (defining it when needed). */
uint64_t spmpi_comm_key(MPI_Comm comm);
/* How many times `key` was counted in `counts` before (0 the first time), counting it once
 * more: what tells apart, alike on every member, the objects created collectively from the
 * same thing (communicators of the same members, windows on one communicator). The caller
 * holds the lock that guards `counts`. */
uint32_t spmpi_count_occurrence(sp_u64map *counts, uint64_t key);

/* Records a communicator's creation: the collective's end (CREATE_HANDLE, as Score-P) and
 * CommCreate for `created` (SP_NO_ID: none), on `loc` (the call's section). */
void spmpi_record_comm_creation(sp_location *loc, uint32_t created, uint32_t collective_comm);

uint64_t spmpi_type_bytes(MPI_Datatype type, int count);
uint64_t spmpi_received_bytes(const MPI_Status *status, MPI_Datatype type);

/* ---- requests (requests.c) --------------------------------------------------------------- */

typedef enum {
    REQ_SEND = 1,
    REQ_RECV,
    REQ_ICOLL,   /* a non-blocking collective */
    REQ_RMA,     /* MPI_Rput and friends */
    REQ_IDUP,    /* MPI_Comm_idup */
    REQ_MESSAGE, /* not a request: a message matched by MPI_Mprobe (its communicator) */
    REQ_IO,      /* MPI_File_iread and friends: comm is the I/O handle, tag the mode, bytes
                  * the type's size */
    REQ_IO_SPLIT, /* not a request: a split collective begun on the file (the key) */
} request_kind;

enum {
    REQ_PERSISTENT = 1,
    REQ_ACTIVE = 2,     /* a persistent request was started */
    REQ_CAN_CANCEL = 4, /* MPI_Cancel was called: completion may be a cancellation */
};

typedef struct {
    uint64_t handle; /* the MPI_Request (or MPI_Message) */
    uint64_t id;     /* the request id of the trace records */
    uint32_t generation; /* the measurement that saw it start */
    uint8_t kind;    /* request_kind */
    uint8_t flags;
    uint32_t comm, peer, tag; /* p2p; comm, root for collectives; window, target for RMA */
    uint32_t root;
    sp_collective_op op;
    uint64_t bytes, received; /* bytes sent (p2p send, collectives) and received (colls) */
    MPI_Datatype datatype;    /* receives: the received count is in this type */
    MPI_Comm *newcomm;        /* MPI_Comm_idup's result */
    MPI_Comm parent;
} request_info;

uint64_t spmpi_next_request_id(void);
/* Remembers a started operation (copied); returns false when out of memory. */
bool spmpi_remember_request(const request_info *info);
/* The remembered request (a copy in *out), left in place. */
bool spmpi_find_request(uint64_t handle, request_info *out);
/* Takes it out; false when it was not remembered. */
bool spmpi_take_request(uint64_t handle, request_info *out);

/* A non-blocking collective started: the request record now, its completion later. */
void spmpi_icoll_started(sp_location *loc, uint64_t start, MPI_Request request,
                         sp_collective_op op, MPI_Comm comm, int root, uint64_t sent,
                         uint64_t received);

/* ---- collectives (collectives.c) --------------------------------------------------------- */

/* Score-P's byte counts of a collective on this process (its scorep_mpi_coll_bytes_*). */
bool spmpi_is_intercomm(MPI_Comm comm);

/* ---- one-sided (rma.c) ------------------------------------------------------------------- */

/* An RMA request (MPI_Rput...) completed through MPI_Wait/Test. */
void spmpi_rma_request_completed(sp_location *loc, const request_info *info);

/* ---- MPI-IO (io.c) ------------------------------------------------------------------------ */

/* A non-blocking file operation's request completed (or was cancelled) in MPI_Wait/Test;
 * a test found it unfinished. */
void spmpi_io_request_completed(sp_location *loc, const request_info *info,
                                const MPI_Status *status, bool cancelled);
void spmpi_io_request_tested(sp_location *loc, const request_info *info);

/* ---- process management (spawn.c) ------------------------------------------------------- */

/* At MPI_Init of a process started with MPI_Comm_spawn by a measured parent: learns its
 * world's token, the parent's experiment and clocks. */
void spmpi_spawned_init(void);

/* This machine's boot id ("" when unknown): processes of one boot read the same
 * CLOCK_MONOTONIC, their clock offset is 0 (ipc.c). */
void spmpi_boot_id(char *out, size_t len);

/* ---- the group operations of core/ipc.h on spmpi_tool_comm (ipc.c) ---------------------- */

extern const sp_ipc_ops spmpi_ipc_ops;

#endif
