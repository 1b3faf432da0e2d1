/* Chrome/Perfetto trace events from an OTF2 trace, streamed: a second pass over the events
 * that writes one complete ("X") event per call in enter order, so that per thread the
 * events come sorted by (start, depth) as Perfetto wants them. The duration of a call is
 * known only at its leave; the scan wrote every call's duration by enter number into a
 * file, which this pass reads sequentially. Memory: the output buffer, the durations
 * buffer and one call stack. */
#include "reader/rd_pass.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUT_BUFFER (1u << 20)
#define DUR_BUFFER (1u << 15)

typedef struct chrome_ctx {
    rd_pass_ctx pass; /* first: the pass's callbacks reach it through the user data */
    const rd_trace *trace;
    const rd_scan *scan;
    const rd_chrome_opts *opts;
    rd_chrome_stats *stats;
    uint32_t li;
    FILE *out;
    char *buf;
    size_t used;
    FILE *durations;
    uint64_t *dur;
    size_t dur_have, dur_next;
    uint32_t *stack; /* regions of the open calls */
    uint32_t depth, stack_cap;
    uint64_t *send_seq, *recv_seq; /* per message key */
} chrome_ctx;

static void flush_out(chrome_ctx *c)
{
    if (c->used && fwrite(c->buf, 1, c->used, c->out) != c->used)
        rd_pass_fail(&c->pass, "writing %s: %s", c->opts->out_path, strerror(errno));
    c->stats->bytes += c->used;
    c->used = 0;
}

static void put(chrome_ctx *c, const char *s, size_t n)
{
    if (c->used + n > OUT_BUFFER) {
        flush_out(c);
        if (n > OUT_BUFFER) {
            if (fwrite(s, 1, n, c->out) != n)
                rd_pass_fail(&c->pass, "writing %s: %s", c->opts->out_path, strerror(errno));
            c->stats->bytes += n;
            return;
        }
    }
    memcpy(c->buf + c->used, s, n);
    c->used += n;
}

static void puts_(chrome_ctx *c, const char *s)
{
    put(c, s, strlen(s));
}

static void put_u64(chrome_ctx *c, uint64_t v)
{
    char tmp[24];
    int i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(c, tmp + i, sizeof tmp - (size_t)i);
}

/* ns as microseconds with three decimals: Chrome's unit, our precision, no exponent. */
static void put_us(chrome_ctx *c, uint64_t ns)
{
    put_u64(c, ns / 1000);
    char frac[4] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10),
                    (char)('0' + ns % 10)};
    put(c, frac, 4);
}

static uint64_t next_duration(chrome_ctx *c)
{
    if (c->dur_next == c->dur_have) {
        c->dur_have = fread(c->dur, sizeof(uint64_t), DUR_BUFFER, c->durations);
        c->dur_next = 0;
        if (!c->dur_have) {
            rd_pass_fail(&c->pass, "%s ends early: it belongs to another scan",
                         c->opts->durations_path);
            return 0;
        }
    }
    return c->dur[c->dur_next++];
}

static void event_head(chrome_ctx *c, const char *ph, uint32_t tid)
{
    if (c->opts->need_comma || c->stats->complete || c->stats->flows || c->stats->flushes)
        put(c, ",\n", 2);
    puts_(c, "{\"ph\":\"");
    puts_(c, ph);
    puts_(c, "\",\"pid\":");
    put_u64(c, c->opts->pids[c->li]);
    puts_(c, ",\"tid\":");
    put_u64(c, tid);
}

static OTF2_CallbackCode on_enter(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                  void *ud, OTF2_AttributeList *attributes, OTF2_RegionRef region)
{
    (void)location, (void)pos, (void)attributes;
    chrome_ctx *c = ud;
    uint64_t dur = next_duration(c);
    if (c->pass.failed)
        return OTF2_CALLBACK_INTERRUPT;
    if (c->depth <= c->opts->max_depth && dur >= c->opts->min_ns) {
        event_head(c, "X", c->opts->tids[c->li]);
        puts_(c, ",\"ts\":");
        put_us(c, rd_to_ns(&c->trace->defs, time));
        puts_(c, ",\"dur\":");
        put_us(c, dur);
        puts_(c, ",\"name\":");
        const char *name = region < c->trace->defs.nregions && c->opts->names[region]
                               ? c->opts->names[region] : "\"?\"";
        puts_(c, name);
        puts_(c, ",\"cat\":");
        puts_(c, region < c->trace->defs.nregions && c->opts->cats[region]
                     ? c->opts->cats[region] : "\"?\"");
        put(c, "}", 1);
        c->stats->complete++;
    }
    if (c->depth == c->stack_cap) {
        uint32_t cap = c->stack_cap ? 2 * c->stack_cap : 64;
        uint32_t *p = realloc(c->stack, (size_t)cap * sizeof *p);
        if (!p) {
            rd_pass_fail(&c->pass, "out of memory");
            return OTF2_CALLBACK_INTERRUPT;
        }
        c->stack = p;
        c->stack_cap = cap;
    }
    c->stack[c->depth++] = region;
    return rd_pass_result(&c->pass);
}

