/* The reports' OTF2 reader: definitions, one streaming pass over the events with the
 * aggregations the reports need, and the Chrome trace-event writer. Plain C on the OTF2
 * library; only rd_module.c knows Python.
 *
 * Why C: the OTF2 Python reader costs about 5 us per event, so a 10 M-event trace would
 * take a minute; here an event costs tens of ns and memory stays bounded by the number of
 * call paths, locations and the caps the caller sets, never by the number of events. */
#ifndef SCOREP_READER_RD_H
#define SCOREP_READER_RD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RD_NONE UINT32_MAX
#define RD_DEPTHS 256      /* depth rows of the duration histogram; deeper calls share the last */
#define RD_BUCKETS 200     /* 4 buckets per octave of ns: 2^50 ns is 13 days */
#define RD_OPS 32          /* collective operation kinds counted */

typedef struct rd_region {
    uint32_t name, canonical, file;
    uint32_t begin_line, end_line;
    uint8_t role, paradigm;
    bool defined;
    uint32_t name_len; /* bytes of the name, for size estimates */
} rd_region;

typedef struct rd_location {
    uint64_t id;
    uint32_t name;
    uint32_t group; /* location group ref */
    uint8_t type;
    uint64_t events; /* as the definition says */
} rd_location;

typedef struct rd_lgroup {
    uint32_t name;
    uint8_t type;
    uint32_t parent; /* system tree node */
    bool defined;
} rd_lgroup;

typedef struct rd_stnode {
    uint32_t name, class_name, parent;
    bool defined;
} rd_stnode;

typedef struct rd_group {
    uint8_t type, paradigm;
    uint32_t size;
    uint64_t *members;
    bool defined;
} rd_group;

typedef struct rd_comm {
    uint32_t name, group, parent;
    bool defined;
    /* communicator rank -> location group ref (RD_NONE when unknown), resolved once */
    uint32_t *rank_to_lgroup;
    uint32_t size;
    /* an inter-communicator: its other group (`group` is the first), resolved alike */
    bool inter;
    uint32_t remote_group;
    uint32_t *remote_to_lgroup;
    uint32_t remote_size;
} rd_comm;

/* I/O definitions (Score-P's IoParadigm, IoRegularFile/IoDirectory, IoHandle). */
typedef struct rd_io_file {
    uint32_t name;
    bool defined;
} rd_io_file;

typedef struct rd_io_handle {
    uint32_t name, file, parent; /* file: RD_NONE when the handle has none */
    uint8_t paradigm;
    bool defined;
} rd_io_handle;

typedef struct rd_defs {
    uint64_t resolution, offset, length, realtime;
    char **strings;
    uint32_t nstrings;
    rd_region *regions;
    uint32_t nregions;
    rd_location *locations; /* definition order */
    uint32_t nlocations, location_cap;
    rd_lgroup *lgroups;
    uint32_t nlgroups;
    rd_stnode *stnodes;
    uint32_t nstnodes;
    rd_group *groups;
    uint32_t ngroups;
    rd_comm *comms;
    uint32_t ncomms;
    uint32_t *win_comm; /* per one-sided window ref: its communicator, RD_NONE if none */
    uint32_t nwins;
    /* location id -> index into locations, sorted by id for bsearch */
    uint64_t *loc_ids_sorted;
    uint32_t *loc_index_sorted;
    rd_io_file *io_files;
    uint32_t nio_files;
    rd_io_handle *io_handles;
    uint32_t nio_handles;
    uint32_t *io_paradigm_names; /* string ref per I/O paradigm ref */
    uint32_t nio_paradigms;
    char *creator;
    uint8_t version[3];
} rd_defs;

typedef struct rd_trace {
    char *path;
    rd_defs defs;
} rd_trace;

/* OTF2 prints its errors on stderr; around our calls they are caught instead and the
 * first one is kept for our one-line message. The previous handler is restored after,
 * so a measurement in the same process keeps its own. */
void rd_quiet_begin(void);
void rd_quiet_end(void);
/* The first OTF2 error since rd_quiet_begin ("" if none). */
const char *rd_quiet_message(void);

/* Opens the anchor file (traces.otf2) and reads its global definitions. NULL on failure,
 * with one line in err. */
rd_trace *rd_open(const char *anchor, char *err, size_t errlen);
void rd_close(rd_trace *trace);
const char *rd_string(const rd_defs *defs, uint32_t ref); /* "" when undefined */
/* Index in defs->locations of a location id, RD_NONE when unknown. */
uint32_t rd_location_index(const rd_defs *defs, uint64_t id);
/* ns since the trace's global offset */
uint64_t rd_to_ns(const rd_defs *defs, uint64_t time);

