/* MPI calls recorded as regions only (in their SCOREP_MPI_ENABLE_GROUPS groups): queries
 * of communicators, groups, topologies and datatypes, info objects, memory, timers.
 * Generated once from Open MPI's mpi.h prototypes; the compiler checks them against it. */
#include "adapters/mpi/mpi_adapter.h"


/* Same-shape MPI wrappers, a family: one per MPI function, each the same steps (enter,
 * the PMPI_ call, its records, leave) with its own arguments. The duplicates tool pairs
 * them; they are not one logic written twice. */
EXPORT int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    SPMPI_REGION_CALL(FN_COMM_COMPARE, PMPI_Comm_compare(comm1, comm2, result));
}

EXPORT int MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    SPMPI_REGION_CALL(FN_COMM_GROUP, PMPI_Comm_group(comm, group));
}

EXPORT int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    SPMPI_REGION_CALL(FN_COMM_RANK, PMPI_Comm_rank(comm, rank));
}

EXPORT int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    SPMPI_REGION_CALL(FN_COMM_REMOTE_GROUP, PMPI_Comm_remote_group(comm, group));
}

EXPORT int MPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    SPMPI_REGION_CALL(FN_COMM_REMOTE_SIZE, PMPI_Comm_remote_size(comm, size));
}

EXPORT int MPI_Comm_size(MPI_Comm comm, int *size)
{
    SPMPI_REGION_CALL(FN_COMM_SIZE, PMPI_Comm_size(comm, size));
}

EXPORT int MPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    SPMPI_REGION_CALL(FN_COMM_TEST_INTER, PMPI_Comm_test_inter(comm, flag));
}

EXPORT int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    SPMPI_REGION_CALL(FN_GROUP_COMPARE, PMPI_Group_compare(group1, group2, result));
}

EXPORT int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    SPMPI_REGION_CALL(FN_GROUP_DIFFERENCE, PMPI_Group_difference(group1, group2, newgroup));
}

EXPORT int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    SPMPI_REGION_CALL(FN_GROUP_EXCL, PMPI_Group_excl(group, n, ranks, newgroup));
}

EXPORT int MPI_Group_free(MPI_Group *group)
{
    SPMPI_REGION_CALL(FN_GROUP_FREE, PMPI_Group_free(group));
}

EXPORT int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    SPMPI_REGION_CALL(FN_GROUP_INCL, PMPI_Group_incl(group, n, ranks, newgroup));
}

EXPORT int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    SPMPI_REGION_CALL(FN_GROUP_INTERSECTION, PMPI_Group_intersection(group1, group2, newgroup));
}

EXPORT int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    SPMPI_REGION_CALL(FN_GROUP_RANGE_EXCL, PMPI_Group_range_excl(group, n, ranges, newgroup));
}

EXPORT int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    SPMPI_REGION_CALL(FN_GROUP_RANGE_INCL, PMPI_Group_range_incl(group, n, ranges, newgroup));
}

EXPORT int MPI_Group_rank(MPI_Group group, int *rank)
{
    SPMPI_REGION_CALL(FN_GROUP_RANK, PMPI_Group_rank(group, rank));
}

EXPORT int MPI_Group_size(MPI_Group group, int *size)
{
    SPMPI_REGION_CALL(FN_GROUP_SIZE, PMPI_Group_size(group, size));
}

EXPORT int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
    SPMPI_REGION_CALL(FN_GROUP_TRANSLATE_RANKS, PMPI_Group_translate_ranks(group1, n, ranks1, group2, ranks2));
}

EXPORT int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    SPMPI_REGION_CALL(FN_GROUP_UNION, PMPI_Group_union(group1, group2, newgroup));
}

EXPORT int MPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    SPMPI_REGION_CALL(FN_COMM_GET_NAME, PMPI_Comm_get_name(comm, comm_name, resultlen));
}

EXPORT int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    SPMPI_REGION_CALL(FN_COMM_GET_ATTR, PMPI_Comm_get_attr(comm, comm_keyval, attribute_val, flag));
}

EXPORT int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    SPMPI_REGION_CALL(FN_COMM_SET_ATTR, PMPI_Comm_set_attr(comm, comm_keyval, attribute_val));
}

EXPORT int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    SPMPI_REGION_CALL(FN_COMM_DELETE_ATTR, PMPI_Comm_delete_attr(comm, comm_keyval));
}

EXPORT int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn, MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval, void *extra_state)
{
    SPMPI_REGION_CALL(FN_COMM_CREATE_KEYVAL, PMPI_Comm_create_keyval(comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state));
}

EXPORT int MPI_Comm_free_keyval(int *comm_keyval)
{
    SPMPI_REGION_CALL(FN_COMM_FREE_KEYVAL, PMPI_Comm_free_keyval(comm_keyval));
}

EXPORT int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    SPMPI_REGION_CALL(FN_COMM_GET_INFO, PMPI_Comm_get_info(comm, info_used));
}

EXPORT int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    SPMPI_REGION_CALL(FN_COMM_SET_INFO, PMPI_Comm_set_info(comm, info));
}

