/* The wait-state replay (waitstates.h): Scalasca's forward pass, and the backward pass for
 * Late Receiver, over the group interface. */
#include "core/waitstates.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/events.h"
#include "core/serial.h"

const char *const sp_ws_metric_names[SP_WS_METRIC_COUNT] = {
    [SP_WS_LATE_SENDER] = "mpi_latesender",
    [SP_WS_LATE_SENDER_WO] = "mpi_latesender_wo",
    [SP_WS_LATE_RECEIVER] = "mpi_latereceiver",
    [SP_WS_BARRIER_WAIT] = "mpi_barrier_wait",
    [SP_WS_BARRIER_COMPLETION] = "mpi_barrier_completion",
    [SP_WS_WAIT_NXN] = "mpi_wait_nxn",
    [SP_WS_NXN_COMPLETION] = "mpi_nxn_completion",
    [SP_WS_LATE_BROADCAST] = "mpi_latebroadcast",
    [SP_WS_EARLY_REDUCE] = "mpi_earlyreduce",
    [SP_WS_EARLY_SCAN] = "mpi_earlyscan",
    [SP_WS_INIT_COMPLETION] = "mpi_init_completion",
    [SP_WS_FINALIZE_WAIT] = "mpi_finalize_wait",
    [SP_WS_RMA_WAIT_AT_FENCE] = "mpi_rma_wait_at_fence",
    [SP_WS_RMA_LATE_POST] = "mpi_rma_sync_late_post",
    [SP_WS_RMA_EARLY_WAIT] = "mpi_rma_early_wait",
    [SP_WS_SLS_COUNT] = "mpi_sls_count",
    [SP_WS_SLSWO_COUNT] = "mpi_slswo_count",
    [SP_WS_SLR_COUNT] = "mpi_slr_count",
    [SP_WS_CLS_COUNT] = "mpi_cls_count",
    [SP_WS_CLSWO_COUNT] = "mpi_clswo_count",
    [SP_WS_CLR_COUNT] = "mpi_clr_count",
    [SP_WS_CRITICAL_PATH] = "critical_path",
    [SP_WS_CRITICAL_PATH_IMBALANCE] = "critical_path_imbalance",
    [SP_WS_DELAY_LATESENDER] = "delay_latesender",
    [SP_WS_DELAY_LATESENDER_LONGTERM] = "delay_latesender_longterm",
    [SP_WS_DELAY_LATERECEIVER] = "delay_latereceiver",
    [SP_WS_DELAY_LATERECEIVER_LONGTERM] = "delay_latereceiver_longterm",
    [SP_WS_DELAY_BARRIER] = "delay_barrier",
    [SP_WS_DELAY_BARRIER_LONGTERM] = "delay_barrier_longterm",
    [SP_WS_DELAY_N2N] = "delay_n2n",
    [SP_WS_DELAY_N2N_LONGTERM] = "delay_n2n_longterm",
    [SP_WS_DELAY_12N] = "delay_12n",
    [SP_WS_DELAY_12N_LONGTERM] = "delay_12n_longterm",
    [SP_WS_DELAY_N21] = "delay_n21",
    [SP_WS_DELAY_N21_LONGTERM] = "delay_n21_longterm",
};

const int sp_ws_metric_parent[SP_WS_METRIC_COUNT] = {
    [SP_WS_LATE_SENDER] = -1,
    [SP_WS_LATE_SENDER_WO] = SP_WS_LATE_SENDER,
    [SP_WS_LATE_RECEIVER] = -1,
    [SP_WS_BARRIER_WAIT] = -1,
    [SP_WS_BARRIER_COMPLETION] = -1,
    [SP_WS_WAIT_NXN] = -1,
    [SP_WS_NXN_COMPLETION] = -1,
    [SP_WS_LATE_BROADCAST] = -1,
    [SP_WS_EARLY_REDUCE] = -1,
    [SP_WS_EARLY_SCAN] = -1,
    [SP_WS_INIT_COMPLETION] = -1,
    [SP_WS_FINALIZE_WAIT] = -1,
    [SP_WS_RMA_WAIT_AT_FENCE] = -1,
    [SP_WS_RMA_LATE_POST] = -1,
    [SP_WS_RMA_EARLY_WAIT] = -1,
    /* Scalasca hangs these below its statistics syncs_recv, syncs_send, comms_recv and
     * comms_send, which this profile does not have: top-level, Wrong Order below its count */
    [SP_WS_SLS_COUNT] = -1,
    [SP_WS_SLSWO_COUNT] = SP_WS_SLS_COUNT,
    [SP_WS_SLR_COUNT] = -1,
    [SP_WS_CLS_COUNT] = -1,
    [SP_WS_CLSWO_COUNT] = SP_WS_CLS_COUNT,
    [SP_WS_CLR_COUNT] = -1,
    /* Scalasca: the imbalance is the part of the critical path above the average; the
     * delay costs hang below its groups delay > delay_mpi > delay_p2p / delay_collective >
     * delay_*_aggregate (short-term and long-term of one pattern side by side below its
     * aggregate), which only sum their children: top-level here, as the others */
    [SP_WS_CRITICAL_PATH] = -1,
    [SP_WS_CRITICAL_PATH_IMBALANCE] = SP_WS_CRITICAL_PATH,
    [SP_WS_DELAY_LATESENDER] = -1,
    [SP_WS_DELAY_LATESENDER_LONGTERM] = -1,
    [SP_WS_DELAY_LATERECEIVER] = -1,
    [SP_WS_DELAY_LATERECEIVER_LONGTERM] = -1,
    [SP_WS_DELAY_BARRIER] = -1,
    [SP_WS_DELAY_BARRIER_LONGTERM] = -1,
    [SP_WS_DELAY_N2N] = -1,
    [SP_WS_DELAY_N2N_LONGTERM] = -1,
    [SP_WS_DELAY_12N] = -1,
    [SP_WS_DELAY_12N_LONGTERM] = -1,
    [SP_WS_DELAY_N21] = -1,
    [SP_WS_DELAY_N21_LONGTERM] = -1,
};

const char *const sp_ws_metric_unit[SP_WS_METRIC_COUNT] = {
    [SP_WS_LATE_SENDER] = "sec",      [SP_WS_LATE_SENDER_WO] = "sec",
    [SP_WS_LATE_RECEIVER] = "sec",    [SP_WS_BARRIER_WAIT] = "sec",
    [SP_WS_BARRIER_COMPLETION] = "sec", [SP_WS_WAIT_NXN] = "sec",
    [SP_WS_NXN_COMPLETION] = "sec",   [SP_WS_LATE_BROADCAST] = "sec",
    [SP_WS_EARLY_REDUCE] = "sec",     [SP_WS_EARLY_SCAN] = "sec",
    [SP_WS_INIT_COMPLETION] = "sec",  [SP_WS_FINALIZE_WAIT] = "sec",
    [SP_WS_RMA_WAIT_AT_FENCE] = "sec",
    [SP_WS_RMA_LATE_POST] = "sec",    [SP_WS_RMA_EARLY_WAIT] = "sec",
    [SP_WS_SLS_COUNT] = "occ",        [SP_WS_SLSWO_COUNT] = "occ",
    [SP_WS_SLR_COUNT] = "occ",        [SP_WS_CLS_COUNT] = "occ",
    [SP_WS_CLSWO_COUNT] = "occ",      [SP_WS_CLR_COUNT] = "occ",
    [SP_WS_CRITICAL_PATH] = "sec",    [SP_WS_CRITICAL_PATH_IMBALANCE] = "sec",
    [SP_WS_DELAY_LATESENDER] = "sec", [SP_WS_DELAY_LATESENDER_LONGTERM] = "sec",
    [SP_WS_DELAY_LATERECEIVER] = "sec", [SP_WS_DELAY_LATERECEIVER_LONGTERM] = "sec",
    [SP_WS_DELAY_BARRIER] = "sec",    [SP_WS_DELAY_BARRIER_LONGTERM] = "sec",
    [SP_WS_DELAY_N2N] = "sec",        [SP_WS_DELAY_N2N_LONGTERM] = "sec",
    [SP_WS_DELAY_12N] = "sec",        [SP_WS_DELAY_12N_LONGTERM] = "sec",
    [SP_WS_DELAY_N21] = "sec",        [SP_WS_DELAY_N21_LONGTERM] = "sec",
};

int sp_ws_result_init(sp_ws_result *r, uint32_t cnode_count)
{
    memset(r, 0, sizeof *r);
    size_t n = (size_t)(cnode_count ? cnode_count : 1) * SP_WS_METRIC_COUNT;
    r->time = calloc(n, sizeof *r->time);
    r->count = calloc(n, sizeof *r->count);
    if (!r->time || !r->count) {
        sp_ws_result_free(r);
        return -1;
    }
    r->cnode_count = cnode_count;
    return 0;
}

void sp_ws_result_free(sp_ws_result *r)
{
    free(r->time);
    free(r->count);
    r->time = NULL;
    r->count = NULL;
}

void sp_ws_input_free(sp_ws_input *in)
{
    free(in->events);
    for (uint32_t c = 0; c < in->comm_count; c++)
        free((void *)in->comms[c].members);
    free(in->comms);
    free(in->path_parent);
    free(in->path_region);
    free(in->path_location);
    free(in->path_hash);
    free(in->piece_time);
    free(in->piece_path);
    free(in->piece_bytes);
    free(in->piece_blocks);
    free(in->timelines);
    memset(in, 0, sizeof *in);
}

static void charge(sp_ws_result *r, uint32_t cnode, sp_ws_metric metric, int64_t ns)
{
    if (ns <= 0 || cnode >= r->cnode_count)
        return;
    r->time[(size_t)cnode * SP_WS_METRIC_COUNT + metric] += (double)ns;
    r->count[(size_t)cnode * SP_WS_METRIC_COUNT + metric] += 1;
}

