/* The core's group operations (core/ipc.h) and the unification built on them: a process
 * alone (sp_ipc_single) and a group of ranks simulated by threads (thread_ipc.h). */
#include "core/ipc.h"
#include "core/unify.h"
#include "ctest.h"
#include "thread_ipc.h"

static void test_single_process_exchanges_are_copies(void)
{
    const sp_ipc *ipc = &sp_ipc_single;
    void *all = NULL;
    uint64_t sizes[1];
    CHECK(sp_ipc_gather_bytes(ipc, "hello", 5, &all, sizes) == 0);
    CHECK_EQ_U64(sizes[0], 5);
    CHECK(all && memcmp(all, "hello", 5) == 0);
    void *parts[1] = {"world!"};
    uint64_t part_sizes[1] = {6};
    void *mine = NULL;
    uint64_t size = 0;
    CHECK(sp_ipc_scatter_bytes(ipc, parts, part_sizes, &mine, &size) == 0);
    CHECK_EQ_U64(size, 6);
    CHECK(mine && memcmp(mine, "world!", 6) == 0);
    free(all);
    free(mine);
    /* Only rank 0 exists. */
    char byte = 1;
    CHECK(ipc->ops->bcast(ipc->ctx, &byte, 1, 1) == -1);
}

typedef struct {
    thread_rank me; /* first: thread_group_run fills it */
    bool tree;
    int status;
    char err[256];
    sp_unified u;
    uint32_t shared_region, own_region;
    uint32_t world_file, own_file; /* MPI-IO handles */
    /* calling contexts: shared <- own <- shared again (sampling's tree) */
    uint32_t shared_context, own_context, inner_context;
} rank_work;

/* Each rank defines a region all ranks share (same name, file and line), one of its own and
 * strings in a rank-specific order; the unified definitions must merge the shared one. */
static void *unify_rank(void *arg)
{
    rank_work *w = arg;
    sp_defs defs;
    if (sp_defs_init(&defs) != 0) {
        w->status = -1;
        return NULL;
    }
    char name[64], host[64], thread[64];
    snprintf(name, sizeof name, "__main__:work_of_rank_%u", w->me.rank);
    snprintf(host, sizeof host, "node%u", w->me.rank / 2);
    snprintf(thread, sizeof thread, "Thread %u", w->me.rank);
    /* Rank-specific order: string ids differ between ranks. */
    if (w->me.rank % 2)
        w->own_region = sp_defs_new_region(&defs, name, NULL, "/app.py", 10 + w->me.rank,
                                           10 + w->me.rank, SP_PARADIGM_USER, SP_ROLE_FUNCTION,
                                           SP_REGION_PYTHON);
    w->shared_region = sp_defs_new_region(&defs, "__main__:shared", NULL, "/app.py", 1, 1,
                                          SP_PARADIGM_USER, SP_ROLE_FUNCTION, SP_REGION_PYTHON);
    if (!(w->me.rank % 2))
        w->own_region = sp_defs_new_region(&defs, name, NULL, "/app.py", 10 + w->me.rank,
                                           10 + w->me.rank, SP_PARADIGM_USER, SP_ROLE_FUNCTION,
                                           SP_REGION_PYTHON);
    /* MPI-IO: a file opened collectively on a communicator of all ranks (unify key 1 there:
     * one handle of the experiment) and one on a communicator of this rank alone (key 1 as
     * well, but another communicator: a handle per rank). Members are not checked here. */
    /* Calling contexts: the shared region at the top (one context for all ranks), the rank's
     * own under it and the shared one again under that (one each per rank); odd ranks first
     * define a context of their own, so that local context ids differ between ranks. */
    if (w->me.rank % 2)
        sp_defs_calling_context(&defs, w->own_region, SP_NO_ID);
    w->shared_context = sp_defs_calling_context(&defs, w->shared_region, SP_NO_ID);
    w->own_context = sp_defs_calling_context(&defs, w->own_region, w->shared_context);
    w->inner_context = sp_defs_calling_context(&defs, w->shared_region, w->own_context);
    uint64_t first = SP_PROCESS(0, 0), me = SP_PROCESS(0, w->me.rank);
    uint32_t everyone = sp_defs_comm(&defs, &(sp_comm_spec){.key = SP_COMM_KEY_WORLD,
                                                             .kind = SP_COMM_WORLD, .size = 1,
                                                             .members = &first,
                                                             .parent = SP_COMM_NO_PARENT,
                                                             .root = w->me.rank == 0});
    uint32_t alone = sp_defs_comm(&defs, &(sp_comm_spec){.key = 1000 + w->me.rank,
                                                          .kind = SP_COMM_OTHER, .size = 1,
                                                          .members = &me,
                                                          .parent = SP_COMM_KEY_WORLD,
                                                          .root = true});
    sp_io_handle file = {.file = sp_defs_io_file(&defs, "/data/shared.bin"),
                         .parent = SP_NO_ID, .comm = everyone, .unify_key = 1,
                         .paradigm = SP_IO_PARADIGM_MPI};
    w->world_file = sp_defs_io_handle(&defs, &file, "");
    file.file = sp_defs_io_file(&defs, "/data/own.bin");
    file.comm = alone;
    w->own_file = sp_defs_io_handle(&defs, &file, "");
    sp_unified_location location = {.id = (uint64_t)w->me.rank, .name = sp_defs_string(&defs, thread),
                                    .events = 100 + w->me.rank};
    char group[32];
    snprintf(group, sizeof group, "Rank %u", w->me.rank);
    sp_unified_rank mine = {
        .rank = w->me.rank,
        .name = sp_defs_string(&defs, group),
        .host = sp_defs_string(&defs, host),
        .thread_requested = -1,
        .thread_provided = -1,
        .location_count = 1,
        .locations = &location,
    };
    sp_ipc ipc = thread_group_ipc(&w->me, w->tree);
    w->status = sp_unify(&ipc, &defs, &mine, NULL, 0, &w->u, w->err, sizeof w->err);
    sp_defs_free(&defs);
    return NULL;
}

