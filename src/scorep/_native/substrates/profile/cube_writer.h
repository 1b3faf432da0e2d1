/* CUBE4 profile writer (profile.cubex), as docs/FORMATS.md section 2 describes it.
 *
 * The caller describes the profile with plain arrays (definitions indexed from 0) and a row
 * callback for the values; cube_write turns that into a ustar archive holding
 * <metric>.data, <metric>.index per metric and anchor.xml, in the shape Score-P writes
 * (cube version 4.4, SPARSE index listing every row, one root cnode, one root system node).
 *
 * Two details every consumer of this header must know:
 *  - Rows are not stored in cnode order. EXCLUSIVE metrics store their rows in depth-first
 *    preorder of the call tree, INCLUSIVE metrics in CubeW's "wide search" order (see
 *    cube_row_orders). The row callback is therefore asked for (metric, cnode) pairs in file
 *    order, not in index order.
 *  - The cnode ids in the file are the preorder positions, not the indexes of the cnode
 *    array: readers insist that ids follow document order, and the array may have been built
 *    in creation order. cube_row_orders(..., deep, ...) gives the mapping (deep[id] = index).
 *    Siblings keep their relative index order.
 *
 * Pure C11 with POSIX file calls; no Python, no global state: several profiles may be written
 * concurrently from different threads.
 */
#ifndef SCOREP_CORE_CUBE_WRITER_H
#define SCOREP_CORE_CUBE_WRITER_H

#include <stddef.h>
#include <stdint.h>

/* A key/value attribute (<attr key="" value=""/>) of the profile, a region or the machine. */
typedef struct {
    const char *key;
    const char *value;
} cube_attr;

/* A code region (CUBE <region>). The region's id in the file is its array index. */
typedef struct {
    const char *name;        /* display name, e.g. "module:function"; required */
    const char *canonical;   /* <mangled_name>; NULL = name */
    const char *file;        /* the mod="" attribute (source file); NULL = "" */
    int begin_line;          /* first line, -1 = unknown */
    int end_line;            /* last line, -1 = unknown */
    const char *paradigm;    /* "user", "mpi", "measurement", "compiler", ...; NULL = "user" */
    const char *role;        /* "function", "artificial", "point2point", "barrier", ...;
                                NULL = "function" */
    const char *description; /* <descr>; NULL = "" */
    const cube_attr *attrs;  /* after <descr>, e.g. Score-P's number of program arguments on
                                the program root */
    size_t nattrs;
} cube_region;

typedef enum {
    CUBE_PARAM_NONE = 0, /* an ordinary call-path node */
    CUBE_PARAM_INT,      /* written as <parameter partype="numeric" .../> */
    CUBE_PARAM_STRING,   /* written as <parameter partype="string" .../> */
} cube_param_kind;

/* A call-path node (CUBE <cnode>). The root (index 0, parent -1) must be the only node
 * without a parent: pycubexr asserts a single root, and Score-P uses the program region. */
typedef struct {
    uint32_t region;              /* index into cube_profile.regions (the callee) */
    int64_t parent;               /* -1 for the root, else an index smaller than this one */
    cube_param_kind param_kind;   /* whether this node is a parameter node */
    const char *param_name;       /* the parameter's name; required unless CUBE_PARAM_NONE */
    int64_t param_int;            /* the value for CUBE_PARAM_INT */
    const char *param_string;     /* the value for CUBE_PARAM_STRING; NULL = "" */
} cube_cnode;

/* Value type of a metric; each value is 8 bytes in the data file. */
typedef enum {
    CUBE_DTYPE_UINT64 = 0, /* row buffers hold uint64_t */
    CUBE_DTYPE_DOUBLE,     /* row buffers hold double */
    CUBE_DTYPE_MINDOUBLE,  /* double; readers aggregate by minimum (EXCLUSIVE only) */
    CUBE_DTYPE_MAXDOUBLE,  /* double; readers aggregate by maximum (EXCLUSIVE only) */
} cube_dtype;