/* One instance of a count metric (their value is the number of instances). */
static void count_instance(sp_ws_result *r, uint32_t cnode, sp_ws_metric metric)
{
    if (cnode >= r->cnode_count)
        return;
    r->time[(size_t)cnode * SP_WS_METRIC_COUNT + metric] += 1;
    r->count[(size_t)cnode * SP_WS_METRIC_COUNT + metric] += 1;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

typedef enum { CLASS_NONE, CLASS_BARRIER, CLASS_NXN, CLASS_BCAST, CLASS_REDUCE, CLASS_SCAN,
               CLASS_INIT, CLASS_FINALIZE, CLASS_FENCE } op_class;

static op_class classify(uint8_t op);

/* What the passes learn for the critical path and the delay costs, per event (NULL when
 * they are not computed): the waiting there and the rank that was late (UINT32_MAX: none),
 * and the waiting this event's lateness caused on others. */
typedef struct {
    int64_t *wait;
    uint32_t *late;
    int64_t *caused;
} ws_effects;

/* ---- point to point -------------------------------------------------------------------- */

/* What a receiver learns of each message sent to it, in the order they were sent. */
typedef struct {
    uint64_t comm;
    uint32_t tag;
    uint32_t used; /* at the receiver: matched already */
    int64_t enter;
} ws_sent;

typedef struct {
    uint32_t peer;
    ws_sent *out; /* what this rank sent to the peer */
    size_t out_count, out_cap;
    ws_sent *in; /* what the peer sent to this rank (malloc'ed by recv) */
    size_t in_count, cursor; /* cursor: the first entry not matched yet */
    /* The backward pass: per entry of `in`, when this rank posted its receive (INT64_MIN:
     * not received), then per entry the Late Sender waiting its message caused (2 x
     * in_count); `back` is the peer's answer for `out`, 2 x back_count entries. */
    int64_t *posted;
    int64_t *back;
    size_t back_count;
} ws_peer;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static ws_peer *find_peer(ws_peer *peers, size_t n, uint32_t rank)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (peers[mid].peer < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && peers[lo].peer == rank ? &peers[lo] : NULL;
}

static void free_peers(ws_peer *peers, size_t n, uint32_t self)
{
    for (size_t i = 0; i < n; i++) {
        free(peers[i].out);
        free(peers[i].posted);
        if (peers[i].peer != self) {
            free(peers[i].in);
            free(peers[i].back);
        }
    }
    free(peers);
}

/* Sends `data` to `peer` and receives its batch, the lower rank sending first. */
static int exchange_with(const sp_ipc *ipc, uint32_t peer, const void *data, uint64_t bytes,
                         void **in, uint64_t *in_bytes)
{
    bool first = ipc->rank < peer;
    for (int step = 0; step < 2; step++) {
        if ((step == 0) == first) {
            static const int64_t none; /* a non-NULL buffer for an empty batch */
            if (ipc->ops->send(ipc->ctx, data ? data : &none, bytes, peer) != 0)
                return -1;
        } else if (ipc->ops->recv(ipc->ctx, in, in_bytes, peer) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Exchanges the batches of every pair of ranks that exchanged messages: forward, what each
 * sent; backward (`backward`), when each receive was posted. The pairs are visited in
 * increasing (lower rank, higher rank) order on every rank: the smallest pair not done yet
 * always has both ranks at it, so blocking sends cannot deadlock. */
static int exchange_batches(const sp_ipc *ipc, ws_peer *peers, size_t n, bool backward)
{
    for (size_t i = 0; i < n; i++) {
        ws_peer *p = &peers[i];
        if (p->peer == ipc->rank) {
            if (backward) {
                p->back = p->posted;
                p->back_count = p->posted ? p->in_count : 0;
            } else {
                p->in = p->out;
                p->in_count = p->out_count;
            }
            continue;
        }
        void *data = NULL;
        uint64_t bytes = 0;
        if (backward) {
            uint64_t size = p->posted ? 2 * p->in_count * sizeof *p->posted : 0;
            if (exchange_with(ipc, p->peer, p->posted, size, &data, &bytes) != 0)
                return -1;
            p->back = data;
            p->back_count = bytes / (2 * sizeof *p->back);
        } else {
            int s = exchange_with(ipc, p->peer, p->out, p->out_count * sizeof *p->out, &data,
                                  &bytes);
            /* the receiver has its copy: the matching needs only what came in */
            free(p->out);
            p->out = NULL;
            if (s != 0)
                return -1;
            p->in = data;
            p->in_count = bytes / sizeof *p->in;
        }
    }
    return 0;
}

/* Which ranks exchange message batches and which communicators are replayed, agreed by all
 * ranks (through rank 0) before anything is exchanged: a rank whose partner recorded nothing
 * of their messages (recording off, a filter) must not wait for it, and a communicator is
 * replayed only when every member has the same number of instances. */
typedef struct {
    uint32_t *peers; /* sorted, unique: this rank's partners, in both directions */
    size_t npeers;
    uint64_t *keys; /* communicators to replay */
    size_t nkeys;
} ws_plan;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static size_t sort_unique(uint32_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    return k;
}


typedef struct {
    uint64_t key, count;
    uint32_t size, rank;
} ws_comm_report;

static int cmp_comm_report(const void *a, const void *b)
{
    const ws_comm_report *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Rank 0: each rank's part of the plan from everybody's reports. */
static int plan_at_root(uint32_t size, const unsigned char *all, const uint64_t *sizes,
                        void **parts, uint64_t *part_sizes)
{
    uint32_t **peers = calloc(size, sizeof *peers);
    uint32_t *npeers = calloc(size, sizeof *npeers), *cap = calloc(size, sizeof *cap);
    ws_comm_report *reports = NULL;
    size_t nreports = 0, report_cap = 0;
    int status = peers && npeers && cap ? 0 : -1;
    uint64_t offset = 0;
    /* pass 1: every rank's own partners, and its partners' partners that name it */
    for (uint32_t q = 0; q < size && status == 0; q++) {
        sp_reader rd;
        sp_reader_init(&rd, all + offset, sizes[q]);
        offset += sizes[q];
        uint32_t n = sp_reader_u32(&rd);
        for (uint32_t i = 0; i < n && !rd.failed && status == 0; i++) {
            uint32_t p = sp_reader_u32(&rd);
            if (p >= size)
                continue;
            uint32_t ends[2][2] = {{q, p}, {p, q}};
            for (int e = 0; e < 2 && status == 0; e++) {
                uint32_t at = ends[e][0];
                if (npeers[at] == cap[at]) {
                    uint32_t c = cap[at] ? 2 * cap[at] : 8;
                    uint32_t *g = realloc(peers[at], c * sizeof *g);
                    if (!g) {
                        status = -1;
                        break;
                    }
                    peers[at] = g;
                    cap[at] = c;
                }
                peers[at][npeers[at]++] = ends[e][1];
            }
        }
        uint32_t m = sp_reader_u32(&rd);
        for (uint32_t i = 0; i < m && !rd.failed && status == 0; i++) {
            if (nreports == report_cap) {
                size_t c = report_cap ? 2 * report_cap : 64;
                ws_comm_report *g = realloc(reports, c * sizeof *g);
                if (!g) {
                    status = -1;
                    break;
                }
                reports = g;
                report_cap = c;
            }
            ws_comm_report *x = &reports[nreports++];
            x->key = sp_reader_u64(&rd);
            x->count = sp_reader_u64(&rd);
            x->size = sp_reader_u32(&rd);
            x->rank = q;
        }
        if (rd.failed)
            status = -1;
    }
    if (status == 0 && nreports)
        qsort(reports, nreports, sizeof *reports, cmp_comm_report);
    sp_buffer *out = calloc(size, sizeof *out);
    if (!out)
        status = -1;
    for (uint32_t r = 0; r < size && status == 0; r++) {
        sp_buffer_init(&out[r]);
        uint32_t n = peers[r] ? (uint32_t)sort_unique(peers[r], npeers[r]) : 0;
        sp_buffer_u32(&out[r], n);
        for (uint32_t i = 0; i < n; i++)
            sp_buffer_u32(&out[r], peers[r][i]);
    }
    /* communicators every member reported with the same count */
    uint32_t *keys_of = status == 0 ? calloc(size, sizeof *keys_of) : NULL;
    sp_buffer *keys = status == 0 ? calloc(size, sizeof *keys) : NULL;
    if (status == 0 && (!keys_of || !keys))
        status = -1;
    for (uint32_t r = 0; r < size && status == 0; r++)
        sp_buffer_init(&keys[r]);
    for (size_t i = 0; i < nreports && status == 0;) {
        size_t j = i;
        bool same = true;
        while (j < nreports && reports[j].key == reports[i].key) {
            same = same && reports[j].count == reports[i].count &&
                   reports[j].size == reports[i].size;
            j++;
        }
        if (same && j - i == reports[i].size)
            for (size_t k = i; k < j; k++) {
                sp_buffer_u64(&keys[reports[k].rank], reports[k].key);
                keys_of[reports[k].rank]++;
            }
        i = j;
    }
    for (uint32_t r = 0; r < size && status == 0; r++) {
        sp_buffer_u32(&out[r], keys_of[r]);
        sp_buffer_put(&out[r], keys[r].data, keys[r].size);
        if (out[r].failed || keys[r].failed)
            status = -1;
        parts[r] = out[r].data;
        part_sizes[r] = out[r].size;
        out[r].data = NULL;
    }
    for (uint32_t r = 0; r < size; r++) {
        if (peers)
            free(peers[r]);
        if (keys)
            sp_buffer_free(&keys[r]);
        if (out)
            sp_buffer_free(&out[r]);
    }
    free(peers);
    free(npeers);
    free(cap);
    free(reports);
    free(out);
    free(keys);
    free(keys_of);
    return status;
}

static int make_plan(const sp_ipc *ipc, const sp_ws_event *ev, size_t count,
                     const sp_ws_comm *comms, uint32_t comm_count, ws_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    uint32_t *ranks = malloc((count ? count : 1) * sizeof *ranks);
    uint64_t *per_comm = calloc(comm_count ? comm_count : 1, sizeof *per_comm);
    if (!ranks || !per_comm) {
        free(ranks);
        free(per_comm);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        if (ev[i].kind != SP_WS_COLL)
            ranks[n++] = ev[i].peer;
        else if (ev[i].kind == SP_WS_COLL && classify(ev[i].op) != CLASS_NONE)
            for (uint32_t c = 0; c < comm_count; c++)
                if (comms[c].key == ev[i].comm) {
                    per_comm[c]++;
                    break;
                }
    }
    n = sort_unique(ranks, n);
    sp_buffer b;
    sp_buffer_init(&b);
    sp_buffer_u32(&b, (uint32_t)n);
    for (size_t i = 0; i < n; i++)
        sp_buffer_u32(&b, ranks[i]);
    uint32_t m = 0;
    for (uint32_t c = 0; c < comm_count; c++)
        m += per_comm[c] > 0;
    sp_buffer_u32(&b, m);
    for (uint32_t c = 0; c < comm_count; c++)
        if (per_comm[c]) {
            sp_buffer_u64(&b, comms[c].key);
            sp_buffer_u64(&b, per_comm[c]);
            sp_buffer_u32(&b, comms[c].size);
        }
    free(ranks);
    free(per_comm);
    int status = b.failed ? -1 : 0;
    void *all = NULL;
    uint64_t *sizes = malloc(ipc->size * sizeof *sizes);
    void **parts = ipc->rank == 0 ? calloc(ipc->size, sizeof *parts) : NULL;
    uint64_t *part_sizes = ipc->rank == 0 ? calloc(ipc->size, sizeof *part_sizes) : NULL;
    if (!sizes || (ipc->rank == 0 && (!parts || !part_sizes)))
        status = -1;
    /* Every rank takes part in both steps, even after a failure here, so that none waits. */
    if (sp_ipc_gather_bytes(ipc, b.data, b.failed ? 0 : b.size, &all, sizes) != 0)
        status = -1;
    if (ipc->rank == 0 && status == 0 &&
        plan_at_root(ipc->size, all, sizes, parts, part_sizes) != 0)
        status = -1;
    void *mine = NULL;
    uint64_t mine_size = 0;
    if (ipc->rank == 0 && status != 0 && parts && part_sizes)
        for (uint32_t r = 0; r < ipc->size; r++)
            part_sizes[r] = 0; /* an empty plan: nobody exchanges anything */
    if (sp_ipc_scatter_bytes(ipc, parts, part_sizes, &mine, &mine_size) != 0)
        status = -1;
    sp_buffer_free(&b);
    free(all);
    free(sizes);
    if (parts)
        for (uint32_t r = 0; r < ipc->size; r++)
            free(parts[r]);
    free(parts);
    free(part_sizes);
    sp_reader rd;
    sp_reader_init(&rd, mine, mine_size);
    uint32_t np = mine_size ? sp_reader_u32(&rd) : 0;
    plan->peers = malloc((np ? np : 1) * sizeof *plan->peers);
    for (uint32_t i = 0; plan->peers && i < np; i++)
        plan->peers[i] = sp_reader_u32(&rd);
    plan->npeers = plan->peers ? np : 0;
    uint32_t nk = mine_size ? sp_reader_u32(&rd) : 0;
    plan->keys = malloc((nk ? nk : 1) * sizeof *plan->keys);
    for (uint32_t i = 0; plan->keys && i < nk; i++)
        plan->keys[i] = sp_reader_u64(&rd);
    plan->nkeys = plan->keys ? nk : 0;
    free(mine);
    if (rd.failed || !plan->peers || !plan->keys || (mine_size == 0 && status == 0))
        status = -1;
    return status;
}

/* The messages general active target synchronization is re-enacted with: tags no MPI
 * message has (MPI's are non-negative ints), on the window's key. */
#define TAG_GATS_POST 0x80000001u
#define TAG_GATS_COMPLETE 0x80000002u

/* Operations whose times go to the peer in the forward pass, and the tag they go with. */
static bool sent_kind(uint8_t kind)
{
    return kind == SP_WS_SEND || kind == SP_WS_GATS_POST || kind == SP_WS_GATS_COMPLETE;
}

static uint32_t sent_tag(const sp_ws_event *e)
{
    return e->kind == SP_WS_GATS_POST       ? TAG_GATS_POST
           : e->kind == SP_WS_GATS_COMPLETE ? TAG_GATS_COMPLETE
                                            : e->tag;
}

/* The oldest unmatched entry of `p->in` on `comm` with `tag` (marked matched), as MPI
 * matches messages; SIZE_MAX when there is none. */
static size_t match_in(ws_peer *p, uint64_t comm, uint32_t tag)
{
    while (p && p->cursor < p->in_count && p->in[p->cursor].used)
        p->cursor++;
    for (size_t j = p ? p->cursor : 0; p && j < p->in_count; j++)
        if (!p->in[j].used && p->in[j].comm == comm && p->in[j].tag == tag) {
            p->in[j].used = 1;
            return j;
        }
    return SIZE_MAX;
}

/* An origin's open access epoch on a window (between MPI_Win_start and _complete). */
typedef struct {
    uint64_t win;
    uint32_t call, cnode; /* the start's completion id and call path */
    int64_t enter, leave; /* the start's */
    int64_t last_post;    /* the latest enter of a target's MPI_Win_post */
} ws_access;

/* Late Post for the access epoch `a` that the complete `e` ends (Scalasca's order: the
 * waiting is where the last post fell, the complete or else a blocking start). */
static void late_post(sp_ws_result *r, const ws_access *a, const sp_ws_event *e)
{
    int64_t post = a->last_post;
    if (post == INT64_MIN)
        return;
    if (e->enter < post && post < e->leave)
        charge(r, e->cnode, SP_WS_RMA_LATE_POST, post - e->enter);
    else if (a->enter < post && post < a->leave)
        charge(r, a->cnode, SP_WS_RMA_LATE_POST, post - a->enter);
}

#define NO_MATCH UINT64_MAX

/* Charges one Late Sender instance (`e`: the last receive of the call), and remembers a
 * waiting MPI_Waitall's completion id (its sends are no Late Receiver). */
static int charge_late_sender(sp_ws_result *r, const sp_ws_event *e, int64_t ls, int64_t wo,
                              bool empty, uint32_t **calls, size_t *ncalls, size_t *cap)
{
    charge(r, e->cnode, SP_WS_LATE_SENDER, ls);
    charge(r, e->cnode, SP_WS_LATE_SENDER_WO, wo);
    if (ls > 0)
        count_instance(r, e->cnode, empty ? SP_WS_SLS_COUNT : SP_WS_CLS_COUNT);
    if (wo > 0)
        count_instance(r, e->cnode, empty ? SP_WS_SLSWO_COUNT : SP_WS_CLSWO_COUNT);
    if (ls <= 0 || !(e->op & SP_WS_MULTI))
        return 0;
    if (*ncalls == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        uint32_t *g = realloc(*calls, c * sizeof *g);
        if (!g)
            return -1;
        *calls = g;
        *cap = c;
    }
    (*calls)[(*ncalls)++] = e->completion;
    return 0;
}

/* With the delay costs: the instance (`ls` > 0) waited for the sender of receive `i`
 * (matched to entry `m` of a peer's messages), which caused it. */
static void note_late_sender(ws_effects *fx, ws_peer *peers, uint64_t m, size_t i, int64_t ls)
{
    if (!fx || ls <= 0 || m == NO_MATCH)
        return;
    ws_peer *p = &peers[m >> 32];
    fx->wait[i] = ls;
    fx->late[i] = p->peer;
    p->posted[p->in_count + (uint32_t)m] = ls;
}

/* A Late Receiver instance of the sends one MPI_Waitall/any/some completed. */
typedef struct {
    uint32_t call, cnode;
    int64_t wait;
    bool empty;
    size_t event; /* its send's index: where the delay effects are noted */
} ws_multi_lr;

static int cmp_multi_lr(const void *a, const void *b)
{
    const ws_multi_lr *x = a, *y = b;
    return x->call < y->call ? -1 : x->call > y->call;
}

static int replay_messages(const sp_ipc *ipc, const sp_ws_event *ev, size_t count,
                           const ws_plan *plan, sp_ws_result *r, ws_effects *fx, char *err,
                           size_t errlen)
{
    size_t nrecv = 0, npeers = plan->npeers;
    for (size_t i = 0; i < count; i++)
        nrecv += ev[i].kind == SP_WS_RECV;
    ws_peer *peers = calloc(npeers ? npeers : 1, sizeof *peers);
    if (!peers)
        return sp_error(err, errlen, "out of memory in the wait-state analysis");
    for (size_t i = 0; i < npeers; i++)
        peers[i].peer = plan->peers[i];
    int status = 0;
    for (size_t i = 0; i < count && status == 0; i++) {
        if (!sent_kind(ev[i].kind))
            continue;
        if (ev[i].peer >= ipc->size) {
            status = sp_error(err, errlen, "a message to rank %u of a group of %u",
                              ev[i].peer, ipc->size);
            break;
        }
        ws_peer *p = find_peer(peers, npeers, ev[i].peer);
        if (!p)
            continue;
        if (p->out_count == p->out_cap) {
            size_t cap = p->out_cap ? 2 * p->out_cap : 16;
            ws_sent *grown = realloc(p->out, cap * sizeof *grown);
            if (!grown) {
                status = sp_error(err, errlen, "out of memory in the wait-state analysis");
                break;
            }
            p->out = grown;
            p->out_cap = cap;
        }
        p->out[p->out_count++] = (ws_sent){ev[i].comm, sent_tag(&ev[i]), 0, ev[i].enter};
    }
    bool exchanged = status == 0 && exchange_batches(ipc, peers, npeers, false) == 0;
    if (status == 0 && !exchanged)
        status = sp_error(err, errlen, "the wait-state analysis could not exchange messages");
    for (size_t i = 0; i < npeers && status == 0; i++) {
        peers[i].posted = malloc((peers[i].in_count ? 2 * peers[i].in_count : 1) *
                                 sizeof *peers[i].posted);
        if (!peers[i].posted)
            status = sp_error(err, errlen, "out of memory in the wait-state analysis");
        for (size_t j = 0; peers[i].posted && j < peers[i].in_count; j++) {
            peers[i].posted[j] = INT64_MIN;
            peers[i].posted[peers[i].in_count + j] = 0;
        }
    }
    /* Each receive's send, matched as MPI does: the oldest unmatched message of the same
     * source, communicator and tag; per receive, in the order of the receives, where its
     * send's entry is (peer index << 32 | entry, NO_MATCH): 8 bytes a receive. */
    uint64_t *match = malloc((nrecv ? nrecv : 1) * sizeof *match);
    if (status == 0 && !match)
        status = sp_error(err, errlen, "out of memory in the wait-state analysis");
    size_t k = 0;
    /* general active target synchronization: the origins' open access epochs (a few: one
     * per window at most), and the latest complete of the target's epoch being ended */
    ws_access *access = NULL;
    size_t naccess = 0, access_cap = 0;
    int64_t last_complete = INT64_MIN;
    for (size_t i = 0; i < count && status == 0; i++) {
        const sp_ws_event *e = &ev[i];
        if (e->kind == SP_WS_GATS_START || e->kind == SP_WS_GATS_WAIT) {
            ws_peer *p = find_peer(peers, npeers, e->peer);
            size_t j = match_in(p, e->comm, e->kind == SP_WS_GATS_START ? TAG_GATS_POST
                                                                        : TAG_GATS_COMPLETE);
            int64_t t = j == SIZE_MAX ? INT64_MIN : p->in[j].enter;
            if (e->kind == SP_WS_GATS_WAIT) {
                if (t > last_complete)
                    last_complete = t;
                bool last = i + 1 == count || ev[i + 1].kind != SP_WS_GATS_WAIT ||
                            ev[i + 1].completion != e->completion;
                if (last) {
                    if (!(e->op & SP_WS_TESTED) && last_complete != INT64_MIN)
                        charge(r, e->cnode, SP_WS_RMA_EARLY_WAIT,
                               min64(last_complete, e->leave) - e->enter);
                    last_complete = INT64_MIN;
                }
                continue;
            }
            ws_access *a = NULL;
            for (size_t q = 0; q < naccess && !a; q++)
                if (access[q].win == e->comm && access[q].call == e->completion)
                    a = &access[q];
            if (!a) {
                if (naccess == access_cap) {
                    size_t cap = access_cap ? 2 * access_cap : 4;
                    ws_access *g = realloc(access, cap * sizeof *g);
                    if (!g) {
                        status = sp_error(err, errlen, "out of memory in the wait-state analysis");
                        break;
                    }
                    access = g;
                    access_cap = cap;
                }
                a = &access[naccess++];
                *a = (ws_access){e->comm, e->completion, e->cnode, e->enter, e->leave, INT64_MIN};
            }
            if (t > a->last_post)
                a->last_post = t;
            continue;
        }
        if (e->kind == SP_WS_GATS_COMPLETE) {
            /* the first complete of the call ends the window's access epoch */
            for (size_t q = 0; q < naccess; q++)
                if (access[q].win == e->comm) {
                    late_post(r, &access[q], e);
                    access[q] = access[--naccess];
                    break;
                }
            continue;
        }
        if (e->kind != SP_WS_RECV)
            continue;
        ws_peer *p = find_peer(peers, npeers, e->peer);
        size_t j = match_in(p, e->comm, e->tag);
        if (j != SIZE_MAX) {
            p->posted[j] = e->op & SP_WS_POSTED ? e->posted : e->enter;
            match[k++] = (uint64_t)(p - peers) << 32 | j;
        } else {
            r->unmatched++;
            match[k++] = NO_MATCH;
        }
    }
    free(access);
    /* The calls (completion ids) of several receives that were a Late Sender: the sends
     * they completed too are no Late Receiver (the waiting is counted once, there). */
    uint32_t *ls_calls = NULL;
    size_t nls_calls = 0, ls_cap = 0;
    /* Late Sender, one instance per receive or per group of receives one call completed
     * (consecutive, sharing `completion`); the instance is a synchronization (Scalasca's
     * count metrics) when none of its messages carried data. One sweep from the last
     * receive back: Wrong Order needs, per receive, the earliest send of a message
     * received after it (after its whole Waitall), which it could have received instead
     * when that was sent before it began to wait. A group is charged when the sweep
     * leaves it, to the call path of its last receive (the first the sweep met). */
    int64_t suffix = INT64_MAX, group_min = INT64_MAX, ls = 0, wo = 0;
    uint32_t group = 0;
    const sp_ws_event *charged_at = NULL; /* the current group's last receive */
    bool empty = true;
    size_t q = k;
    uint64_t latest_match = NO_MATCH; /* the group's receive whose sender was the latest */
    size_t latest = 0;
    for (size_t i = count; status == 0 && i-- > 0;) {
        const sp_ws_event *e = &ev[i];
        if (e->kind != SP_WS_RECV)
            continue;
        q--;
        if (e->completion == 0 || e->completion != group || !charged_at) {
            if (charged_at &&
                charge_late_sender(r, charged_at, ls, wo, empty, &ls_calls, &nls_calls,
                                   &ls_cap) != 0)
                status = sp_error(err, errlen, "out of memory in the wait-state analysis");
            if (charged_at)
                note_late_sender(fx, peers, latest_match, latest, ls);
            latest_match = NO_MATCH;
            suffix = min64(suffix, group_min);
            group_min = INT64_MAX;
            ls = wo = 0;
            empty = true;
            charged_at = e;
        }
        group = e->completion;
        int64_t send_enter = match[q] == NO_MATCH
                                 ? INT64_MAX
                                 : peers[match[q] >> 32].in[(uint32_t)match[q]].enter;
        group_min = min64(group_min, send_enter);
        empty = empty && (e->op & SP_WS_EMPTY);
        if (send_enter == INT64_MAX)
            continue;
        if (e->leave < send_enter) {
            r->clock_violations++;
            continue;
        }
        int64_t w = min64(send_enter, e->leave) - e->enter;
        if (w > ls) {
            ls = w;
            latest_match = match[q];
            latest = i;
        }
        if (w > 0 && suffix < e->enter && w > wo)
            wo = w;
    }
    if (status == 0 && charged_at &&
        charge_late_sender(r, charged_at, ls, wo, empty, &ls_calls, &nls_calls, &ls_cap) != 0)
        status = sp_error(err, errlen, "out of memory in the wait-state analysis");
    if (status == 0 && charged_at)
        note_late_sender(fx, peers, latest_match, latest, ls);
    /* What the forward pass needed goes before the backward pass allocates: the replay's
     * working memory stays below its input's. */
    free(match);
    for (size_t i = 0; i < npeers; i++) {
        if (peers[i].peer != ipc->rank)
            free(peers[i].in);
        free(peers[i].out);
        peers[i].in = peers[i].out = NULL;
    }
    /* The backward pass: every receiver tells each sender when it posted the receive of
     * each message (all ranks of a pair take part, also after a failure here, so that none
     * waits), and a blocking send still in its call then waited for it: Late Receiver. */
    if (exchanged && exchange_batches(ipc, peers, npeers, true) != 0 && status == 0)
        status = sp_error(err, errlen, "the wait-state analysis could not exchange messages");
    for (size_t i = 0; i < npeers && status == 0; i++)
        peers[i].cursor = 0; /* now: the next entry of `out`, in the order of the sends */
    ws_multi_lr *multi = NULL;
    size_t nmulti = 0, multi_cap = 0;
    if (nls_calls)
        qsort(ls_calls, nls_calls, sizeof *ls_calls, cmp_u32);
    for (size_t i = 0; i < count && status == 0; i++) {
        const sp_ws_event *e = &ev[i];
        if (!sent_kind(e->kind))
            continue;
        ws_peer *p = find_peer(peers, npeers, e->peer);
        if (!p)
            continue;
        size_t j = p->cursor++;
        if (fx && j < p->back_count)
            fx->caused[i] = p->back[p->back_count + j];
        if (e->kind != SP_WS_SEND || !(e->op & (SP_WS_BLOCKING | SP_WS_WAITED)) ||
            j >= p->back_count || p->back[j] == INT64_MIN)
            continue;
        int64_t posted = p->back[j];
        /* a waited non-blocking send waits in its MPI_Wait*, from that call's enter */
        int64_t enter = e->op & SP_WS_WAITED ? e->posted : e->enter;
        if (e->leave < posted)
            continue; /* it left before the receive was posted: it did not wait */
        int64_t w = posted - enter;
        if (w <= 0)
            continue;
        if (!(e->op & SP_WS_MULTI)) {
            if (fx) {
                fx->wait[i] = w;
                fx->late[i] = e->peer;
            }
            charge(r, e->cnode, SP_WS_LATE_RECEIVER, w);
            count_instance(r, e->cnode, e->op & SP_WS_EMPTY ? SP_WS_SLR_COUNT : SP_WS_CLR_COUNT);
            continue;
        }
        if (bsearch(&e->completion, ls_calls, nls_calls, sizeof *ls_calls, cmp_u32))
            continue;
        if (nmulti == multi_cap) {
            size_t cap = multi_cap ? 2 * multi_cap : 16;
            ws_multi_lr *g = realloc(multi, cap * sizeof *g);
            if (!g) {
                status = sp_error(err, errlen, "out of memory in the wait-state analysis");
                break;
            }
            multi = g;
            multi_cap = cap;
        }
        multi[nmulti++] = (ws_multi_lr){e->completion, e->cnode, w, (e->op & SP_WS_EMPTY) != 0, i};
    }
    /* the sends one call completed: one instance, with the longest waiting */
    if (status == 0 && nmulti)
        qsort(multi, nmulti, sizeof *multi, cmp_multi_lr);
    for (size_t i = 0; i < nmulti && status == 0;) {
        size_t best = i, j = i;
        for (; j < nmulti && multi[j].call == multi[i].call; j++)
            if (multi[j].wait > multi[best].wait)
                best = j;
        charge(r, multi[best].cnode, SP_WS_LATE_RECEIVER, multi[best].wait);
        if (fx) {
            fx->wait[multi[best].event] = multi[best].wait;
            fx->late[multi[best].event] = ev[multi[best].event].peer;
        }
        count_instance(r, multi[best].cnode,
                       multi[best].empty ? SP_WS_SLR_COUNT : SP_WS_CLR_COUNT);
        i = j;
    }
    free(multi);
    free(ls_calls);
    free_peers(peers, npeers, ipc->rank);
    return status;
}

/* ---- collectives ----------------------------------------------------------------------- */

static op_class classify(uint8_t op)
{
    switch (op) {
    case SP_COLL_BARRIER:
        return CLASS_BARRIER;
    case SP_COLL_ALLREDUCE:
    case SP_COLL_ALLGATHER:
    case SP_COLL_ALLGATHERV:
    case SP_COLL_ALLTOALL:
    case SP_COLL_ALLTOALLV:
    case SP_COLL_ALLTOALLW:
    case SP_COLL_REDUCE_SCATTER:
    case SP_COLL_REDUCE_SCATTER_BLOCK:
        return CLASS_NXN;
    case SP_COLL_BCAST:
    case SP_COLL_SCATTER:
    case SP_COLL_SCATTERV:
        return CLASS_BCAST;
    case SP_COLL_REDUCE:
    case SP_COLL_GATHER:
    case SP_COLL_GATHERV:
        return CLASS_REDUCE;
    case SP_COLL_SCAN:
    case SP_COLL_EXSCAN:
        return CLASS_SCAN;
    case SP_WS_OP_INIT:
        return CLASS_INIT;
    case SP_WS_OP_FINALIZE:
        return CLASS_FINALIZE;
    case SP_WS_OP_FENCE:
        return CLASS_FENCE;
    default:
        return CLASS_NONE;
    }
}

/* One instance as a member reports it to the communicator's leader. */
typedef struct {
    uint32_t op, root;
    int64_t enter, leave;
} ws_instance;

/* What the leader tells a member: its waiting and its completion time, in ns, the rank it
 * waited for and the waiting of the others it caused by coming late. */
typedef struct {
    int64_t wait, completion, caused;
    uint32_t late, unused;
} ws_verdict;

static int cmp_comm(const void *a, const void *b)
{
    const sp_ws_comm *x = *(const sp_ws_comm *const *)a, *y = *(const sp_ws_comm *const *)b;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* The leader's computation for instance `i` of every member (`all[m]` is member m's list). */
static void judge(ws_instance *const *all, uint32_t members, const uint32_t *ranks, size_t i,
                  ws_verdict *out)
{
    op_class c = classify((uint8_t)all[0][i].op);
    int64_t max_enter = INT64_MIN, min_leave = INT64_MAX, root_enter = INT64_MAX,
            first_other = INT64_MAX;
    uint32_t root = all[0][i].root, last = 0, root_m = UINT32_MAX, first_m = UINT32_MAX;
    for (uint32_t m = 0; m < members; m++) {
        const ws_instance *x = &all[m][i];
        if (x->enter > max_enter) {
            max_enter = x->enter;
            last = m;
        }
        if (x->leave < min_leave)
            min_leave = x->leave;
        if (ranks[m] == root) {
            root_enter = x->enter;
            root_m = m;
        } else if (x->enter < first_other) {
            first_other = x->enter;
            first_m = m;
        }
    }
    int64_t prefix = INT64_MIN;
    uint32_t prefix_m = 0;
    int64_t total = 0;
    for (uint32_t m = 0; m < members; m++) {
        const ws_instance *x = &all[m][i];
        ws_verdict v = {0, 0, 0, UINT32_MAX, 0};
        switch (c) {
        case CLASS_BARRIER:
        case CLASS_NXN:
        case CLASS_FINALIZE:
        case CLASS_FENCE:
            v.wait = min64(max_enter, x->leave) - x->enter;
            v.late = ranks[last];
            if (c != CLASS_FINALIZE && c != CLASS_FENCE)
                v.completion = x->leave - min_leave;
            break;
        case CLASS_INIT:
            v.completion = x->leave - min_leave;
            break;
        case CLASS_BCAST:
            if (ranks[m] != root && root_enter != INT64_MAX) {
                v.wait = min64(root_enter, x->leave) - x->enter;
                v.late = root;
            }
            break;
        case CLASS_REDUCE:
            if (ranks[m] == root && first_other != INT64_MAX) {
                v.wait = min64(first_other, x->leave) - x->enter;
                v.late = ranks[first_m];
            }
            break;
        case CLASS_SCAN:
            if (x->enter > prefix) {
                prefix = x->enter;
                prefix_m = m;
            }
            v.wait = min64(prefix, x->leave) - x->enter;
            v.late = ranks[prefix_m];
            break;
        case CLASS_NONE:
            break;
        }
        if (v.wait <= 0)
            v.late = UINT32_MAX;
        total += v.wait > 0 ? v.wait : 0;
        out[m] = v;
    }
    /* the one who came late caused the others' waiting (a scan's waiting has several) */
    uint32_t culprit = c == CLASS_BCAST ? root_m : c == CLASS_REDUCE ? first_m
                       : c == CLASS_SCAN || c == CLASS_INIT || c == CLASS_NONE ? UINT32_MAX
                                                                               : last;
    if (culprit < members)
        out[culprit].caused = total;
}

/* Per class of collective, the metrics its waiting and its completion time go to (-1:
 * none); every class is listed, since a zero would name SP_WS_LATE_SENDER. */
static const struct {
    int wait, completion;
} class_metrics[] = {
    [CLASS_NONE] = {-1, -1},
    [CLASS_BARRIER] = {SP_WS_BARRIER_WAIT, SP_WS_BARRIER_COMPLETION},
    [CLASS_NXN] = {SP_WS_WAIT_NXN, SP_WS_NXN_COMPLETION},
    [CLASS_BCAST] = {SP_WS_LATE_BROADCAST, -1},
    [CLASS_REDUCE] = {SP_WS_EARLY_REDUCE, -1},
    [CLASS_SCAN] = {SP_WS_EARLY_SCAN, -1},
    [CLASS_INIT] = {-1, SP_WS_INIT_COMPLETION},
    [CLASS_FINALIZE] = {SP_WS_FINALIZE_WAIT, -1},
    [CLASS_FENCE] = {SP_WS_RMA_WAIT_AT_FENCE, -1},
};

static void charge_collective(sp_ws_result *r, const sp_ws_event *e, const ws_verdict *v)
{
    op_class c = classify(e->op);
    if (class_metrics[c].wait >= 0)
        charge(r, e->cnode, (sp_ws_metric)class_metrics[c].wait, v->wait);
    if (class_metrics[c].completion >= 0)
        charge(r, e->cnode, (sp_ws_metric)class_metrics[c].completion, v->completion);
}

/* The collectives of one communicator: members send their instances to the lowest rank,
 * which sends each its verdicts. `mine` holds this rank's instances (n of them). */
static int replay_comm(const sp_ipc *ipc, const sp_ws_comm *comm, const ws_instance *mine,
                       size_t n, ws_verdict *verdicts, sp_ws_result *r)
{
    uint32_t leader = UINT32_MAX, self_index = UINT32_MAX;
    for (uint32_t m = 0; m < comm->size; m++) {
        if (comm->members[m] < leader)
            leader = comm->members[m];
        if (comm->members[m] == ipc->rank)
            self_index = m;
    }
    if (self_index == UINT32_MAX)
        return 0;
    if (ipc->rank != leader) {
        void *data = NULL;
        uint64_t bytes = 0;
        if (ipc->ops->send(ipc->ctx, mine, n * sizeof *mine, leader) != 0 ||
            ipc->ops->recv(ipc->ctx, &data, &bytes, leader) != 0)
            return -1;
        if (bytes == n * sizeof *verdicts)
            memcpy(verdicts, data, bytes);
        else
            r->collectives_skipped += n;
        free(data);
        return bytes == n * sizeof *verdicts ? 0 : 1;
    }
    uint32_t size = comm->size;
    ws_instance **all = calloc(size, sizeof *all);
    ws_verdict **out = calloc(size, sizeof *out);
    ws_verdict *row = malloc(size * sizeof *row);
    int status = all && out && row ? 0 : -1;
    bool agree = true;
    for (uint32_t m = 0; m < size && status == 0; m++) {
        if (m == self_index) {
            all[m] = (ws_instance *)mine;
            continue;
        }
        void *data = NULL;
        uint64_t bytes = 0;
        if (ipc->ops->recv(ipc->ctx, &data, &bytes, comm->members[m]) != 0) {
            status = -1;
            break;
        }
        all[m] = data;
        if (bytes != n * sizeof *mine)
            agree = false;
    }
    for (size_t i = 0; i < n && agree && status == 0; i++)
        for (uint32_t m = 1; m < size; m++)
            if (all[m][i].op != all[0][i].op || all[m][i].root != all[0][i].root)
                agree = false;
    for (uint32_t m = 0; m < size && status == 0 && agree; m++)
        if (!(out[m] = malloc((n ? n : 1) * sizeof **out)))
            status = -1;
    if (status == 0 && agree)
        for (size_t i = 0; i < n; i++) {
            judge(all, size, comm->members, i, row);
            for (uint32_t m = 0; m < size; m++)
                out[m][i] = row[m];
        }
    for (uint32_t m = 0; m < size && status == 0; m++) {
        if (m == self_index) {
            if (agree)
                memcpy(verdicts, out[m], n * sizeof *verdicts);
            continue;
        }
        /* A disagreement is answered with nothing: every member skips the communicator. */
        if (ipc->ops->send(ipc->ctx, agree ? (void *)out[m] : (void *)"", agree ? n * sizeof **out : 0,
                           comm->members[m]) != 0)
            status = -1;
    }
    if (!agree)
        r->collectives_skipped += n;
    for (uint32_t m = 0; m < size; m++) {
        if (all && m != self_index)
            free(all ? all[m] : NULL);
        if (out)
            free(out[m]);
    }
    free(all);
    free(out);
    free(row);
    return status != 0 ? -1 : agree ? 0 : 1;
}

static int replay_collectives(const sp_ipc *ipc, const sp_ws_event *ev, size_t count,
                              const sp_ws_comm *comms, uint32_t comm_count, const ws_plan *plan,
                              sp_ws_result *r, ws_effects *fx, char *err, size_t errlen)
{
    /* Sized by the largest communicator's instances, not by all operations: most
     * operations are messages (a rank of 10^6 trace events: 3 600 of 96 800), and these
     * arrays came on top of the input at the replay's peak. */
    size_t most = 0;
    for (uint32_t c = 0; c < comm_count; c++) {
        size_t n = 0;
        for (size_t i = 0; i < count; i++)
            n += ev[i].kind == SP_WS_COLL && ev[i].comm == comms[c].key &&
                 classify(ev[i].op) != CLASS_NONE;
        most = n > most ? n : most;
    }
    const sp_ws_comm **order = malloc((comm_count ? comm_count : 1) * sizeof *order);
    ws_instance *mine = malloc((most ? most : 1) * sizeof *mine);
    ws_verdict *verdicts = malloc((most ? most : 1) * sizeof *verdicts);
    size_t *index = malloc((most ? most : 1) * sizeof *index);
    int status = 0;
    if (!order || !mine || !verdicts || !index)
        status = sp_error(err, errlen, "out of memory in the wait-state analysis");
    for (uint32_t c = 0; c < comm_count && status == 0; c++)
        order[c] = &comms[c];
    if (status == 0)
        qsort(order, comm_count, sizeof *order, cmp_comm);
    /* Communicators in increasing key order on every rank: the smallest one not done yet
     * has all its members at it. */
    for (uint32_t c = 0; c < comm_count && status == 0; c++) {
        size_t n = 0;
        for (size_t i = 0; i < count; i++)
            if (ev[i].kind == SP_WS_COLL && ev[i].comm == order[c]->key &&
                classify(ev[i].op) != CLASS_NONE) {
                mine[n] = (ws_instance){ev[i].op, ev[i].root, ev[i].enter, ev[i].leave};
                index[n++] = i;
            }
        bool planned = bsearch(&order[c]->key, plan->keys, plan->nkeys, sizeof *plan->keys,
                               cmp_u64) != NULL;
        if (!planned)
            r->collectives_skipped += n;
        if (n == 0 || !planned)
            continue;
        int done = replay_comm(ipc, order[c], mine, n, verdicts, r);
        if (done < 0)
            status = sp_error(err, errlen,
                              "the wait-state analysis could not exchange collective times");
        else if (done == 0)
            for (size_t j = 0; j < n; j++) {
                charge_collective(r, &ev[index[j]], &verdicts[j]);
                if (fx) {
                    fx->wait[index[j]] = verdicts[j].wait;
                    fx->late[index[j]] = verdicts[j].late;
                    fx->caused[index[j]] = verdicts[j].caused;
                }
            }
    }
    free(order);
    free(mine);
    free(verdicts);
    free(index);
    return status;
}

static int replay(const sp_ipc *ipc, const sp_ws_event *events, size_t count,
                  const sp_ws_comm *comms, uint32_t comm_count, sp_ws_result *result,
                  ws_effects *fx, char *err, size_t errlen)
{
    if (!ipc->ops->send || !ipc->ops->recv)
        return sp_error(err, errlen, "the wait-state analysis needs point-to-point messages");
    ws_plan plan;
    if (make_plan(ipc, events, count, comms, comm_count, &plan) != 0) {
        free(plan.peers);
        free(plan.keys);
        return sp_error(err, errlen, "the wait-state analysis could not agree on a plan");
    }
    qsort(plan.keys, plan.nkeys, sizeof *plan.keys, cmp_u64);
    int status = replay_messages(ipc, events, count, &plan, result, fx, err, errlen);
    if (status == 0)
        status = replay_collectives(ipc, events, count, comms, comm_count, &plan, result, fx,
                                    err, errlen);
    free(plan.peers);
    free(plan.keys);
    return status;
}

int sp_ws_replay(const sp_ipc *ipc, const sp_ws_event *events, size_t count,
                 const sp_ws_comm *comms, uint32_t comm_count, sp_ws_result *result, char *err,
                 size_t errlen)
{
    return replay(ipc, events, count, comms, comm_count, result, NULL, err, errlen);
}

/* ---- the critical path and the delay costs ---------------------------------------------- */

/* A location's timeline, or NULL. */
static const sp_ws_timeline *timeline_of(const sp_ws_input *in, uint32_t location)
{
    for (uint32_t k = 0; k < in->timeline_count; k++)
        if (in->timelines[k].location == location)
            return &in->timelines[k];
    return NULL;
}

/* Reads a timeline's pieces in order, in either form (waitstates.h). */
typedef struct {
    const sp_ws_input *in;
    size_t i;                /* the current piece */
    int64_t time;
    uint32_t path;
    size_t block;            /* compact: the current piece's block */
    size_t block_end;        /* compact: the next block's first piece (SIZE_MAX: none) */
    const uint8_t *p;        /* compact: the next piece's bytes */
} ws_pieces;

static inline uint64_t get_varint(const uint8_t **p)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t byte = *(*p)++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80) || shift >= 63)
            return v;
    }
}

static uint32_t path_of(uint64_t v)
{
    return v ? (uint32_t)(v - 1) : SP_WS_NO_PATH;
}

/* The cursor at the first piece of compact block `k`. */
static void pieces_at_block(ws_pieces *c, size_t k)
{
    const sp_ws_piece_block *blk = &c->in->piece_blocks[k];
    c->block = k;
    c->block_end = k + 1 < c->in->piece_block_count ? c->in->piece_blocks[k + 1].first : SIZE_MAX;
    c->i = blk->first;
    c->time = blk->time;
    c->p = c->in->piece_bytes + blk->offset;
    c->path = path_of(get_varint(&c->p));
}

/* To the next piece (i + 1 < piece_count). */
static inline void pieces_next(ws_pieces *c)
{
    const sp_ws_input *in = c->in;
    c->i++;
    if (in->piece_time) {
        c->time = in->piece_time[c->i];
        c->path = in->piece_path[c->i];
    } else if (c->i == c->block_end) {
        pieces_at_block(c, c->block + 1);
    } else {
        c->time += (int64_t)get_varint(&c->p);
        c->path = path_of(get_varint(&c->p));
    }
}

/* The cursor at piece `i` (< piece_count). */
static void pieces_seek(ws_pieces *c, const sp_ws_input *in, size_t i)
{
    c->in = in;
    if (in->piece_time) {
        c->i = i;
        c->time = in->piece_time[i];
        c->path = in->piece_path[i];
        return;
    }
    size_t lo = 0, hi = in->piece_block_count; /* the last block that begins at or before i */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (in->piece_blocks[mid].first <= i)
            lo = mid;
        else
            hi = mid;
    }
    pieces_at_block(c, lo);
    while (c->i < i)
        pieces_next(c);
}