EXPORT int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    SPMPI_REGION_CALL(FN_COMM_SET_ERRHANDLER, PMPI_Comm_set_errhandler(comm, errhandler));
}

EXPORT int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *erhandler)
{
    SPMPI_REGION_CALL(FN_COMM_GET_ERRHANDLER, PMPI_Comm_get_errhandler(comm, erhandler));
}

EXPORT int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    SPMPI_REGION_CALL(FN_COMM_CALL_ERRHANDLER, PMPI_Comm_call_errhandler(comm, errorcode));
}

EXPORT int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    SPMPI_REGION_CALL(FN_CART_COORDS, PMPI_Cart_coords(comm, rank, maxdims, coords));
}

EXPORT int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    SPMPI_REGION_CALL(FN_CART_GET, PMPI_Cart_get(comm, maxdims, dims, periods, coords));
}

EXPORT int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    SPMPI_REGION_CALL(FN_CART_RANK, PMPI_Cart_rank(comm, coords, rank));
}

EXPORT int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    SPMPI_REGION_CALL(FN_CART_SHIFT, PMPI_Cart_shift(comm, direction, disp, rank_source, rank_dest));
}

EXPORT int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    SPMPI_REGION_CALL(FN_CART_MAP, PMPI_Cart_map(comm, ndims, dims, periods, newrank));
}

EXPORT int MPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    SPMPI_REGION_CALL(FN_CARTDIM_GET, PMPI_Cartdim_get(comm, ndims));
}

EXPORT int MPI_Dims_create(int nnodes, int ndims, int dims[])
{
    SPMPI_REGION_CALL(FN_DIMS_CREATE, PMPI_Dims_create(nnodes, ndims, dims));
}

EXPORT int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    SPMPI_REGION_CALL(FN_GRAPH_GET, PMPI_Graph_get(comm, maxindex, maxedges, index, edges));
}

EXPORT int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    SPMPI_REGION_CALL(FN_GRAPH_MAP, PMPI_Graph_map(comm, nnodes, index, edges, newrank));
}

EXPORT int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    SPMPI_REGION_CALL(FN_GRAPH_NEIGHBORS, PMPI_Graph_neighbors(comm, rank, maxneighbors, neighbors));
}

EXPORT int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    SPMPI_REGION_CALL(FN_GRAPH_NEIGHBORS_COUNT, PMPI_Graph_neighbors_count(comm, rank, nneighbors));
}

EXPORT int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    SPMPI_REGION_CALL(FN_GRAPHDIMS_GET, PMPI_Graphdims_get(comm, nnodes, nedges));
}

EXPORT int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree, int destinations[], int destweights[])
{
    SPMPI_REGION_CALL(FN_DIST_GRAPH_NEIGHBORS, PMPI_Dist_graph_neighbors(comm, maxindegree, sources, sourceweights, maxoutdegree, destinations, destweights));
}

EXPORT int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *inneighbors, int *outneighbors, int *weighted)
{
    SPMPI_REGION_CALL(FN_DIST_GRAPH_NEIGHBORS_COUNT, PMPI_Dist_graph_neighbors_count(comm, inneighbors, outneighbors, weighted));
}

EXPORT int MPI_Topo_test(MPI_Comm comm, int *status)
{
    SPMPI_REGION_CALL(FN_TOPO_TEST, PMPI_Topo_test(comm, status));
}

EXPORT int MPI_Type_commit(MPI_Datatype *type)
{
    SPMPI_REGION_CALL(FN_TYPE_COMMIT, PMPI_Type_commit(type));
}

EXPORT int MPI_Type_free(MPI_Datatype *type)
{
    SPMPI_REGION_CALL(FN_TYPE_FREE, PMPI_Type_free(type));
}

EXPORT int MPI_Type_size(MPI_Datatype type, int *size)
{
    SPMPI_REGION_CALL(FN_TYPE_SIZE, PMPI_Type_size(type, size));
}

EXPORT int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    SPMPI_REGION_CALL(FN_TYPE_CONTIGUOUS, PMPI_Type_contiguous(count, oldtype, newtype));
}

EXPORT int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    SPMPI_REGION_CALL(FN_TYPE_VECTOR, PMPI_Type_vector(count, blocklength, stride, oldtype, newtype));
}

EXPORT int MPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    SPMPI_REGION_CALL(FN_TYPE_INDEXED, PMPI_Type_indexed(count, array_of_blocklengths, array_of_displacements, oldtype, newtype));
}

EXPORT int MPI_Type_create_struct(int count, const int array_of_block_lengths[], const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    SPMPI_REGION_CALL(FN_TYPE_CREATE_STRUCT, PMPI_Type_create_struct(count, array_of_block_lengths, array_of_displacements, array_of_types, newtype));
}

EXPORT int MPI_Type_create_subarray(int ndims, const int size_array[], const int subsize_array[], const int start_array[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    SPMPI_REGION_CALL(FN_TYPE_CREATE_SUBARRAY, PMPI_Type_create_subarray(ndims, size_array, subsize_array, start_array, order, oldtype, newtype));
}

EXPORT int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
    SPMPI_REGION_CALL(FN_TYPE_CREATE_RESIZED, PMPI_Type_create_resized(oldtype, lb, extent, newtype));
}