typedef enum {
    CUBE_EXCLUSIVE = 0, /* rows hold exclusive values, stored in preorder */
    CUBE_INCLUSIVE,     /* rows hold inclusive values, stored in wide-search order */
} cube_metric_type;

/* A metric (CUBE <metric>); its id in the file is its array index, and its files are
 * "<index>.data" and "<index>.index". Score-P's set is visits (EXCLUSIVE UINT64 "occ"),
 * time (INCLUSIVE DOUBLE "sec"), min_time (EXCLUSIVE MINDOUBLE), max_time (EXCLUSIVE
 * MAXDOUBLE). */
typedef struct {
    const char *uniq_name;   /* unique name, e.g. "time"; required, must be unique */
    const char *disp_name;   /* display name, e.g. "Time"; NULL = uniq_name */
    const char *uom;         /* unit of measurement, e.g. "sec", "occ", "bytes"; NULL = "" */
    const char *url;         /* documentation link, written verbatim; NULL = "" */
    const char *description; /* <descr>; NULL = "" */
    cube_dtype dtype;        /* value type of the row buffers and the file */
    cube_metric_type type;   /* INCLUSIVE may not be MINDOUBLE/MAXDOUBLE (CubeW rejects it) */
    /* 0: a top-level metric; else 1 + the index of its parent in the metric tree (the
     * <metric> it is nested in). Metrics are given in preorder of that tree: a child comes
     * after its parent and its parent's earlier children, so that ids follow document
     * order. */
    uint32_t child_of;
} cube_metric;

/* A system-tree node below the single machine root (class "node"), e.g. "node host1".
 * The machine root gets Id 0 and node i gets Id i + 1. */
typedef struct {
    const char *name; /* written verbatim; Score-P writes "node <hostname>" */
} cube_system_node;

/* A process (CUBE <locationgroup>, type "process"); its Id is its array index. Groups must
 * be ordered by node (non-decreasing `node`) so that Ids follow document order. */
typedef struct {
    const char *name; /* e.g. "MPI Rank 3" or "Process" */
    uint32_t rank;    /* the MPI rank (0 without MPI) */
    uint32_t node;    /* index into cube_profile.nodes */
} cube_location_group;

/* A thread (CUBE <location>, type "thread"); its Id is its array index and its column in
 * every data row. Locations must be ordered by group (non-decreasing `group`); the rank
 * written is the location's position within its group. */
typedef struct {
    const char *name; /* e.g. "Master thread" */
    uint32_t group;   /* index into cube_profile.groups */
} cube_location;

/* Fills one row: the values of `metric` at `cnode` (indexes into the profile's arrays) for
 * every location, in location order, into `out` (nlocations uint64_t or double by the
 * metric's dtype). Called once per (metric, row) in the order the file needs, so rows can
 * be produced on demand (e.g. gathered from MPI ranks). INCLUSIVE metrics want inclusive
 * values. Return 0, or non-zero to abort the write. */
typedef int (*cube_row_fn)(void *user, uint32_t metric, uint32_t cnode, void *out);

