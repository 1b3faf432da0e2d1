/* The scan: one streaming pass over every event of a trace, building what the reports
 * need without keeping events: the call tree with per-location statistics, a histogram of
 * call durations per depth (for size caps), the longest calls for the timeline, event
 * density per location, message and collective statistics, buffer flushes.
 *
 * Per event the work is a few array updates; the call tree lookup goes through a one-entry
 * cache per node (the same child is entered again and again in loops) before the hash. */
#include "core/tables.h"
#include "reader/rd_pass.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DUR_WINDOW (1u << 16) /* enter ordinals whose durations are kept in memory */

typedef struct frame {
    uint64_t start;   /* ns */
    uint64_t ordinal; /* enter number within the location */
    uint32_t node, region;
    uint32_t io_events; /* I/O events inside this call */
    bool io_call;       /* a region of role file io or file io metadata */
} frame;

/* An I/O operation begun and not yet completed on the location (blocking ones complete at
 * once; MPI-IO's split and non-blocking ones later, told apart by their matching id). */
#define IO_PENDING 16
typedef struct io_pending {
    uint64_t start, matching;
    uint32_t handle, caller, function;
    uint8_t mode;
    bool used;
} io_pending;

typedef struct scan_ctx {
    rd_pass_ctx pass; /* first: the pass's callbacks reach it through the user data */
    const rd_trace *trace;
    const rd_scan_opts *opts;
    rd_scan *s;
    uint32_t li; /* current location index */
    rd_locstat *ls;
    frame *stack;
    uint32_t depth, stack_cap;
    uint64_t ordinal;
    uint64_t span_ns; /* trace length in ns, for density bins */
    uint64_t off_since; /* ns of the last MeasurementOnOff(OFF), UINT64_MAX when on */
    /* durations file */
    int dur_fd;
    uint64_t *dur_window;
    uint64_t dur_window_start;
    uint64_t dur_next_base;
    io_pending io[IO_PENDING];
    uint32_t io_next; /* where the next pending operation goes when all are used */
    sp_u64map children; /* (parent + 1) << 32 | region -> call tree node */
    uint32_t *io_table; /* open addressing over s->io_callers: index + 1, 0 = empty */
    uint64_t io_table_cap;
} scan_ctx;

uint32_t rd_bucket(uint64_t ns)
{
    if (ns < 4)
        return (uint32_t)ns;
    uint32_t e = 63u - (uint32_t)__builtin_clzll(ns); /* floor(log2), >= 2 */
    uint32_t b = 4 * (e - 1) + (uint32_t)((ns >> (e - 2)) & 3);
    return b < RD_BUCKETS ? b : RD_BUCKETS - 1;
}

uint64_t rd_bucket_floor(uint32_t bucket)
{
    if (bucket < 4)
        return bucket;
    uint32_t e = bucket / 4 + 1;
    return (4ULL + (bucket & 3)) << (e - 2);
}

/* ---- growable arrays -------------------------------------------------------------- */

static bool reserve(scan_ctx *c, void **array, uint64_t *cap, uint64_t need, size_t size)
{
    if (need <= *cap)
        return true;
    uint64_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *p = realloc(*array, n * size);
    if (!p) {
        rd_pass_fail(&c->pass, "out of memory");
        return false;
    }
    *array = p;
    *cap = n;
    return true;
}

static bool reserve32(scan_ctx *c, void **array, uint32_t *cap, uint32_t need, size_t size)
{
    uint64_t cap64 = *cap;
    if (!reserve(c, array, &cap64, need, size))
        return false;
    *cap = (uint32_t)(cap64 > UINT32_MAX ? UINT32_MAX : cap64);
    return true;
}

/* An index over a growable array (the I/O callers, the message keys): open addressing over
 * the array's positions + 1, 0 for an empty slot, kept at most half full. Made again, twice
 * as large, from the array's `n` items of `stride` bytes and their `hash`. */
static bool index_grow(scan_ctx *c, uint32_t **table, uint64_t *cap, const void *items,
                       uint64_t n, size_t stride, uint64_t (*hash)(const void *item))
{
    uint64_t ncap = *cap ? 2 * *cap : 256;
    uint32_t *t = calloc(ncap, sizeof *t);
    if (!t) {
        rd_pass_fail(&c->pass, "out of memory");
        return false;
    }
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h = hash((const char *)items + i * stride) & (ncap - 1);
        while (t[h])
            h = (h + 1) & (ncap - 1);
        t[h] = (uint32_t)i + 1;
    }
    free(*table);
    *table = t;
    *cap = ncap;
    return true;
}

/* ---- the call tree ---------------------------------------------------------------- */

static bool grow_nodes(scan_ctx *c)
{
    rd_scan *s = c->s;
    uint32_t cap = s->node_cap ? 2 * s->node_cap : 1024;
    uint32_t **arrays[] = {&s->parent, &s->region, &s->cache_region, &s->cache_child};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) {
        uint32_t *p = realloc(*arrays[i], (size_t)cap * sizeof *p);
        if (!p) {
            rd_pass_fail(&c->pass, "out of memory");
            return false;
        }
        *arrays[i] = p;
    }
    s->node_cap = cap;
    return true;
}

static uint32_t child_of(scan_ctx *c, uint32_t parent, uint32_t region)
{
    rd_scan *s = c->s;
    if (parent == RD_NONE) {
        if (s->root_cache_region == region && s->root_cache_child != RD_NONE)
            return s->root_cache_child;
    } else if (s->cache_region[parent] == region) {
        return s->cache_child[parent];
    }
    uint64_t key = ((uint64_t)(parent + 1u) << 32) | region; /* parent RD_NONE -> 0 */
    uint32_t node = sp_u64map_get(&c->children, key);
    if (node == SP_NO_ID) {
        node = s->nnodes;
        if (sp_u64map_put(&c->children, key, node) != 0) {
            rd_pass_fail(&c->pass, "out of memory");
            return RD_NONE;
        }
        if (s->nnodes == RD_NONE - 1) {
            rd_pass_fail(&c->pass, "more than 4 billion call paths");
            return RD_NONE;
        }
        if (s->nnodes == s->node_cap && !grow_nodes(c))
            return RD_NONE;
        s->parent[node] = parent;
        s->region[node] = region;
        s->cache_region[node] = RD_NONE;
        s->cache_child[node] = RD_NONE;
        s->nnodes++;
    }
    if (parent == RD_NONE) {
        s->root_cache_region = region;
        s->root_cache_child = node;
    } else {
        s->cache_region[parent] = region;
        s->cache_child[parent] = node;
    }
    return node;
}

