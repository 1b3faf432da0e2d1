/* Processes started with MPI_Comm_spawn / MPI_Comm_spawn_multiple (mpi4py.futures'
 * dynamic pool, or a program's own spawn) run under the same measurement and join the
 * parent's experiment:
 *
 * - the spawn of a Python interpreter is rewritten to start the program through the tool
 *   (python [its options] -m scorep <the parent's configuration> [the rest]);
 * - right after the spawn, parent and children shake hands over a duplicate of the new
 *   inter-communicator (never the program's): the children learn their world's token,
 *   the parent's experiment directory and their clock against the experiment's root; the
 *   parent announces the new world so the root waits for its parts; both sides define the
 *   inter-communicator together; the duplicate is disconnected again, so that the
 *   children end without the parent's help;
 * - each child writes its part of the experiment when it ends (core/part.h), and the
 *   root adopts the parts: their ranks become location groups "MPI Rank r (spawned k)".
 *
 * A spawn of anything else (a non-Python program) is left alone: its processes are not
 * measured, and the inter-communicator's other group stays unknown. */
#include "adapters/mpi/mpi_adapter.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/tables.h"

enum { HANDSHAKE_TAG = 4713, CLOCK_ROUNDS = 8 };

typedef struct {
    uint32_t token;
    int64_t root_offset_ns; /* the parent root's clock against the experiment's root */
    char boot[64];          /* the parent root's boot: the same one shares CLOCK_MONOTONIC */
    char dir[4096];
} spawn_info;

/* Spawns this process made. Global because PMPI wrappers carry no context. */
static _Atomic uint32_t spawn_counter;

/* ---- the command ------------------------------------------------------------------------- */

static bool is_python(const char *command)
{
    if (!command)
        return false;
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", command);
    if (strncmp(basename(copy), "python", 6) == 0)
        return true;
    char mine[PATH_MAX], theirs[PATH_MAX];
    return realpath("/proc/self/exe", mine) && realpath(command, theirs) &&
           strcmp(mine, theirs) == 0;
}

/* The interpreter's own options take the next argument as their value when given alone. */
static bool takes_value(const char *option)
{
    return strcmp(option, "-W") == 0 || strcmp(option, "-X") == 0 || strcmp(option, "-Q") == 0;
}

/* The arguments of a Python command run through the tool (NULL: leave it alone). The
 * strings are the caller's and the configuration's; free() the array only. */
static char **through_tool(const char *command, char **argv)
{
    const sp_config *c = sp_measurement_config();
    if (!is_python(command) || !c->spawn_argc || argv == MPI_ARGV_NULL)
        return NULL;
    size_t n = 0, options = 0;
    while (argv[n])
        n++;
    while (options < n && argv[options][0] == '-' && strcmp(argv[options], "-m") != 0 &&
           strcmp(argv[options], "-c") != 0 && strcmp(argv[options], "-") != 0 &&
           strcmp(argv[options], "--") != 0)
        options += takes_value(argv[options]) && options + 1 < n ? 2 : 1;
    if (options == n)
        return NULL; /* an interactive interpreter: nothing to run through the tool */
    char **out = calloc(n + c->spawn_argc + 3, sizeof *out);
    if (!out)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < options; i++)
        out[k++] = argv[i];
    out[k++] = "-m";
    out[k++] = "scorep";
    for (uint32_t i = 0; i < c->spawn_argc; i++)
        out[k++] = (char *)c->spawn_args[i];
    for (size_t i = options; i < n; i++)
        out[k++] = argv[i];
    out[k] = NULL;
    return out;
}

/* ---- the handshake ------------------------------------------------------------------------ */

static uint32_t new_token(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t h = sp_hash_mix(((uint64_t)spmpi_world << 32) ^ (uint64_t)spmpi_world_rank);
    h = sp_hash_mix(h ^ ((uint64_t)getpid() << 20) ^ atomic_fetch_add(&spawn_counter, 1));
    h = sp_hash_mix(h ^ (uint64_t)now.tv_nsec ^ ((uint64_t)now.tv_sec << 30));
    uint32_t token = (uint32_t)h ^ (uint32_t)(h >> 32);
    return token == 0 || token == UINT32_MAX ? 1 : token;
}