/* Everything cube_write needs. All pointers are borrowed for the duration of the call. */
typedef struct {
    const char *creator;      /* the "Creator" attribute, e.g. "scorep 1.0"; NULL = "scorep" */
    const char *machine_name; /* name of the system-tree root; NULL = "machine Linux" */
    const cube_attr *machine_attrs; /* attributes of the system-tree root ("platform") */
    size_t nmachine_attrs;
    const cube_attr *attrs;   /* further attributes, after Creator and CUBE_CT_AGGR */
    size_t nattrs;
    /* URL prefixes that replace "@mirror@" in metric URLs (<doc><mirrors><murl>), tried in
     * order by Cube; with mirrors the anchor also declares its CubePL version. */
    const char *const *mirrors;
    size_t nmirrors;
    /* The archive member remapping.spec (CubePL metric hierarchy for cube_remap2), written
     * first as Score-P does; NULL = none. */
    const char *remapping_spec;
    /* A further archive member `extra_name` (NULL: none), written before anchor.xml (CUBE
     * readers look members up by name and pass over others): its bytes from `extra_text`,
     * given each cnode's id in the file (id_of[cnode index]); it returns malloc'd bytes and
     * their number in *len, or NULL when out of memory (the write fails). */
    const char *extra_name;
    char *(*extra_text)(void *user, const uint32_t *id_of, size_t *len);
    void *extra_user;
    const cube_region *regions;
    size_t nregions;
    const cube_cnode *cnodes; /* at least one (the root) */
    size_t ncnodes;
    const cube_metric *metrics;
    size_t nmetrics;
    const cube_system_node *nodes;
    size_t nnodes;
    const cube_location_group *groups;
    size_t ngroups;
    const cube_location *locations; /* at least one */
    size_t nlocations;
    cube_row_fn row;          /* required when nmetrics > 0, unless fill_rows is given */
    void *row_user;           /* passed to row unchanged */
    /* The rows written by someone else (NULL: `row` gives every row here). When given, `row`
     * is not called: each <m>.data member's rows are left as a hole of ncnodes x nlocations
     * x 8 bytes (offsets[m]: the file offset of its first row; row k, location l at
     * offsets[m] + (k x nlocations + l) x 8, rows in the file's order), and once the rest of
     * the archive is written and closed, fill_rows is called with the temporary file's path
     * and the offsets. It writes every row (other processes with pwrite, say) and returns 0,
     * or non-zero with a one-line message in err to fail the write (the file is removed).
     * Not called when the archive failed before. */
    int (*fill_rows)(void *user, const char *tmp, const uint64_t *offsets, char *err,
                     size_t errlen);
    void *fill_user;
} cube_profile;

/* Writes `path` (replacing it): the archive is built in "<path>.tmp<pid>" and renamed over
 * `path` only when complete, so a failed write never leaves a truncated profile behind.
 * Returns 0, or -1 with a one-line message in err (err may be NULL). */
int cube_write(const char *path, const cube_profile *profile, char *err, size_t errlen);

/* The two row enumerations of a call tree given as a cnode array (parent < own index,
 * roots have parent -1, siblings ordered by index):
 *  deep[k]: the cnode stored at row k of an EXCLUSIVE metric (depth-first preorder);
 *           also the cnode whose id in the written file is k.
 *  wide[k]: the cnode stored at row k of an INCLUSIVE metric ("wide search": per root, the
 *           root, then all children of a node before descending into each child in turn;
 *           main{a{c}, b{c}} gives deep [0,1,2,3,4] and wide [0,1,3,2,4]).
 * Either output may be NULL; each needs room for ncnodes entries. Returns 0, or -1 with a
 * one-line message in err when a parent or the size is invalid or memory runs out. */
int cube_row_orders(const cube_cnode *cnodes, size_t ncnodes, uint32_t *deep, uint32_t *wide,
                    char *err, size_t errlen);

/* Exposed for tests and other archive writers: fills a 512-byte ustar header for a regular
 * file `name` (< 100 bytes) of `size` bytes, mode 0644, modified at `mtime` (seconds since
 * the epoch). Sizes of 8 GiB and more use the base-256 size encoding (a GNU extension that
 * GNU tar, bsdtar and Python's tarfile read). Returns 0, or -1 when name is too long. */
int cube_tar_header(unsigned char block[512], const char *name, uint64_t size, int64_t mtime);

/* Exposed for tests: writes the XML-escaped form of `s` into out (at most outlen - 1 bytes
 * plus a NUL) and returns the full escaped length, like snprintf. & < > " ' become entities,
 * tab/newline/carriage return become character references (so attributes keep them), other
 * control characters and bytes that are not valid UTF-8 become '?', because expat-based
 * readers reject the whole file over one such byte. */
size_t cube_xml_escape(const char *s, char *out, size_t outlen);

#endif
