/* profile.cubex written while the rows arrive (substrates/profile/stream.c: call paths reduced
 * along the binomial tree, rows requested in blocks) against the flat writer (every rank's
 * trees gathered and merged at the root, write.c): every member of the two archives (the
 * metrics' data and index, anchor.xml with the call tree and the locations, folded_calls.json)
 * is the same, byte for byte, at 1, 2, 5, 37 and 10^4 simulated ranks (threads,
 * thread_ipc.h), with blocks of one row, a few rows and whole metrics. The flat writer runs
 * in one process on every rank's report (the gather's input to it). The rows written by
 * several ranks at their offsets (every rank, every second, fourth, ..., the default of 64 KB
 * a writer at 10^4) give the same file, and so does the fallback when one writer finds
 * another file under the path (a file system that is not shared). */
#include "ctest.h"
#include "ctest_support.h"
#include "core/waitstates.h"
#include "substrates/profile/profile_internal.h"
#include "thread_ipc.h"

#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    uint32_t shared; /* call paths below the root every rank has (each with a child) */
    bool own;        /* a call path of the rank's own (the union grows with the ranks) */
    bool extras;     /* I/O, metric, folded and wait-state sections on some ranks */
    uint32_t damaged; /* this rank's report is cut short (UINT32_MAX: none) */
} shape;

/* Rank r's trees in sp_profile_serialize_trees' layout, of the sizes of `sh`: a program root,
 * call paths every rank shares, a rank's own, parameter nodes, and I/O, metric, folded and
 * wait-state sections on some ranks; every value depends on the rank, the location and the node. */
static void rank_trees(uint32_t r, const shape *sh, sp_buffer *b)
{
    uint32_t nlocs = 1 + (r % 3 == 1);
    sp_buffer_u32(b, nlocs);
    for (uint32_t l = 0; l < nlocs; l++) {
        sp_buffer_u32(b, r % 11 == 7 ? 100000 + r : r); /* a child process's group now and then */
        sp_buffer_u32(b, 500 + l);
        uint32_t count = 1 + 2 * sh->shared + (sh->own ? 1 : 0) + 2;
        sp_buffer_u32(b, count);
        uint32_t i = 0;
#define NODE(parent, region, kind, parameter, value)                                         \
    do {                                                                                     \
        sp_buffer_u32(b, parent);                                                            \
        sp_buffer_u32(b, region);                                                            \
        sp_buffer_u32(b, kind);                                                              \
        sp_buffer_u32(b, parameter);                                                         \
        sp_buffer_u64(b, value);                                                             \
        sp_buffer_u64(b, (uint64_t)r * 1000 + l * 100 + i);                                  \
        for (int v_ = 0; v_ < 5; v_++)                                                       \
            sp_buffer_u64(b, (r + v_) % 3 ? 0 : i * 10 + v_);                                \
        sp_buffer_f64(b, (r + 1) * 0.001 * (i + 1));                                         \
        sp_buffer_f64(b, (r + 1) * 0.0001 * (i + 1));                                        \
        sp_buffer_f64(b, (r + 1) * 0.0002 * (i + 1));                                        \
        i++;                                                                                 \
    } while (0)
        /* a program of its own on every 13th rank (a spawned program) */
        NODE(SP_PROFILE_NO_NODE, r % 13 == 5 ? 1u : 0u, SP_NODE_REGION, 0u, 0u);
        for (uint32_t k = 0; k < sh->shared; k++) {
            uint32_t at = i;
            NODE(0u, 10 + (k + r * (l + 1)) % sh->shared, SP_NODE_REGION, 0u, 0u);
            NODE(at, 100 + (k * 7 + r) % 5, SP_NODE_REGION, 0u, 0u);
        }
        if (sh->own)
            NODE(1u, 1000 + r, SP_NODE_REGION, 0u, 0u);
        NODE(1u, 10u, SP_NODE_PARAMETER_INT, 2u, (uint64_t)(int64_t)((int)(r % 4) - 1));
        if (r == sh->damaged) {
            b->size -= 30;
            return;
        }
        NODE(2u, 10u, SP_NODE_PARAMETER_STRING, 3u, 50 + r % 2);
#undef NODE
        bool extras = sh->extras;
        uint32_t nio = extras ? r % 2 : 0;
        sp_buffer_u32(b, nio);
        for (uint32_t e = 0; e < nio; e++) {
            sp_buffer_u32(b, 1 + e);
            for (int k = 0; k < 2 * SP_IO_PARADIGM_COUNT; k++)
                sp_buffer_u64(b, r * 7 + k);
        }
        uint32_t rows = extras && r % 3 == 0 ? count : 0;
        sp_buffer_u32(b, 2);
        sp_buffer_u32(b, rows);
        for (uint32_t k = 0; k < 2 * rows; k++)
            sp_buffer_u64(b, r * 31 + k);
        uint32_t nf = extras ? r % 2 : 0;
        sp_buffer_u32(b, nf);
        for (uint32_t e = 0; e < nf; e++) {
            sp_buffer_u32(b, 1);
            sp_buffer_u32(b, 1000 + r);
            sp_buffer_u64(b, r);
            for (int k = 0; k < 3; k++)
                sp_buffer_f64(b, r * 0.5 + k);
        }
        sp_buffer_u32(b, nf);
        for (uint32_t e = 0; e < nf; e++) {
            sp_buffer_u32(b, 0);
            sp_buffer_u32(b, 10);
            sp_buffer_u64(b, r + 1);
            sp_buffer_u64(b, r + 2);
            for (int k = 0; k < 3; k++)
                sp_buffer_f64(b, r * 0.25 + k);
        }
        uint32_t nwait = extras && r % 4 == 1 ? count : 0;
        sp_buffer_u32(b, nwait);
        for (uint32_t k = 0; k < nwait * SP_WS_METRIC_COUNT; k++)
            sp_buffer_f64(b, r * 0.125 + k);
    }
}