/* ---- the scan: one pass over all events ------------------------------------------- */

typedef struct rd_nodestat {
    uint64_t visits, incl, min, max; /* ns */
} rd_nodestat;

typedef struct rd_slice {
    uint64_t start, dur; /* ns since the global offset */
    uint32_t region, loc, depth;
} rd_slice;

typedef struct rd_message { /* one side of a point-to-point message */
    uint64_t time;  /* ns */
    uint64_t key;   /* index of (comm, sender group, receiver group, tag) */
    uint64_t seq;   /* order of the message within its key */
    uint64_t bytes;
    uint32_t loc;
} rd_message;

typedef struct rd_msgkey {
    uint64_t a, b; /* comm << 32 | tag, sender group << 32 | receiver group */
    uint64_t send_seq, recv_seq;
} rd_msgkey;

typedef struct rd_p2p { /* messages between two location groups */
    uint32_t src, dst; /* location group refs */
    uint64_t count, bytes;
} rd_p2p;

typedef struct rd_coll {
    uint32_t lgroup, op;
    uint64_t count, sent, received;
} rd_coll;

typedef struct rd_locstat {
    uint64_t enters, leaves, first, last; /* first/last: ns of the first and last event */
    bool any;
    uint32_t max_depth;
    uint64_t flushes, flush_ns, off_count, off_ns;
    uint64_t unmatched_leaves, unclosed;
    uint64_t sends, send_bytes, recvs, recv_bytes;
    uint64_t collectives, coll_sent, coll_received;
    uint64_t rma_ops, rma_put_bytes, rma_get_bytes; /* one-sided: puts, gets, atomics */
    uint64_t mpi_io_read_bytes, mpi_io_written_bytes; /* MPI-IO operations */
    uint64_t program_begin, program_end; /* ns, UINT64_MAX when absent */
    int64_t exit_status;
    bool has_exit;
    rd_nodestat *nodes; /* by call-tree node */
    uint32_t node_cap;
    uint32_t *density;  /* enters per time bin */
    uint64_t dur_base;  /* first enter ordinal of this location in the durations file */
} rd_locstat;

/* What I/O went to one target: a file (target index = file ref), or a handle without a
 * file, such as a standard stream (target index = nio_files + handle ref). */
typedef struct rd_io_target {
    uint64_t reads, writes, flushes, failed; /* operations; failed: no bytes result */
    uint64_t bytes_read, bytes_written;
    uint64_t ns;                             /* from each operation's begin to its end */
    uint64_t creates, destroys, seeks, duplicates;
    uint32_t paradigms;                      /* bit per I/O paradigm ref (< 32) */
} rd_io_target;

/* The same per (target, calling region, I/O function): who did the I/O, and how. */
typedef struct rd_io_caller {
    uint32_t target;
    uint32_t region;   /* the frame below the I/O call, RD_NONE at the top of the stack */
    uint32_t function; /* the I/O call's region (write, fread, ...), RD_NONE outside one */
    uint64_t operations, bytes_read, bytes_written, ns;
} rd_io_caller;

typedef struct rd_flush { /* a buffer flush: a pause of the measured program */
    uint64_t start, stop;
    uint32_t loc;
} rd_flush;

typedef struct rd_scan_opts {
    bool tree;                 /* build the call tree with per-location statistics */
    uint32_t timeline_limit;   /* keep at most this many slices, the longest (0: none) */
    uint64_t timeline_min_ns;  /* never keep slices shorter than this */
    uint32_t timeline_max_depth;
    uint32_t density_bins;     /* enters per time bin and location (0: none) */
    uint32_t message_limit;    /* keep the first this many sends and receives each */
    uint32_t flush_limit;      /* keep the first this many buffer flushes */
    const char *durations_path; /* write every call's duration, by enter order (NULL: no) */
} rd_scan_opts;