/* The parent's side, on all processes of `comm` after a spawn of measured processes. */
static void parent_handshake(MPI_Comm comm, int root, MPI_Comm intercomm)
{
    MPI_Comm tool;
    if (PMPI_Comm_dup(intercomm, &tool) != MPI_SUCCESS)
        return;
    int rank = 0, remote_size = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_remote_size(intercomm, &remote_size);
    if (rank == root) {
        spawn_info info = {.token = new_token()};
        sp_location *section = sp_event_section_begin();
        if (section) {
            snprintf(info.dir, sizeof info.dir, "%s", sp_measurement_config()->experiment_dir);
            info.root_offset_ns = sp_measurement_clock_offset_ns();
            spmpi_boot_id(info.boot, sizeof info.boot);
            char err[512];
            if (sp_mpi_spawn_announce(info.token, (uint32_t)remote_size, err, sizeof err) != 0)
                fprintf(stderr, "scorep: %s\n", err);
            sp_event_section_end(section);
        }
        PMPI_Send(&info, (int)sizeof info, MPI_BYTE, 0, HANDSHAKE_TAG, tool);
        /* The children's rank 0 measures its clock against ours. */
        for (int k = 0; k < CLOCK_ROUNDS; k++) {
            uint64_t ask, now;
            PMPI_Recv(&ask, 1, MPI_UINT64_T, 0, HANDSHAKE_TAG, tool, MPI_STATUS_IGNORE);
            now = sp_clock_monotonic_ns();
            PMPI_Send(&now, 1, MPI_UINT64_T, 0, HANDSHAKE_TAG, tool);
        }
    }
    spmpi_comm_created(intercomm, MPI_COMM_NULL, true);
    PMPI_Comm_disconnect(&tool);
}

void spmpi_spawned_init(void)
{
    MPI_Comm parent = MPI_COMM_NULL;
    if (!sp_measurement_running() || !sp_measurement_config()->spawned ||
        PMPI_Comm_get_parent(&parent) != MPI_SUCCESS || parent == MPI_COMM_NULL)
        return;
    MPI_Comm tool;
    if (PMPI_Comm_dup(parent, &tool) != MPI_SUCCESS)
        return;
    spawn_info info;
    memset(&info, 0, sizeof info);
    if (spmpi_world_rank == 0) {
        /* From the spawn's root in the parent's group; then our clock against its. */
        MPI_Status status;
        PMPI_Recv(&info, (int)sizeof info, MPI_BYTE, MPI_ANY_SOURCE, HANDSHAKE_TAG, tool,
                  &status);
        int64_t best = 0;
        uint64_t best_rtt = UINT64_MAX;
        for (int k = 0; k < CLOCK_ROUNDS; k++) {
            uint64_t t1 = sp_clock_monotonic_ns(), t0;
            PMPI_Send(&t1, 1, MPI_UINT64_T, status.MPI_SOURCE, HANDSHAKE_TAG, tool);
            PMPI_Recv(&t0, 1, MPI_UINT64_T, status.MPI_SOURCE, HANDSHAKE_TAG, tool,
                      MPI_STATUS_IGNORE);
            uint64_t t2 = sp_clock_monotonic_ns();
            if (t2 - t1 < best_rtt) {
                best_rtt = t2 - t1;
                best = (int64_t)t0 - (int64_t)(t1 + (t2 - t1) / 2);
            }
        }
        /* On the same boot the clocks are one: a ping-pong across worlds (often over TCP,
         * with uneven delays) could only add an error. */
        char mine[64];
        spmpi_boot_id(mine, sizeof mine);
        if (!mine[0] || strcmp(mine, info.boot) != 0)
            info.root_offset_ns += best;
    }
    PMPI_Bcast(&info, (int)sizeof info, MPI_BYTE, 0, spmpi_tool_comm);
    spmpi_world = info.token;
    char err[512];
    if (sp_mpi_spawned(info.dir, info.root_offset_ns, err, sizeof err) != 0)
        fprintf(stderr, "scorep: %s\n", err);
    spmpi_comm_created(parent, MPI_COMM_NULL, true);
    PMPI_Comm_disconnect(&tool);
}

/* ---- the wrappers --------------------------------------------------------------------------- */

/* Whether the spawn starts measured processes: the root decides, everyone learns it. */
static bool agree_measured(bool mine, int root, MPI_Comm comm)
{
    int measured = mine;
    PMPI_Bcast(&measured, 1, MPI_INT, root, comm);
    return measured != 0;
}

static int spawn_end(int fn, int status, bool measured, MPI_Comm comm, int root,
                     MPI_Comm *intercomm)
{
    uint32_t id = SP_NO_ID;
    if (status == MPI_SUCCESS && *intercomm != MPI_COMM_NULL) {
        if (measured)
            parent_handshake(comm, root, *intercomm);
        else
            id = spmpi_comm_created(*intercomm, MPI_COMM_NULL, false);
    }
    sp_location *loc = spmpi_after(fn);
    if (loc) {
        if (status == MPI_SUCCESS && id == SP_NO_ID)
            id = spmpi_comm_id(*intercomm);
        if (status == MPI_SUCCESS)
            spmpi_record_comm_creation(loc, id, spmpi_comm_id(comm));
        spmpi_leave(loc, fn);
    }
    return status;
}

