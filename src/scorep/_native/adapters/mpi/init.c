/* MPI_Init, MPI_Finalize and MPI_Abort: where the rank joins the measurement's group and
 * where it writes. */
#include "adapters/mpi/mpi_adapter.h"

#include <stdio.h>

MPI_Comm spmpi_tool_comm = MPI_COMM_NULL;
MPI_Group spmpi_world_group = MPI_GROUP_NULL;
int spmpi_world_rank, spmpi_world_size;

/* The group the core writes with; lives until the process ends (the core keeps a copy). */
static sp_ipc world_ipc;

static void initialized(int requested, int provided)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &spmpi_world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &spmpi_world_size);
    PMPI_Comm_group(MPI_COMM_WORLD, &spmpi_world_group);
    PMPI_Comm_dup(MPI_COMM_WORLD, &spmpi_tool_comm);
    /* A failure of the tool's own collectives is reported, never the end of the job. */
    PMPI_Comm_set_errhandler(spmpi_tool_comm, MPI_ERRORS_RETURN);
    world_ipc = (sp_ipc){.ops = &spmpi_ipc_ops,
                         .ctx = NULL,
                         .rank = (uint32_t)spmpi_world_rank,
                         .size = (uint32_t)spmpi_world_size};
    char err[8192] = "";
    if (sp_mpi_initialized(&world_ipc, requested, provided, err, sizeof err) != 0 &&
        spmpi_world_rank == 0) {
        fprintf(stderr, "scorep: %s\n", err);
        fflush(stderr);
    }
    sp_location *loc = sp_event_section_begin();
    if (loc) {
        spmpi_remember_comm(MPI_COMM_WORLD,
                            spmpi_define_comm(MPI_COMM_WORLD, SP_COMM_KEY_WORLD, SP_COMM_WORLD));
        spmpi_remember_comm(MPI_COMM_SELF,
                            spmpi_define_comm(MPI_COMM_SELF, SP_COMM_KEY_SELF, SP_COMM_SELF));
        sp_event_section_end(loc);
    }
}

EXPORT int MPI_Init(int *argc, char ***argv)
{
    spmpi_enter(FN_INIT);
    int status = PMPI_Init(argc, argv);
    if (status == MPI_SUCCESS)
        initialized(-1, -1);
    sp_location *loc = spmpi_after();
    if (loc)
        spmpi_leave(loc, FN_INIT);
    return status;
}

EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    spmpi_enter(FN_INIT_THREAD);
    int status = PMPI_Init_thread(argc, argv, required, provided);
    if (status == MPI_SUCCESS)
        initialized(required, *provided);
    sp_location *loc = spmpi_after();
    if (loc)
        spmpi_leave(loc, FN_INIT_THREAD);
    return status;
}

EXPORT int MPI_Finalize(void)
{
    spmpi_enter(FN_FINALIZE);
    /* Everything is written while MPI still works; MPI_Finalize's own region is closed
     * at the end of the measurement. */
    sp_mpi_finalizing();
    if (spmpi_tool_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&spmpi_tool_comm);
    if (spmpi_world_group != MPI_GROUP_NULL)
        PMPI_Group_free(&spmpi_world_group);
    return PMPI_Finalize();
}

EXPORT int MPI_Abort(MPI_Comm comm, int errorcode)
{
    /* The job ends inside PMPI_Abort: what this rank recorded is written first. */
    sp_mpi_aborting(errorcode);
    return PMPI_Abort(comm, errorcode);
}