void sp_ws_input_piece(const sp_ws_input *in, size_t i, int64_t *time, uint32_t *path)
{
    ws_pieces c;
    pieces_seek(&c, in, i);
    *time = c.time;
    *path = c.path;
}

static int64_t piece_time_at(const sp_ws_input *in, size_t i)
{
    int64_t time;
    uint32_t path;
    sp_ws_input_piece(in, i, &time, &path);
    return time;
}

/* The cursor at the last piece of timeline `tl` (not empty) that begins at or before `a`,
 * or at its first piece. */
static void pieces_find(ws_pieces *c, const sp_ws_input *in, const sp_ws_timeline *tl, int64_t a)
{
    size_t lo = tl->first, hi = tl->end;
    if (in->piece_time) {
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (in->piece_time[mid] <= a)
                lo = mid;
            else
                hi = mid;
        }
        pieces_seek(c, in, lo);
        return;
    }
    /* the blocks of the timeline (a location's first piece begins one), then within one */
    pieces_seek(c, in, tl->first);
    size_t blo = c->block, bhi = in->piece_block_count;
    while (bhi - blo > 1) {
        size_t mid = blo + (bhi - blo) / 2;
        if (in->piece_blocks[mid].first < tl->end && in->piece_blocks[mid].time <= a)
            blo = mid;
        else
            bhi = mid;
    }
    if (blo != c->block)
        pieces_at_block(c, blo);
    while (c->i + 1 < tl->end) {
        int64_t next; /* the next piece's time, peeked at */
        if (c->i + 1 == c->block_end) {
            next = in->piece_blocks[c->block + 1].time;
        } else {
            const uint8_t *q = c->p;
            next = c->time + (int64_t)get_varint(&q);
        }
        if (next > a)
            break;
        pieces_next(c);
    }
}

