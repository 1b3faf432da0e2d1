/* Native allocations per region (--memory, SCOREP_NATIVE_MEMORY): malloc, calloc, realloc,
 * free and the aligned allocators called by extension modules and the C libraries they use
 * (numpy's _multiarray_umath, libopenblas, pandas' extensions, a ctypes library), where
 * numpy, pandas and scikit-learn keep their data and the Python allocators see nothing.
 *
 * The calls reach the wrappers through the core's GOT patcher (core/got.h), as the I/O
 * adapter's calls do, objects loaded later included. The interpreter itself (the executable,
 * libpython) is left alone: its malloc calls are the Python allocators', which the Python
 * adapter counts (python_allocated); libc's own calls (strdup, fopen's buffer) are not
 * interposable.
 *
 * A metric source of three metrics, read at every enter and leave like any other:
 *   native_allocated  bytes the calling thread allocated (requested sizes);
 *   native_freed      bytes of blocks allocated while recording that the thread freed;
 *   native_peak       the process's high-water mark of live native bytes (allocated while
 *                     recording and not freed yet): a region's value is how much the peak
 *                     rose while it ran, so the regions' exclusive values add up to the
 *                     process's peak and the root's inclusive value is that peak.
 * Sizes at free come from a table keyed by the block's address (only blocks allocated while
 * recording are in it, so a free of libc's strdup'ed string or of a block from before the
 * start counts nothing, as tracemalloc ignores untraced blocks). */
#include "core/got.h"
#include "core/measurement.h"
#include "core/metrics.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the libc functions and their wrappers ------------------------------------------------ */

/* Filled by sp_got_add before any slot points at a wrapper; read by the wrappers. Global
 * because the wrappers are reached from arbitrary code without any context. */
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void *(*real_reallocarray)(void *, size_t, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);

/* ---- the counters ------------------------------------------------------------------------- */

typedef struct {
    uint64_t allocated, freed;
} thread_counters;

/* Each thread counts its own, without a lock (read by its own location). */
static SP_TLS thread_counters counters;

/* Live bytes of the blocks in the table and their high-water mark, of the whole process
 * (blocks are freed by other threads than the one that allocated them). Global: the
 * wrappers have no context. */
static _Atomic int64_t live;
static _Atomic uint64_t peak;

/* While recording: the wrappers count (they may still run for a moment after the end). */
static atomic_bool recording;

/* ---- the sizes of live blocks -------------------------------------------------------------- */

/* Open addressing with linear probing, in shards chosen by the address so that threads
 * allocating at the same time rarely meet. Each shard has a spin lock: a free on one thread
 * of a block another thread allocated must find its entry, and the alternative (a
 * lock-free table) cannot grow. Uncontended it costs one atomic exchange per call, the
 * same as the atomic on `live`. The table grows (with libc's calloc, never through the
 * wrappers) when half full: an allocation on the event path, amortised over the inserts
 * since the last growth; without it the table would be a fixed bound on live blocks. */
typedef struct {
    uintptr_t key; /* 0: empty, 1: deleted */
    uint64_t size;
} block;

#define SHARDS 64

typedef struct {
    _Alignas(64) atomic_flag lock; /* a shard per cache line: neighbours' locks do not share
                                    * one */
    block *slots;
    size_t capacity, used, live_blocks;
} shard;

/* Global for the same reason as the counters. */
static shard shards[SHARDS];
static atomic_ullong dropped; /* blocks not tracked: no memory for the table */

static inline uint64_t hash_of(uintptr_t key)
{
    return (uint64_t)key * 0x9e3779b97f4a7c15ULL;
}

static inline shard *shard_of(uintptr_t key)
{
    return &shards[hash_of(key) >> 58];
}

static inline void lock(shard *s)
{
    while (atomic_flag_test_and_set_explicit(&s->lock, memory_order_acquire))
        ;
}

static inline void unlock(shard *s)
{
    atomic_flag_clear_explicit(&s->lock, memory_order_release);
}

static inline size_t slot_of(uintptr_t key, size_t capacity)
{
    return (size_t)(hash_of(key) >> 20) & (capacity - 1);
}

static bool grow(shard *s)
{
    size_t capacity = s->capacity ? s->capacity * 2 : 1024;
    block *slots = real_calloc(capacity, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < s->capacity; i++) {
        uintptr_t key = s->slots[i].key;
        if (key <= 1)
            continue;
        size_t at = slot_of(key, capacity);
        while (slots[at].key)
            at = (at + 1) & (capacity - 1);
        slots[at] = s->slots[i];
    }
    real_free(s->slots);
    s->slots = slots;
    s->capacity = capacity;
    s->used = s->live_blocks;
    return true;
}