/* What every rank's writer reads: the measurement's configuration and, on the root, the
 * global definitions and location groups the trees name. */
typedef struct {
    sp_measurement *m;
    sp_unified u;
} world;

static void world_init(world *w, uint32_t ranks)
{
    w->m = calloc(1, sizeof *w->m);
    sp_config *c = &w->m->config;
    c->creator = "scorep test";
    c->machine_name = "test";
    c->program_name = "prog";
    c->profile_base_name = "profile";
    c->max_callpath_depth = 30;
    sp_metric_set *set = &w->m->metrics;
    set->count = 2;
    snprintf(set->defs[0].name, sizeof set->defs[0].name, "PAPI_TOT_CYC");
    snprintf(set->defs[0].unit, sizeof set->defs[0].unit, "#");
    snprintf(set->defs[1].name, sizeof set->defs[1].name, "ru_utime");
    snprintf(set->defs[1].unit, sizeof set->defs[1].unit, "s");
    set->defs[1].exponent = -6;
    memset(&w->u, 0, sizeof w->u);
    sp_defs *g = &w->u.global;
    CHECK(sp_defs_init(g) == 0);
    char text[32];
    for (uint32_t k = 0; k < 700; k++) {
        snprintf(text, sizeof text, "string %u", k);
        (void)sp_defs_string(g, text);
    }
    for (uint32_t k = 0; k < 1001 + ranks; k++) {
        snprintf(text, sizeof text, "mod:f%u", k);
        (void)sp_defs_new_region(g, text, text, "mod.py", (int32_t)k, (int32_t)k + 1,
                                 SP_PARADIGM_USER, SP_ROLE_FUNCTION, SP_REGION_PYTHON);
    }
    (void)sp_defs_parameter(g, "p0", SP_PARAM_INT64);
    (void)sp_defs_parameter(g, "p1", SP_PARAM_INT64);
    (void)sp_defs_parameter(g, "size", SP_PARAM_INT64);
    (void)sp_defs_parameter(g, "mode", SP_PARAM_STRING);
    CHECK(g->region_count >= 1001 + ranks && g->parameter_count == 4);
    g->io_paradigms_used = 1;
    w->u.ranks = calloc(ranks, sizeof *w->u.ranks);
    w->u.rank_count = ranks;
    for (uint32_t r = 0; r < ranks; r++)
        w->u.ranks[r] = (sp_unified_rank){.rank = r % 11 == 7 ? 100000 + r : r,
                                          .name = 600 + r % 50, .node = 0};
    static uint32_t node = 650;
    w->u.nodes = &node;
    w->u.node_count = 1;
}