typedef struct rd_scan {
    uint32_t nlocs;
    uint32_t density_bins; /* length of every location's density array */
    rd_locstat *locs;
    /* call tree: node n has parent[n] (RD_NONE for a root) and region[n] */
    uint32_t nnodes, node_cap;
    uint32_t *parent, *region;
    uint32_t *cache_region, *cache_child; /* last child looked up, per node */
    uint32_t root_cache_region, root_cache_child;
    /* calls per (depth, duration bucket), and the name bytes they carry */
    uint64_t *hist, *hist_name_bytes;
    /* timeline */
    rd_slice *slices;
    uint64_t nslices, slice_cap;
    uint64_t threshold;   /* slices shorter than this are dropped */
    uint64_t calls;       /* calls closed in total */
    /* messages */
    rd_p2p *p2p;
    uint32_t np2p, p2p_cap;
    rd_coll *colls;
    uint32_t ncolls, coll_cap;
    rd_message *sends, *recvs;
    uint32_t nsends, nrecvs;
    uint64_t sends_total, recvs_total;
    rd_msgkey *keys;        /* message keys, by index */
    uint64_t nkeys, keys_cap;
    uint32_t *key_table;    /* open addressing: key index + 1, 0 = empty */
    uint64_t key_table_cap;
    rd_flush *flushes;
    uint32_t nflushes;
    uint64_t flushes_total;
    /* I/O */
    rd_io_target *io_targets; /* nio_files + nio_handles of the definitions */
    uint32_t nio_targets;
    rd_io_caller *io_callers;
    uint32_t nio_callers, io_caller_cap;
    uint64_t io_calls;        /* calls of I/O regions (roles file io and file io metadata) */
    uint64_t io_calls_unknown; /* of them without any I/O event: no handle known (a socket,
                                * a pipe, a descriptor closed twice or never opened) */
    uint64_t events; /* events read */
} rd_scan;

/* Reads every event once. Returns 0, or -1 with one line in err. */
int rd_scan_run(rd_trace *trace, const rd_scan_opts *opts, rd_scan *out, char *err,
                size_t errlen);
void rd_scan_free(rd_scan *scan);
/* Histogram bucket of a duration in ns, and the smallest duration in a bucket. */
uint32_t rd_bucket(uint64_t ns);
uint64_t rd_bucket_floor(uint32_t bucket);
/* The index of a message key seen by the scan, RD_NONE if none. */
uint32_t rd_message_key_find(const rd_scan *scan, uint64_t a, uint64_t b);
/* The location group of a communicator rank; self_group is the caller's. */
uint32_t rd_comm_peer(const rd_defs *defs, uint32_t comm, uint32_t rank, uint32_t self_group);

/* ---- Chrome trace events ------------------------------------------------------------ */

typedef struct rd_chrome_opts {
    const char *out_path;
    const char *durations_path; /* written by a scan of the same trace */
    const char *header;         /* written first: `{"traceEvents":[` and metadata events */
    const char *footer;         /* written last */
    const char *const *names;   /* per region ref: the JSON-escaped name with quotes */
    const char *const *cats;    /* per region ref: the JSON-escaped category with quotes */
    const uint32_t *pids;       /* per location index */
    const uint32_t *tids;       /* per location index */
    const uint32_t *flush_tids; /* per location index: the lane of its buffer flushes */
    uint64_t min_ns;            /* leave out calls shorter than this */
    uint32_t max_depth;         /* and calls deeper than this (0 = the outermost) */
    bool need_comma;            /* the header ends with an event */
} rd_chrome_opts;

typedef struct rd_chrome_stats {
    uint64_t complete, flows, flushes, bytes;
} rd_chrome_stats;

int rd_write_chrome(rd_trace *trace, const rd_scan *scan, const rd_chrome_opts *opts,
                    rd_chrome_stats *stats, char *err, size_t errlen);

/* ---- wait states offline (rd_waitstates.c) ------------------------------------------- */

/* One call path of one location with waiting: its regions from the root, and per metric of
 * the wait-state engine (rd_ws.names) its value (seconds; for a count metric, unit "occ",
 * the number of instances) and instances. */
typedef struct rd_ws_row {
    uint32_t location; /* index into defs.locations */
    uint32_t rank;
    uint32_t depth;
    uint32_t *regions;
    double *time;
    uint64_t *count;
} rd_ws_row;

typedef struct rd_ws {
    uint32_t ranks;
    uint32_t nmetrics;
    const char *const *names; /* the engine's metric names, its table */
    const int *parents;       /* the index of each metric's parent, -1 at the top */
    rd_ws_row *rows;
    size_t nrows, cap;
    uint64_t violations, unmatched, skipped;
} rd_ws;

/* Replays the MPI operations of every rank of the trace with the measurement's wait-state
 * engine, one thread per rank. 0, or -1 with one line in err (not an MPI trace, a damaged
 * one). */
int rd_wait_states(const rd_trace *trace, rd_ws *out, char *err, size_t errlen);
void rd_ws_free(rd_ws *ws);
/* The engine's metric table: names and parents (index, -1 at the top); returns the count. */
uint32_t rd_ws_metrics(const char *const **names, const int **parents);

#endif
