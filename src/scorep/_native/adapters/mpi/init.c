/* MPI_Init, MPI_Finalize and MPI_Abort: where the rank joins the measurement's group and
 * where it writes; SCOREP_MPI_ENABLE_GROUPS is read at MPI_Init. */
#include "adapters/mpi/mpi_adapter.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

MPI_Comm spmpi_tool_comm = MPI_COMM_NULL;
MPI_Group spmpi_world_group = MPI_GROUP_NULL;
int spmpi_world_rank, spmpi_world_size;
uint32_t spmpi_world;

/* The group the core writes with; lives until the process ends (the core keeps a copy). */
static sp_ipc world_ipc;

static const struct {
    const char *name;
    uint32_t bits;
} group_names[] = {
    {"all", G_ALL},   {"default", G_DEFAULT}, {"cg", G_CG},       {"coll", G_COLL},
    {"env", G_ENV},   {"err", G_ERR},         {"ext", G_EXT},     {"io", G_IO},
    {"misc", G_MISC}, {"p2p", G_P2P},         {"perf", G_PERF},   {"rma", G_RMA},
    {"spawn", G_SPAWN}, {"topo", G_TOPO},     {"type", G_TYPE},   {"xnonblock", G_XNONBLOCK},
    {"xreqtest", G_XREQTEST}, {"none", 0},
};

/* SCOREP_MPI_ENABLE_GROUPS as Score-P reads it: names separated by commas or blanks, any
 * case, quotes ignored; "~name" takes a group away. The Python side has checked the names;
 * an unknown one is skipped here. */
uint32_t spmpi_parse_groups(const char *text)
{
    if (!text || !*text)
        return G_DEFAULT;
    uint32_t bits = 0;
    bool any = false;
    while (*text) {
        while (*text && (isspace((unsigned char)*text) || strchr(",;:'\"", *text)))
            text++;
        bool remove = *text == '~';
        if (remove)
            text++;
        size_t len = 0;
        while (text[len] && !isspace((unsigned char)text[len]) && !strchr(",;:'\"", text[len]))
            len++;
        if (!len)
            continue;
        for (size_t i = 0; i < sizeof group_names / sizeof group_names[0]; i++) {
            if (strlen(group_names[i].name) == len &&
                strncasecmp(group_names[i].name, text, len) == 0) {
                if (remove)
                    bits &= ~group_names[i].bits;
                else
                    bits |= group_names[i].bits;
                any = true;
            }
        }
        text += len;
    }
    return any ? bits : G_DEFAULT;
}

static void initialized(int requested, int provided)
{
    PMPI_Comm_rank(MPI_COMM_WORLD, &spmpi_world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &spmpi_world_size);
    PMPI_Comm_group(MPI_COMM_WORLD, &spmpi_world_group);
    PMPI_Comm_dup(MPI_COMM_WORLD, &spmpi_tool_comm);
    /* A failure of the tool's own collectives is reported, never the end of the job. */
    PMPI_Comm_set_errhandler(spmpi_tool_comm, MPI_ERRORS_RETURN);
    /* A world started by a measured parent learns its token and the parent's experiment
     * first (spawn.c). */
    spmpi_spawned_init();
    world_ipc = (sp_ipc){.ops = &spmpi_ipc_ops,
                         .ctx = NULL,
                         .rank = (uint32_t)spmpi_world_rank,
                         .size = (uint32_t)spmpi_world_size};
    char err[8192] = "";
    if (sp_mpi_initialized(&world_ipc, spmpi_world, requested, provided, err, sizeof err) != 0 &&
        spmpi_world_rank == 0) {
        /* The program goes on (it is inside MPI_Init on every rank: stopping it would be
         * MPI_Abort of the user's job); without the group's directory each rank writes as
         * when MPI is never initialized (measure/session.py, _prepare_without_mpi). */
        fprintf(stderr, "scorep: %s; each rank writes an experiment of its own, that name "
                        "with -rank<N>\n", err);
        fflush(stderr);
    }
    spmpi_define_world();
}

/* As Score-P: MPI_Init creates MPI_COMM_WORLD, a collective (CREATE_HANDLE) of all ranks. */
static void init_begin(int fn)
{
    spmpi_enter(fn);
    sp_location *loc = spmpi_after(fn);
    if (loc) {
        sp_mpi_collective_begin(loc, sp_clock_now());
        sp_event_section_end(loc);
    }
}

static void init_end(int fn, int status)
{
    sp_location *loc = spmpi_after(fn);
    if (!loc)
        return;
    if (status == MPI_SUCCESS) {
        uint32_t world = spmpi_comm_id(MPI_COMM_WORLD);
        spmpi_record_comm_creation(loc, world, world);
    }
    spmpi_leave(loc, fn);
}

EXPORT int MPI_Init(int *argc, char ***argv)
{
    init_begin(FN_INIT);
    int status = PMPI_Init(argc, argv);
    if (status == MPI_SUCCESS)
        initialized(-1, -1);
    init_end(FN_INIT, status);
    return status;
}

EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    init_begin(FN_INIT_THREAD);
    int status = PMPI_Init_thread(argc, argv, required, provided);
    if (status == MPI_SUCCESS)
        initialized(required, *provided);
    init_end(FN_INIT_THREAD, status);
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
    spmpi_enter(FN_ABORT);
    sp_mpi_aborting(errorcode);
    return PMPI_Abort(comm, errorcode);
}

EXPORT int MPI_Initialized(int *flag)
{
    SPMPI_REGION_CALL(FN_INITIALIZED, PMPI_Initialized(flag));
}

EXPORT int MPI_Finalized(int *flag)
{
    SPMPI_REGION_CALL(FN_FINALIZED, PMPI_Finalized(flag));
}

EXPORT int MPI_Query_thread(int *provided)
{
    SPMPI_REGION_CALL(FN_QUERY_THREAD, PMPI_Query_thread(provided));
}

EXPORT int MPI_Is_thread_main(int *flag)
{
    SPMPI_REGION_CALL(FN_IS_THREAD_MAIN, PMPI_Is_thread_main(flag));
}

EXPORT int MPI_Get_library_version(char *version, int *resultlen)
{
    SPMPI_REGION_CALL(FN_GET_LIBRARY_VERSION, PMPI_Get_library_version(version, resultlen));
}
