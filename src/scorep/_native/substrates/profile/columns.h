/* What the two ways of writing profile.cubex share (write.c: every rank's trees merged at
 * the root; stream.c: call paths reduced along the tree and the rows requested in blocks while
 * the file is written): a rank's trees read back into columns, one location's value of a
 * metric, the call tree's nodes, the metrics a run gets, and the file written from them.
 * Nothing outside substrates/profile/ includes this. */
#ifndef SCOREP_SUBSTRATES_PROFILE_COLUMNS_H
#define SCOREP_SUBSTRATES_PROFILE_COLUMNS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/defs.h"
#include "core/metrics.h"
#include "core/serial.h"
#include "core/tables.h"
#include "core/unify.h"
#include "core/waitstates.h"
#include "substrates/profile/cube_writer.h"
#include "substrates/profile/profile.h"

typedef struct {
    uint32_t parent, region, kind, parameter;
    int64_t value; /* int value, or global string id */
    uint64_t visits, bytes_sent, bytes_received, bytes_put, bytes_get, hits;
    double time, min_time, max_time; /* seconds */
} flat_node;

/* The I/O bytes of one node of a column: bytes[paradigm][read, write]. */
typedef struct {
    uint64_t bytes[SP_IO_PARADIGM_COUNT][2];
} io_bytes;

/* Calls beyond the depth limit (folded.c), as sp_profile_folded_serialize wrote them. */
typedef struct {
    uint32_t collapse, region; /* the column's COLLAPSE node, the unified region */
    uint64_t primitive;
    double once, min_time, max_time;
} folded_function;

typedef struct {
    uint32_t function, caller; /* index into the column's folded functions, unified region */
    uint64_t visits, primitive;
    double time, once, excl;
} folded_pair;

typedef struct {
    uint32_t rank_index; /* into the unified ranks (location groups) */
    uint32_t name;       /* global string */
    uint32_t count;
    flat_node *nodes;
    io_bytes *io;        /* the I/O bytes of nodes that did I/O */
    uint32_t *io_of;     /* per node: index into io, SP_NO_ID for none (NULL: no I/O) */
    uint64_t *metric_sums;  /* metric_rows x metric_stride values (NULL: none) */
    uint32_t metric_rows, metric_stride;
    double *wait_states;    /* wait_state_rows x SP_WS_METRIC_COUNT seconds (NULL: none) */
    uint32_t wait_state_rows;
    folded_function *folded_functions;
    folded_pair *folded_pairs;
    uint32_t nfolded_functions, nfolded_pairs;
} column;

typedef struct {
    cube_cnode *cnodes;
    size_t count, capacity;
    sp_u64map index; /* hashed node identity -> unified node (probing past collisions) */
    column *columns;
    uint32_t ncolumns;
    /* [cnode * ncolumns + column]: the column's first node of that call path,
     * SP_PROFILE_NO_NODE = none; the column's further ones follow in next_local. A column
     * can hold several: two local regions that unify into one (two lambdas or generator
     * expressions on one line, functions of one name defined on one line) give two local
     * call paths that are one in the file, and their values add up. */
    uint32_t *unified_to_local;
    uint32_t **next_local; /* per column: [node] -> its next node of the same cnode */
    const sp_defs *global;
    const uint32_t *metric_kind; /* per metric of the file: what fill_row writes */
    uint32_t *const *maps; /* per column: its node -> unified node (unify_columns) */
} unified_tree;

enum { METRIC_VISITS, METRIC_TIME, METRIC_MIN_TIME, METRIC_MAX_TIME, METRIC_BYTES_SENT,
       METRIC_BYTES_RECEIVED, METRIC_BYTES_PUT, METRIC_BYTES_GET, METRIC_HITS,
       /* I/O: + mode (0 read, 1 write) for all paradigms, + 2 * (1 + paradigm) + mode for
        * one paradigm */
       METRIC_IO,
       /* Scalasca's wait-state metrics (core/waitstates.h): + sp_ws_metric */
       METRIC_WAIT = 512,
       /* The measurement's metrics (core/metrics.h): + their index. */
       METRIC_DENSE = 1024 };