/* Adds each call path's exclusive time within [a, b] of timeline `tl` to acc[path] (ns);
 * the paths touched for the first time go to touched[*ntouched]. Returns the total. */
static double exclusive_in(const sp_ws_input *in, const sp_ws_timeline *tl, uint32_t limit,
                           int64_t a, int64_t b, double *acc, uint32_t *touched,
                           size_t *ntouched)
{
    if (b <= a || tl->end <= tl->first)
        return 0;
    ws_pieces cur; /* the last piece that begins at or before a */
    pieces_find(&cur, in, tl, a);
    double total = 0;
    while (cur.i + 1 < tl->end && cur.time < b) {
        uint32_t path = cur.path;
        int64_t from = cur.time > a ? cur.time : a;
        pieces_next(&cur);
        int64_t to = cur.time < b ? cur.time : b;
        if (path >= in->path_count || path >= limit || to <= from)
            continue;
        if (acc[path] == 0 && touched)
            touched[(*ntouched)++] = path;
        acc[path] += (double)(to - from);
        total += (double)(to - from);
    }
    return total;
}

static int gather_compute_scatter(const sp_ipc *ipc, const void *data, uint64_t bytes,
                                  int (*root_step)(uint32_t, const unsigned char *,
                                                   const uint64_t *, void **, uint64_t *),
                                  void **mine, uint64_t *mine_size);

