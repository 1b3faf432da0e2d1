/* Every MPI function the adapter wraps: its region name, its region role and the
 * SCOREP_MPI_ENABLE_GROUPS groups that must all be enabled for it to be recorded.
 * The groups are Score-P's (src/adapters/mpi/SCOREP_Mpi_Reg.c registers each function
 * under one group, or under two for the "derived" ones such as CG_EXT = cg and ext). */
#ifndef SCOREP_ADAPTERS_MPI_FUNCTIONS_H
#define SCOREP_ADAPTERS_MPI_FUNCTIONS_H

/* Score-P's groups, one bit each. */
enum {
    G_CG = 1 << 0,
    G_COLL = 1 << 1,
    G_ENV = 1 << 2,
    G_ERR = 1 << 3,
    G_EXT = 1 << 4,
    G_IO = 1 << 5,
    G_MISC = 1 << 6,
    G_P2P = 1 << 7,
    G_PERF = 1 << 8,
    G_RMA = 1 << 9,
    G_SPAWN = 1 << 10,
    G_TOPO = 1 << 11,
    G_TYPE = 1 << 12,
    G_XNONBLOCK = 1 << 13,
    G_XREQTEST = 1 << 14,
    G_ALL = (1 << 15) - 1,
    /* Score-P's default: cg, coll, env, io, p2p, rma, topo, xnonblock. */
    G_DEFAULT = G_CG | G_COLL | G_ENV | G_IO | G_P2P | G_RMA | G_TOPO | G_XNONBLOCK,
};

