/* What the MPI adapter's files share. The adapter: PMPI wrappers that record MPI calls as
 * regions of paradigm MPI and their messages and collectives as MPI events of the core, and
 * the group operations the core needs at the end (core/ipc.h) over a private duplicate of
 * MPI_COMM_WORLD, so they never meet the program's messages.
 *
 * This library is loaded with RTLD_GLOBAL before the program's MPI library is used (see
 * scorep/_mpi.py): the dynamic linker then binds every MPI_* call of mpi4py and of any
 * other extension to these wrappers, which call the PMPI_* entry points of the MPI
 * library. Wrappers run without the GIL (mpi4py releases it), so every recording step
 * is an event section of the core (sp_event_section_begin/end). */
#ifndef SCOREP_ADAPTERS_MPI_H
#define SCOREP_ADAPTERS_MPI_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/measurement.h"

#define EXPORT __attribute__((visibility("default")))

/* The world as this adapter sees it. Global because PMPI wrappers carry no context; set
 * at MPI_Init (init.c), read-only after. */
extern MPI_Comm spmpi_tool_comm; /* our duplicate of MPI_COMM_WORLD */
extern MPI_Group spmpi_world_group;
extern int spmpi_world_rank, spmpi_world_size;

/* The MPI functions recorded as regions (regions.c). */
enum {
    FN_INIT, FN_INIT_THREAD, FN_FINALIZE, FN_SEND, FN_SSEND, FN_BSEND, FN_RSEND, FN_RECV, FN_SENDRECV,
    FN_SENDRECV_REPLACE, FN_ISEND, FN_ISSEND, FN_IBSEND, FN_IRSEND, FN_IRECV, FN_PROBE, FN_IPROBE,
    FN_MPROBE, FN_IMPROBE, FN_MRECV, FN_IMRECV, FN_WAIT, FN_WAITALL, FN_WAITANY, FN_WAITSOME, FN_TEST,
    FN_TESTALL, FN_TESTANY, FN_TESTSOME, FN_CANCEL, FN_REQUEST_FREE, FN_BARRIER, FN_BCAST, FN_REDUCE,
    FN_ALLREDUCE, FN_GATHER, FN_GATHERV, FN_SCATTER, FN_SCATTERV, FN_ALLGATHER, FN_ALLGATHERV,
    FN_ALLTOALL, FN_ALLTOALLV, FN_REDUCE_SCATTER, FN_REDUCE_SCATTER_BLOCK, FN_SCAN, FN_EXSCAN,
    FN_COMM_SPLIT, FN_COMM_DUP, FN_COMM_CREATE, FN_COMM_FREE, FN_COUNT
};

/* The enter of an MPI call; returns its time. The location is looked up again after the
 * call (the measurement may have ended meanwhile: another thread finalized it). */
uint64_t spmpi_enter(int fn);
/* Opens the section for the events after the call; NULL: nothing to record. */
sp_location *spmpi_after(void);
/* Leaves the call's region and closes the section. */
void spmpi_leave(sp_location *loc, int fn);

/* Communicators (comms.c): the id of a communicator of the definitions; one not seen at
 * its creation is defined when first used. */
uint32_t spmpi_comm_id(MPI_Comm comm);
uint32_t spmpi_define_comm(MPI_Comm comm, uint64_t key, sp_comm_kind kind);
void spmpi_remember_comm(MPI_Comm comm, uint32_t id);

uint64_t spmpi_type_bytes(MPI_Datatype type, int count);
uint64_t spmpi_received_bytes(const MPI_Status *status, MPI_Datatype type);

/* Requests (requests.c): a started non-blocking operation; returns its request id. */
uint64_t spmpi_remember_request(MPI_Request request, bool receive, uint32_t comm, uint32_t peer,
                                uint32_t tag, uint64_t bytes, MPI_Datatype datatype);

/* The group operations of core/ipc.h on spmpi_tool_comm (ipc.c). */
extern const sp_ipc_ops spmpi_ipc_ops;

#endif
