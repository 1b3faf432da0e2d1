/* Calling contexts in the trace (sampling, SCOREP_ENABLE_UNWINDING): samples become OTF2
 * CallingContextSample events, and regions entered through events CallingContextEnter and
 * CallingContextLeave (OTF2 allows no Enter/Leave next to them in one trace, as Score-P
 * writes them with unwinding). The contexts are the core's calling-context definitions,
 * rooted at the program region; each location keeps the context of each open frame. */
#include "substrates/trace/trace_internal.h"

#include <stdlib.h>
#include <string.h>

/* Lookups of (parent, region) -> context go through the definitions' lock; a small cache per
 * location answers the repeated ones (a loop's samples see the same stack again and again). */
#define CONTEXT_CACHE_SIZE 256

typedef struct sp_trace_contexts {
    uint32_t *open; /* the context of each open frame, by stack index */
    uint32_t capacity;
    uint32_t root;  /* the program region's context */
    uint64_t cache_key[CONTEXT_CACHE_SIZE];
    uint32_t cache_value[CONTEXT_CACHE_SIZE];
} sp_trace_contexts;

int sp_trace_contexts_open(sp_trace_location *tl)
{
    if (!sp_trace.meas->config.unwinding)
        return 0;
    sp_trace_contexts *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    memset(c->cache_key, 0xff, sizeof c->cache_key);
    c->root = sp_defs_calling_context(&sp_trace.meas->defs, sp_trace.meas->program_region,
                                      SP_NO_ID);
    tl->contexts = c;
    return c->root == SP_NO_ID ? -1 : 0;
}

void sp_trace_contexts_free(sp_trace_location *tl)
{
    if (tl->contexts)
        free(tl->contexts->open);
    free(tl->contexts);
    tl->contexts = NULL;
}

static uint32_t context_of(sp_trace_contexts *c, uint32_t parent, uint32_t region)
{
    uint64_t key = (uint64_t)parent << 32 | region;
    uint32_t slot = (uint32_t)(sp_hash_mix(key) % CONTEXT_CACHE_SIZE);
    if (c->cache_key[slot] == key)
        return c->cache_value[slot];
    uint32_t id = sp_defs_calling_context(&sp_trace.meas->defs, region, parent);
    if (id != SP_NO_ID) {
        c->cache_key[slot] = key;
        c->cache_value[slot] = id;
    }
    return id;
}

/* The context of the frames below the open frame at `depth - 1` (the root for none). */
static uint32_t descend(sp_trace_contexts *c, uint32_t depth, const sp_context_frame *frames,
                        uint32_t count)
{
    uint32_t context = depth && depth <= c->capacity ? c->open[depth - 1] : c->root;
    for (uint32_t i = 0; i < count && context != SP_NO_ID; i++)
        context = context_of(c, context, frames[i].region);
    return context;
}

void sp_trace_enter_in_context(sp_trace_location *tl, uint64_t time, uint32_t index,
                               const sp_context_frame *frames, uint32_t count, uint32_t same,
                               uint32_t region)
{
    sp_trace_contexts *c = tl->contexts;
    if (!c)
        return;
    if (index >= c->capacity) {
        uint32_t capacity = c->capacity ? c->capacity * 2 : 64;
        while (capacity <= index)
            capacity *= 2;
        uint32_t *open = realloc(c->open, capacity * sizeof *open);
        if (!open)
            return;
        c->open = open;
        c->capacity = capacity;
    }
    uint32_t parent = descend(c, index, frames, count);
    uint32_t context = parent == SP_NO_ID ? SP_NO_ID : context_of(c, parent, region);
    c->open[index] = context;
    if (context == SP_NO_ID)
        return;
    /* Newly entered since the last event: the frames from `same` on and the region; the one
     * above them made progress (OTF2's unwind distance). */
    sp_trace_put_value(tl, time, SP_REC_CC_ENTER, context, count - same + 2, 0);
}

void sp_trace_leave_context(sp_trace_location *tl, uint64_t time, uint32_t index)
{
    sp_trace_contexts *c = tl->contexts;
    if (index < c->capacity && c->open[index] != SP_NO_ID)
        sp_trace_put(tl, time, SP_REC_CC_LEAVE, c->open[index]);
}

void sp_trace_sample(sp_trace_location *tl, uint64_t time, uint32_t depth,
                     const sp_context_frame *frames, uint32_t count, uint32_t same)
{
    sp_trace_contexts *c = tl->contexts;
    if (!c)
        return;
    uint32_t context = descend(c, depth, frames, count);
    if (context != SP_NO_ID)
        sp_trace_put_value(tl, time, SP_REC_CC_SAMPLE, context, count - same + 1, 0);
}

OTF2_ErrorCode sp_trace_encode_context(OTF2_EvtWriter *w, const sp_trace_record *r,
                                       uint64_t time)
{
    const sp_trace_payload *p = (const sp_trace_payload *)(r + 1);
    switch (r->kind) {
    case SP_REC_CC_ENTER:
        return OTF2_EvtWriter_CallingContextEnter(w, NULL, time, r->ref, (uint32_t)p->a);
    case SP_REC_CC_LEAVE:
        return OTF2_EvtWriter_CallingContextLeave(w, NULL, time, r->ref);
    default:
        return OTF2_EvtWriter_CallingContextSample(w, NULL, time, r->ref, (uint32_t)p->a,
                                                   (OTF2_InterruptGeneratorRef)p->b);
    }
}

int sp_trace_write_context_definitions(OTF2_GlobalDefWriter *gw, sp_unified *u, char *err,
                                       size_t errlen)
{
    const sp_measurement *m = sp_trace.meas;
    const sp_defs *g = &u->global;
    for (uint32_t i = 0; i < g->context_count; i++) {
        if (sp_trace_check(OTF2_GlobalDefWriter_WriteCallingContext(
                               gw, i, g->contexts[i].region, OTF2_UNDEFINED_SOURCE_CODE_LOCATION,
                               g->contexts[i].parent == SP_NO_ID ? OTF2_UNDEFINED_CALLING_CONTEXT
                                                                 : g->contexts[i].parent),
                           "writing a calling context", err, errlen) != 0)
            return -1;
    }
    if (!m->config.unwinding || !m->config.sampling_period_us)
        return 0;
    /* Score-P's interrupt generator of a timer: its event's name, a time mode, the period in
     * microseconds (10^-6 s). */
    return sp_trace_check(OTF2_GlobalDefWriter_WriteInterruptGenerator(
                              gw, 0, sp_trace.interrupt_name, OTF2_INTERRUPT_GENERATOR_MODE_TIME,
                              OTF2_BASE_DECIMAL, -6, m->config.sampling_period_us),
                          "writing the interrupt generator", err, errlen);
}

int sp_trace_intern_context_strings(sp_defs *g)
{
    sp_trace.interrupt_name = sp_defs_string(g, sp_trace.meas->config.sampling_event);
    return sp_trace.interrupt_name == SP_NO_ID ? -1 : 0;
}