/* The short-term delay metric of a late operation (its long-term one follows it), or -1:
 * a send that made its receiver wait, a receive posted after its sender waited, the last to enter a barrier or N x N collective, a
 * broadcast's root, a reduce's first sender. */
static int delay_metric(const sp_ws_event *e)
{
    if (e->kind == SP_WS_SEND)
        return SP_WS_DELAY_LATESENDER;
    if (e->kind == SP_WS_RECV)
        return SP_WS_DELAY_LATERECEIVER;
    if (e->kind != SP_WS_COLL)
        return -1;
    switch (classify(e->op)) {
    case CLASS_BARRIER:
        return SP_WS_DELAY_BARRIER;
    case CLASS_NXN:
        return SP_WS_DELAY_N2N;
    case CLASS_BCAST:
        return SP_WS_DELAY_12N;
    case CLASS_REDUCE:
        return SP_WS_DELAY_N21;
    default:
        return -1;
    }
}

/* The delay metric of the late operation a wait state waited for (-1: none has one). */
static int waited_metric(const sp_ws_event *e)
{
    if (e->kind == SP_WS_RECV)
        return SP_WS_DELAY_LATESENDER;
    if (e->kind == SP_WS_SEND)
        return SP_WS_DELAY_LATERECEIVER;
    return e->kind == SP_WS_COLL ? delay_metric(e) : -1;
}

/* When a late operation came: a receive when it was posted, the others at their enter. */
static int64_t late_at(const sp_ws_event *e)
{
    return e->kind == SP_WS_RECV && (e->op & SP_WS_POSTED) ? e->posted : e->enter;
}

/* When a wait state of `w` ns ended (the late operation came): a non-blocking send waits
 * from the enter of the MPI_Wait* that completed it. */
static int64_t wait_end(const sp_ws_event *e, int64_t w)
{
    return (e->kind == SP_WS_SEND && (e->op & SP_WS_WAITED) ? e->posted : e->enter) + w;
}

/* The long-term delay costs are computed at rank 0 from every rank's late operations and
 * the wait states in their intervals (lt_at_root); only those wait states can pass waiting
 * on. A wait state: when it ended (the late operation's enter, on the late rank), the late
 * rank, the delay metric of its cause, its event here. */
typedef struct {
    int64_t end;
    uint32_t late, metric;
    uint64_t event;
} ws_lt_wait;

/* A late operation (in the order charge_delays meets them): its enter, its synchronization
 * interval's length, the waiting it caused, its short-term metric, and how many of its
 * rank's own wait states lay in the interval (ws_lt_ref, the part of the interval each
 * took). */
typedef struct {
    int64_t time;
    double total, caused;
    uint32_t metric, nrefs;
} ws_lt_late;

typedef struct {
    uint64_t event;
    double share;
} ws_lt_ref;

typedef struct {
    ws_lt_late *late;
    size_t nlate, late_cap;
    ws_lt_ref *ref;
    size_t nref, ref_cap;
    bool failed;
} ws_lt_out;

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? 2 * *cap : 64;
    while (c < need)
        c *= 2;
    void *g = realloc(p, c * size);
    if (g)
        *cap = c;
    return g;
}

/* The delay costs: each late operation's caused waiting, charged to the call paths its rank
 * ran from the leave of its previous MPI operation (on its location) to the operation's
 * enter. `lt` NULL: the short-term costs, and `out` collects the late operations and the
 * wait states in their intervals for the long-term costs; else lt[k] (k < nlt) is the k-th
 * late operation's long-term cost, charged the same way. */
static void charge_delays(const sp_ws_input *in, const ws_effects *fx, sp_ws_result *r,
                          double *acc, uint32_t *touched, const double *lt, size_t nlt,
                          ws_lt_out *out)
{
    const sp_ws_event *ev = in->events;
    size_t k_late = 0;
    for (size_t i = 0; i < in->count; i++) {
        const sp_ws_event *e = &ev[i];
        if (fx->caused[i] <= 0 || e->cnode >= in->path_count)
            continue;
        int metric = delay_metric(e);
        if (metric < 0)
            continue;
        uint32_t loc = in->path_location[e->cnode];
        const sp_ws_timeline *tl = timeline_of(in, loc);
        if (!tl || tl->end <= tl->first)
            continue;
        size_t k = k_late++;
        int64_t at = late_at(e);
        double amount = lt ? (k < nlt ? lt[k] : 0) : (double)fx->caused[i];
        if (lt && amount <= 0)
            continue;
        /* The synchronization interval: since the late rank last synchronized with the
         * waiting ones: its previous collective on the communicator (a collective), its
         * previous message with the peer or collective (a send). */
        int64_t from = piece_time_at(in, tl->first);
        size_t since = i;
        for (size_t j = i; j-- > 0;) {
            const sp_ws_event *x = &ev[j];
            if (x->cnode >= in->path_count || in->path_location[x->cnode] != loc)
                break;
            if (x->leave > at)
                continue; /* an operation of the same call */
            bool sync = e->kind == SP_WS_COLL
                            ? x->kind == SP_WS_COLL && x->comm == e->comm
                            : x->kind == SP_WS_COLL || x->peer == e->peer;
            if (sync) {
                from = x->leave;
                since = j + 1;
                break;
            }
        }
        size_t n = 0;
        double total = exclusive_in(in, tl, r->cnode_count, from, at, acc, touched, &n);
        size_t first_ref = out ? out->nref : 0;
        /* The late rank's own waiting in between made it late too: that share of the
         * caused waiting goes on to whoever it waited for (rank 0 propagates it, the
         * long-term costs); the rest is charged to its call paths. */
        for (size_t j = since; j < i; j++) {
            uint32_t c = ev[j].cnode;
            if (fx->wait[j] > 0 && c < r->cnode_count && acc[c] > 0 &&
                in->path_location[c] == loc && ev[j].enter >= from && ev[j].enter < at) {
                double share = (double)fx->wait[j] < acc[c] ? (double)fx->wait[j] : acc[c];
                acc[c] -= share;
                if (out && !out->failed && fx->late[j] != UINT32_MAX && waited_metric(&ev[j]) >= 0) {
                    ws_lt_ref *g = grow(out->ref, &out->ref_cap, out->nref + 1, sizeof *g);
                    if (!g)
                        out->failed = true;
                    else
                        (out->ref = g)[out->nref++] = (ws_lt_ref){j, share};
                }
            }
        }
        if (out && !out->failed) {
            ws_lt_late *g = grow(out->late, &out->late_cap, out->nlate + 1, sizeof *g);
            if (!g)
                out->failed = true;
            else
                (out->late = g)[out->nlate++] = (ws_lt_late){at, total, (double)fx->caused[i],
                                                             (uint32_t)metric,
                                                             (uint32_t)(out->nref - first_ref)};
        }
        int charged = lt ? metric + 1 : metric;
        for (size_t q = 0; q < n; q++) {
            uint32_t path = touched[q];
            if (total > 0 && acc[path] > 0) {
                size_t cell = (size_t)path * SP_WS_METRIC_COUNT + (size_t)charged;
                r->time[cell] += amount * acc[path] / total;
                r->count[cell] += 1;
            }
            acc[path] = 0;
        }
    }
}

/* The long-term costs are propagated at rank 0 in rounds backward in time, so that it holds
 * only a round's part of every rank's lists (before: all of them at once, 3.4x its trace's
 * size on the benchmark's ring at 8 ranks). A round covers the times [T, previous T): every
 * rank sends its late operations that came then and its wait states that ended then (a wait
 * state ends when its cause came: both are in the same round), with the references of those
 * late operations (which may name wait states of later rounds: their propagated waiting
 * waits at rank 0 until they come). Each rank offers the time of its WS_LT_ROUND-th next
 * item; T is the latest offer, so that no rank sends more than that many (ties aside).
 * Within a round rank 0 goes through the late operations in the order of the whole
 * propagation (time, then rank, then the rank's order): the same sums in the same order as
 * with everything at once, bit for bit. */
#define WS_LT_ROUND_TOTAL 16384 /* items a round, all ranks together */
#define WS_LT_ROUND_MIN 256     /* ... but at least this many from each rank */

typedef struct {
    uint64_t nwait, nlate, nref;
} ws_lt_head;

/* The most items this rank sends in one round. */
static uint64_t round_quota(const sp_ipc *ipc, const sp_ws_input *in)
{
    if (in->round_items)
        return in->round_items;
    uint64_t quota = WS_LT_ROUND_TOTAL / (ipc->size ? ipc->size : 1);
    return quota < WS_LT_ROUND_MIN ? WS_LT_ROUND_MIN : quota;
}

/* A reference as sent: the wait state (by event), its part of the interval, and when it
 * ended (rank 0 drops what would go to a wait state whose cause it met in an earlier round:
 * nothing reads it there any more). */
typedef struct {
    uint64_t event;
    int64_t end;
    double share;
} ws_lt_sref;

/* A round's offer: the time of the item that fills this rank's share of the round
 * (INT64_MIN: everything left fits), and how many items it has left. */
typedef struct {
    int64_t next;
    uint64_t left;
} ws_lt_offer;

/* Rank 0: the propagated waiting of wait states whose cause has not come yet, by rank and
 * event; an open-addressing table (key 0: empty, keys are rank << 40 | event, plus one). */