EXPORT int MPI_Type_dup(MPI_Datatype type, MPI_Datatype *newtype)
{
    SPMPI_REGION_CALL(FN_TYPE_DUP, PMPI_Type_dup(type, newtype));
}

EXPORT int MPI_Type_get_extent(MPI_Datatype type, MPI_Aint *lb, MPI_Aint *extent)
{
    SPMPI_REGION_CALL(FN_TYPE_GET_EXTENT, PMPI_Type_get_extent(type, lb, extent));
}

EXPORT int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    SPMPI_REGION_CALL(FN_TYPE_GET_TRUE_EXTENT, PMPI_Type_get_true_extent(datatype, true_lb, true_extent));
}

EXPORT int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position, MPI_Comm comm)
{
    SPMPI_REGION_CALL(FN_PACK, PMPI_Pack(inbuf, incount, datatype, outbuf, outsize, position, comm));
}

EXPORT int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    SPMPI_REGION_CALL(FN_UNPACK, PMPI_Unpack(inbuf, insize, position, outbuf, outcount, datatype, comm));
}

EXPORT int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    SPMPI_REGION_CALL(FN_PACK_SIZE, PMPI_Pack_size(incount, datatype, comm, size));
}

EXPORT int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    SPMPI_REGION_CALL(FN_ALLOC_MEM, PMPI_Alloc_mem(size, info, baseptr));
}

EXPORT int MPI_Free_mem(void *base)
{
    SPMPI_REGION_CALL(FN_FREE_MEM, PMPI_Free_mem(base));
}

EXPORT int MPI_Get_address(const void *location, MPI_Aint *address)
{
    SPMPI_REGION_CALL(FN_GET_ADDRESS, PMPI_Get_address(location, address));
}

EXPORT int MPI_Info_create(MPI_Info *info)
{
    SPMPI_REGION_CALL(FN_INFO_CREATE, PMPI_Info_create(info));
}

EXPORT int MPI_Info_free(MPI_Info *info)
{
    SPMPI_REGION_CALL(FN_INFO_FREE, PMPI_Info_free(info));
}

EXPORT int MPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    SPMPI_REGION_CALL(FN_INFO_SET, PMPI_Info_set(info, key, value));
}

EXPORT int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    SPMPI_REGION_CALL(FN_INFO_GET, PMPI_Info_get(info, key, valuelen, value, flag));
}

EXPORT int MPI_Info_delete(MPI_Info info, const char *key)
{
    SPMPI_REGION_CALL(FN_INFO_DELETE, PMPI_Info_delete(info, key));
}

EXPORT int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    SPMPI_REGION_CALL(FN_INFO_DUP, PMPI_Info_dup(info, newinfo));
}

EXPORT int MPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    SPMPI_REGION_CALL(FN_INFO_GET_NKEYS, PMPI_Info_get_nkeys(info, nkeys));
}

EXPORT int MPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    SPMPI_REGION_CALL(FN_INFO_GET_NTHKEY, PMPI_Info_get_nthkey(info, n, key));
}

EXPORT int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    SPMPI_REGION_CALL(FN_INFO_GET_VALUELEN, PMPI_Info_get_valuelen(info, key, valuelen, flag));
}

EXPORT int MPI_Op_create(MPI_User_function *function, int commute, MPI_Op *op)
{
    SPMPI_REGION_CALL(FN_OP_CREATE, PMPI_Op_create(function, commute, op));
}

EXPORT int MPI_Op_free(MPI_Op *op)
{
    SPMPI_REGION_CALL(FN_OP_FREE, PMPI_Op_free(op));
}

EXPORT int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    SPMPI_REGION_CALL(FN_GET_COUNT, PMPI_Get_count(status, datatype, count));
}

EXPORT int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    SPMPI_REGION_CALL(FN_GET_ELEMENTS, PMPI_Get_elements(status, datatype, count));
}

EXPORT int MPI_Get_processor_name(char *name, int *resultlen)
{
    SPMPI_REGION_CALL(FN_GET_PROCESSOR_NAME, PMPI_Get_processor_name(name, resultlen));
}

EXPORT int MPI_Get_version(int *version, int *subversion)
{
    SPMPI_REGION_CALL(FN_GET_VERSION, PMPI_Get_version(version, subversion));
}

EXPORT int MPI_Pcontrol(const int level, ...)
{
    SPMPI_REGION_CALL(FN_PCONTROL, PMPI_Pcontrol(level));
}

static double timer(int fn, double (*call)(void))
{
    spmpi_enter(fn);
    double value = call();
    sp_location *loc = spmpi_after(fn);
    if (loc)
        spmpi_leave(loc, fn);
    return value;
}

EXPORT double MPI_Wtime(void)
{
    return timer(FN_WTIME, PMPI_Wtime);
}

EXPORT double MPI_Wtick(void)
{
    return timer(FN_WTICK, PMPI_Wtick);
}