static rd_nodestat *node_stat(scan_ctx *c, uint32_t node)
{
    rd_locstat *ls = c->ls;
    if (node >= ls->node_cap) {
        uint32_t old = ls->node_cap;
        uint32_t cap = old;
        if (!reserve32(c, (void **)&ls->nodes, &cap, node + 1, sizeof(rd_nodestat)))
            return NULL;
        memset(ls->nodes + old, 0, (size_t)(cap - old) * sizeof(rd_nodestat));
        ls->node_cap = cap;
    }
    return &ls->nodes[node];
}

/* ---- durations file --------------------------------------------------------------- */

static void dur_write(scan_ctx *c, const void *data, size_t bytes, uint64_t ordinal)
{
    off_t at = (off_t)((c->ls->dur_base + ordinal) * sizeof(uint64_t));
    const char *p = data;
    while (bytes) {
        ssize_t n = pwrite(c->dur_fd, p, bytes, at);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rd_pass_fail(&c->pass, "writing %s: %s", c->opts->durations_path, strerror(errno));
            return;
        }
        p += n;
        bytes -= (size_t)n;
        at += n;
    }
}

static void dur_flush_window(scan_ctx *c, uint64_t upto)
{
    if (upto > c->dur_window_start)
        dur_write(c, c->dur_window, (size_t)(upto - c->dur_window_start) * sizeof(uint64_t),
                  c->dur_window_start);
}

static void dur_record(scan_ctx *c, uint64_t ordinal, uint64_t dur)
{
    if (ordinal >= c->dur_window_start)
        c->dur_window[ordinal - c->dur_window_start] = dur;
    else /* a frame older than the window (an outer call): written in place */
        dur_write(c, &dur, sizeof dur, ordinal);
}

/* ---- timeline --------------------------------------------------------------------- */

/* The k-th largest (1-based) of a[0..n) by quickselect; reorders a. */
static uint64_t kth_largest(uint64_t *a, uint64_t n, uint64_t k)
{
    uint64_t lo = 0, hi = n - 1, target = k - 1;
    while (lo < hi) {
        uint64_t pivot = a[lo + (hi - lo) / 2];
        uint64_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] > pivot)
                i++;
            while (a[j] < pivot)
                j--;
            if (i <= j) {
                uint64_t t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (target <= j)
            hi = j;
        else if (target >= i)
            lo = i;
        else
            return a[target];
    }
    return a[target];
}

/* Raises the threshold so that at most `limit` slices stay (ties at the threshold may
 * keep up to half as many more; a pathological all-equal trace then keeps none). */
static void timeline_compact(scan_ctx *c, uint64_t limit)
{
    rd_scan *s = c->s;
    if (s->nslices <= limit)
        return;
    uint64_t *d = malloc(s->nslices * sizeof *d);
    if (!d) {
        rd_pass_fail(&c->pass, "out of memory");
        return;
    }
    for (uint64_t i = 0; i < s->nslices; i++)
        d[i] = s->slices[i].dur;
    uint64_t v = kth_largest(d, s->nslices, limit);
    free(d);
    uint64_t keep = 0;
    for (uint64_t i = 0; i < s->nslices; i++)
        keep += s->slices[i].dur >= v;
    if (keep > limit + limit / 2)
        v++;
    if (v > s->threshold)
        s->threshold = v;
    uint64_t k = 0;
    for (uint64_t i = 0; i < s->nslices; i++)
        if (s->slices[i].dur >= s->threshold)
            s->slices[k++] = s->slices[i];
    s->nslices = k;
}

static void timeline_add(scan_ctx *c, const frame *f, uint32_t depth, uint64_t dur)
{
    rd_scan *s = c->s;
    if (dur < s->threshold || depth > c->opts->timeline_max_depth)
        return;
    if (s->nslices == s->slice_cap) {
        timeline_compact(c, c->opts->timeline_limit);
        if (c->pass.failed || dur < s->threshold)
            return;
    }
    s->slices[s->nslices++] = (rd_slice){f->start, dur, f->region, c->li, depth};
}

/* ---- events ----------------------------------------------------------------------- */

static inline void seen(scan_ctx *c, uint64_t t)
{
    rd_locstat *ls = c->ls;
    if (!ls->any) {
        ls->any = true;
        ls->first = t;
    }
    if (t > ls->last)
        ls->last = t;
}

/* I/O calls that have no I/O event on a known descriptor either, so their lack of events says
 * nothing about the descriptor: MPI-IO calls that query or delete files (MPI_File_get_size),
 * and fcntl other than F_DUPFD (flags, locks: a region only, as Score-P records it; a
 * duplication has its event). sqlite's lock calls on its database file are such calls. */
static bool io_call_without_events_by_design(const rd_trace *trace, uint32_t region)
{
    if (region >= trace->defs.nregions)
        return false;
    const rd_region *r = &trace->defs.regions[region];
    if (r->paradigm == OTF2_PARADIGM_MPI)
        return true;
    const char *name = rd_string(&trace->defs, r->name);
    return strcmp(name, "fcntl") == 0 || strcmp(name, "fcntl64") == 0;
}

static void close_frame(scan_ctx *c, uint64_t t)
{
    frame *f = &c->stack[--c->depth];
    uint64_t dur = t > f->start ? t - f->start : 0;
    rd_scan *s = c->s;
    s->calls++;
    if (f->io_call) {
        s->io_calls++;
        if (!f->io_events && !io_call_without_events_by_design(c->trace, f->region))
            s->io_calls_unknown++;
    }
    if (c->opts->tree && f->node != RD_NONE) {
        rd_nodestat *st = node_stat(c, f->node);
        if (st) {
            if (!st->visits || dur < st->min)
                st->min = dur;
            if (dur > st->max)
                st->max = dur;
            st->visits++;
            st->incl += dur;
        }
    }
    uint32_t d = c->depth < RD_DEPTHS ? c->depth : RD_DEPTHS - 1;
    uint32_t b = rd_bucket(dur);
    s->hist[d * RD_BUCKETS + b]++;
    s->hist_name_bytes[d * RD_BUCKETS + b] += f->region < c->trace->defs.nregions
                                                  ? c->trace->defs.regions[f->region].name_len
                                                  : 0;
    if (c->opts->timeline_limit)
        timeline_add(c, f, c->depth, dur);
    if (c->dur_fd >= 0)
        dur_record(c, f->ordinal, dur);
}