typedef struct {
    uint64_t key;
    int64_t end;
    double prop;
} ws_lt_slot;

typedef struct {
    ws_lt_slot *slot;
    size_t cap, used;
} ws_lt_map;

static uint64_t lt_map_key(uint32_t rank, uint64_t event)
{
    return ((uint64_t)rank << 40 | event) + 1;
}

static size_t lt_map_find(const ws_lt_map *m, uint64_t key)
{
    size_t mask = m->cap - 1, i = (size_t)(key * 0x9e3779b97f4a7c15ull >> 17) & mask;
    while (m->slot[i].key && m->slot[i].key != key)
        i = (i + 1) & mask;
    return i;
}

static int lt_map_rehash(ws_lt_map *m, size_t cap, int64_t drop_from)
{
    ws_lt_map g = {calloc(cap, sizeof *g.slot), cap, 0};
    if (!g.slot)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        const ws_lt_slot *x = &m->slot[i];
        if (x->key && x->end < drop_from) {
            g.slot[lt_map_find(&g, x->key)] = *x;
            g.used++;
        }
    }
    free(m->slot);
    *m = g;
    return 0;
}

static int lt_map_add(ws_lt_map *m, uint64_t key, int64_t end, double add)
{
    if (2 * (m->used + 1) > m->cap && lt_map_rehash(m, m->cap ? 2 * m->cap : 1024, INT64_MAX) != 0)
        return -1;
    size_t i = lt_map_find(m, key);
    if (!m->slot[i].key) {
        m->slot[i] = (ws_lt_slot){key, end, 0};
        m->used++;
    }
    m->slot[i].prop += add;
    return 0;
}

static double lt_map_get(const ws_lt_map *m, uint64_t key)
{
    if (!m->cap)
        return 0;
    const ws_lt_slot *x = &m->slot[lt_map_find(m, key)];
    return x->key ? x->prop : 0;
}

/* Rank 0's view of one rank's batch in a round. */
typedef struct {
    const ws_lt_wait *wait;
    const ws_lt_late *late;
    const ws_lt_sref *ref;
    ws_lt_head n;
} ws_lt_rank;

/* A wait state by its cause: the late rank, the metric, when it ended; then its rank and
 * event (the order of the sum over the wait states one late operation caused). */
typedef struct {
    uint32_t late, metric;
    int64_t end;
    uint32_t rank;
    uint64_t event;
} ws_lt_key;

static int cmp_lt_cause(const ws_lt_key *p, const ws_lt_key *q)
{
    if (p->late != q->late)
        return p->late < q->late ? -1 : 1;
    if (p->metric != q->metric)
        return p->metric < q->metric ? -1 : 1;
    return p->end < q->end ? -1 : p->end > q->end;
}

static int cmp_lt_key(const void *a, const void *b)
{
    const ws_lt_key *p = a, *q = b;
    int c = cmp_lt_cause(p, q);
    if (c)
        return c;
    if (p->rank != q->rank)
        return p->rank < q->rank ? -1 : 1;
    return p->event < q->event ? -1 : p->event > q->event;
}

typedef struct {
    int64_t time;
    uint32_t rank, index; /* index: in its rank's batch, sent in the rank's order */
    size_t first_ref;
} ws_lt_op;

