/* Writes CUBE4 profiles with known values for tests/test_cube_writer_roundtrip.py, which
 * reads them back with scorep.cube.
 *
 *   cube_roundtrip_driver OUT            the fixed profile described below
 *   cube_roundtrip_driver OUT N SEED     a random call tree of N cnodes; prints the parent
 *                                        index of every cnode on one line
 *
 * Every value is a small dyadic number, so sums and differences are exact in double and the
 * test can compare with ==.
 *
 * Fixed profile, cnodes in creation order (index: region <- parent), deliberately not preorder:
 *   0 prog.py            <- -1
 *   1 __main__:main      <- 0
 *   2 __main__:work      <- 1
 *   3 __main__:helper    <- 1    helper under main ...
 *   4 __main__:helper    <- 2    ... and under work: one region, two parents
 *   5 __main__:work      <- 2    parameter node n=3
 *   6 __main__:work      <- 2    parameter node mode="fast<&>"   (location 1 never ran it)
 *   7 user:<init> & 'setup' <- 0                                  (location 1 never ran it)
 * Two locations, "Master thread" of "MPI Rank 0" on node alpha and of "MPI Rank 1" on beta.
 * Metrics: visits, time (INCLUSIVE), min_time, max_time, bytes_sent (zero everywhere).
 * Exclusive values for a (cnode c, location l) that ran:
 *   visits = c + 1 + 10 l, time = c + 1 + l / 8, min_time = (c + 1) / 2 + l,
 *   max_time = 2 (c + 1) + l; all zero where it did not run.
 */
#include "substrates/profile/cube_writer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const cube_cnode *cnodes;
    size_t ncnodes, nlocations;
    double *incl_time; /* [cnode][location], inclusive time, from the exclusive formula */
    int random_mode;
} values;

static int ran(const values *v, uint32_t c, uint32_t l)
{
    if (v->random_mode)
        return (c * 7 + l * 3) % 5 != 0 || c == 0;
    return !(l == 1 && (c == 6 || c == 7));
}

static double excl_time(const values *v, uint32_t c, uint32_t l)
{
    if (!ran(v, c, l))
        return 0.0;
    return v->random_mode ? c % 13 + 0.5 * l : c + 1 + l / 8.0;
}

static uint64_t visits(const values *v, uint32_t c, uint32_t l)
{
    if (!ran(v, c, l))
        return 0;
    return v->random_mode ? (c * 7u + l * 3u) % 11u + 1u : c + 1u + 10u * l;
}

static int fill_row(void *user, uint32_t metric, uint32_t cnode, void *out)
{
    const values *v = user;
    for (uint32_t l = 0; l < v->nlocations; l++) {
        int r = ran(v, cnode, l);
        switch (metric) {
        case 0: ((uint64_t *)out)[l] = visits(v, cnode, l); break;
        case 1: ((double *)out)[l] = v->incl_time[cnode * v->nlocations + l]; break;
        case 2: ((double *)out)[l] = r ? (cnode + 1) / 2.0 + l : 0.0; break;
        case 3: ((double *)out)[l] = r ? 2.0 * (cnode + 1) + l : 0.0; break;
        case 4: ((uint64_t *)out)[l] = 0; break;
        default: return -1;
        }
    }
    return 0;
}

static const cube_metric metrics[] = {
    {"visits", "Visits", "occ", "", "Number of visits", CUBE_DTYPE_UINT64, CUBE_EXCLUSIVE, 0},
    {"time", "Time", "sec", "", "Total CPU allocation time", CUBE_DTYPE_DOUBLE, CUBE_INCLUSIVE, 0},
    {"min_time", "Minimum Inclusive Time", "sec", "", "Minimum inclusive CPU allocation time",
     CUBE_DTYPE_MINDOUBLE, CUBE_EXCLUSIVE, 0},
    {"max_time", "Maximum Inclusive Time", "sec", "", "Maximum inclusive CPU allocation time",
     CUBE_DTYPE_MAXDOUBLE, CUBE_EXCLUSIVE, 0},
    {"bytes_sent", NULL, "bytes", NULL, "Bytes sent", CUBE_DTYPE_UINT64, CUBE_EXCLUSIVE, 0},
};

static const cube_region regions[] = {
    {"prog.py", "/src/prog.py", "", -1, -1, "measurement", "artificial", NULL, NULL, 0},
    {"__main__:main", NULL, "/src/prog.py", 1, 30, "user", "function", NULL, NULL, 0},
    {"__main__:work", NULL, "/src/prog.py", 5, 12, "user", "function", "does the work", NULL, 0},
    {"__main__:helper", NULL, "/src/prog.py", 14, 20, "user", "function", NULL, NULL, 0},
    {"user:<init> & 'setup'", NULL, "", -1, -1, "user", "function", NULL, NULL, 0},
};