static void world_free(world *w)
{
    sp_defs_free(&w->u.global);
    free(w->u.ranks);
    free(w->m);
}

typedef struct {
    thread_rank me; /* first: thread_group_run fills it */
    const world *w;
    const shape *sh;
    const char *dir;
    int status;
    char err[256];
} write_work;

static void *write_rank(void *arg)
{
    write_work *wk = arg;
    sp_buffer mine;
    sp_buffer_init(&mine);
    rank_trees(wk->me.rank, wk->sh, &mine);
    sp_ipc ipc = thread_group_ipc(&wk->me, true);
    wk->status = sp_profile_write_collected(wk->w->m, &wk->w->u, &ipc, mine.data, mine.size,
                                            wk->dir, wk->err, sizeof wk->err);
    sp_buffer_free(&mine);
    return NULL;
}

/* Along the tree: `ranks` threads as ranks, each with its own trees. Returns the bytes rank 0
 * received. */
static uint64_t write_tree(const world *w, uint32_t ranks, const shape *sh, const char *dir)
{
    thread_group group;
    CHECK(thread_group_init(&group, ranks) == 0);
    write_work *work = calloc(ranks, sizeof *work);
    for (uint32_t r = 0; r < ranks; r++)
        work[r] = (write_work){.w = w, .sh = sh, .dir = dir};
    thread_group_run(&group, work, sizeof *work, write_rank);
    for (uint32_t r = 0; r < ranks; r++) {
        if (work[r].status != 0)
            fprintf(stderr, "rank %u of %u: %s\n", r, ranks, work[r].err);
        CHECK_EQ_U64(work[r].status, 0);
    }
    uint64_t received = group.received[0];
    free(work);
    thread_group_free(&group);
    return received;
}

/* The flat writer as the gather feeds it, in one process: every rank's locations in rank
 * order in one report (what the root merges is the same whichever rank sent a location). */
static void write_flat(const world *w, uint32_t ranks, const shape *sh, const char *dir)
{
    sp_buffer all, one;
    sp_buffer_init(&all);
    sp_buffer_u32(&all, 0);
    uint32_t locations = 0;
    for (uint32_t r = 0; r < ranks; r++) {
        sp_buffer_init(&one);
        rank_trees(r, sh, &one);
        uint32_t n;
        memcpy(&n, one.data, sizeof n);
        locations += n;
        sp_buffer_put(&all, one.data + 4, one.size - 4);
        sp_buffer_free(&one);
    }
    CHECK(!all.failed);
    memcpy(all.data, &locations, sizeof locations);
    char err[256] = "";
    int status = sp_profile_write_collected(w->m, &w->u, &sp_ipc_single, all.data, all.size,
                                            dir, err, sizeof err);
    if (status != 0)
        fprintf(stderr, "flat: %s\n", err);
    CHECK_EQ_U64(status, 0);
    sp_buffer_free(&all);
}

static unsigned char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(n > 0 ? (size_t)n : 1);
    *size = data && fread(data, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
    fclose(f);
    return data;
}

static uint64_t tar_size(const unsigned char *h)
{
    uint64_t size = 0;
    for (int i = 124; i < 136 && h[i] >= '0' && h[i] <= '7'; i++)
        size = size * 8 + (uint64_t)(h[i] - '0');
    return size;
}

/* Every member of the two archives the same (names, order, bytes); the headers' times may
 * differ. Returns the number of members. */
static int same_members(const char *a_path, const char *b_path)
{
    size_t na = 0, nb = 0;
    unsigned char *a = read_all(a_path, &na), *b = read_all(b_path, &nb);
    CHECK(a && b && na > 1024);
    int members = 0;
    size_t pa = 0, pb = 0;
    while (a && b && pa + 512 <= na && pb + 512 <= nb && a[pa]) {
        uint64_t sa = tar_size(a + pa), sb = tar_size(b + pb);
        if (strncmp((const char *)a + pa, (const char *)b + pb, 100) != 0 || sa != sb ||
            pa + 512 + sa > na || pb + 512 + sb > nb ||
            memcmp(a + pa + 512, b + pb + 512, sa) != 0) {
            fprintf(stderr, "member %.100s differs from the flat writer's %.100s\n",
                    (const char *)a + pa, (const char *)b + pb);
            ctest_failures++;
            break;
        }
        members++;
        pa += 512 + (sa + 511) / 512 * 512;
        pb += 512 + (sb + 511) / 512 * 512;
    }
    free(a);
    free(b);
    return members;
}