static int cmp_lt_op(const void *a, const void *b)
{
    const ws_lt_op *x = a, *y = b;
    /* the latest first; ties in a fixed order, the same on every run */
    if (x->time != y->time)
        return x->time > y->time ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Rank 0, one round [T, prev): the long-term delay costs, backward in time. The cost of a
 * wait state is its waiting plus what it propagated (prop): the waiting that later wait
 * states owe to it. A late operation's long-term cost is the sum of prop over the wait
 * states it caused; its whole cost (the waiting it caused and that prop) goes on to the wait
 * states of its rank in its synchronization interval, each by its part of the interval. A
 * wait state's prop is complete before its cause is met: the late operations that pass cost
 * to it lie after it. Each rank gets one double per late operation of its batch. */
static int lt_round_at_root(uint32_t size, const unsigned char *all, const uint64_t *sizes,
                            ws_lt_map *map, int64_t threshold, int64_t prev, void **parts,
                            uint64_t *part_sizes)
{
    ws_lt_rank *rk = calloc(size ? size : 1, sizeof *rk);
    if (!rk)
        return -1;
    size_t nwait = 0, nlate = 0;
    uint64_t offset = 0;
    for (uint32_t q = 0; q < size; q++) {
        const unsigned char *p = all + offset;
        offset += sizes[q];
        if (sizes[q] < sizeof(ws_lt_head))
            continue;
        ws_lt_head h;
        memcpy(&h, p, sizeof h);
        if (sizes[q] != sizeof h + h.nwait * sizeof(ws_lt_wait) + h.nlate * sizeof(ws_lt_late) +
                            h.nref * sizeof(ws_lt_sref))
            continue;
        rk[q].n = h;
        rk[q].wait = (const ws_lt_wait *)(p + sizeof h);
        rk[q].late = (const ws_lt_late *)(rk[q].wait + h.nwait);
        rk[q].ref = (const ws_lt_sref *)(rk[q].late + h.nlate);
        nwait += h.nwait;
        nlate += h.nlate;
    }
    ws_lt_key *keys = malloc((nwait ? nwait : 1) * sizeof *keys);
    ws_lt_op *ops = malloc((nlate ? nlate : 1) * sizeof *ops);
    int status = keys && ops ? 0 : -1;
    size_t nkeys = 0, nops = 0;
    for (uint32_t q = 0; q < size && status == 0; q++) {
        size_t r0 = 0;
        for (uint64_t i = 0; i < rk[q].n.nwait; i++) {
            const ws_lt_wait *w = &rk[q].wait[i];
            keys[nkeys++] = (ws_lt_key){w->late, w->metric, w->end, q, w->event};
        }
        for (uint64_t i = 0; i < rk[q].n.nlate; i++) {
            ops[nops++] = (ws_lt_op){rk[q].late[i].time, q, (uint32_t)i, r0};
            r0 += rk[q].late[i].nrefs;
        }
        parts[q] = malloc(rk[q].n.nlate ? rk[q].n.nlate * sizeof(double) : 1);
        if (!parts[q])
            status = -1;
        else
            part_sizes[q] = rk[q].n.nlate * sizeof(double);
    }
    if (status == 0) {
        qsort(keys, nkeys, sizeof *keys, cmp_lt_key);
        qsort(ops, nops, sizeof *ops, cmp_lt_op);
    }
    for (size_t o = 0; o < nops && status == 0; o++) {
        const ws_lt_op *op = &ops[o];
        const ws_lt_late *late = &rk[op->rank].late[op->index];
        /* the wait states it caused: those of late rank op->rank, its metric, ended at its enter */
        ws_lt_key want = {op->rank, late->metric, late->time, 0, 0};
        size_t lo = 0, hi = nkeys;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_lt_cause(&keys[mid], &want) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        double longterm = 0;
        for (size_t m = lo; m < nkeys && cmp_lt_cause(&keys[m], &want) == 0; m++)
            longterm += lt_map_get(map, lt_map_key(keys[m].rank, keys[m].event));
        double cost = late->caused + longterm;
        ((double *)parts[op->rank])[op->index] = longterm;
        if (cost <= 0 || late->total <= 0)
            continue;
        const ws_lt_rank *own = &rk[op->rank];
        for (uint32_t f = 0; f < late->nrefs && status == 0; f++) {
            const ws_lt_sref *ref = &own->ref[op->first_ref + f];
            /* a wait state of an earlier round: its cause has been met, nothing reads it */
            if (ref->end >= prev)
                continue;
            if (lt_map_add(map, lt_map_key(op->rank, ref->event), ref->end,
                           cost * ref->share / late->total) != 0)
                status = -1;
        }
    }
    /* this round's wait states have been read: only the later rounds' stay */
    if (status == 0 && map->cap && lt_map_rehash(map, map->cap, threshold) != 0)
        status = -1;
    free(keys);
    free(ops);
    free(rk);
    return status;
}

/* A Late Receiver instance as its sender reports it, for the receiver's delay costs: when
 * the receive was posted, the waiting, the receiver. */
typedef struct {
    int64_t posted, wait;
    uint64_t late;
} ws_lr_note;

static int cmp_lr_note(const void *a, const void *b)
{
    const ws_lr_note *x = a, *y = b;
    if (x->late != y->late)
        return x->late < y->late ? -1 : 1;
    return x->posted < y->posted ? -1 : x->posted > y->posted;
}

/* Rank 0: every rank's Late Receiver instances to their receivers, by when posted. */
static int lr_at_root(uint32_t size, const unsigned char *all, const uint64_t *sizes,
                      void **parts, uint64_t *part_sizes)
{
    uint64_t bytes = 0;
    for (uint32_t q = 0; q < size; q++)
        bytes += sizes[q] / sizeof(ws_lr_note) * sizeof(ws_lr_note);
    size_t n = 0, total = bytes / sizeof(ws_lr_note);
    ws_lr_note *notes = malloc((total ? total : 1) * sizeof *notes);
    if (!notes)
        return -1;
    uint64_t offset = 0;
    for (uint32_t q = 0; q < size; q++) {
        size_t m = sizes[q] / sizeof(ws_lr_note);
        memcpy(notes + n, all + offset, m * sizeof *notes);
        n += m;
        offset += sizes[q];
    }
    qsort(notes, n, sizeof *notes, cmp_lr_note);
    int status = 0;
    for (size_t i = 0; i < n && status == 0;) {
        size_t j = i;
        while (j < n && notes[j].late == notes[i].late)
            j++;
        if (notes[i].late < size) {
            parts[notes[i].late] = malloc((j - i) * sizeof *notes);
            if (!parts[notes[i].late])
                status = -1;
            else {
                memcpy(parts[notes[i].late], notes + i, (j - i) * sizeof *notes);
                part_sizes[notes[i].late] = (j - i) * sizeof *notes;
            }
        }
        i = j;
    }
    free(notes);
    return status;
}

/* Every rank, collectively: the Late Receiver waiting each of its receives caused (its
 * senders know it), into fx->caused of the receive. */
static int late_receiver_caused(const sp_ipc *ipc, const sp_ws_input *in, const ws_effects *fx,
                                bool ok)
{
    size_t n = 0;
    for (size_t i = 0; ok && i < in->count; i++)
        n += in->events[i].kind == SP_WS_SEND && fx->wait[i] > 0 && fx->late[i] != UINT32_MAX;
    ws_lr_note *mine = ok ? malloc((n ? n : 1) * sizeof *mine) : NULL;
    n = 0;
    for (size_t i = 0; mine && i < in->count; i++) {
        const sp_ws_event *e = &in->events[i];
        if (e->kind == SP_WS_SEND && fx->wait[i] > 0 && fx->late[i] != UINT32_MAX)
            mine[n++] = (ws_lr_note){wait_end(e, fx->wait[i]), fx->wait[i], fx->late[i]};
    }
    void *got = NULL;
    uint64_t bytes = 0;
    int status = gather_compute_scatter(ipc, mine, mine ? n * sizeof *mine : 0, lr_at_root,
                                        &got, &bytes);
    free(mine);
    ws_lr_note *note = got;
    size_t count = bytes / sizeof *note;
    /* the notes by when posted; each to the first receive of this rank posted then */
    for (size_t i = 0; ok && status == 0 && count && i < in->count; i++) {
        const sp_ws_event *e = &in->events[i];
        if (e->kind != SP_WS_RECV)
            continue;
        int64_t at = late_at(e);
        size_t lo = 0, hi = count;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (note[mid].posted < at)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (; lo < count && note[lo].posted == at; lo++) {
            fx->caused[i] += note[lo].wait;
            note[lo].wait = 0;
        }
    }
    free(got);
    return status;
}

/* An item in the order it is sent: by decreasing time, then its index. */
typedef struct {
    int64_t time;
    uint64_t index;
} ws_lt_order;

static int cmp_lt_order(const void *a, const void *b)
{
    const ws_lt_order *x = a, *y = b;
    if (x->time != y->time)
        return x->time > y->time ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* This rank's lists for the rounds: the wait states (ws_lt_wait, by event), the late
 * operations (out->late, in the order charge_delays met them, with their references from
 * ref0[k]), and both in the order they are sent: by decreasing time (late operations in
 * their order on ties). */
typedef struct {
    ws_lt_wait *wait;
    size_t nwait;
    ws_lt_order *wait_order, *late_order;
    size_t *ref0;
} ws_lt_local;

static void lt_local_free(ws_lt_local *l)
{
    free(l->wait);
    free(l->wait_order);
    free(l->late_order);
    free(l->ref0);
    memset(l, 0, sizeof *l);
}

static int lt_local_make(const sp_ws_input *in, const ws_effects *fx, const ws_lt_out *out,
                         ws_lt_local *l)
{
    memset(l, 0, sizeof *l);
    /* the wait states in the intervals, by event */
    uint64_t *refd = malloc((out->nref ? out->nref : 1) * sizeof *refd);
    if (!refd)
        return -1;
    size_t nwait = 0;
    for (size_t k = 0; k < out->nref; k++)
        refd[k] = out->ref[k].event;
    if (out->nref) {
        qsort(refd, out->nref, sizeof *refd, cmp_u64);
        for (size_t k = 0; k < out->nref; k++)
            if (k == 0 || refd[k] != refd[nwait - 1])
                refd[nwait++] = refd[k];
    }
    l->wait = malloc((nwait ? nwait : 1) * sizeof *l->wait);
    l->wait_order = malloc((nwait ? nwait : 1) * sizeof *l->wait_order);
    l->late_order = malloc((out->nlate ? out->nlate : 1) * sizeof *l->late_order);
    l->ref0 = malloc((out->nlate ? out->nlate : 1) * sizeof *l->ref0);
    if (!l->wait || !l->wait_order || !l->late_order || !l->ref0) {
        free(refd);
        lt_local_free(l);
        return -1;
    }
    for (size_t k = 0; k < nwait; k++) {
        size_t i = refd[k];
        const sp_ws_event *e = &in->events[i];
        l->wait[k] = (ws_lt_wait){wait_end(e, fx->wait[i]), fx->late[i],
                                  (uint32_t)waited_metric(e), i};
        l->wait_order[k] = (ws_lt_order){l->wait[k].end, k};
    }
    l->nwait = nwait;
    free(refd);
    size_t r0 = 0;
    for (size_t k = 0; k < out->nlate; k++) {
        l->late_order[k] = (ws_lt_order){out->late[k].time, k};
        l->ref0[k] = r0;
        r0 += out->late[k].nrefs;
    }
    qsort(l->late_order, out->nlate, sizeof *l->late_order, cmp_lt_order);
    qsort(l->wait_order, nwait, sizeof *l->wait_order, cmp_lt_order);
    return 0;
}

/* The wait state of event `event` in the list (by event), or NULL. */
static const ws_lt_wait *lt_local_wait(const ws_lt_local *l, uint64_t event)
{
    size_t a = 0, b = l->nwait;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (l->wait[mid].event < event)
            a = mid + 1;
        else
            b = mid;
    }
    return a < l->nwait && l->wait[a].event == event ? &l->wait[a] : NULL;
}

/* Every rank, collectively: its wait states and late operations to rank 0 in rounds
 * backward in time; rank 0 sends back each late operation's long-term cost; then charged
 * like the short-term costs. */
static int longterm_delays(const sp_ipc *ipc, const sp_ws_input *in, const ws_effects *fx,
                           sp_ws_result *r, double *acc, uint32_t *touched, ws_lt_out *out,
                           bool ok)
{
    ws_lt_local l;
    bool have = ok && !out->failed && lt_local_make(in, fx, out, &l) == 0;
    if (!have)
        memset(&l, 0, sizeof l);
    size_t nlate = have ? out->nlate : 0;
    double *lt = have ? calloc(nlate ? nlate : 1, sizeof *lt) : NULL;
    if (!lt)
        have = false, nlate = 0;
    uint64_t quota = round_quota(ipc, in);
    ws_lt_offer *offers = ipc->rank == 0 ? malloc(ipc->size * sizeof *offers) : NULL;
    uint64_t *sizes = malloc(ipc->size * sizeof *sizes);
    void **parts = ipc->rank == 0 ? calloc(ipc->size, sizeof *parts) : NULL;
    uint64_t *part_sizes = ipc->rank == 0 ? calloc(ipc->size, sizeof *part_sizes) : NULL;
    ws_lt_map map = {NULL, 0, 0};
    int status = sizes && (ipc->rank != 0 || (offers && parts && part_sizes)) ? 0 : -1;
    size_t cl = 0, cw = 0; /* the next late operation and wait state to send, in their orders */
    int64_t prev = INT64_MAX;
    /* every rank takes part in every round, also after a failure (it then sends nothing),
     * so that none waits; rank 0 ends the rounds when nobody has anything left */
    for (;;) {
        ws_lt_offer mine = {INT64_MIN, 0};
        if (have && status == 0) {
            mine.left = (nlate - cl) + (l.nwait - cw);
            /* the time of this rank's quota-th next item, merging both orders */
            size_t a = cl, b = cw;
            for (uint64_t k = 0; k < quota && (a < nlate || b < l.nwait); k++) {
                int64_t ta = a < nlate ? l.late_order[a].time : INT64_MIN;
                int64_t tb = b < l.nwait ? l.wait_order[b].time : INT64_MIN;
                int64_t t = ta >= tb ? ta : tb;
                if (ta >= tb)
                    a++;
                else
                    b++;
                if (k + 1 == quota && (a < nlate || b < l.nwait))
                    mine.next = t;
            }
        }
        int64_t round[2] = {INT64_MIN, 0}; /* T, and whether the rounds are over */
        if (ipc->ops->gather(ipc->ctx, &mine, sizeof mine, offers, 0) != 0)
            status = -1;
        if (ipc->rank == 0) {
            uint64_t left = 0;
            for (uint32_t q = 0; offers && q < ipc->size; q++) {
                left += offers[q].left;
                if (offers[q].next > round[0])
                    round[0] = offers[q].next;
            }
            round[1] = left == 0 || status != 0;
        }
        if (ipc->ops->bcast(ipc->ctx, round, sizeof round, 0) != 0)
            status = -1, round[1] = 1;
        if (round[1])
            break;
        int64_t threshold = round[0];
        /* this round's batch: the items at or after T */
        ws_lt_head h = {0, 0, 0};
        size_t ea = cl, eb = cw;
        while (have && ea < nlate && l.late_order[ea].time >= threshold) {
            h.nref += out->late[l.late_order[ea].index].nrefs;
            ea++;
        }
        while (have && eb < l.nwait && l.wait_order[eb].time >= threshold)
            eb++;
        h.nlate = ea - cl;
        h.nwait = eb - cw;
        size_t bytes = sizeof h + h.nwait * sizeof(ws_lt_wait) + h.nlate * sizeof(ws_lt_late) +
                       h.nref * sizeof(ws_lt_sref);
        unsigned char *msg = have && status == 0 ? malloc(bytes) : NULL;
        if (msg) {
            memcpy(msg, &h, sizeof h);
            ws_lt_wait *w = (ws_lt_wait *)(msg + sizeof h);
            for (size_t k = cw; k < eb; k++)
                *w++ = l.wait[l.wait_order[k].index];
            ws_lt_late *lp = (ws_lt_late *)w;
            for (size_t k = cl; k < ea; k++)
                *lp++ = out->late[l.late_order[k].index];
            ws_lt_sref *rp = (ws_lt_sref *)lp;
            for (size_t k = cl; k < ea; k++) {
                size_t o = l.late_order[k].index;
                for (uint32_t f = 0; f < out->late[o].nrefs; f++) {
                    const ws_lt_ref *ref = &out->ref[l.ref0[o] + f];
                    const ws_lt_wait *x = lt_local_wait(&l, ref->event);
                    *rp++ = (ws_lt_sref){ref->event, x ? x->end : INT64_MIN, ref->share};
                }
            }
        } else if (have) {
            status = -1;
        }
        void *all = NULL;
        static const int64_t none;
        if (sp_ipc_gather_bytes(ipc, msg ? (const void *)msg : &none, msg ? bytes : 0, &all,
                                sizes) != 0)
            status = -1;
        free(msg);
        if (ipc->rank == 0) {
            if (status == 0 && lt_round_at_root(ipc->size, all, sizes, &map, threshold, prev,
                                                parts, part_sizes) != 0)
                status = -1;
            if (status != 0)
                memset(part_sizes, 0, ipc->size * sizeof *part_sizes);
        }
        free(all);
        void *got = NULL;
        uint64_t got_bytes = 0;
        if (sp_ipc_scatter_bytes(ipc, parts, part_sizes, &got, &got_bytes) != 0)
            status = -1;
        if (parts)
            for (uint32_t q = 0; q < ipc->size; q++) {
                free(parts[q]);
                parts[q] = NULL;
                part_sizes[q] = 0;
            }
        if (have && status == 0 && got_bytes == (ea - cl) * sizeof(double))
            for (size_t k = cl; k < ea; k++)
                lt[l.late_order[k].index] = ((const double *)got)[k - cl];
        else if (have)
            status = -1;
        free(got);
        cl = ea;
        cw = eb;
        prev = threshold;
    }
    /* rounds ended early (rank 0 failed): none of the long-term costs, rather than some */
    if (have && (cl < nlate || cw < l.nwait))
        status = -1;
    if (status == 0 && have)
        charge_delays(in, fx, r, acc, touched, lt, nlate, NULL);
    free(lt);
    free(offers);
    free(sizes);
    free(parts);
    free(part_sizes);
    free(map.slot);
    lt_local_free(&l);
    return status;
}

/* The walk along the critical path, at rank 0 in rounds backward in time as the long-term
 * costs are (longterm_delays), so that it holds a round's jumps of every rank, not all of
 * them (before: every rank's jumps at once, about 4 bytes each in varints, growing with the
 * ranks). Each rank's jumps (where its waiting ended and the rank it waited for) latest
 * first; a round brings those that ended in [T, previous T). The walk at rank `cur` and time
 * t takes the latest jump of `cur` that ended before t: in this round's batch, or, when
 * `cur` has jumps left for the later rounds, there (the walk waits for the next round);
 * t only falls, so nothing it needs was in an earlier round. */
typedef struct {
    int64_t first, end; /* its timeline's beginning; its end (MPI_Finalize's enter) */
    uint64_t valid;     /* it has a timeline */
} ws_cp_head;

typedef struct {
    int64_t wait_end; /* when the waiting ended: the late rank came */
    uint64_t late;
} ws_jump;

static int cmp_jump(const void *a, const void *b)
{
    const ws_jump *x = a, *y = b;
    return x->wait_end < y->wait_end ? -1 : x->wait_end > y->wait_end;
}

/* Rank 0's walk between rounds. */
typedef struct {
    ws_cp_head *head; /* per rank */
    uint32_t cur;
    int64_t t;
    bool over;
    size_t *cap; /* per rank: int64s allocated in its part */
} ws_walk;

/* Rank 0, one round: the walk as far as this round's jumps take it; each rank's segments
 * [from, to) on the path, as int64 pairs, into its part. left[q]: rank q's jumps in the
 * later rounds. */
static int walk_round_at_root(ws_walk *wk, uint32_t size, const unsigned char *all,
                              const uint64_t *sizes, const uint64_t *left, void **parts,
                              uint64_t *part_sizes)
{
    const ws_jump **batch = calloc(size, sizeof *batch);
    size_t *count = calloc(size, sizeof *count);
    int status = batch && count ? 0 : -1;
    uint64_t offset = 0;
    for (uint32_t q = 0; q < size && status == 0; q++) {
        batch[q] = (const ws_jump *)(all + offset);
        count[q] = sizes[q] / sizeof(ws_jump);
        offset += sizes[q];
    }
    while (status == 0 && !wk->over) {
        uint32_t cur = wk->cur;
        const ws_cp_head *h = &wk->head[cur];
        const ws_jump *j = batch[cur];
        /* the latest jump that ended before t (the batch: by decreasing wait_end) */
        size_t lo = 0, hi = count[cur];
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (j[mid].wait_end >= wk->t)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == count[cur] && left[cur])
            break; /* in a later round */
        const ws_jump *back = lo < count[cur] ? &j[lo] : NULL;
        if (back && back->wait_end < h->first)
            back = NULL;
        int64_t from = back ? back->wait_end : h->first;
        if (wk->t > from) {
            uint64_t at = part_sizes[cur] / sizeof(int64_t);
            if (at + 2 > wk->cap[cur]) {
                size_t c = wk->cap[cur] ? 2 * wk->cap[cur] : 16;
                void *g = realloc(parts[cur], c * sizeof(int64_t));
                if (!g) {
                    status = -1;
                    break;
                }
                parts[cur] = g;
                wk->cap[cur] = c;
            }
            ((int64_t *)parts[cur])[at] = from;
            ((int64_t *)parts[cur])[at + 1] = wk->t;
            part_sizes[cur] += 2 * sizeof(int64_t);
        }
        if (!back || back->late >= size || !wk->head[back->late].valid) {
            wk->over = true;
            break;
        }
        wk->cur = (uint32_t)back->late;
        wk->t = back->wait_end;
    }
    free(batch);
    free(count);
    return status;
}

/* Every rank, collectively: the walk along the critical path (head NULL: this rank has no
 * timeline; jumps: latest first); each segment of this rank on the path charged as it
 * comes back, in the walk's order. */