static const cube_system_node nodes[] = {{"node alpha"}, {"node beta"}};
static const cube_location_group groups[] = {{"MPI Rank 0", 0, 0}, {"MPI Rank 1", 1, 1}};
static const cube_location locations[] = {{"Master thread", 0}, {"Master thread", 1}};

/* Random mode: rank 0 with two threads on one node, rank 1 with one thread. */
static const cube_system_node rnodes[] = {{"node r0"}, {"node r1"}};
static const cube_location_group rgroups[] = {{"MPI Rank 0", 0, 0}, {"MPI Rank 1", 1, 1}};
static const cube_location rlocations[] = {
    {"Master thread", 0}, {"Pthread thread 1", 0}, {"Master thread", 1}};

static const cube_attr attrs[] = {{"Score-P::Python", "3 & up"}};

static void sum_inclusive(values *v)
{
    /* Parents precede children, so a backward sweep adds complete subtrees upwards. */
    for (size_t c = 0; c < v->ncnodes; c++)
        for (size_t l = 0; l < v->nlocations; l++)
            v->incl_time[c * v->nlocations + l] = excl_time(v, (uint32_t)c, (uint32_t)l);
    for (size_t c = v->ncnodes; c-- > 1;) {
        size_t p = (size_t)v->cnodes[c].parent;
        for (size_t l = 0; l < v->nlocations; l++)
            v->incl_time[p * v->nlocations + l] += v->incl_time[c * v->nlocations + l];
    }
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 4) {
        fprintf(stderr, "usage: %s OUT [N SEED]\n", argv[0]);
        return 2;
    }
    cube_profile p;
    memset(&p, 0, sizeof p);
    p.creator = "scorep roundtrip driver";
    p.attrs = attrs;
    p.nattrs = 1;
    p.regions = regions;
    p.nregions = sizeof regions / sizeof regions[0];
    p.metrics = metrics;
    p.nmetrics = sizeof metrics / sizeof metrics[0];
    p.row = fill_row;

    static const cube_cnode fixed[] = {
        {0, -1, CUBE_PARAM_NONE, NULL, 0, NULL},
        {1, 0, CUBE_PARAM_NONE, NULL, 0, NULL},
        {2, 1, CUBE_PARAM_NONE, NULL, 0, NULL},
        {3, 1, CUBE_PARAM_NONE, NULL, 0, NULL},
        {3, 2, CUBE_PARAM_NONE, NULL, 0, NULL},
        {2, 2, CUBE_PARAM_INT, "n", 3, NULL},
        {2, 2, CUBE_PARAM_STRING, "mode", 0, "fast<&>"},
        {4, 0, CUBE_PARAM_NONE, NULL, 0, NULL},
    };
    values v = {fixed, sizeof fixed / sizeof fixed[0], 2, NULL, 0};
    cube_cnode *tree = NULL;

    if (argc == 4) {
        size_t n = strtoul(argv[2], NULL, 10);
        uint64_t state = strtoull(argv[3], NULL, 10) * 2862933555777941757ULL + 3037000493ULL;
        tree = calloc(n ? n : 1, sizeof *tree);
        if (n == 0 || tree == NULL)
            return 2;
        tree[0].parent = -1;
        printf("-1");
        for (size_t i = 1; i < n; i++) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            uint64_t r = state >> 33;
            /* Half the nodes extend the newest path (depth), the rest hang anywhere (width). */
            tree[i].parent = (r & 1) ? (int64_t)(i - 1) : (int64_t)((r >> 1) % i);
            tree[i].region = (uint32_t)(r % 4);
            printf(" %" PRId64, tree[i].parent);
        }
        printf("\n");
        v.cnodes = tree;
        v.ncnodes = n;
        v.nlocations = 3;
        v.random_mode = 1;
        p.nodes = rnodes;
        p.nnodes = 2;
        p.groups = rgroups;
        p.ngroups = 2;
        p.locations = rlocations;
        p.nlocations = 3;
    } else {
        p.nodes = nodes;
        p.nnodes = 2;
        p.groups = groups;
        p.ngroups = 2;
        p.locations = locations;
        p.nlocations = 2;
    }
    p.cnodes = v.cnodes;
    p.ncnodes = v.ncnodes;
    p.row_user = &v;
    v.incl_time = calloc(v.ncnodes * v.nlocations, sizeof *v.incl_time);
    if (v.incl_time == NULL)
        return 2;
    sum_inclusive(&v);

    char err[512];
    int rc = cube_write(argv[1], &p, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "cube_write: %s\n", err);
    free(v.incl_time);
    free(tree);
    return rc == 0 ? 0 : 1;
}