typedef struct {
    uint32_t block_rows;  /* 0: the default size */
    uint64_t write_bytes; /* sp_profile_stream_write_bytes (0: the default) */
    uint32_t unshared;    /* sp_profile_stream_unshared_rank */
} how;

static uint64_t root_received; /* by the last compare's rank 0 */

/* `ranks` ranks write once along the tree and once flat; the archives must agree. */
static int compare_how(uint32_t ranks, const shape *sh, how h)
{
    uint32_t block_rows = h.block_rows;
    world w;
    world_init(&w, ranks);
    char base[] = "/tmp/scorep-stream-XXXXXX";
    CHECK(mkdtemp(base) != NULL);
    char tree_dir[64], flat_dir[64], tree_file[96], flat_file[96];
    snprintf(tree_dir, sizeof tree_dir, "%s/tree", base);
    snprintf(flat_dir, sizeof flat_dir, "%s/flat", base);
    CHECK(mkdir(tree_dir, 0700) == 0 && mkdir(flat_dir, 0700) == 0);
    /* locations: 1 per rank, 2 on every third */
    uint64_t locations = ranks + (ranks + 1) / 3;
    sp_profile_stream_block_bytes = block_rows ? block_rows * locations * 8 : 0;
    sp_profile_stream_write_bytes = h.write_bytes;
    sp_profile_stream_unshared_rank = h.unshared;
    root_received = write_tree(&w, ranks, sh, tree_dir);
    sp_profile_stream_block_bytes = 0;
    sp_profile_stream_write_bytes = 0;
    sp_profile_stream_unshared_rank = UINT32_MAX;
    write_flat(&w, ranks, sh, flat_dir);
    snprintf(tree_file, sizeof tree_file, "%s/profile.cubex", tree_dir);
    snprintf(flat_file, sizeof flat_file, "%s/profile.cubex", flat_dir);
    int members = same_members(tree_file, flat_file);
    ctest_remove_tree(base);
    world_free(&w);
    return members;
}

/* Rank 0 writes the rows alone (as before the parallel writing) or at the default. */
static const uint64_t ALONE = UINT64_MAX;

static int compare(uint32_t ranks, const shape *sh, uint32_t block_rows)
{
    return compare_how(ranks, sh, (how){block_rows, 0, UINT32_MAX});
}

static const shape full = {20, true, true, UINT32_MAX};

static void test_one_rank(void)
{
    /* one rank has no messages to send: the flat writer's path, compared with itself */
    CHECK(compare(1, &full, 0) > 0);
}

static void test_two_ranks(void) { CHECK(compare(2, &full, 0) > 0); }

static void test_five_ranks_blocks_of_one_and_three_rows(void)
{
    CHECK(compare(5, &full, 1) > 0);
    CHECK(compare(5, &full, 3) > 0);
}

static void test_37_ranks(void)
{
    /* remapping.spec, 2 x (visits, time, min, max, bytes x 4, I/O 2 + paradigms, 19 wait
     * states, 2 metrics), folded_calls.json, anchor.xml */
    int members = compare(37, &full, 0);
    CHECK(members > 2 * 30);
    CHECK_EQ_U64(compare(37, &full, 7), members);
}

static uint64_t received_10000; /* by rank 0 at 10^4 ranks, the default writers */

static void test_10000_ranks(void)
{
    /* shared call paths only (a rank's own would make the file grow as ranks^2); 64 KB a
     * writer (the default): ranks 0 and 8192 write the rows */
    static const shape spmd = {5, false, false, UINT32_MAX};
    CHECK(compare(10000, &spmd, 0) > 0);
    received_10000 = root_received;
}

/* A rank whose report is damaged: every rank returns (nobody waits for a message that does
 * not come), rank 0 fails with one line and writes no file. */