static int walk_critical_path(const sp_ipc *ipc, const ws_cp_head *head, const ws_jump *jumps,
                              size_t njumps, const sp_ws_input *in, const sp_ws_timeline *tl,
                              sp_ws_result *r, double *acc, uint32_t *touched)
{
    uint32_t size = ipc->size;
    bool root = ipc->rank == 0;
    ws_cp_head mine = head ? *head : (ws_cp_head){0, 0, 0};
    ws_walk wk = {root ? calloc(size, sizeof *wk.head) : NULL, 0, 0, false,
                  root ? calloc(size, sizeof *wk.cap) : NULL};
    ws_lt_offer *offers = root ? malloc(size * sizeof *offers) : NULL;
    uint64_t *left = root ? calloc(size, sizeof *left) : NULL;
    uint64_t *sizes = malloc(size * sizeof *sizes);
    void **parts = root ? calloc(size, sizeof *parts) : NULL;
    uint64_t *part_sizes = root ? calloc(size, sizeof *part_sizes) : NULL;
    int status = sizes && (!root || (wk.head && wk.cap && offers && left && parts && part_sizes))
                     ? 0 : -1;
    if (ipc->ops->gather(ipc->ctx, &mine, sizeof mine, wk.head, 0) != 0)
        status = -1;
    if (root && status == 0) {
        /* from the rank whose run ended last (the lowest of those) */
        uint32_t cur = UINT32_MAX;
        for (uint32_t q = 0; q < size; q++)
            if (wk.head[q].valid && (cur == UINT32_MAX || wk.head[q].end > wk.head[cur].end))
                cur = q;
        wk.over = cur == UINT32_MAX;
        wk.cur = cur;
        wk.t = wk.over ? 0 : wk.head[cur].end;
    }
    uint64_t quota = round_quota(ipc, in);
    size_t next = 0; /* the first jump not sent yet */
    for (;;) {
        ws_lt_offer offer = {INT64_MIN, njumps - next};
        if (njumps - next > quota)
            offer.next = jumps[next + quota - 1].wait_end;
        int64_t round[2] = {INT64_MIN, 0}; /* T, and whether the walk is over */
        if (ipc->ops->gather(ipc->ctx, &offer, sizeof offer, offers, 0) != 0)
            status = -1;
        if (root) {
            for (uint32_t q = 0; q < size; q++)
                if (offers[q].next > round[0])
                    round[0] = offers[q].next;
            round[1] = wk.over || status != 0;
        }
        if (ipc->ops->bcast(ipc->ctx, round, sizeof round, 0) != 0)
            status = -1, round[1] = 1;
        if (round[1])
            break;
        size_t end = next;
        while (end < njumps && jumps[end].wait_end >= round[0])
            end++;
        void *all = NULL;
        static const int64_t none;
        if (sp_ipc_gather_bytes(ipc, end > next ? (const void *)(jumps + next) : &none,
                                (end - next) * sizeof *jumps, &all, sizes) != 0)
            status = -1;
        next = end;
        if (root) {
            for (uint32_t q = 0; q < size; q++)
                left[q] = offers[q].left - sizes[q] / sizeof(ws_jump);
            /* with nothing left anywhere the walk ends in this round */
            if (status == 0 && walk_round_at_root(&wk, size, all, sizes, left, parts,
                                                  part_sizes) != 0)
                status = -1;
            if (status != 0) {
                memset(part_sizes, 0, size * sizeof *part_sizes);
                wk.over = true;
            }
        }
        free(all);
        void *got = NULL;
        uint64_t got_bytes = 0;
        if (sp_ipc_scatter_bytes(ipc, parts, part_sizes, &got, &got_bytes) != 0)
            status = -1;
        if (parts)
            for (uint32_t q = 0; q < size; q++) {
                free(parts[q]);
                parts[q] = NULL;
                part_sizes[q] = 0;
                wk.cap[q] = 0;
            }
        const int64_t *seg = got;
        for (size_t k = 0; tl && status == 0 && k + 1 < got_bytes / sizeof *seg; k += 2) {
            size_t n = 0;
            exclusive_in(in, tl, r->cnode_count, seg[k], seg[k + 1], acc, touched, &n);
            for (size_t q = 0; q < n; q++) {
                uint32_t path = touched[q];
                size_t at = (size_t)path * SP_WS_METRIC_COUNT + SP_WS_CRITICAL_PATH;
                r->time[at] += acc[path];
                r->count[at] += 1;
                acc[path] = 0;
            }
        }
        free(got);
    }
    free(wk.head);
    free(wk.cap);
    free(offers);
    free(left);
    free(sizes);
    free(parts);
    free(part_sizes);
    return status;
}

/* Rank 0: per call path (by hash), the imbalance of its critical-path time over its average
 * time, as a factor of each entry's critical-path time. Entries: {hash, time, cp}. */
typedef struct {
    uint64_t hash;
    double time, cp;
} ws_cp_entry;

typedef struct {
    uint64_t hash;
    size_t index;
} ws_keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const ws_keyed *x = a, *y = b;
    return x->hash < y->hash ? -1 : x->hash > y->hash;
}

static int imbalance_at_root(uint32_t size, const unsigned char *all, const uint64_t *sizes,
                             void **parts, uint64_t *part_sizes)
{
    uint64_t bytes = 0;
    for (uint32_t q = 0; q < size; q++)
        bytes += sizes[q];
    size_t n = bytes / sizeof(ws_cp_entry);
    const ws_cp_entry *e = (const ws_cp_entry *)all;
    ws_keyed *order = malloc((n ? n : 1) * sizeof *order);
    double *factor = calloc(n ? n : 1, sizeof *factor);
    if (!order || !factor) {
        free(order);
        free(factor);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (ws_keyed){e[i].hash, i};
    qsort(order, n, sizeof *order, cmp_keyed);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double time = 0, cp = 0;
        for (; j < n && order[j].hash == order[i].hash; j++) {
            time += e[order[j].index].time;
            cp += e[order[j].index].cp;
        }
        double imbalance = cp - time / size;
        for (size_t k = i; k < j && imbalance > 0 && cp > 0; k++)
            factor[order[k].index] = imbalance / cp;
        i = j;
    }
    uint64_t offset = 0;
    int status = 0;
    for (uint32_t q = 0; q < size && status == 0; q++) {
        size_t m = sizes[q] / sizeof(ws_cp_entry);
        parts[q] = malloc((m ? m : 1) * sizeof(double));
        if (!parts[q]) {
            status = -1;
            break;
        }
        memcpy(parts[q], factor + offset, m * sizeof(double));
        part_sizes[q] = m * sizeof(double);
        offset += m;
    }
    free(order);
    free(factor);
    return status;
}

/* Rank 0 computes `root_step` from every rank's bytes and sends each its part. */
static int gather_compute_scatter(const sp_ipc *ipc, const void *data, uint64_t bytes,
                                  int (*root_step)(uint32_t, const unsigned char *,
                                                   const uint64_t *, void **, uint64_t *),
                                  void **mine, uint64_t *mine_size)
{
    void *all = NULL;
    uint64_t *sizes = malloc(ipc->size * sizeof *sizes);
    void **parts = ipc->rank == 0 ? calloc(ipc->size, sizeof *parts) : NULL;
    uint64_t *part_sizes = ipc->rank == 0 ? calloc(ipc->size, sizeof *part_sizes) : NULL;
    int status = sizes && (ipc->rank != 0 || (parts && part_sizes)) ? 0 : -1;
    /* every rank takes part in both steps, even after a failure, so that none waits */
    static const int64_t none;
    if (sp_ipc_gather_bytes(ipc, data ? data : &none, status == 0 ? bytes : 0, &all, sizes) != 0)
        status = -1;
    if (ipc->rank == 0 && status == 0 && root_step(ipc->size, all, sizes, parts, part_sizes) != 0)
        status = -1;
    if (ipc->rank == 0 && status != 0 && part_sizes)
        memset(part_sizes, 0, ipc->size * sizeof *part_sizes);
    if (sp_ipc_scatter_bytes(ipc, parts, part_sizes, mine, mine_size) != 0)
        status = -1;
    free(all);
    free(sizes);
    if (parts)
        for (uint32_t r = 0; r < ipc->size; r++)
            free(parts[r]);
    free(parts);
    free(part_sizes);
    return status;
}

static bool is_waiting_metric(int k)
{
    switch (k) {
    case SP_WS_LATE_SENDER: case SP_WS_LATE_RECEIVER: case SP_WS_BARRIER_WAIT:
    case SP_WS_WAIT_NXN: case SP_WS_LATE_BROADCAST: case SP_WS_EARLY_REDUCE:
    case SP_WS_EARLY_SCAN: case SP_WS_FINALIZE_WAIT: case SP_WS_RMA_WAIT_AT_FENCE:
        return true;
    default:
        return false;
    }
}

/* Every rank, collectively: the delay costs (local), then the critical path (its walk at
 * rank 0 from every rank's wait states) and its imbalance (per call path, at rank 0). */
static int critical_path(const sp_ipc *ipc, const sp_ws_input *in, ws_effects *fx,
                         sp_ws_result *r, char *err, size_t errlen)
{
    double *acc = calloc(in->path_count ? in->path_count : 1, sizeof *acc);
    uint32_t *touched = malloc((in->path_count ? in->path_count : 1) * sizeof *touched);
    int status = acc && touched ? 0 : -1;
    ws_lt_out out = {0};
    if (late_receiver_caused(ipc, in, fx, status == 0) != 0)
        status = -1;
    if (status == 0)
        charge_delays(in, fx, r, acc, touched, NULL, 0, &out);
    if (longterm_delays(ipc, in, fx, r, acc, touched, &out, status == 0) != 0)
        status = -1;
    free(out.late);
    free(out.ref);
    /* This rank's MPI location: the one of its operations (its main thread). */
    const sp_ws_timeline *tl = NULL;
    if (in->count && in->events[0].cnode < in->path_count)
        tl = timeline_of(in, in->path_location[in->events[0].cnode]);
    if (tl && tl->end <= tl->first)
        tl = NULL;
    size_t njumps = 0;
    for (size_t i = 0; i < in->count; i++)
        njumps += fx->wait[i] > 0 && fx->late[i] != UINT32_MAX;
    ws_cp_head head = {0, 0, 0};
    ws_jump *j = status == 0 && tl ? malloc((njumps ? njumps : 1) * sizeof *j) : NULL;
    if (status == 0 && tl && !j)
        status = -1;
    size_t nj = 0;
    if (j) {
        head = (ws_cp_head){piece_time_at(in, tl->first), piece_time_at(in, tl->end - 1), 1};
        for (size_t i = 0; i < in->count; i++) {
            const sp_ws_event *e = &in->events[i];
            if (e->kind == SP_WS_COLL && e->op == SP_WS_OP_FINALIZE)
                head.end = e->enter;
            /* a non-blocking send waited from its MPI_Wait*'s enter, not the Isend's */
            if (fx->wait[i] > 0 && fx->late[i] != UINT32_MAX)
                j[nj++] = (ws_jump){wait_end(e, fx->wait[i]), fx->late[i]};
        }
        qsort(j, nj, sizeof *j, cmp_jump);
        for (size_t a = 0, b = nj; a + 1 < b; a++, b--) { /* latest first */
            ws_jump x = j[a];
            j[a] = j[b - 1];
            j[b - 1] = x;
        }
    }
    /* The effects are in the jumps now (20 bytes an operation, 16 a jump). */
    free(fx->wait), free(fx->late), free(fx->caused);
    *fx = (ws_effects){NULL, NULL, NULL};
    if (walk_critical_path(ipc, j ? &head : NULL, j, nj, in, tl, r, acc, touched) != 0)
        status = -1;
    free(j);
    /* the imbalance: each path's time without waiting and on the critical path */
    size_t nentries = 0;
    ws_cp_entry *entries = NULL;
    uint32_t *entry_path = NULL;
    if (status == 0 && tl) {
        size_t n = 0;
        exclusive_in(in, tl, r->cnode_count, piece_time_at(in, tl->first), piece_time_at(in, tl->end - 1), acc,
                     touched, &n);
        entries = malloc((n ? n : 1) * sizeof *entries);
        entry_path = malloc((n ? n : 1) * sizeof *entry_path);
        if (!entries || !entry_path)
            status = -1;
        for (size_t k = 0; k < n; k++) {
            uint32_t path = touched[k];
            double time = acc[path];
            acc[path] = 0;
            const double *row = r->time + (size_t)path * SP_WS_METRIC_COUNT;
            for (int m = 0; m < SP_WS_METRIC_COUNT; m++)
                if (is_waiting_metric(m))
                    time -= row[m];
            if (status == 0) {
                entries[nentries] = (ws_cp_entry){in->path_hash[path], time > 0 ? time : 0,
                                                  row[SP_WS_CRITICAL_PATH]};
                entry_path[nentries++] = path;
            }
        }
    }
    void *factors = NULL;
    uint64_t factor_bytes = 0;
    if (gather_compute_scatter(ipc, entries, nentries * sizeof *entries, imbalance_at_root,
                               &factors, &factor_bytes) != 0)
        status = -1;
    const double *f = factors;
    for (size_t k = 0; status == 0 && k < nentries && k < factor_bytes / sizeof *f; k++) {
        if (f[k] <= 0)
            continue;
        size_t at = (size_t)entry_path[k] * SP_WS_METRIC_COUNT;
        r->time[at + SP_WS_CRITICAL_PATH_IMBALANCE] += f[k] * r->time[at + SP_WS_CRITICAL_PATH];
        r->count[at + SP_WS_CRITICAL_PATH_IMBALANCE] += 1;
    }
    free(factors);
    free(entries);
    free(entry_path);
    free(acc);
    free(touched);
    if (status != 0)
        return sp_error(err, errlen, "the critical-path analysis could not exchange its data");
    return 0;
}

int sp_ws_run(const sp_ipc *ipc, bool ready, const sp_ws_input *in, sp_ws_result *result,
              char *err, size_t errlen)
{
    uint8_t mine = ready, all = 1;
    uint8_t *flags = ipc->rank == 0 ? malloc(ipc->size) : NULL;
    int status = ipc->rank == 0 && !flags ? -1 : 0;
    if (ipc->ops->gather(ipc->ctx, &mine, 1, flags ? (void *)flags : (void *)&all, 0) != 0)
        status = -1;
    if (flags)
        for (uint32_t r = 0; r < ipc->size; r++)
            all &= flags[r];
    if (status != 0)
        all = 0;
    free(flags);
    if (ipc->ops->bcast(ipc->ctx, &all, 1, 0) != 0 || !all) {
        if (ready)
            sp_error(err, errlen, "another rank could not take part in the wait-state analysis");
        return -1;
    }
    size_t n = in->count ? in->count : 1;
    ws_effects fx = {calloc(n, sizeof *fx.wait), malloc(n * sizeof *fx.late),
                     calloc(n, sizeof *fx.caused)};
    bool have = fx.wait && fx.late && fx.caused;
    for (size_t i = 0; have && i < in->count; i++)
        fx.late[i] = UINT32_MAX;
    status = replay(ipc, in->events, in->count, in->comms, in->comm_count, result,
                    have ? &fx : NULL, err, errlen);
    /* every rank walks the critical path with the others, also after a failure here (its
     * effects then empty), so that none waits */
    if (!have) {
        free(fx.wait), free(fx.late), free(fx.caused);
        fx = (ws_effects){calloc(n, sizeof *fx.wait), NULL, NULL};
    }
    if (status != 0 && have)
        memset(fx.wait, 0, n * sizeof *fx.wait);
    sp_ws_input none = {0};
    int cp = critical_path(ipc, have && status == 0 ? in : &none, &fx, result,
                           status == 0 ? err : (char[128]){0}, status == 0 ? errlen : 128);
    free(fx.wait), free(fx.late), free(fx.caused); /* critical_path frees them (NULL) */
    return status != 0 ? status : cp;
}