/* OTF2 event callbacks, a family: each takes the arguments OTF2's reader gives its event
 * type and hands the few the scan needs to one shared function; same shape by OTF2's API,
 * not logic written twice. The four message events come through rd_pass_messages (below),
 * shared with the Chrome writer and the offline wait states. */
static OTF2_CallbackCode on_enter(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                  void *ud, OTF2_AttributeList *attributes, OTF2_RegionRef region)
{
    (void)location, (void)pos, (void)attributes;
    scan_ctx *c = ud;
    uint64_t t = rd_to_ns(&c->trace->defs, time);
    seen(c, t);
    rd_locstat *ls = c->ls;
    ls->enters++;
    c->s->events++;
    if (c->depth == c->stack_cap) {
        uint32_t cap = c->stack_cap;
        if (!reserve32(c, (void **)&c->stack, &cap, c->depth + 1, sizeof(frame)))
            return OTF2_CALLBACK_INTERRUPT;
        c->stack_cap = cap;
    }
    uint32_t node = RD_NONE;
    if (c->opts->tree) {
        uint32_t parent = c->depth ? c->stack[c->depth - 1].node : RD_NONE;
        node = child_of(c, parent, region);
        if (c->pass.failed)
            return OTF2_CALLBACK_INTERRUPT;
    }
    if (c->dur_fd >= 0 && c->ordinal - c->dur_window_start >= DUR_WINDOW) {
        dur_flush_window(c, c->ordinal);
        c->dur_window_start = c->ordinal;
        memset(c->dur_window, 0, DUR_WINDOW * sizeof(uint64_t));
        if (c->pass.failed)
            return OTF2_CALLBACK_INTERRUPT;
    }
    uint8_t role = region < c->trace->defs.nregions ? c->trace->defs.regions[region].role : 0;
    c->stack[c->depth++] = (frame){t, c->ordinal++, node, region, 0,
                                   role == OTF2_REGION_ROLE_FILE_IO ||
                                       role == OTF2_REGION_ROLE_FILE_IO_METADATA};
    if (c->depth > ls->max_depth)
        ls->max_depth = c->depth;
    if (ls->density && c->span_ns) {
        uint64_t bin = t >= c->span_ns ? c->opts->density_bins - 1
                                       : t * c->opts->density_bins / c->span_ns;
        ls->density[bin]++;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_leave(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                  void *ud, OTF2_AttributeList *attributes, OTF2_RegionRef region)
{
    (void)location, (void)pos, (void)attributes;
    scan_ctx *c = ud;
    uint64_t t = rd_to_ns(&c->trace->defs, time);
    seen(c, t);
    c->ls->leaves++;
    c->s->events++;
    if (!c->depth) {
        c->ls->unmatched_leaves++;
        return OTF2_CALLBACK_SUCCESS;
    }
    if (c->stack[c->depth - 1].region != region) {
        /* A leave that skips frames (a writer that lost leaves): close up to the matching
         * enter; one that matches nothing is counted and ignored. */
        uint32_t d = c->depth;
        while (d && c->stack[d - 1].region != region)
            d--;
        if (!d) {
            c->ls->unmatched_leaves++;
            return OTF2_CALLBACK_SUCCESS;
        }
        while (c->depth > d) {
            c->ls->unclosed++;
            close_frame(c, t);
        }
    }
    close_frame(c, t);
    return rd_pass_result(&c->pass);
}

static OTF2_CallbackCode on_flush(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                  void *ud, OTF2_AttributeList *attributes, OTF2_TimeStamp stop)
{
    (void)location, (void)pos, (void)attributes;
    scan_ctx *c = ud;
    uint64_t t = rd_to_ns(&c->trace->defs, time), e = rd_to_ns(&c->trace->defs, stop);
    seen(c, t);
    c->s->events++;
    c->ls->flushes++;
    c->ls->flush_ns += e > t ? e - t : 0;
    c->s->flushes_total++;
    if (c->s->nflushes < c->opts->flush_limit)
        c->s->flushes[c->s->nflushes++] = (rd_flush){t, e > t ? e : t, c->li};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_onoff(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                  void *ud, OTF2_AttributeList *attributes,
                                  OTF2_MeasurementMode mode)
{
    (void)location, (void)pos, (void)attributes;
    scan_ctx *c = ud;
    uint64_t t = rd_to_ns(&c->trace->defs, time);
    seen(c, t);
    c->s->events++;
    if (mode == OTF2_MEASUREMENT_OFF) {
        if (c->off_since == UINT64_MAX) {
            c->off_since = t;
            c->ls->off_count++;
        }
    } else if (c->off_since != UINT64_MAX) {
        c->ls->off_ns += t > c->off_since ? t - c->off_since : 0;
        c->off_since = UINT64_MAX;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_program_begin(OTF2_LocationRef location, OTF2_TimeStamp time,
                                          uint64_t pos, void *ud, OTF2_AttributeList *attributes,
                                          OTF2_StringRef name, uint32_t nargs,
                                          const OTF2_StringRef *args)
{
    (void)location, (void)pos, (void)attributes, (void)name, (void)nargs, (void)args;
    scan_ctx *c = ud;
    uint64_t t = rd_to_ns(&c->trace->defs, time);
    seen(c, t);
    c->s->events++;
    c->ls->program_begin = t;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_program_end(OTF2_LocationRef location, OTF2_TimeStamp time,
                                        uint64_t pos, void *ud, OTF2_AttributeList *attributes,
                                        int64_t status)
{
    (void)location, (void)pos, (void)attributes;
    scan_ctx *c = ud;
    uint64_t t = rd_to_ns(&c->trace->defs, time);
    seen(c, t);
    c->s->events++;
    c->ls->program_end = t;
    c->ls->exit_status = status;
    c->ls->has_exit = true;
    return OTF2_CALLBACK_SUCCESS;
}

/* ---- I/O -------------------------------------------------------------------------- */

/* Where a handle's I/O is counted: its file, or the handle itself (standard streams). */
static rd_io_target *io_target(scan_ctx *c, uint32_t handle, uint32_t *index)
{
    const rd_defs *d = &c->trace->defs;
    rd_scan *s = c->s;
    if (handle >= d->nio_handles || !d->io_handles[handle].defined)
        return NULL;
    uint32_t file = d->io_handles[handle].file;
    uint32_t i = file != RD_NONE && file < d->nio_files ? file : d->nio_files + handle;
    if (i >= s->nio_targets)
        return NULL;
    if (index)
        *index = i;
    rd_io_target *tg = &s->io_targets[i];
    if (d->io_handles[handle].paradigm < 32)
        tg->paradigms |= 1u << d->io_handles[handle].paradigm;
    return tg;
}

/* Marks the enclosing call as one that did I/O; gives the calling region (the frame below
 * the I/O call, RD_NONE at the top of the stack) and the I/O call's region. */
static void io_seen(scan_ctx *c, uint64_t t, uint32_t *caller, uint32_t *function)
{
    seen(c, t);
    c->s->events++;
    *caller = *function = RD_NONE;
    if (!c->depth)
        return;
    frame *top = &c->stack[c->depth - 1];
    top->io_events++;
    if (!top->io_call) {
        *caller = top->region;
        return;
    }
    *function = top->region;
    /* The calling region is the program's function: C functions recorded between it and the
     * I/O call (3.12+: _io.FileIO:write under the function that wrote) pass its I/O on. */
    *caller = RD_NONE;
    for (uint32_t d = c->depth - 1; d-- > 0;) {
        uint32_t region = c->stack[d].region;
        if (*caller == RD_NONE)
            *caller = region;
        bool c_function = region < c->trace->defs.nregions &&
                          c->trace->defs.regions[region].paradigm == OTF2_PARADIGM_COMPILER;
        if (!c_function) {
            *caller = region;
            break;
        }
    }
}

static uint64_t io_key_hash(uint32_t target, uint32_t region, uint32_t function)
{
    return sp_hash_mix((uint64_t)target << 32 ^ (uint64_t)region * 0x9e3779b97f4a7c15ULL ^
                     function);
}

static uint64_t io_caller_hash(const void *item)
{
    const rd_io_caller *r = item;
    return io_key_hash(r->target, r->region, r->function);
}

static void io_count_caller(scan_ctx *c, uint32_t target, uint32_t region, uint32_t function,
                            uint64_t read, uint64_t written, uint64_t ns)
{
    rd_scan *s = c->s;
    if ((uint64_t)(s->nio_callers + 1) * 2 > c->io_table_cap &&
        !index_grow(c, &c->io_table, &c->io_table_cap, s->io_callers, s->nio_callers,
                    sizeof *s->io_callers, io_caller_hash))
        return;
    uint64_t mask = c->io_table_cap - 1;
    uint64_t h = io_key_hash(target, region, function) & mask;
    rd_io_caller *hit = NULL;
    for (; c->io_table[h]; h = (h + 1) & mask) {
        rd_io_caller *r = &s->io_callers[c->io_table[h] - 1];
        if (r->target == target && r->region == region && r->function == function) {
            hit = r;
            break;
        }
    }
    if (!hit) {
        if (!reserve32(c, (void **)&s->io_callers, &s->io_caller_cap, s->nio_callers + 1,
                       sizeof *s->io_callers))
            return;
        hit = &s->io_callers[s->nio_callers];
        *hit = (rd_io_caller){target, region, function, 0, 0, 0, 0};
        c->io_table[h] = ++s->nio_callers;
    }
    hit->operations++;
    hit->bytes_read += read;
    hit->bytes_written += written;
    hit->ns += ns;
}

/* Whether an I/O handle is one of MPI-IO (the paradigm Score-P names "MPI I/O"). */
static bool is_mpi_io(const rd_defs *d, OTF2_IoHandleRef handle)
{
    if (handle >= d->nio_handles || !d->io_handles[handle].defined)
        return false;
    uint32_t paradigm = d->io_handles[handle].paradigm;
    if (paradigm >= d->nio_paradigms)
        return false;
    const char *name = rd_string(d, d->io_paradigm_names[paradigm]);
    return name && strcmp(name, "MPI I/O") == 0;
}

static OTF2_CallbackCode on_io_begin(OTF2_LocationRef location, OTF2_TimeStamp time,
                                     uint64_t pos, void *ud, OTF2_AttributeList *attributes,
                                     OTF2_IoHandleRef handle, OTF2_IoOperationMode mode,
                                     OTF2_IoOperationFlag flags, uint64_t request,
                                     uint64_t matching)
{
    (void)location, (void)pos, (void)attributes, (void)flags, (void)request;
    scan_ctx *c = ud;
    uint64_t t = rd_to_ns(&c->trace->defs, time);
    uint32_t caller, function;
    io_seen(c, t, &caller, &function);
    io_pending *p = NULL;
    for (int i = 0; i < IO_PENDING && !p; i++)
        if (!c->io[i].used)
            p = &c->io[i];
    if (!p)
        p = &c->io[c->io_next++ % IO_PENDING]; /* the oldest begin is given up */
    *p = (io_pending){t, matching, handle, caller, function, (uint8_t)mode, true};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_io_complete(OTF2_LocationRef location, OTF2_TimeStamp time,
                                        uint64_t pos, void *ud, OTF2_AttributeList *attributes,
                                        OTF2_IoHandleRef handle, uint64_t result,
                                        uint64_t matching)
{
    (void)location, (void)pos, (void)attributes;
    scan_ctx *c = ud;
    uint64_t t = rd_to_ns(&c->trace->defs, time);
    uint32_t caller, function;
    io_seen(c, t, &caller, &function);
    io_pending *p = NULL;
    for (int i = 0; i < IO_PENDING && !p; i++)
        if (c->io[i].used && c->io[i].handle == handle && c->io[i].matching == matching)
            p = &c->io[i];
    uint8_t mode = p ? p->mode : OTF2_IO_OPERATION_MODE_FLUSH;
    uint64_t ns = p && t > p->start ? t - p->start : 0;
    if (p) {
        caller = p->caller;
        function = p->function;
        p->used = false;
    }
    uint32_t index;
    rd_io_target *tg = io_target(c, handle, &index);
    if (!tg)
        return OTF2_CALLBACK_SUCCESS;
    bool failed = result == OTF2_UNDEFINED_UINT64;
    uint64_t bytes = failed ? 0 : result;
    uint64_t read = 0, written = 0;
    if (mode == OTF2_IO_OPERATION_MODE_READ) {
        tg->reads++;
        read = bytes;
    } else if (mode == OTF2_IO_OPERATION_MODE_WRITE) {
        tg->writes++;
        written = bytes;
    } else {
        tg->flushes++;
        failed = false; /* a flush moves no counted bytes: its undefined result is normal */
    }
    if (failed)
        tg->failed++;
    tg->bytes_read += read;
    tg->bytes_written += written;
    tg->ns += ns;
    if (is_mpi_io(&c->trace->defs, handle)) {
        c->ls->mpi_io_read_bytes += read;
        c->ls->mpi_io_written_bytes += written;
    }
    io_count_caller(c, index, caller, function, read, written, ns);
    return rd_pass_result(&c->pass);
}

static OTF2_CallbackCode on_io_create(OTF2_LocationRef location, OTF2_TimeStamp time,
                                      uint64_t pos, void *ud, OTF2_AttributeList *attributes,
                                      OTF2_IoHandleRef handle, OTF2_IoAccessMode mode,
                                      OTF2_IoCreationFlag creation, OTF2_IoStatusFlag status)
{
    (void)location, (void)pos, (void)attributes, (void)mode, (void)creation, (void)status;
    scan_ctx *c = ud;
    uint32_t caller, function;
    io_seen(c, rd_to_ns(&c->trace->defs, time), &caller, &function);
    rd_io_target *tg = io_target(c, handle, NULL);
    if (tg)
        tg->creates++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_io_destroy(OTF2_LocationRef location, OTF2_TimeStamp time,
                                       uint64_t pos, void *ud, OTF2_AttributeList *attributes,
                                       OTF2_IoHandleRef handle)
{
    (void)location, (void)pos, (void)attributes;
    scan_ctx *c = ud;
    uint32_t caller, function;
    io_seen(c, rd_to_ns(&c->trace->defs, time), &caller, &function);
    rd_io_target *tg = io_target(c, handle, NULL);
    if (tg)
        tg->destroys++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_io_duplicate(OTF2_LocationRef location, OTF2_TimeStamp time,
                                         uint64_t pos, void *ud, OTF2_AttributeList *attributes,
                                         OTF2_IoHandleRef old, OTF2_IoHandleRef handle,
                                         OTF2_IoStatusFlag status)
{
    (void)location, (void)pos, (void)attributes, (void)old, (void)status;
    scan_ctx *c = ud;
    uint32_t caller, function;
    io_seen(c, rd_to_ns(&c->trace->defs, time), &caller, &function);
    rd_io_target *tg = io_target(c, handle, NULL);
    if (tg)
        tg->duplicates++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_io_seek(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                    void *ud, OTF2_AttributeList *attributes,
                                    OTF2_IoHandleRef handle, int64_t offset,
                                    OTF2_IoSeekOption whence, uint64_t result)
{
    (void)location, (void)pos, (void)attributes, (void)offset, (void)whence, (void)result;
    scan_ctx *c = ud;
    uint32_t caller, function;
    io_seen(c, rd_to_ns(&c->trace->defs, time), &caller, &function);
    rd_io_target *tg = io_target(c, handle, NULL);
    if (tg)
        tg->seeks++;
    return OTF2_CALLBACK_SUCCESS;
}

static uint64_t key_hash(uint64_t a, uint64_t b)
{
    return sp_hash_mix(a ^ sp_hash_mix(b));
}

uint32_t rd_message_key_find(const rd_scan *s, uint64_t a, uint64_t b)
{
    if (!s->key_table_cap)
        return RD_NONE;
    uint64_t mask = s->key_table_cap - 1;
    for (uint64_t h = key_hash(a, b) & mask; s->key_table[h]; h = (h + 1) & mask) {
        const rd_msgkey *k = &s->keys[s->key_table[h] - 1];
        if (k->a == a && k->b == b)
            return s->key_table[h] - 1;
    }
    return RD_NONE;
}

static uint64_t msgkey_hash(const void *item)
{
    const rd_msgkey *k = item;
    return key_hash(k->a, k->b);
}

/* The index of a message key (communicator, tag, sender group, receiver group), made on
 * first sight: both sides of a message find the same one. */
static uint32_t message_key(scan_ctx *c, uint32_t comm, uint32_t tag, uint32_t src, uint32_t dst)
{
    rd_scan *s = c->s;
    uint64_t a = (uint64_t)comm << 32 | tag, b = (uint64_t)src << 32 | dst;
    uint32_t k = rd_message_key_find(s, a, b);
    if (k != RD_NONE)
        return k;
    if (s->nkeys >= UINT32_MAX - 1) {
        rd_pass_fail(&c->pass, "too many distinct messages keys");
        return RD_NONE;
    }
    if ((s->nkeys + 1) * 2 > s->key_table_cap &&
        !index_grow(c, &s->key_table, &s->key_table_cap, s->keys, s->nkeys, sizeof *s->keys,
                    msgkey_hash))
        return RD_NONE;
    if (!reserve(c, (void **)&s->keys, &s->keys_cap, s->nkeys + 1, sizeof *s->keys))
        return RD_NONE;
    k = (uint32_t)s->nkeys++;
    s->keys[k] = (rd_msgkey){a, b, 0, 0};
    uint64_t mask = s->key_table_cap - 1;
    uint64_t h = key_hash(a, b) & mask;
    while (s->key_table[h])
        h = (h + 1) & mask;
    s->key_table[h] = k + 1;
    return k;
}

static void count_p2p(scan_ctx *c, uint32_t src, uint32_t dst, uint64_t bytes)
{
    rd_scan *s = c->s;
    for (uint32_t i = s->np2p; i-- > 0;) /* few pairs per scan: a linear search is enough */
        if (s->p2p[i].src == src && s->p2p[i].dst == dst) {
            s->p2p[i].count++;
            s->p2p[i].bytes += bytes;
            return;
        }
    if (!reserve32(c, (void **)&s->p2p, &s->p2p_cap, s->np2p + 1, sizeof(rd_p2p)))
        return;
    s->p2p[s->np2p++] = (rd_p2p){src, dst, 1, bytes};
}

static OTF2_CallbackCode message(void *ud, const rd_message_event *m)
{
    scan_ctx *c = ud;
    rd_scan *s = c->s;
    uint64_t t = rd_to_ns(&c->trace->defs, m->time);
    bool send = m->send;
    uint32_t comm = m->comm, tag = m->tag;
    uint64_t bytes = m->length;
    seen(c, t);
    s->events++;
    uint32_t me = c->trace->defs.locations[c->li].group;
    uint32_t peer = rd_comm_peer(&c->trace->defs, comm, m->peer, me);
    uint32_t src = send ? me : peer, dst = send ? peer : me;
    if (send) {
        c->ls->sends++;
        c->ls->send_bytes += bytes;
        count_p2p(c, src, dst, bytes);
    } else {
        c->ls->recvs++;
        c->ls->recv_bytes += bytes;
    }
    uint32_t key = message_key(c, comm, tag, src, dst);
    if (key == RD_NONE)
        return rd_pass_result(&c->pass);
    uint64_t seq = send ? s->keys[key].send_seq++ : s->keys[key].recv_seq++;
    if (send) {
        s->sends_total++;
        if (s->nsends < c->opts->message_limit)
            s->sends[s->nsends++] = (rd_message){t, key, seq, bytes, c->li};
    } else {
        s->recvs_total++;
        if (s->nrecvs < c->opts->message_limit)
            s->recvs[s->nrecvs++] = (rd_message){t, key, seq, bytes, c->li};
    }
    return rd_pass_result(&c->pass);
}

static OTF2_CallbackCode collective(scan_ctx *c, OTF2_TimeStamp time, OTF2_CollectiveOp op,
                                    uint64_t sent, uint64_t received)
{
    rd_scan *s = c->s;
    seen(c, rd_to_ns(&c->trace->defs, time));
    s->events++;
    if (op >= OTF2_COLLECTIVE_OP_CREATE_HANDLE)
        return OTF2_CALLBACK_SUCCESS; /* creating or freeing a communicator: no data moves */
    c->ls->collectives++;
    c->ls->coll_sent += sent;
    c->ls->coll_received += received;
    uint32_t g = c->trace->defs.locations[c->li].group;
    uint32_t o = op < RD_OPS ? (uint32_t)op : RD_OPS - 1;
    for (uint32_t i = s->ncolls; i-- > 0;)
        if (s->colls[i].lgroup == g && s->colls[i].op == o) {
            s->colls[i].count++;
            s->colls[i].sent += sent;
            s->colls[i].received += received;
            return OTF2_CALLBACK_SUCCESS;
        }
    if (!reserve32(c, (void **)&s->colls, &s->coll_cap, s->ncolls + 1, sizeof(rd_coll)))
        return OTF2_CALLBACK_INTERRUPT;
    s->colls[s->ncolls++] = (rd_coll){g, o, 1, sent, received};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_collective_end(OTF2_LocationRef location, OTF2_TimeStamp time,
                                           uint64_t pos, void *ud, OTF2_AttributeList *attributes,
                                           OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root,
                                           uint64_t sent, uint64_t received)
{
    (void)location, (void)pos, (void)attributes, (void)comm, (void)root;
    return collective(ud, time, op, sent, received);
}

/* A non-blocking collective counts where it completed. */
static OTF2_CallbackCode on_icoll_complete(OTF2_LocationRef location, OTF2_TimeStamp time,
                                           uint64_t pos, void *ud,
                                           OTF2_AttributeList *attributes, OTF2_CollectiveOp op,
                                           OTF2_CommRef comm, uint32_t root, uint64_t sent,
                                           uint64_t received, uint64_t request)
{
    (void)location, (void)pos, (void)attributes, (void)comm, (void)root, (void)request;
    return collective(ud, time, op, sent, received);
}

static void rma(scan_ctx *c, OTF2_TimeStamp time, uint64_t put, uint64_t got)
{
    seen(c, rd_to_ns(&c->trace->defs, time));
    c->s->events++;
    c->ls->rma_ops++;
    c->ls->rma_put_bytes += put;
    c->ls->rma_get_bytes += got;
}

static OTF2_CallbackCode on_rma_put(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                    void *ud, OTF2_AttributeList *attributes, OTF2_RmaWinRef win,
                                    uint32_t remote, uint64_t bytes, uint64_t matching)
{
    (void)location, (void)pos, (void)attributes, (void)win, (void)remote, (void)matching;
    rma(ud, time, bytes, 0);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_rma_get(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                    void *ud, OTF2_AttributeList *attributes, OTF2_RmaWinRef win,
                                    uint32_t remote, uint64_t bytes, uint64_t matching)
{
    (void)location, (void)pos, (void)attributes, (void)win, (void)remote, (void)matching;
    rma(ud, time, 0, bytes);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_rma_atomic(OTF2_LocationRef location, OTF2_TimeStamp time,
                                       uint64_t pos, void *ud, OTF2_AttributeList *attributes,
                                       OTF2_RmaWinRef win, uint32_t remote,
                                       OTF2_RmaAtomicType type, uint64_t sent, uint64_t received,
                                       uint64_t matching)
{
    (void)location, (void)pos, (void)attributes, (void)win, (void)remote, (void)type;
    (void)matching;
    rma(ud, time, sent, received);
    return OTF2_CALLBACK_SUCCESS;
}

/* ---- passes ------------------------------------------------------------------------ */

OTF2_Reader *rd_pass_open(const rd_trace *trace, char *err, size_t errlen)
{
    OTF2_Reader *r = OTF2_Reader_Open(trace->path);
    if (!r) {
        snprintf(err, errlen, "%s: OTF2 cannot open it", trace->path);
        return NULL;
    }
    OTF2_Reader_SetSerialCollectiveCallbacks(r);
    const rd_defs *d = &trace->defs;
    for (uint32_t i = 0; i < d->nlocations; i++)
        OTF2_Reader_SelectLocation(r, d->locations[i].id);
    /* Local definitions are optional ("please the reader"); when present they may hold
     * mapping tables and clock offsets that OTF2 applies to the events. */
    if (OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS) {
        for (uint32_t i = 0; i < d->nlocations; i++) {
            OTF2_DefReader *dr = OTF2_Reader_GetDefReader(r, d->locations[i].id);
            if (!dr)
                continue;
            uint64_t n = 0;
            OTF2_Reader_ReadAllLocalDefinitions(r, dr, &n);
            OTF2_Reader_CloseDefReader(r, dr);
        }
        OTF2_Reader_CloseDefFiles(r);
    }
    OTF2_ErrorCode status = OTF2_Reader_OpenEvtFiles(r);
    if (status != OTF2_SUCCESS) {
        snprintf(err, errlen, "%s: the event files cannot be opened: %s", trace->path,
                 OTF2_Error_GetDescription(status));
        OTF2_Reader_Close(r);
        return NULL;
    }
    return r;
}

int rd_pass_location(OTF2_Reader *r, const rd_trace *trace, uint32_t li,
                     OTF2_EvtReaderCallbacks *callbacks, void *user, char *err, size_t errlen)
{
    uint64_t id = trace->defs.locations[li].id;
    OTF2_EvtReader *er = OTF2_Reader_GetEvtReader(r, id);
    if (!er) {
        snprintf(err, errlen, "%s: no events for location %llu", trace->path,
                 (unsigned long long)id);
        return -1;
    }
    OTF2_Reader_RegisterEvtCallbacks(r, er, callbacks, user);
    uint64_t n = 0;
    OTF2_ErrorCode status = OTF2_Reader_ReadAllLocalEvents(r, er, &n);
    OTF2_Reader_CloseEvtReader(r, er);
    if (status != OTF2_SUCCESS && status != OTF2_ERROR_INTERRUPTED_BY_CALLBACK) {
        snprintf(err, errlen, "%s: reading the events of location %llu failed: %s", trace->path,
                 (unsigned long long)id,
                 rd_quiet_message()[0] ? rd_quiet_message() : OTF2_Error_GetDescription(status));
        return -1;
    }
    return status == OTF2_SUCCESS ? 0 : 1;
}

static OTF2_CallbackCode pass_message(void *ud, OTF2_TimeStamp time, bool send, uint32_t peer,
                                      OTF2_CommRef comm, uint32_t tag, uint64_t length,
                                      bool blocking, uint64_t request)
{
    rd_message_event m = {time, send, peer, comm, tag, length, blocking, request};
    return ((rd_pass_ctx *)ud)->on_message(ud, &m);
}

/* OTF2's four message callbacks, a family (same shape by OTF2's API): each hands its event
 * to pass_message, the one place that builds an rd_message_event. */
static OTF2_CallbackCode on_send(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                 void *ud, OTF2_AttributeList *attributes, uint32_t receiver,
                                 OTF2_CommRef comm, uint32_t tag, uint64_t length)
{
    (void)location, (void)pos, (void)attributes;
    return pass_message(ud, time, true, receiver, comm, tag, length, true, 0);
}

static OTF2_CallbackCode on_isend(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                  void *ud, OTF2_AttributeList *attributes, uint32_t receiver,
                                  OTF2_CommRef comm, uint32_t tag, uint64_t length,
                                  uint64_t request)
{
    (void)location, (void)pos, (void)attributes;
    return pass_message(ud, time, true, receiver, comm, tag, length, false, request);
}

static OTF2_CallbackCode on_recv(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                 void *ud, OTF2_AttributeList *attributes, uint32_t sender,
                                 OTF2_CommRef comm, uint32_t tag, uint64_t length)
{
    (void)location, (void)pos, (void)attributes;
    return pass_message(ud, time, false, sender, comm, tag, length, true, 0);
}

static OTF2_CallbackCode on_irecv(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                  void *ud, OTF2_AttributeList *attributes, uint32_t sender,
                                  OTF2_CommRef comm, uint32_t tag, uint64_t length,
                                  uint64_t request)
{
    (void)location, (void)pos, (void)attributes;
    return pass_message(ud, time, false, sender, comm, tag, length, false, request);
}

void rd_pass_messages(OTF2_EvtReaderCallbacks *cb)
{
    OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, on_send);
    OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, on_isend);
    OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, on_recv);
    OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, on_irecv);
}

void rd_pass_fail(rd_pass_ctx *pass, const char *fmt, ...)
{
    if (pass->failed)
        return;
    pass->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pass->err, pass->errlen, fmt, ap);
    va_end(ap);
}

void rd_pass_close(OTF2_Reader *r)
{
    if (!r)
        return;
    OTF2_Reader_CloseEvtFiles(r);
    OTF2_Reader_Close(r);
}

void rd_scan_free(rd_scan *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->nlocs; i++) {
        free(s->locs[i].nodes);
        free(s->locs[i].density);
    }
    free(s->locs);
    free(s->parent);
    free(s->region);
    free(s->cache_region);
    free(s->cache_child);
    free(s->hist);
    free(s->hist_name_bytes);
    free(s->slices);
    free(s->p2p);
    free(s->colls);
    free(s->sends);
    free(s->recvs);
    free(s->keys);
    free(s->key_table);
    free(s->flushes);
    free(s->io_targets);
    free(s->io_callers);
    memset(s, 0, sizeof *s);
}

static int slice_order(const void *a, const void *b)
{
    const rd_slice *x = a, *y = b;
    if (x->loc != y->loc)
        return x->loc < y->loc ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    return 0;
}

int rd_scan_run(rd_trace *trace, const rd_scan_opts *opts, rd_scan *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    const rd_defs *d = &trace->defs;
    scan_ctx c = {.pass = {message, false, err, errlen}, .trace = trace, .opts = opts, .s = s,
                  .dur_fd = -1, .off_since = UINT64_MAX};
    c.span_ns = rd_to_ns(d, d->offset + d->length);
    s->nlocs = d->nlocations;
    s->density_bins = opts->density_bins;
    s->root_cache_region = RD_NONE;
    s->root_cache_child = RD_NONE;
    s->locs = calloc(d->nlocations ? d->nlocations : 1, sizeof *s->locs);
    s->hist = calloc((size_t)RD_DEPTHS * RD_BUCKETS, sizeof *s->hist);
    s->hist_name_bytes = calloc((size_t)RD_DEPTHS * RD_BUCKETS, sizeof *s->hist_name_bytes);
    s->nio_targets = d->nio_files + d->nio_handles;
    s->io_targets = calloc(s->nio_targets ? s->nio_targets : 1, sizeof *s->io_targets);
    if (!s->locs || !s->hist || !s->hist_name_bytes || !s->io_targets)
        goto oom;
    s->threshold = opts->timeline_min_ns;
    if (opts->timeline_limit) {
        s->slice_cap = 2 * (uint64_t)opts->timeline_limit;
        s->slices = malloc(s->slice_cap * sizeof *s->slices);
        if (!s->slices)
            goto oom;
    }
    if (opts->message_limit) {
        s->sends = malloc((size_t)opts->message_limit * sizeof *s->sends);
        s->recvs = malloc((size_t)opts->message_limit * sizeof *s->recvs);
        if (!s->sends || !s->recvs)
            goto oom;
    }
    if (opts->flush_limit && !(s->flushes = malloc((size_t)opts->flush_limit * sizeof *s->flushes)))
        goto oom;
    if (opts->durations_path) {
        c.dur_fd = open(opts->durations_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (c.dur_fd < 0) {
            snprintf(err, errlen, "cannot create %s: %s", opts->durations_path, strerror(errno));
            rd_scan_free(s);
            return -1;
        }
        c.dur_window = calloc(DUR_WINDOW, sizeof(uint64_t));
        if (!c.dur_window)
            goto oom;
    }

    OTF2_Reader *r = rd_pass_open(trace, err, errlen);
    if (!r) {
        if (c.dur_fd >= 0)
            close(c.dur_fd);
        free(c.dur_window);
        rd_scan_free(s);
        return -1;
    }
    OTF2_EvtReaderCallbacks *cb = OTF2_EvtReaderCallbacks_New();
    OTF2_EvtReaderCallbacks_SetEnterCallback(cb, on_enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, on_leave);
    OTF2_EvtReaderCallbacks_SetBufferFlushCallback(cb, on_flush);
    OTF2_EvtReaderCallbacks_SetMeasurementOnOffCallback(cb, on_onoff);
    OTF2_EvtReaderCallbacks_SetProgramBeginCallback(cb, on_program_begin);
    OTF2_EvtReaderCallbacks_SetProgramEndCallback(cb, on_program_end);
    rd_pass_messages(cb);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, on_collective_end);
    OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(cb, on_icoll_complete);
    OTF2_EvtReaderCallbacks_SetRmaPutCallback(cb, on_rma_put);
    OTF2_EvtReaderCallbacks_SetRmaGetCallback(cb, on_rma_get);
    OTF2_EvtReaderCallbacks_SetRmaAtomicCallback(cb, on_rma_atomic);
    OTF2_EvtReaderCallbacks_SetIoOperationBeginCallback(cb, on_io_begin);
    OTF2_EvtReaderCallbacks_SetIoOperationCompleteCallback(cb, on_io_complete);
    OTF2_EvtReaderCallbacks_SetIoCreateHandleCallback(cb, on_io_create);
    OTF2_EvtReaderCallbacks_SetIoDestroyHandleCallback(cb, on_io_destroy);
    OTF2_EvtReaderCallbacks_SetIoDuplicateHandleCallback(cb, on_io_duplicate);
    OTF2_EvtReaderCallbacks_SetIoSeekCallback(cb, on_io_seek);

    int status = 0;
    for (uint32_t li = 0; li < d->nlocations && status == 0; li++) {
        rd_locstat *ls = &s->locs[li];
        ls->program_begin = ls->program_end = UINT64_MAX;
        ls->dur_base = c.dur_next_base;
        if (opts->density_bins && !(ls->density = calloc(opts->density_bins, sizeof(uint32_t)))) {
            rd_pass_fail(&c.pass, "out of memory");
            status = -1;
            break;
        }
        c.li = li;
        c.ls = ls;
        c.depth = 0;
        c.ordinal = 0;
        c.dur_window_start = 0;
        c.off_since = UINT64_MAX;
        memset(c.io, 0, sizeof c.io);
        c.io_next = 0;
        if (c.dur_window)
            memset(c.dur_window, 0, DUR_WINDOW * sizeof(uint64_t));
        int rs = rd_pass_location(r, trace, li, cb, &c, err, errlen);
        if (c.pass.failed || rs < 0) {
            status = -1;
            break;
        }
        /* Calls still open at the end of the location's events end with its last event. */
        while (c.depth) {
            ls->unclosed++;
            close_frame(&c, ls->last);
        }
        if (c.off_since != UINT64_MAX)
            ls->off_ns += ls->last > c.off_since ? ls->last - c.off_since : 0;
        if (c.dur_fd >= 0)
            dur_flush_window(&c, c.ordinal);
        c.dur_next_base += c.ordinal;
        if (c.pass.failed)
            status = -1;
    }
    OTF2_EvtReaderCallbacks_Delete(cb);
    rd_pass_close(r);
    if (c.dur_fd >= 0)
        close(c.dur_fd);
    free(c.dur_window);
    free(c.stack);
    free(c.io_table);
    sp_u64map_free(&c.children);
    if (status == 0 && opts->timeline_limit) {
        timeline_compact(&c, opts->timeline_limit);
        qsort(s->slices, s->nslices, sizeof *s->slices, slice_order);
    }
    if (status != 0 || c.pass.failed) {
        rd_scan_free(s);
        return -1;
    }
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    if (c.dur_fd >= 0)
        close(c.dur_fd);
    free(c.dur_window);
    free(c.io_table);
    rd_scan_free(s);
    return -1;
}