static bool measuring_mpi(void)
{
    sp_location *section = sp_event_section_begin();
    if (!section)
        return false;
    bool on = sp_measurement_config()->mpi && sp_measurement_grouped() &&
              sp_measurement_config()->spawn_argc > 0;
    sp_event_section_end(section);
    return on;
}

EXPORT int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info,
                          int root, MPI_Comm comm, MPI_Comm *intercomm, int errcodes[])
{
    spmpi_enter(FN_COMM_SPAWN);
    sp_location *loc = spmpi_after(FN_COMM_SPAWN);
    if (loc) {
        sp_mpi_collective_begin(loc, sp_clock_now());
        sp_event_section_end(loc);
    }
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    char **args = rank == root && measuring_mpi() ? through_tool(command, argv) : NULL;
    bool measured = agree_measured(args != NULL, root, comm);
    int s = PMPI_Comm_spawn(command, args ? args : argv, maxprocs, info, root, comm, intercomm,
                            errcodes);
    free(args);
    return spawn_end(FN_COMM_SPAWN, s, measured, comm, root, intercomm);
}

EXPORT int MPI_Comm_spawn_multiple(int count, char *commands[], char **argvs[],
                                   const int maxprocs[], const MPI_Info infos[], int root,
                                   MPI_Comm comm, MPI_Comm *intercomm, int errcodes[])
{
    spmpi_enter(FN_COMM_SPAWN_MULTIPLE);
    sp_location *loc = spmpi_after(FN_COMM_SPAWN_MULTIPLE);
    if (loc) {
        sp_mpi_collective_begin(loc, sp_clock_now());
        sp_event_section_end(loc);
    }
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    /* Measured only when every command is Python: the handshake needs all children. */
    char ***all = NULL;
    bool mine = false;
    if (rank == root && count > 0 && measuring_mpi() && argvs != MPI_ARGVS_NULL &&
        (all = calloc((size_t)count, sizeof *all))) {
        mine = true;
        for (int i = 0; i < count && mine; i++)
            mine = (all[i] = through_tool(commands[i], argvs[i])) != NULL;
    }
    bool measured = agree_measured(mine, root, comm);
    int s = PMPI_Comm_spawn_multiple(count, commands, measured ? all : argvs, maxprocs, infos,
                                     root, comm, intercomm, errcodes);
    for (int i = 0; all && i < count; i++)
        free(all[i]);
    free(all);
    return spawn_end(FN_COMM_SPAWN_MULTIPLE, s, measured, comm, root, intercomm);
}

EXPORT int MPI_Comm_get_parent(MPI_Comm *parent)
{
    SPMPI_REGION_CALL(FN_COMM_GET_PARENT, PMPI_Comm_get_parent(parent));
}

static int connected(int fn, int status, MPI_Comm comm, MPI_Comm *newcomm)
{
    /* The other side may not be measured: its members stay unknown (no collective). */
    uint32_t id = status == MPI_SUCCESS ? spmpi_comm_id(*newcomm) : SP_NO_ID;
    sp_location *loc = spmpi_after(fn);
    if (loc) {
        if (status == MPI_SUCCESS)
            spmpi_record_comm_creation(loc, id, spmpi_comm_id(comm));
        spmpi_leave(loc, fn);
    }
    return status;
}

EXPORT int MPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                           MPI_Comm *newcomm)
{
    spmpi_enter(FN_COMM_ACCEPT);
    int s = PMPI_Comm_accept(port_name, info, root, comm, newcomm);
    return connected(FN_COMM_ACCEPT, s, comm, newcomm);
}

EXPORT int MPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                            MPI_Comm *newcomm)
{
    spmpi_enter(FN_COMM_CONNECT);
    int s = PMPI_Comm_connect(port_name, info, root, comm, newcomm);
    return connected(FN_COMM_CONNECT, s, comm, newcomm);
}

EXPORT int MPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    spmpi_enter(FN_COMM_JOIN);
    int s = PMPI_Comm_join(fd, intercomm);
    return connected(FN_COMM_JOIN, s, MPI_COMM_SELF, intercomm);
}

EXPORT int MPI_Open_port(MPI_Info info, char *port_name)
{
    SPMPI_REGION_CALL(FN_OPEN_PORT, PMPI_Open_port(info, port_name));
}

EXPORT int MPI_Close_port(const char *port_name)
{
    SPMPI_REGION_CALL(FN_CLOSE_PORT, PMPI_Close_port(port_name));
}
