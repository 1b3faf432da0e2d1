/* Python allocations per region (--memory): the PyMem and PyObject allocators are wrapped
 * while a measurement with Python memory metrics runs. Each allocation adds its size to the
 * calling thread's counter (the core's sp_thread_memory, read at every enter and leave like
 * any metric), each free the size it was allocated with: sizes are kept in a table keyed by
 * the block's address, as tracemalloc keeps its traces. No per-allocation record is made.
 *
 * Both domains are called with the GIL held; the table still has a spin lock of its own
 * because the wrappers stay in place for interpreters that share the allocators. Blocks
 * allocated before the hook was installed are not in the table: their frees are not
 * counted (as tracemalloc ignores untraced blocks). */
#include "adapters/python/python.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uintptr_t key; /* 0: empty, 1: deleted */
    uint64_t size;
} block;

/* The live blocks allocated through the hook. Global because the allocator functions have
 * only the context pointer CPython hands them, and the allocators are process-wide. */
static struct {
    atomic_flag lock;
    block *slots;
    size_t capacity, used, live;
} table = {ATOMIC_FLAG_INIT, NULL, 0, 0, 0};

static PyMemAllocatorEx original[2]; /* PYMEM_DOMAIN_MEM, PYMEM_DOMAIN_OBJ */
static const PyMemAllocatorDomain domains[2] = {PYMEM_DOMAIN_MEM, PYMEM_DOMAIN_OBJ};
static bool installed;

static inline void lock(void)
{
    while (atomic_flag_test_and_set_explicit(&table.lock, memory_order_acquire))
        ;
}

static inline void unlock(void)
{
    atomic_flag_clear_explicit(&table.lock, memory_order_release);
}

static inline size_t slot_of(uintptr_t key, size_t capacity)
{
    uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ULL;
    return (size_t)(h >> 17) & (capacity - 1);
}

static bool grow(void)
{
    size_t capacity = table.capacity ? table.capacity * 2 : 1 << 16;
    block *slots = calloc(capacity, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < table.capacity; i++) {
        uintptr_t key = table.slots[i].key;
        if (key <= 1)
            continue;
        size_t s = slot_of(key, capacity);
        while (slots[s].key)
            s = (s + 1) & (capacity - 1);
        slots[s] = table.slots[i];
    }
    free(table.slots);
    table.slots = slots;
    table.capacity = capacity;
    table.used = table.live;
    return true;
}

static void remember(void *p, uint64_t size)
{
    lock();
    if ((table.used + 1) * 2 > table.capacity && !grow()) {
        unlock();
        return; /* out of memory: its free will not be counted */
    }
    size_t s = slot_of((uintptr_t)p, table.capacity);
    while (table.slots[s].key > 1)
        s = (s + 1) & (table.capacity - 1);
    if (table.slots[s].key == 0)
        table.used++;
    table.slots[s].key = (uintptr_t)p;
    table.slots[s].size = size;
    table.live++;
    unlock();
}

/* The size the block was allocated with (0: not allocated through the hook). */
static uint64_t forget(void *p)
{
    uint64_t size = 0;
    lock();
    if (table.capacity) {
        size_t s = slot_of((uintptr_t)p, table.capacity);
        while (table.slots[s].key) {
            if (table.slots[s].key == (uintptr_t)p) {
                size = table.slots[s].size;
                table.slots[s].key = 1;
                table.live--;
                break;
            }
            s = (s + 1) & (table.capacity - 1);
        }
    }
    unlock();
    return size;
}

static void *hook_malloc(void *ctx, size_t size)
{
    PyMemAllocatorEx *a = ctx;
    void *p = a->malloc(a->ctx, size);
    if (p) {
        sp_thread_memory.allocated += size;
        remember(p, size);
    }
    return p;
}

static void *hook_calloc(void *ctx, size_t nelem, size_t elsize)
{
    PyMemAllocatorEx *a = ctx;
    void *p = a->calloc(a->ctx, nelem, elsize);
    if (p) {
        sp_thread_memory.allocated += (uint64_t)nelem * elsize;
        remember(p, (uint64_t)nelem * elsize);
    }
    return p;
}

static void *hook_realloc(void *ctx, void *ptr, size_t size)
{
    PyMemAllocatorEx *a = ctx;
    void *p = a->realloc(a->ctx, ptr, size);
    if (!p)
        return p; /* the old block stays as it was */
    if (ptr)
        sp_thread_memory.freed += forget(ptr);
    sp_thread_memory.allocated += size;
    remember(p, size);
    return p;
}

static void hook_free(void *ctx, void *ptr)
{
    PyMemAllocatorEx *a = ctx;
    if (ptr)
        sp_thread_memory.freed += forget(ptr);
    a->free(a->ctx, ptr);
}

void sp_python_memory_hook(bool on)
{
    if (on == installed)
        return;
    for (int d = 0; d < 2; d++) {
        if (on) {
            PyMem_GetAllocator(domains[d], &original[d]);
            PyMemAllocatorEx hook = {&original[d], hook_malloc, hook_calloc, hook_realloc,
                                     hook_free};
            PyMem_SetAllocator(domains[d], &hook);
        } else {
            PyMem_SetAllocator(domains[d], &original[d]);
        }
    }
    installed = on;
    if (!on) {
        /* Blocks still alive are freed through the original allocators from now on. */
        lock();
        free(table.slots);
        table.slots = NULL;
        table.capacity = table.used = table.live = 0;
        unlock();
    }
}
