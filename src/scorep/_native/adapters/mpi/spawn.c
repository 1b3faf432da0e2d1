/* Processes started with MPI_Comm_spawn. */
#include "adapters/mpi/mpi_adapter.h"

void spmpi_spawned_init(void)
{
}