static void raise_peak(int64_t now)
{
    uint64_t seen = atomic_load_explicit(&peak, memory_order_relaxed);
    while (now > 0 && (uint64_t)now > seen &&
           !atomic_compare_exchange_weak_explicit(&peak, &seen, (uint64_t)now,
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

/* A block allocated while recording: counted and remembered. */
static void remember(void *p, size_t size)
{
    uintptr_t key = (uintptr_t)p;
    shard *s = shard_of(key);
    lock(s);
    if (!atomic_load_explicit(&recording, memory_order_relaxed)) {
        unlock(s);
        return;
    }
    if ((s->used + 1) * 2 > s->capacity && !grow(s)) {
        unlock(s);
        atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
        return; /* neither its allocation nor its free is counted */
    }
    size_t at = slot_of(key, s->capacity);
    while (s->slots[at].key > 1)
        at = (at + 1) & (s->capacity - 1);
    if (s->slots[at].key == 0)
        s->used++;
    s->slots[at] = (block){key, size};
    s->live_blocks++;
    unlock(s);
    counters.allocated += size;
    raise_peak(atomic_fetch_add_explicit(&live, (int64_t)size, memory_order_relaxed) +
               (int64_t)size);
}

/* Called before the block goes back to libc (after that another thread may get the same
 * address and remember it). Returns the size it was remembered with, 0 when untracked. */
static uint64_t forget(void *p)
{
    uintptr_t key = (uintptr_t)p;
    shard *s = shard_of(key);
    uint64_t size = 0;
    bool found = false;
    lock(s);
    if (s->capacity) {
        size_t at = slot_of(key, s->capacity);
        while (s->slots[at].key) {
            if (s->slots[at].key == key) {
                size = s->slots[at].size;
                s->slots[at].key = 1;
                s->live_blocks--;
                found = true;
                break;
            }
            at = (at + 1) & (s->capacity - 1);
        }
    }
    unlock(s);
    if (found) {
        counters.freed += size;
        atomic_fetch_sub_explicit(&live, (int64_t)size, memory_order_relaxed);
    }
    return size;
}

/* Puts back an entry forget took out (a realloc that failed): its free is still to come. */
static void unforget(void *p, uint64_t size)
{
    counters.freed -= size;
    counters.allocated -= size;
    remember(p, size);
}

static inline bool active(void)
{
    return atomic_load_explicit(&recording, memory_order_relaxed);
}

static void *wrap_malloc(size_t size)
{
    void *p = real_malloc(size);
    if (p && active())
        remember(p, size);
    return p;
}

static void *wrap_calloc(size_t n, size_t size)
{
    void *p = real_calloc(n, size);
    if (p && active())
        remember(p, n * size); /* calloc checked that it does not overflow */
    return p;
}

static void wrap_free(void *p)
{
    if (p && active())
        (void)forget(p);
    real_free(p);
}

static void *wrap_realloc(void *old, size_t size)
{
    if (!active())
        return real_realloc(old, size);
    uint64_t was = old ? forget(old) : 0;
    void *p = real_realloc(old, size);
    if (p)
        remember(p, size);
    else if (old && size && was)
        unforget(old, was); /* it failed: the old block stays */
    return p;
}

static void *wrap_reallocarray(void *old, size_t n, size_t size)
{
    if (!active())
        return real_reallocarray(old, n, size);
    uint64_t was = old ? forget(old) : 0;
    void *p = real_reallocarray(old, n, size);
    if (p)
        remember(p, n * size);
    else if (old && n && size && was)
        unforget(old, was);
    return p;
}

static int wrap_posix_memalign(void **out, size_t alignment, size_t size)
{
    int status = real_posix_memalign(out, alignment, size);
    if (status == 0 && *out && active())
        remember(*out, size);
    return status;
}

static void *wrap_aligned_alloc(size_t alignment, size_t size)
{
    void *p = real_aligned_alloc(alignment, size);
    if (p && active())
        remember(p, size);
    return p;
}

static void *wrap_memalign(size_t alignment, size_t size)
{
    void *p = real_memalign(alignment, size);
    if (p && active())
        remember(p, size);
    return p;
}

static void *wrap_valloc(size_t size)
{
    void *p = real_valloc(size);
    if (p && active())
        remember(p, size);
    return p;
}

static void *wrap_pvalloc(size_t size)
{
    void *p = real_pvalloc(size);
    if (p && active())
        remember(p, size);
    return p;
}

static const sp_got_hook hooks[] = {
    {"malloc", (void *)wrap_malloc, (void **)&real_malloc},
    {"calloc", (void *)wrap_calloc, (void **)&real_calloc},
    {"realloc", (void *)wrap_realloc, (void **)&real_realloc},
    {"reallocarray", (void *)wrap_reallocarray, (void **)&real_reallocarray},
    {"free", (void *)wrap_free, (void **)&real_free},
    {"posix_memalign", (void *)wrap_posix_memalign, (void **)&real_posix_memalign},
    {"aligned_alloc", (void *)wrap_aligned_alloc, (void **)&real_aligned_alloc},
    {"memalign", (void *)wrap_memalign, (void **)&real_memalign},
    {"valloc", (void *)wrap_valloc, (void **)&real_valloc},
    {"pvalloc", (void *)wrap_pvalloc, (void **)&real_pvalloc},
};

static const sp_got_client client = {hooks, sizeof hooks / sizeof hooks[0], true};

/* ---- the metric source ---------------------------------------------------------------------- */

enum { NATIVE_ALLOCATED, NATIVE_FREED, NATIVE_PEAK, NATIVE_COUNT };

static const sp_metric_byte_counter known[NATIVE_COUNT] = {
    [NATIVE_ALLOCATED] = {"native_allocated",
                          "bytes allocated by malloc & co. in extension modules and C libraries"},
    [NATIVE_FREED] = {"native_freed",
                      "bytes freed by free & co. in extension modules and C libraries"},
    [NATIVE_PEAK] = {"native_peak", "rise of the process's peak of live native bytes "
                                    "(maximum heap memory allocated)"},
};

static void clear_tables(void)
{
    for (int i = 0; i < SHARDS; i++) {
        lock(&shards[i]);
        if (real_free)
            real_free(shards[i].slots);
        shards[i].slots = NULL;
        shards[i].capacity = shards[i].used = shards[i].live_blocks = 0;
        unlock(&shards[i]);
    }
}

static void after_fork_in_child(void)
{
    /* The child is alone: a shard locked by another thread of the parent would never be
     * unlocked. The parent's measurement does not continue in the child. */
    atomic_store(&recording, false);
    for (int i = 0; i < SHARDS; i++)
        atomic_flag_clear(&shards[i].lock);
}

static void register_fork_handler_once(void)
{
    (void)pthread_atfork(NULL, NULL, after_fork_in_child);
}

static int native_begin(const sp_metric_request *requests, size_t count, char *err,
                        size_t errlen)
{
    if (sp_metric_define_byte_counters(requests, count, known, NATIVE_COUNT,
                                       SP_METRIC_SOURCE_NATIVE, "native memory", err,
                                       errlen) != 0)
        return -1;
    /* pthread_atfork handlers cannot be removed: registered once per process. */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    (void)pthread_once(&once, register_fork_handler_once);
    atomic_store(&live, 0);
    atomic_store(&peak, 0);
    atomic_store(&dropped, 0);
    char why[256];
    if (sp_got_add(&client, why, sizeof why) != 0)
        return sp_error(err, errlen, "native memory recording: %s", why);
    if (!real_malloc || !real_calloc || !real_realloc || !real_free) {
        sp_got_remove(&client);
        return sp_error(err, errlen, "native memory recording: the C library's malloc, "
                                     "calloc, realloc and free were not found");
    }
    atomic_store(&recording, true);
    return 0;
}

static void native_read(void *state, bool per_process, uint64_t own_ns, uint64_t *values)
{
    (void)state;
    (void)own_ns; /* bytes, not CPU time */
    const sp_metric_set *set = sp_measurement_metrics();
    uint32_t first = set->first[SP_METRIC_SOURCE_NATIVE][per_process];
    uint32_t n = set->n[SP_METRIC_SOURCE_NATIVE][per_process];
    for (uint32_t i = 0; i < n; i++) {
        switch (set->defs[first + i].code) {
        case NATIVE_ALLOCATED: values[i] = counters.allocated; break;
        case NATIVE_FREED: values[i] = counters.freed; break;
        default: values[i] = atomic_load_explicit(&peak, memory_order_relaxed); break;
        }
    }
}

static void native_end(void)
{
    if (!atomic_exchange(&recording, false))
        return;
    sp_got_remove(&client);
    /* Blocks still alive are freed through libc directly from now on. */
    clear_tables();
    unsigned long long lost = atomic_load(&dropped);
    if (lost)
        sp_metric_warn("native memory: %llu allocations were not counted (no memory for the "
                       "table of their sizes)", lost);
}

static const sp_metric_source_ops native_source = {
    .id = SP_METRIC_SOURCE_NATIVE,
    .begin = native_begin,
    .read = native_read,
    .end = native_end,
};

__attribute__((constructor)) static void register_native_source(void)
{
    (void)sp_metric_source_register(&native_source);
}