/* Mirrors the scan's handling of leaves, so that depths agree with the durations file. */
static OTF2_CallbackCode on_leave(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                  void *ud, OTF2_AttributeList *attributes, OTF2_RegionRef region)
{
    (void)location, (void)time, (void)pos, (void)attributes;
    chrome_ctx *c = ud;
    if (!c->depth)
        return OTF2_CALLBACK_SUCCESS;
    uint32_t d = c->depth;
    while (d && c->stack[d - 1] != region)
        d--;
    if (d)
        c->depth = d - 1;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode flow(void *ud, const rd_message_event *m)
{
    chrome_ctx *c = ud;
    const rd_defs *d = &c->trace->defs;
    bool send = m->send;
    uint32_t comm = m->comm;
    uint32_t me = d->locations[c->li].group;
    uint32_t peer = rd_comm_peer(d, comm, m->peer, me);
    uint64_t a = (uint64_t)comm << 32 | m->tag;
    uint64_t b = send ? (uint64_t)me << 32 | peer : (uint64_t)peer << 32 | me;
    uint32_t key = rd_message_key_find(c->scan, a, b);
    if (key == RD_NONE)
        return rd_pass_result(&c->pass);
    uint64_t seq = send ? c->send_seq[key]++ : c->recv_seq[key]++;
    /* Both sides compute the same id; it stays below 2^53 (exact in JavaScript) while
     * there are fewer than 2^21 keys. */
    uint64_t id = (uint64_t)key << 32 | (seq & 0xffffffffu);
    event_head(c, send ? "s" : "f", c->opts->tids[c->li]);
    puts_(c, ",\"ts\":");
    put_us(c, rd_to_ns(d, m->time));
    puts_(c, ",\"id\":");
    put_u64(c, id);
    puts_(c, send ? ",\"cat\":\"mpi\",\"name\":\"message\"}"
                  : ",\"cat\":\"mpi\",\"name\":\"message\",\"bp\":\"e\"}");
    c->stats->flows++;
    return rd_pass_result(&c->pass);
}

/* A flush pauses the program in the middle of some call; it goes on a lane of its own so
 * that it never breaks the nesting of the program's calls. */
static OTF2_CallbackCode on_flush(OTF2_LocationRef location, OTF2_TimeStamp time, uint64_t pos,
                                  void *ud, OTF2_AttributeList *attributes, OTF2_TimeStamp stop)
{
    (void)location, (void)pos, (void)attributes;
    chrome_ctx *c = ud;
    uint64_t t = rd_to_ns(&c->trace->defs, time), e = rd_to_ns(&c->trace->defs, stop);
    event_head(c, "X", c->opts->flush_tids[c->li]);
    puts_(c, ",\"ts\":");
    put_us(c, t);
    puts_(c, ",\"dur\":");
    put_us(c, e > t ? e - t : 0);
    puts_(c, ",\"name\":\"trace buffer flush\",\"cat\":\"measurement\"}");
    c->stats->flushes++;
    return rd_pass_result(&c->pass);
}

int rd_write_chrome(rd_trace *trace, const rd_scan *scan, const rd_chrome_opts *opts,
                    rd_chrome_stats *stats, char *err, size_t errlen)
{
    memset(stats, 0, sizeof *stats);
    chrome_ctx c = {.pass = {flow, false, err, errlen}, .trace = trace, .scan = scan,
                    .opts = opts, .stats = stats};
    int status = -1;
    OTF2_Reader *r = NULL;
    OTF2_EvtReaderCallbacks *cb = NULL;
    c.buf = malloc(OUT_BUFFER);
    c.dur = malloc(DUR_BUFFER * sizeof(uint64_t));
    c.send_seq = calloc(scan->nkeys ? scan->nkeys : 1, sizeof(uint64_t));
    c.recv_seq = calloc(scan->nkeys ? scan->nkeys : 1, sizeof(uint64_t));
    if (!c.buf || !c.dur || !c.send_seq || !c.recv_seq) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    c.durations = fopen(opts->durations_path, "rb");
    if (!c.durations) {
        snprintf(err, errlen, "cannot read %s: %s", opts->durations_path, strerror(errno));
        goto out;
    }
    c.out = fopen(opts->out_path, "wb");
    if (!c.out) {
        snprintf(err, errlen, "cannot write %s: %s", opts->out_path, strerror(errno));
        goto out;
    }
    r = rd_pass_open(trace, err, errlen);
    if (!r)
        goto out;
    cb = OTF2_EvtReaderCallbacks_New();
    OTF2_EvtReaderCallbacks_SetEnterCallback(cb, on_enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, on_leave);
    OTF2_EvtReaderCallbacks_SetBufferFlushCallback(cb, on_flush);
    rd_pass_messages(cb);
    puts_(&c, opts->header);
    for (uint32_t li = 0; li < trace->defs.nlocations && !c.pass.failed; li++) {
        c.li = li;
        c.depth = 0;
        c.dur_have = c.dur_next = 0;
        if (fseeko(c.durations, (off_t)(scan->locs[li].dur_base * sizeof(uint64_t)), SEEK_SET)) {
            rd_pass_fail(&c.pass, "seeking in %s: %s", opts->durations_path, strerror(errno));
            break;
        }
        if (rd_pass_location(r, trace, li, cb, &c, err, errlen) < 0)
            c.pass.failed = true;
    }
    puts_(&c, opts->footer);
    flush_out(&c);
    status = c.pass.failed ? -1 : 0;
out:
    if (cb)
        OTF2_EvtReaderCallbacks_Delete(cb);
    rd_pass_close(r);
    if (c.out && fclose(c.out) != 0 && status == 0) {
        snprintf(err, errlen, "writing %s: %s", opts->out_path, strerror(errno));
        status = -1;
    }
    if (c.durations)
        fclose(c.durations);
    free(c.buf);
    free(c.dur);
    free(c.send_seq);
    free(c.recv_seq);
    free(c.stack);
    return status;
}