/* RANKS ranks unified along a tree (tree) or at the root; checked from every rank. */
static void unify_group(uint32_t ranks, bool tree)
{
    thread_group group;
    CHECK(thread_group_init(&group, ranks) == 0);
    rank_work *work = calloc(ranks, sizeof *work);
    CHECK(work != NULL);
    for (uint32_t r = 0; r < ranks; r++)
        work[r].tree = tree;
    thread_group_run(&group, work, sizeof *work, unify_rank);
    for (uint32_t r = 0; r < ranks; r++)
        CHECK_EQ_U64(work[r].status, 0);
    const sp_unified *root = &work[0].u;
    /* one shared region and one per rank */
    CHECK_EQ_U64(root->global.region_count, ranks + 1);
    CHECK_EQ_U64(root->rank_count, ranks);
    CHECK_EQ_U64(root->node_count, (ranks + 1) / 2);
    for (uint32_t r = 0; r < ranks; r++) {
        const sp_unified *u = &work[r].u;
        uint32_t shared = u->maps.region_map[work[r].shared_region];
        uint32_t own = u->maps.region_map[work[r].own_region];
        CHECK_EQ_U64(shared, work[0].u.maps.region_map[work[0].shared_region]);
        CHECK_STR(sp_defs_str(&root->global, root->global.regions[shared].name), "__main__:shared");
        char expected[64];
        snprintf(expected, sizeof expected, "__main__:work_of_rank_%u", r);
        CHECK_STR(sp_defs_str(&root->global, root->global.regions[own].name), expected);
        CHECK_EQ_U64(root->global.regions[own].begin_line, 10 + r);
        /* the rank's report, with global string ids, in rank order */
        const sp_unified_rank *reported = &root->ranks[r];
        CHECK_EQ_U64(reported->rank, r);
        snprintf(expected, sizeof expected, "Rank %u", r);
        CHECK_STR(sp_defs_str(&root->global, reported->name), expected);
        snprintf(expected, sizeof expected, "node%u", r / 2);
        CHECK_STR(sp_defs_str(&root->global, root->nodes[reported->node]), expected);
        CHECK_EQ_U64(reported->locations[0].events, 100 + r);
        snprintf(expected, sizeof expected, "Thread %u", r);
        CHECK_STR(sp_defs_str(&root->global, reported->locations[0].name), expected);
        /* MPI-IO handles: one for the shared file, one per rank for the own ones, each on
         * its communicator (ordered: the world first, each after its parent) */
        uint32_t world_file = u->maps.io_handle_map[work[r].world_file];
        uint32_t own_file = u->maps.io_handle_map[work[r].own_file];
        CHECK_EQ_U64(world_file, work[0].u.maps.io_handle_map[work[0].world_file]);
        CHECK(r == 0 || own_file != work[0].u.maps.io_handle_map[work[0].own_file]);
        CHECK_EQ_U64(root->global.io_handles[world_file].comm, 0);
        CHECK_EQ_U64(u->maps.comm_map[0], 0);
        CHECK_EQ_U64(root->global.io_handles[own_file].comm, u->maps.comm_map[1]);
        CHECK_EQ_U64(root->global.comms[u->maps.comm_map[1]].key, 1000 + r);
        /* calling contexts: the top one shared, the others the rank's, with their regions
         * and parents translated */
        uint32_t top = u->maps.context_map[work[r].shared_context];
        uint32_t own_context = u->maps.context_map[work[r].own_context];
        uint32_t inner = u->maps.context_map[work[r].inner_context];
        CHECK_EQ_U64(top, work[0].u.maps.context_map[work[0].shared_context]);
        CHECK_EQ_U64(root->global.contexts[top].region, shared);
        CHECK_EQ_U64(root->global.contexts[top].parent, SP_NO_ID);
        CHECK_EQ_U64(root->global.contexts[own_context].region, own);
        CHECK_EQ_U64(root->global.contexts[own_context].parent, top);
        CHECK_EQ_U64(root->global.contexts[inner].region, shared);
        CHECK_EQ_U64(root->global.contexts[inner].parent, own_context);
        CHECK(r == 0 || inner != work[0].u.maps.context_map[work[0].inner_context]);
    }
    CHECK_EQ_U64(root->global.io_handle_count, ranks + 1);
    CHECK_EQ_U64(root->global.context_count, 1 + 2 * ranks + ranks / 2);
    for (uint32_t r = 0; r < ranks; r++)
        sp_unified_free(&work[r].u);
    thread_group_free(&group);
    free(work);
}

static void test_unification_at_the_root(void)
{
    unify_group(5, false);
}

static void test_unification_along_a_tree(void)
{
    unify_group(5, true);
    unify_group(1, true);
    unify_group(2, true);
    unify_group(37, true); /* not a power of two: subtrees of every size */
}

/* Many simulated ranks: the finalize path has no fixed-size tables and no quadratic loops. */
static void test_unification_of_ten_thousand_ranks(void)
{
    unify_group(10000, true);
}

CTEST_MAIN(test_single_process_exchanges_are_copies, test_unification_at_the_root,
           test_unification_along_a_tree, test_unification_of_ten_thousand_ranks)