/* X(ID, name, role, groups) */
#define SPMPI_FUNCTIONS(X)                                                                     \
    /* environment */                                                                          \
    X(INIT, "MPI_Init", FUNCTION, G_ENV)                                                       \
    X(INIT_THREAD, "MPI_Init_thread", FUNCTION, G_ENV)                                         \
    X(FINALIZE, "MPI_Finalize", FUNCTION, G_ENV)                                               \
    X(INITIALIZED, "MPI_Initialized", FUNCTION, G_ENV)                                         \
    X(FINALIZED, "MPI_Finalized", FUNCTION, G_ENV)                                             \
    X(QUERY_THREAD, "MPI_Query_thread", FUNCTION, G_ENV)                                       \
    X(IS_THREAD_MAIN, "MPI_Is_thread_main", FUNCTION, G_ENV)                                   \
    X(GET_LIBRARY_VERSION, "MPI_Get_library_version", FUNCTION, G_ENV)                         \
    X(ABORT, "MPI_Abort", FUNCTION, G_EXT)                                                     \
    X(WTIME, "MPI_Wtime", FUNCTION, G_EXT)                                                     \
    X(WTICK, "MPI_Wtick", FUNCTION, G_EXT)                                                     \
    X(GET_COUNT, "MPI_Get_count", FUNCTION, G_EXT)                                             \
    X(GET_ELEMENTS, "MPI_Get_elements", FUNCTION, G_EXT)                                       \
    X(GET_PROCESSOR_NAME, "MPI_Get_processor_name", FUNCTION, G_EXT)                           \
    X(GET_VERSION, "MPI_Get_version", FUNCTION, G_EXT)                                         \
    X(PCONTROL, "MPI_Pcontrol", FUNCTION, G_PERF)                                              \
    /* point to point */                                                                       \
    X(SEND, "MPI_Send", POINT2POINT, G_P2P)                                                    \
    X(SSEND, "MPI_Ssend", POINT2POINT, G_P2P)                                                  \
    X(BSEND, "MPI_Bsend", POINT2POINT, G_P2P)                                                  \
    X(RSEND, "MPI_Rsend", POINT2POINT, G_P2P)                                                  \
    X(RECV, "MPI_Recv", POINT2POINT, G_P2P)                                                    \
    X(SENDRECV, "MPI_Sendrecv", POINT2POINT, G_P2P)                                            \
    X(SENDRECV_REPLACE, "MPI_Sendrecv_replace", POINT2POINT, G_P2P)                            \
    X(ISEND, "MPI_Isend", POINT2POINT, G_P2P)                                                  \
    X(ISSEND, "MPI_Issend", POINT2POINT, G_P2P)                                                \
    X(IBSEND, "MPI_Ibsend", POINT2POINT, G_P2P)                                                \
    X(IRSEND, "MPI_Irsend", POINT2POINT, G_P2P)                                                \
    X(IRECV, "MPI_Irecv", POINT2POINT, G_P2P)                                                  \
    X(SEND_INIT, "MPI_Send_init", POINT2POINT, G_P2P)                                          \
    X(SSEND_INIT, "MPI_Ssend_init", POINT2POINT, G_P2P)                                        \
    X(BSEND_INIT, "MPI_Bsend_init", POINT2POINT, G_P2P)                                        \
    X(RSEND_INIT, "MPI_Rsend_init", POINT2POINT, G_P2P)                                        \
    X(RECV_INIT, "MPI_Recv_init", POINT2POINT, G_P2P)                                          \
    X(START, "MPI_Start", POINT2POINT, G_P2P)                                                  \
    X(STARTALL, "MPI_Startall", POINT2POINT, G_P2P)                                            \
    X(PROBE, "MPI_Probe", POINT2POINT, G_P2P)                                                  \
    X(IPROBE, "MPI_Iprobe", POINT2POINT, G_P2P)                                                \
    X(MPROBE, "MPI_Mprobe", POINT2POINT, G_P2P)                                                \
    X(IMPROBE, "MPI_Improbe", POINT2POINT, G_P2P)                                              \
    X(MRECV, "MPI_Mrecv", POINT2POINT, G_P2P)                                                  \
    X(IMRECV, "MPI_Imrecv", POINT2POINT, G_P2P)                                                \
    X(WAIT, "MPI_Wait", POINT2POINT, G_P2P)                                                    \
    X(WAITALL, "MPI_Waitall", POINT2POINT, G_P2P)                                              \
    X(WAITANY, "MPI_Waitany", POINT2POINT, G_P2P)                                              \
    X(WAITSOME, "MPI_Waitsome", POINT2POINT, G_P2P)                                            \
    X(TEST, "MPI_Test", POINT2POINT, G_P2P)                                                    \
    X(TESTALL, "MPI_Testall", POINT2POINT, G_P2P)                                              \
    X(TESTANY, "MPI_Testany", POINT2POINT, G_P2P)                                              \
    X(TESTSOME, "MPI_Testsome", POINT2POINT, G_P2P)                                            \
    X(CANCEL, "MPI_Cancel", POINT2POINT, G_P2P)                                                \
    X(TEST_CANCELLED, "MPI_Test_cancelled", POINT2POINT, G_P2P)                                \
    X(REQUEST_FREE, "MPI_Request_free", POINT2POINT, G_P2P)                                    \
    X(REQUEST_GET_STATUS, "MPI_Request_get_status", POINT2POINT, G_P2P)                        \
    X(BUFFER_ATTACH, "MPI_Buffer_attach", FUNCTION, G_P2P)                                     \
    X(BUFFER_DETACH, "MPI_Buffer_detach", FUNCTION, G_P2P)                                     \
    /* collectives */                                                                          \
    X(BARRIER, "MPI_Barrier", BARRIER, G_COLL)                                                 \
    X(BCAST, "MPI_Bcast", COLL_ONE2ALL, G_COLL)                                                \
    X(REDUCE, "MPI_Reduce", COLL_ALL2ONE, G_COLL)                                              \
    X(ALLREDUCE, "MPI_Allreduce", COLL_ALL2ALL, G_COLL)                                        \
    X(GATHER, "MPI_Gather", COLL_ALL2ONE, G_COLL)                                              \
    X(GATHERV, "MPI_Gatherv", COLL_ALL2ONE, G_COLL)                                            \
    X(SCATTER, "MPI_Scatter", COLL_ONE2ALL, G_COLL)                                            \
    X(SCATTERV, "MPI_Scatterv", COLL_ONE2ALL, G_COLL)                                          \
    X(ALLGATHER, "MPI_Allgather", COLL_ALL2ALL, G_COLL)                                        \
    X(ALLGATHERV, "MPI_Allgatherv", COLL_ALL2ALL, G_COLL)                                      \
    X(ALLTOALL, "MPI_Alltoall", COLL_ALL2ALL, G_COLL)                                          \
    X(ALLTOALLV, "MPI_Alltoallv", COLL_ALL2ALL, G_COLL)                                        \
    X(ALLTOALLW, "MPI_Alltoallw", COLL_ALL2ALL, G_COLL)                                        \
    X(REDUCE_SCATTER, "MPI_Reduce_scatter", COLL_OTHER, G_COLL)                                \
    X(REDUCE_SCATTER_BLOCK, "MPI_Reduce_scatter_block", COLL_OTHER, G_COLL)                    \
    X(SCAN, "MPI_Scan", COLL_OTHER, G_COLL)                                                    \
    X(EXSCAN, "MPI_Exscan", COLL_OTHER, G_COLL)                                                \
    X(REDUCE_LOCAL, "MPI_Reduce_local", FUNCTION, G_COLL)                                      \
    X(IBARRIER, "MPI_Ibarrier", BARRIER, G_COLL)                                               \
    X(IBCAST, "MPI_Ibcast", COLL_ONE2ALL, G_COLL)                                              \
    X(IREDUCE, "MPI_Ireduce", COLL_ALL2ONE, G_COLL)                                            \
    X(IALLREDUCE, "MPI_Iallreduce", COLL_ALL2ALL, G_COLL)                                      \
    X(IGATHER, "MPI_Igather", COLL_ALL2ONE, G_COLL)                                            \
    X(IGATHERV, "MPI_Igatherv", COLL_ALL2ONE, G_COLL)                                          \
    X(ISCATTER, "MPI_Iscatter", COLL_ONE2ALL, G_COLL)                                          \
    X(ISCATTERV, "MPI_Iscatterv", COLL_ONE2ALL, G_COLL)                                        \
    X(IALLGATHER, "MPI_Iallgather", COLL_ALL2ALL, G_COLL)                                      \
    X(IALLGATHERV, "MPI_Iallgatherv", COLL_ALL2ALL, G_COLL)                                    \
    X(IALLTOALL, "MPI_Ialltoall", COLL_ALL2ALL, G_COLL)                                        \
    X(IALLTOALLV, "MPI_Ialltoallv", COLL_ALL2ALL, G_COLL)                                      \
    X(IALLTOALLW, "MPI_Ialltoallw", COLL_ALL2ALL, G_COLL)                                      \
    X(IREDUCE_SCATTER, "MPI_Ireduce_scatter", COLL_OTHER, G_COLL)                              \
    X(IREDUCE_SCATTER_BLOCK, "MPI_Ireduce_scatter_block", COLL_OTHER, G_COLL)                  \
    X(ISCAN, "MPI_Iscan", COLL_OTHER, G_COLL)                                                  \
    X(IEXSCAN, "MPI_Iexscan", COLL_OTHER, G_COLL)                                              \
    /* communicators and groups */                                                             \
    X(COMM_COMPARE, "MPI_Comm_compare", FUNCTION, G_CG)                                        \
    X(COMM_CREATE, "MPI_Comm_create", FUNCTION, G_CG)                                          \
    X(COMM_CREATE_GROUP, "MPI_Comm_create_group", FUNCTION, G_CG)                              \
    X(COMM_DUP, "MPI_Comm_dup", FUNCTION, G_CG)                                                \
    X(COMM_DUP_WITH_INFO, "MPI_Comm_dup_with_info", FUNCTION, G_CG)                            \
    X(COMM_IDUP, "MPI_Comm_idup", FUNCTION, G_CG)                                              \
    X(COMM_FREE, "MPI_Comm_free", FUNCTION, G_CG)                                              \
    X(COMM_GROUP, "MPI_Comm_group", FUNCTION, G_CG)                                            \
    X(COMM_RANK, "MPI_Comm_rank", FUNCTION, G_CG)                                              \
    X(COMM_REMOTE_GROUP, "MPI_Comm_remote_group", FUNCTION, G_CG)                              \
    X(COMM_REMOTE_SIZE, "MPI_Comm_remote_size", FUNCTION, G_CG)                                \
    X(COMM_SIZE, "MPI_Comm_size", FUNCTION, G_CG)                                              \
    X(COMM_SPLIT, "MPI_Comm_split", FUNCTION, G_CG)                                            \
    X(COMM_SPLIT_TYPE, "MPI_Comm_split_type", FUNCTION, G_CG)                                  \
    X(COMM_TEST_INTER, "MPI_Comm_test_inter", FUNCTION, G_CG)                                  \
    X(GROUP_COMPARE, "MPI_Group_compare", FUNCTION, G_CG)                                      \
    X(GROUP_DIFFERENCE, "MPI_Group_difference", FUNCTION, G_CG)                                \
    X(GROUP_EXCL, "MPI_Group_excl", FUNCTION, G_CG)                                            \
    X(GROUP_FREE, "MPI_Group_free", FUNCTION, G_CG)                                            \
    X(GROUP_INCL, "MPI_Group_incl", FUNCTION, G_CG)                                            \
    X(GROUP_INTERSECTION, "MPI_Group_intersection", FUNCTION, G_CG)                            \
    X(GROUP_RANGE_EXCL, "MPI_Group_range_excl", FUNCTION, G_CG)                                \
    X(GROUP_RANGE_INCL, "MPI_Group_range_incl", FUNCTION, G_CG)                                \
    X(GROUP_RANK, "MPI_Group_rank", FUNCTION, G_CG)                                            \
    X(GROUP_SIZE, "MPI_Group_size", FUNCTION, G_CG)                                            \
    X(GROUP_TRANSLATE_RANKS, "MPI_Group_translate_ranks", FUNCTION, G_CG)                      \
    X(GROUP_UNION, "MPI_Group_union", FUNCTION, G_CG)                                          \
    X(INTERCOMM_CREATE, "MPI_Intercomm_create", FUNCTION, G_CG)                                \
    X(INTERCOMM_MERGE, "MPI_Intercomm_merge", FUNCTION, G_CG)                                  \
    X(COMM_SET_NAME, "MPI_Comm_set_name", FUNCTION, G_CG | G_EXT)                              \
    X(COMM_GET_NAME, "MPI_Comm_get_name", FUNCTION, G_CG | G_EXT)                              \
    X(COMM_GET_ATTR, "MPI_Comm_get_attr", FUNCTION, G_CG | G_EXT)                              \
    X(COMM_SET_ATTR, "MPI_Comm_set_attr", FUNCTION, G_CG | G_EXT)                              \
    X(COMM_DELETE_ATTR, "MPI_Comm_delete_attr", FUNCTION, G_CG | G_EXT)                        \
    X(COMM_CREATE_KEYVAL, "MPI_Comm_create_keyval", FUNCTION, G_CG | G_EXT)                    \
    X(COMM_FREE_KEYVAL, "MPI_Comm_free_keyval", FUNCTION, G_CG | G_EXT)                        \
    X(COMM_GET_INFO, "MPI_Comm_get_info", FUNCTION, G_CG | G_EXT)                              \
    X(COMM_SET_INFO, "MPI_Comm_set_info", FUNCTION, G_CG | G_EXT)                              \
    X(COMM_SET_ERRHANDLER, "MPI_Comm_set_errhandler", FUNCTION, G_CG | G_ERR)                  \
    X(COMM_GET_ERRHANDLER, "MPI_Comm_get_errhandler", FUNCTION, G_CG | G_ERR)                  \
    X(COMM_CALL_ERRHANDLER, "MPI_Comm_call_errhandler", FUNCTION, G_CG | G_ERR)                \
    /* topologies */                                                                           \
    X(CART_CREATE, "MPI_Cart_create", FUNCTION, G_TOPO)                                        \
    X(CART_SUB, "MPI_Cart_sub", FUNCTION, G_TOPO)                                              \
    X(CART_COORDS, "MPI_Cart_coords", FUNCTION, G_TOPO)                                        \
    X(CART_GET, "MPI_Cart_get", FUNCTION, G_TOPO)                                              \
    X(CART_RANK, "MPI_Cart_rank", FUNCTION, G_TOPO)                                            \
    X(CART_SHIFT, "MPI_Cart_shift", FUNCTION, G_TOPO)                                          \
    X(CART_MAP, "MPI_Cart_map", FUNCTION, G_TOPO)                                              \
    X(CARTDIM_GET, "MPI_Cartdim_get", FUNCTION, G_TOPO)                                        \
    X(DIMS_CREATE, "MPI_Dims_create", FUNCTION, G_TOPO)                                        \
    X(GRAPH_CREATE, "MPI_Graph_create", FUNCTION, G_TOPO)                                      \
    X(GRAPH_GET, "MPI_Graph_get", FUNCTION, G_TOPO)                                            \
    X(GRAPH_MAP, "MPI_Graph_map", FUNCTION, G_TOPO)                                            \
    X(GRAPH_NEIGHBORS, "MPI_Graph_neighbors", FUNCTION, G_TOPO)                                \
    X(GRAPH_NEIGHBORS_COUNT, "MPI_Graph_neighbors_count", FUNCTION, G_TOPO)                    \
    X(GRAPHDIMS_GET, "MPI_Graphdims_get", FUNCTION, G_TOPO)                                    \
    X(DIST_GRAPH_CREATE, "MPI_Dist_graph_create", FUNCTION, G_TOPO)                            \
    X(DIST_GRAPH_CREATE_ADJACENT, "MPI_Dist_graph_create_adjacent", FUNCTION, G_TOPO)          \
    X(DIST_GRAPH_NEIGHBORS, "MPI_Dist_graph_neighbors", FUNCTION, G_TOPO)                      \
    X(DIST_GRAPH_NEIGHBORS_COUNT, "MPI_Dist_graph_neighbors_count", FUNCTION, G_TOPO)          \
    X(TOPO_TEST, "MPI_Topo_test", FUNCTION, G_TOPO)                                            \
    /* one-sided */                                                                            \
    X(WIN_CREATE, "MPI_Win_create", FUNCTION, G_RMA)                                           \
    X(WIN_ALLOCATE, "MPI_Win_allocate", FUNCTION, G_RMA)                                       \
    X(WIN_ALLOCATE_SHARED, "MPI_Win_allocate_shared", FUNCTION, G_RMA)                         \
    X(WIN_CREATE_DYNAMIC, "MPI_Win_create_dynamic", FUNCTION, G_RMA)                           \
    X(WIN_FREE, "MPI_Win_free", FUNCTION, G_RMA)                                               \
    X(PUT, "MPI_Put", POINT2POINT, G_RMA)                                                      \
    X(GET, "MPI_Get", POINT2POINT, G_RMA)                                                      \
    X(ACCUMULATE, "MPI_Accumulate", POINT2POINT, G_RMA)                                        \
    X(GET_ACCUMULATE, "MPI_Get_accumulate", POINT2POINT, G_RMA)                                \
    X(FETCH_AND_OP, "MPI_Fetch_and_op", POINT2POINT, G_RMA)                                    \
    X(COMPARE_AND_SWAP, "MPI_Compare_and_swap", POINT2POINT, G_RMA)                            \
    X(RPUT, "MPI_Rput", POINT2POINT, G_RMA)                                                    \
    X(RGET, "MPI_Rget", POINT2POINT, G_RMA)                                                    \
    X(RACCUMULATE, "MPI_Raccumulate", POINT2POINT, G_RMA)                                      \
    X(RGET_ACCUMULATE, "MPI_Rget_accumulate", POINT2POINT, G_RMA)                              \
    X(WIN_FENCE, "MPI_Win_fence", BARRIER, G_RMA)                                              \
    X(WIN_LOCK, "MPI_Win_lock", FUNCTION, G_RMA)                                               \
    X(WIN_UNLOCK, "MPI_Win_unlock", FUNCTION, G_RMA)                                           \
    X(WIN_LOCK_ALL, "MPI_Win_lock_all", FUNCTION, G_RMA)                                       \
    X(WIN_UNLOCK_ALL, "MPI_Win_unlock_all", FUNCTION, G_RMA)                                   \
    X(WIN_FLUSH, "MPI_Win_flush", FUNCTION, G_RMA)                                             \
    X(WIN_FLUSH_ALL, "MPI_Win_flush_all", FUNCTION, G_RMA)                                     \
    X(WIN_FLUSH_LOCAL, "MPI_Win_flush_local", FUNCTION, G_RMA)                                 \
    X(WIN_FLUSH_LOCAL_ALL, "MPI_Win_flush_local_all", FUNCTION, G_RMA)                         \
    X(WIN_SYNC, "MPI_Win_sync", FUNCTION, G_RMA)                                               \
    X(WIN_POST, "MPI_Win_post", FUNCTION, G_RMA)                                               \
    X(WIN_START, "MPI_Win_start", FUNCTION, G_RMA)                                             \
    X(WIN_COMPLETE, "MPI_Win_complete", FUNCTION, G_RMA)                                       \
    X(WIN_WAIT, "MPI_Win_wait", FUNCTION, G_RMA)                                               \
    X(WIN_TEST, "MPI_Win_test", FUNCTION, G_RMA)                                               \
    X(WIN_GET_GROUP, "MPI_Win_get_group", FUNCTION, G_RMA)                                     \
    X(WIN_ATTACH, "MPI_Win_attach", FUNCTION, G_RMA)                                           \
    X(WIN_DETACH, "MPI_Win_detach", FUNCTION, G_RMA)                                           \
    X(WIN_SHARED_QUERY, "MPI_Win_shared_query", FUNCTION, G_RMA)                               \
    X(WIN_SET_NAME, "MPI_Win_set_name", FUNCTION, G_RMA | G_EXT)                               \
    X(WIN_GET_NAME, "MPI_Win_get_name", FUNCTION, G_RMA | G_EXT)                               \
    /* process management */                                                                   \
    X(COMM_SPAWN, "MPI_Comm_spawn", FUNCTION, G_SPAWN)                                         \
    X(COMM_SPAWN_MULTIPLE, "MPI_Comm_spawn_multiple", FUNCTION, G_SPAWN)                       \
    X(COMM_GET_PARENT, "MPI_Comm_get_parent", FUNCTION, G_SPAWN)                               \
    X(COMM_DISCONNECT, "MPI_Comm_disconnect", FUNCTION, G_SPAWN)                               \
    X(COMM_ACCEPT, "MPI_Comm_accept", FUNCTION, G_SPAWN)                                       \
    X(COMM_CONNECT, "MPI_Comm_connect", FUNCTION, G_SPAWN)                                     \
    X(OPEN_PORT, "MPI_Open_port", FUNCTION, G_SPAWN)                                           \
    X(CLOSE_PORT, "MPI_Close_port", FUNCTION, G_SPAWN)                                         \
    X(COMM_JOIN, "MPI_Comm_join", FUNCTION, G_SPAWN)                                           \
    /* datatypes */                                                                            \
    X(TYPE_COMMIT, "MPI_Type_commit", FUNCTION, G_TYPE)                                        \
    X(TYPE_FREE, "MPI_Type_free", FUNCTION, G_TYPE)                                            \
    X(TYPE_SIZE, "MPI_Type_size", FUNCTION, G_TYPE)                                            \
    X(TYPE_CONTIGUOUS, "MPI_Type_contiguous", FUNCTION, G_TYPE)                                \
    X(TYPE_VECTOR, "MPI_Type_vector", FUNCTION, G_TYPE)                                        \
    X(TYPE_INDEXED, "MPI_Type_indexed", FUNCTION, G_TYPE)                                      \
    X(TYPE_CREATE_STRUCT, "MPI_Type_create_struct", FUNCTION, G_TYPE)                          \
    X(TYPE_CREATE_SUBARRAY, "MPI_Type_create_subarray", FUNCTION, G_TYPE)                      \
    X(TYPE_CREATE_RESIZED, "MPI_Type_create_resized", FUNCTION, G_TYPE)                        \
    X(TYPE_DUP, "MPI_Type_dup", FUNCTION, G_TYPE)                                              \
    X(TYPE_GET_EXTENT, "MPI_Type_get_extent", FUNCTION, G_TYPE)                                \
    X(TYPE_GET_TRUE_EXTENT, "MPI_Type_get_true_extent", FUNCTION, G_TYPE)                      \
    X(PACK, "MPI_Pack", FUNCTION, G_TYPE)                                                      \
    X(UNPACK, "MPI_Unpack", FUNCTION, G_TYPE)                                                  \
    X(PACK_SIZE, "MPI_Pack_size", FUNCTION, G_TYPE)                                            \
    /* miscellaneous */                                                                        \
    X(ALLOC_MEM, "MPI_Alloc_mem", FUNCTION, G_MISC)                                            \
    X(FREE_MEM, "MPI_Free_mem", FUNCTION, G_MISC)                                              \
    X(GET_ADDRESS, "MPI_Get_address", FUNCTION, G_MISC)                                        \
    X(INFO_CREATE, "MPI_Info_create", FUNCTION, G_MISC)                                        \
    X(INFO_FREE, "MPI_Info_free", FUNCTION, G_MISC)                                            \
    X(INFO_SET, "MPI_Info_set", FUNCTION, G_MISC)                                              \
    X(INFO_GET, "MPI_Info_get", FUNCTION, G_MISC)                                              \
    X(INFO_DELETE, "MPI_Info_delete", FUNCTION, G_MISC)                                        \
    X(INFO_DUP, "MPI_Info_dup", FUNCTION, G_MISC)                                              \
    X(INFO_GET_NKEYS, "MPI_Info_get_nkeys", FUNCTION, G_MISC)                                  \
    X(INFO_GET_NTHKEY, "MPI_Info_get_nthkey", FUNCTION, G_MISC)                                \
    X(INFO_GET_VALUELEN, "MPI_Info_get_valuelen", FUNCTION, G_MISC)                            \
    X(OP_CREATE, "MPI_Op_create", FUNCTION, G_MISC)                                            \
    X(OP_FREE, "MPI_Op_free", FUNCTION, G_MISC)                                                \
    /* MPI-IO */                                                                               \
    SPMPI_IO_FUNCTIONS(X)

