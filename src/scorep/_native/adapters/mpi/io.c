/* MPI-IO: the file calls as regions of role file I/O (in the io group).
 *
 * Pending: the I/O records of the MPI-IO paradigm (handles, operations with their bytes)
 * come with the core's I/O event API of the I/O recording issue; until it is merged, the
 * calls are regions only. Generated from Open MPI's mpi.h prototypes (the compiler checks
 * them against it). */
#include "adapters/mpi/mpi_adapter.h"

EXPORT int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    SPMPI_REGION_CALL(FN_FILE_OPEN, PMPI_File_open(comm, filename, amode, info, fh));
}

EXPORT int MPI_File_close(MPI_File *fh)
{
    SPMPI_REGION_CALL(FN_FILE_CLOSE, PMPI_File_close(fh));
}

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

EXPORT int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype, const char *datarep, MPI_Info info)
{
    SPMPI_REGION_CALL(FN_FILE_SET_VIEW, PMPI_File_set_view(fh, disp, etype, filetype, datarep, info));
}

EXPORT int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    SPMPI_REGION_CALL(FN_FILE_SEEK, PMPI_File_seek(fh, offset, whence));
}

EXPORT int MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    SPMPI_REGION_CALL(FN_FILE_SEEK_SHARED, PMPI_File_seek_shared(fh, offset, whence));
}

EXPORT int MPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    SPMPI_REGION_CALL(FN_FILE_GET_POSITION, PMPI_File_get_position(fh, offset));
}

EXPORT int MPI_File_sync(MPI_File fh)
{
    SPMPI_REGION_CALL(FN_FILE_SYNC, PMPI_File_sync(fh));
}

EXPORT int MPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    SPMPI_REGION_CALL(FN_FILE_READ, PMPI_File_read(fh, buf, count, datatype, status));
}

EXPORT int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    SPMPI_REGION_CALL(FN_FILE_READ_ALL, PMPI_File_read_all(fh, buf, count, datatype, status));
}

EXPORT int MPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    SPMPI_REGION_CALL(FN_FILE_READ_AT, PMPI_File_read_at(fh, offset, buf, count, datatype, status));
}

EXPORT int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    SPMPI_REGION_CALL(FN_FILE_READ_AT_ALL, PMPI_File_read_at_all(fh, offset, buf, count, datatype, status));
}

EXPORT int MPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    SPMPI_REGION_CALL(FN_FILE_READ_SHARED, PMPI_File_read_shared(fh, buf, count, datatype, status));
}

EXPORT int MPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    SPMPI_REGION_CALL(FN_FILE_READ_ORDERED, PMPI_File_read_ordered(fh, buf, count, datatype, status));
}

EXPORT int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    SPMPI_REGION_CALL(FN_FILE_WRITE, PMPI_File_write(fh, buf, count, datatype, status));
}

EXPORT int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    SPMPI_REGION_CALL(FN_FILE_WRITE_ALL, PMPI_File_write_all(fh, buf, count, datatype, status));
}

EXPORT int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    SPMPI_REGION_CALL(FN_FILE_WRITE_AT, PMPI_File_write_at(fh, offset, buf, count, datatype, status));
}

EXPORT int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    SPMPI_REGION_CALL(FN_FILE_WRITE_AT_ALL, PMPI_File_write_at_all(fh, offset, buf, count, datatype, status));
}

EXPORT int MPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    SPMPI_REGION_CALL(FN_FILE_WRITE_SHARED, PMPI_File_write_shared(fh, buf, count, datatype, status));
}

EXPORT int MPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    SPMPI_REGION_CALL(FN_FILE_WRITE_ORDERED, PMPI_File_write_ordered(fh, buf, count, datatype, status));
}

EXPORT int MPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    SPMPI_REGION_CALL(FN_FILE_IREAD, PMPI_File_iread(fh, buf, count, datatype, request));
}

EXPORT int MPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    SPMPI_REGION_CALL(FN_FILE_IREAD_AT, PMPI_File_iread_at(fh, offset, buf, count, datatype, request));
}

EXPORT int MPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    SPMPI_REGION_CALL(FN_FILE_IWRITE, PMPI_File_iwrite(fh, buf, count, datatype, request));
}

EXPORT int MPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    SPMPI_REGION_CALL(FN_FILE_IWRITE_AT, PMPI_File_iwrite_at(fh, offset, buf, count, datatype, request));
}