static void damaged(uint32_t ranks, uint32_t rank)
{
    world w;
    world_init(&w, ranks);
    char base[] = "/tmp/scorep-stream-XXXXXX";
    CHECK(mkdtemp(base) != NULL);
    shape sh = full;
    sh.damaged = rank;
    thread_group group;
    CHECK(thread_group_init(&group, ranks) == 0);
    write_work *work = calloc(ranks, sizeof *work);
    for (uint32_t r = 0; r < ranks; r++)
        work[r] = (write_work){.w = &w, .sh = &sh, .dir = base};
    thread_group_run(&group, work, sizeof *work, write_rank);
    CHECK(work[0].status == -1);
    CHECK(work[0].err[0] != '\0' && strchr(work[0].err, '\n') == NULL);
    char path[96];
    snprintf(path, sizeof path, "%s/profile.cubex", base);
    CHECK(access(path, F_OK) != 0);
    free(work);
    thread_group_free(&group);
    ctest_remove_tree(base);
    world_free(&w);
}

static void test_a_damaged_report_fails_at_the_root(void)
{
    damaged(37, 22);
    damaged(5, 0);
    damaged(5, 4);
}

/* The rows written by several ranks: byte for byte the flat writer's whichever ranks write
 * (8 bytes a writer: every rank; more: every 2nd, 4th, ...), in blocks of one row or more;
 * rank 0 receives the blocks of its own range only. */
static void test_rows_written_by_several_ranks(void)
{
    int members = compare_how(2, &full, (how){0, ALONE, UINT32_MAX});
    uint64_t alone = root_received;
    CHECK_EQ_U64(compare_how(2, &full, (how){0, 8, UINT32_MAX}), members);
    CHECK(root_received < alone);
    for (uint32_t b = 0; b < 4; b += 3) {
        members = compare_how(5, &full, (how){b, ALONE, UINT32_MAX});
        alone = root_received;
        CHECK_EQ_U64(compare_how(5, &full, (how){b, 8, UINT32_MAX}), members);
        CHECK(root_received < alone);
        CHECK_EQ_U64(compare_how(5, &full, (how){b, 16, UINT32_MAX}), members);
    }
    members = compare_how(37, &full, (how){7, ALONE, UINT32_MAX});
    alone = root_received;
    uint64_t last = 0;
    /* 8 bytes: 37 writers; 64: one per 8 ranks (5); 160: one per 32 (2) */
    for (uint64_t bytes = 8; bytes <= 160; bytes *= bytes == 8 ? 8 : 2.5) {
        CHECK_EQ_U64(compare_how(37, &full, (how){7, bytes, UINT32_MAX}), members);
        CHECK(root_received < alone && root_received > last);
        last = root_received;
    }
}

/* A writer that does not find rank 0's file (its file system is not shared): rank 0 writes
 * every row, the file is the same. */
static void test_an_unshared_file_system_falls_back_to_rank_0(void)
{
    int members = compare_how(37, &full, (how){3, ALONE, UINT32_MAX});
    uint64_t alone = root_received;
    CHECK_EQ_U64(compare_how(37, &full, (how){3, 8, 36}), members);
    CHECK(root_received >= alone);
    members = compare_how(37, &full, (how){0, ALONE, UINT32_MAX});
    alone = root_received;
    CHECK_EQ_U64(compare_how(37, &full, (how){0, 64, 8}), members);
    CHECK(root_received >= alone);
}

static void test_10000_ranks_several_writers(void)
{
    static const shape spmd = {5, false, false, UINT32_MAX};
    /* 4 KB a writer: every 512th rank writes (20); rank 0 receives a 16th of its range's
     * blocks at the default (8192 ranks) */
    CHECK(compare_how(10000, &spmd, (how){0, 4096, UINT32_MAX}) > 0);
    CHECK(received_10000 > 0 && root_received < received_10000);
}

/* A damaged report with several writers planned: every rank returns, rank 0 fails. */
static void test_a_damaged_report_with_several_writers(void)
{
    sp_profile_stream_write_bytes = 8;
    damaged(37, 22);
    damaged(5, 4);
    sp_profile_stream_write_bytes = 0;
}

CTEST_MAIN(test_one_rank, test_two_ranks, test_five_ranks_blocks_of_one_and_three_rows,
           test_37_ranks, test_10000_ranks, test_a_damaged_report_fails_at_the_root,
           test_rows_written_by_several_ranks, test_an_unshared_file_system_falls_back_to_rank_0,
           test_10000_ranks_several_writers, test_a_damaged_report_with_several_writers)
