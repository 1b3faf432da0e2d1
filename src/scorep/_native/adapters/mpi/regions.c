/* The MPI functions as regions of paradigm MPI, and the enter/leave of every wrapper. */
#include "adapters/mpi/mpi_adapter.h"

#include <stdatomic.h>

static const struct {
    const char *name;
    sp_role role;
} functions[FN_COUNT] = {
    [FN_INIT] = {"MPI_Init", SP_ROLE_FUNCTION},
    [FN_INIT_THREAD] = {"MPI_Init_thread", SP_ROLE_FUNCTION},
    [FN_FINALIZE] = {"MPI_Finalize", SP_ROLE_FUNCTION},
    [FN_SEND] = {"MPI_Send", SP_ROLE_POINT2POINT},
    [FN_SSEND] = {"MPI_Ssend", SP_ROLE_POINT2POINT},
    [FN_BSEND] = {"MPI_Bsend", SP_ROLE_POINT2POINT},
    [FN_RSEND] = {"MPI_Rsend", SP_ROLE_POINT2POINT},
    [FN_RECV] = {"MPI_Recv", SP_ROLE_POINT2POINT},
    [FN_SENDRECV] = {"MPI_Sendrecv", SP_ROLE_POINT2POINT},
    [FN_SENDRECV_REPLACE] = {"MPI_Sendrecv_replace", SP_ROLE_POINT2POINT},
    [FN_ISEND] = {"MPI_Isend", SP_ROLE_POINT2POINT},
    [FN_ISSEND] = {"MPI_Issend", SP_ROLE_POINT2POINT},
    [FN_IBSEND] = {"MPI_Ibsend", SP_ROLE_POINT2POINT},
    [FN_IRSEND] = {"MPI_Irsend", SP_ROLE_POINT2POINT},
    [FN_IRECV] = {"MPI_Irecv", SP_ROLE_POINT2POINT},
    [FN_PROBE] = {"MPI_Probe", SP_ROLE_POINT2POINT},
    [FN_IPROBE] = {"MPI_Iprobe", SP_ROLE_POINT2POINT},
    [FN_MPROBE] = {"MPI_Mprobe", SP_ROLE_POINT2POINT},
    [FN_IMPROBE] = {"MPI_Improbe", SP_ROLE_POINT2POINT},
    [FN_MRECV] = {"MPI_Mrecv", SP_ROLE_POINT2POINT},
    [FN_IMRECV] = {"MPI_Imrecv", SP_ROLE_POINT2POINT},
    [FN_WAIT] = {"MPI_Wait", SP_ROLE_POINT2POINT},
    [FN_WAITALL] = {"MPI_Waitall", SP_ROLE_POINT2POINT},
    [FN_WAITANY] = {"MPI_Waitany", SP_ROLE_POINT2POINT},
    [FN_WAITSOME] = {"MPI_Waitsome", SP_ROLE_POINT2POINT},
    [FN_TEST] = {"MPI_Test", SP_ROLE_POINT2POINT},
    [FN_TESTALL] = {"MPI_Testall", SP_ROLE_POINT2POINT},
    [FN_TESTANY] = {"MPI_Testany", SP_ROLE_POINT2POINT},
    [FN_TESTSOME] = {"MPI_Testsome", SP_ROLE_POINT2POINT},
    [FN_CANCEL] = {"MPI_Cancel", SP_ROLE_POINT2POINT},
    [FN_REQUEST_FREE] = {"MPI_Request_free", SP_ROLE_POINT2POINT},
    [FN_BARRIER] = {"MPI_Barrier", SP_ROLE_BARRIER},
    [FN_BCAST] = {"MPI_Bcast", SP_ROLE_COLL_ONE2ALL},
    [FN_REDUCE] = {"MPI_Reduce", SP_ROLE_COLL_ALL2ONE},
    [FN_ALLREDUCE] = {"MPI_Allreduce", SP_ROLE_COLL_ALL2ALL},
    [FN_GATHER] = {"MPI_Gather", SP_ROLE_COLL_ALL2ONE},
    [FN_GATHERV] = {"MPI_Gatherv", SP_ROLE_COLL_ALL2ONE},
    [FN_SCATTER] = {"MPI_Scatter", SP_ROLE_COLL_ONE2ALL},
    [FN_SCATTERV] = {"MPI_Scatterv", SP_ROLE_COLL_ONE2ALL},
    [FN_ALLGATHER] = {"MPI_Allgather", SP_ROLE_COLL_ALL2ALL},
    [FN_ALLGATHERV] = {"MPI_Allgatherv", SP_ROLE_COLL_ALL2ALL},
    [FN_ALLTOALL] = {"MPI_Alltoall", SP_ROLE_COLL_ALL2ALL},
    [FN_ALLTOALLV] = {"MPI_Alltoallv", SP_ROLE_COLL_ALL2ALL},
    [FN_REDUCE_SCATTER] = {"MPI_Reduce_scatter", SP_ROLE_COLL_OTHER},
    [FN_REDUCE_SCATTER_BLOCK] = {"MPI_Reduce_scatter_block", SP_ROLE_COLL_OTHER},
    [FN_SCAN] = {"MPI_Scan", SP_ROLE_COLL_OTHER},
    [FN_EXSCAN] = {"MPI_Exscan", SP_ROLE_COLL_OTHER},
    [FN_COMM_SPLIT] = {"MPI_Comm_split", SP_ROLE_FUNCTION},
    [FN_COMM_DUP] = {"MPI_Comm_dup", SP_ROLE_FUNCTION},
    [FN_COMM_CREATE] = {"MPI_Comm_create", SP_ROLE_FUNCTION},
    [FN_COMM_FREE] = {"MPI_Comm_free", SP_ROLE_FUNCTION},
};

/* generation << 32 | region, per function: defined once per measurement. */
static _Atomic uint64_t region_cache[FN_COUNT];

static uint32_t region_of(int fn)
{
    uint32_t generation = sp_measurement_generation();
    uint64_t cached = atomic_load(&region_cache[fn]);
    if ((uint32_t)(cached >> 32) == generation)
        return (uint32_t)cached;
    uint32_t region = sp_region_define_paradigm(functions[fn].name, SP_PARADIGM_MPI,
                                                functions[fn].role, SP_REGION_MPI);
    atomic_store(&region_cache[fn], (uint64_t)generation << 32 | region);
    return region;
}

/* The enter of an MPI call; the location is looked up again after the call (the
 * measurement may have ended meanwhile: another thread finalized it). */
uint64_t spmpi_enter(int fn)
{
    uint64_t time = sp_clock_now();
    sp_location *loc = sp_event_section_begin();
    if (!loc)
        return time;
    uint32_t region = region_of(fn);
    if (region != SP_NO_ID)
        sp_enter(loc, region, SP_KEY_NAMED | region, time);
    sp_event_section_end(loc);
    return time;
}

/* Opens the section for the events after the call; NULL: nothing to record. */
sp_location *spmpi_after(void)
{
    return sp_event_section_begin();
}

void spmpi_leave(sp_location *loc, int fn)
{
    uint32_t region = region_of(fn);
    if (region != SP_NO_ID)
        sp_leave(loc, SP_KEY_NAMED | region, sp_clock_now());
    sp_event_section_end(loc);
}