/* What decides the file's metrics besides the configuration: any bytes sent or received,
 * put or got, moved per I/O paradigm, wait states, folded calls. */
typedef struct {
    bool communication, one_sided, wait_states, folded;
    bool io_moved[SP_IO_PARADIGM_COUNT];
} profile_flags;

/* The file's metrics and, per metric, what a row of it holds (METRIC_*). */
typedef struct {
    cube_metric metrics[METRIC_IO + 2 + 2 * SP_IO_PARADIGM_COUNT + SP_WS_METRIC_COUNT +
                        SP_MAX_METRICS];
    uint32_t kind[METRIC_IO + 2 + 2 * SP_IO_PARADIGM_COUNT + SP_WS_METRIC_COUNT +
                  SP_MAX_METRICS];
    size_t count;
    char dense_names[SP_MAX_METRICS][96], dense_units[SP_MAX_METRICS][48];
    char io_names[2 * SP_IO_PARADIGM_COUNT][96];
} metric_choice;

/* The call tree, the locations (per location its global name string and its location
 * group's index in the unified ranks) and where the rows and the folded calls come from. */
typedef struct {
    const cube_cnode *cnodes;
    size_t ncnodes;
    const uint32_t *location_names, *location_groups;
    size_t nlocations;
    profile_flags flags;
    cube_row_fn row;
    void *row_user;
    char *(*extra_text)(void *user, const uint32_t *id_of, size_t *len);
    void *extra_user;
    /* the rows written into the archive's holes instead (cube_writer.h; NULL: `row`) */
    int (*fill_rows)(void *user, const char *tmp, const uint64_t *offsets, char *err,
                     size_t errlen);
    void *fill_user;
} profile_source;

/* Every rank's report (sp_profile_serialize_trees' layout, sizes[r] bytes each, in rank
 * order) appended to *columns; `u` gives each location its group's index (NULL: the group's
 * id is kept). -1 when a report is damaged or memory runs out. */
int sp_profile_read_columns(column **columns, uint32_t *ncolumns, const sp_unified *u,
                            const void *all, const uint64_t *sizes, uint32_t nranks);
void sp_profile_columns_free(column *columns, uint32_t ncolumns);
int64_t sp_profile_group_index(const sp_unified *u, uint32_t group);
void sp_profile_column_flags(const column *col, profile_flags *f);

/* The call-tree node of `n` (its identity: region, kind, parameter, value) under the node
 * `parent` (-1: a root; every root after the first is the first), added when new; -1 when
 * memory runs out. Uses the tree's cnodes, count, capacity, index and global. */
int64_t sp_profile_unify_node(unified_tree *u, int64_t parent, const flat_node *n);

/* One location's value of metric kind `metric` (METRIC_*) at a call-tree node: over its
 * nodes `first`, next[first], ... (SP_PROFILE_NO_NODE ends), summed or their minimum or
 * maximum; 8 bytes into `out` (uint64 or double by the metric). */
void sp_profile_chain_value(const column *col, const uint32_t *next, uint32_t first,
                            uint32_t metric, void *out);

void sp_profile_choose_metrics(const sp_measurement *m, const sp_defs *g, const profile_flags *f,
                               metric_choice *mc);

/* Writes <dir>/<base name>.cubex. */
int sp_profile_write_cube(sp_measurement *m, const sp_unified *u, const profile_source *in,
                          const metric_choice *mc, const char *dir, char *err, size_t errlen);

/* folded_calls.json's entries, as write.c prints them. */
void sp_profile_json_function(sp_buffer *b, const char *sep, uint32_t id, uint32_t location,
                              const folded_function *f);
void sp_profile_json_pair(sp_buffer *b, const char *sep, uint32_t id, uint32_t location,
                          const folded_pair *e, uint32_t callee);
void sp_profile_json_printf(sp_buffer *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