/* MPI-IO (io.c). */
#define SPMPI_IO_FUNCTIONS(X)                                                                  \
    X(FILE_OPEN, "MPI_File_open", FILE_IO, G_IO)                                               \
    X(FILE_CLOSE, "MPI_File_close", FILE_IO, G_IO)                                             \
    X(FILE_SEEK, "MPI_File_seek", FILE_IO, G_IO)                                               \
    X(FILE_SEEK_SHARED, "MPI_File_seek_shared", FILE_IO, G_IO)                                 \
    X(FILE_DELETE, "MPI_File_delete", FILE_IO, G_IO)                                           \
    X(FILE_SET_SIZE, "MPI_File_set_size", FILE_IO, G_IO)                                       \
    X(FILE_GET_SIZE, "MPI_File_get_size", FILE_IO, G_IO)                                       \
    X(FILE_PREALLOCATE, "MPI_File_preallocate", FILE_IO, G_IO)                                 \
    X(FILE_GET_GROUP, "MPI_File_get_group", FILE_IO, G_IO)                                     \
    X(FILE_GET_AMODE, "MPI_File_get_amode", FILE_IO, G_IO)                                     \
    X(FILE_SET_INFO, "MPI_File_set_info", FILE_IO, G_IO)                                       \
    X(FILE_GET_INFO, "MPI_File_get_info", FILE_IO, G_IO)                                       \
    X(FILE_SET_VIEW, "MPI_File_set_view", FILE_IO, G_IO)                                       \
    X(FILE_GET_VIEW, "MPI_File_get_view", FILE_IO, G_IO)                                       \
    X(FILE_GET_POSITION, "MPI_File_get_position", FILE_IO, G_IO)                               \
    X(FILE_GET_POSITION_SHARED, "MPI_File_get_position_shared", FILE_IO, G_IO)                 \
    X(FILE_GET_BYTE_OFFSET, "MPI_File_get_byte_offset", FILE_IO, G_IO)                         \
    X(FILE_GET_TYPE_EXTENT, "MPI_File_get_type_extent", FILE_IO, G_IO)                         \
    X(FILE_SET_ATOMICITY, "MPI_File_set_atomicity", FILE_IO, G_IO)                             \
    X(FILE_GET_ATOMICITY, "MPI_File_get_atomicity", FILE_IO, G_IO)                             \
    X(FILE_SYNC, "MPI_File_sync", FILE_IO, G_IO)                                               \
    X(FILE_CALL_ERRHANDLER, "MPI_File_call_errhandler", FILE_IO, G_IO | G_ERR)                 \
    X(FILE_CREATE_ERRHANDLER, "MPI_File_create_errhandler", FILE_IO, G_IO | G_ERR)             \
    X(FILE_SET_ERRHANDLER, "MPI_File_set_errhandler", FILE_IO, G_IO | G_ERR)                   \
    X(FILE_GET_ERRHANDLER, "MPI_File_get_errhandler", FILE_IO, G_IO | G_ERR)                   \
    X(FILE_READ, "MPI_File_read", FILE_IO, G_IO)                                               \
    X(FILE_READ_ALL, "MPI_File_read_all", FILE_IO, G_IO)                                       \
    X(FILE_READ_AT, "MPI_File_read_at", FILE_IO, G_IO)                                         \
    X(FILE_READ_AT_ALL, "MPI_File_read_at_all", FILE_IO, G_IO)                                 \
    X(FILE_READ_SHARED, "MPI_File_read_shared", FILE_IO, G_IO)                                 \
    X(FILE_READ_ORDERED, "MPI_File_read_ordered", FILE_IO, G_IO)                               \
    X(FILE_WRITE, "MPI_File_write", FILE_IO, G_IO)                                             \
    X(FILE_WRITE_ALL, "MPI_File_write_all", FILE_IO, G_IO)                                     \
    X(FILE_WRITE_AT, "MPI_File_write_at", FILE_IO, G_IO)                                       \
    X(FILE_WRITE_AT_ALL, "MPI_File_write_at_all", FILE_IO, G_IO)                               \
    X(FILE_WRITE_SHARED, "MPI_File_write_shared", FILE_IO, G_IO)                               \
    X(FILE_WRITE_ORDERED, "MPI_File_write_ordered", FILE_IO, G_IO)                             \
    X(FILE_IREAD, "MPI_File_iread", FILE_IO, G_IO)                                             \
    X(FILE_IREAD_ALL, "MPI_File_iread_all", FILE_IO, G_IO)                                     \
    X(FILE_IREAD_AT, "MPI_File_iread_at", FILE_IO, G_IO)                                       \
    X(FILE_IREAD_AT_ALL, "MPI_File_iread_at_all", FILE_IO, G_IO)                               \
    X(FILE_IREAD_SHARED, "MPI_File_iread_shared", FILE_IO, G_IO)                               \
    X(FILE_IWRITE, "MPI_File_iwrite", FILE_IO, G_IO)                                           \
    X(FILE_IWRITE_ALL, "MPI_File_iwrite_all", FILE_IO, G_IO)                                   \
    X(FILE_IWRITE_AT, "MPI_File_iwrite_at", FILE_IO, G_IO)                                     \
    X(FILE_IWRITE_AT_ALL, "MPI_File_iwrite_at_all", FILE_IO, G_IO)                             \
    X(FILE_IWRITE_SHARED, "MPI_File_iwrite_shared", FILE_IO, G_IO)                             \
    X(FILE_READ_ALL_BEGIN, "MPI_File_read_all_begin", FILE_IO, G_IO)                           \
    X(FILE_READ_ALL_END, "MPI_File_read_all_end", FILE_IO, G_IO)                               \
    X(FILE_READ_AT_ALL_BEGIN, "MPI_File_read_at_all_begin", FILE_IO, G_IO)                     \
    X(FILE_READ_AT_ALL_END, "MPI_File_read_at_all_end", FILE_IO, G_IO)                         \
    X(FILE_READ_ORDERED_BEGIN, "MPI_File_read_ordered_begin", FILE_IO, G_IO)                   \
    X(FILE_READ_ORDERED_END, "MPI_File_read_ordered_end", FILE_IO, G_IO)                       \
    X(FILE_WRITE_ALL_BEGIN, "MPI_File_write_all_begin", FILE_IO, G_IO)                         \
    X(FILE_WRITE_ALL_END, "MPI_File_write_all_end", FILE_IO, G_IO)                             \
    X(FILE_WRITE_AT_ALL_BEGIN, "MPI_File_write_at_all_begin", FILE_IO, G_IO)                   \
    X(FILE_WRITE_AT_ALL_END, "MPI_File_write_at_all_end", FILE_IO, G_IO)                       \
    X(FILE_WRITE_ORDERED_BEGIN, "MPI_File_write_ordered_begin", FILE_IO, G_IO)                 \
    X(FILE_WRITE_ORDERED_END, "MPI_File_write_ordered_end", FILE_IO, G_IO)

#define SPMPI_ENUM(ID, NAME, ROLE, GROUPS) FN_##ID,
enum { SPMPI_FUNCTIONS(SPMPI_ENUM) FN_COUNT };
#undef SPMPI_ENUM

#endif
