/* I/O handles of the running measurement: definitions through the measurement's
 * definitions, and per paradigm a table of the native handles bound right now. */
#include "core/io.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_internal.h"

/* A slot whose binding was removed: lookups probe past it, insertions reuse it. */
#define SLOT_EMPTY SP_NO_ID
#define SLOT_REMOVED (SP_NO_ID - 1)

typedef struct {
    pthread_mutex_t lock;
    uint64_t *keys;
    uint32_t *values;
    size_t capacity; /* a power of two */
    size_t used;     /* slots not empty (bound or removed) */
    size_t live;     /* bound slots */
} io_bindings;

struct sp_io_registry {
    io_bindings paradigm[SP_IO_PARADIGM_COUNT];
};

static int bindings_alloc(io_bindings *b, size_t capacity)
{
    b->keys = malloc(capacity * sizeof *b->keys);
    b->values = malloc(capacity * sizeof *b->values);
    if (!b->keys || !b->values) {
        free(b->keys);
        free(b->values);
        b->keys = NULL;
        b->values = NULL;
        return -1;
    }
    memset(b->values, 0xff, capacity * sizeof *b->values); /* SLOT_EMPTY */
    b->capacity = capacity;
    b->used = b->live = 0;
    return 0;
}

/* The slot holding `key`, or SIZE_MAX. */
static size_t bindings_find(const io_bindings *b, uint64_t key)
{
    size_t mask = b->capacity - 1;
    for (size_t i = sp_hash_mix(key) & mask;; i = (i + 1) & mask) {
        if (b->values[i] == SLOT_EMPTY)
            return SIZE_MAX;
        if (b->values[i] != SLOT_REMOVED && b->keys[i] == key)
            return i;
    }
}

static int bindings_put(io_bindings *b, uint64_t key, uint32_t value);

/* Rebuilt with room to spare, without the removed slots: file descriptors come back with
 * the same numbers, FILE * addresses do not, so removed slots pile up otherwise. */
static int bindings_rehash(io_bindings *b)
{
    size_t capacity = 16;
    while (capacity < b->live * 4)
        capacity *= 2;
    io_bindings fresh;
    if (bindings_alloc(&fresh, capacity) != 0)
        return -1;
    for (size_t i = 0; i < b->capacity; i++)
        if (b->values[i] != SLOT_EMPTY && b->values[i] != SLOT_REMOVED)
            bindings_put(&fresh, b->keys[i], b->values[i]);
    free(b->keys);
    free(b->values);
    b->keys = fresh.keys;
    b->values = fresh.values;
    b->capacity = fresh.capacity;
    b->used = fresh.used;
    b->live = fresh.live;
    return 0;
}

static int bindings_put(io_bindings *b, uint64_t key, uint32_t value)
{
    size_t at = bindings_find(b, key);
    if (at != SIZE_MAX) {
        b->values[at] = value;
        return 0;
    }
    if ((b->used + 1) * 2 > b->capacity && bindings_rehash(b) != 0)
        return -1;
    size_t mask = b->capacity - 1;
    for (size_t i = sp_hash_mix(key) & mask;; i = (i + 1) & mask) {
        if (b->values[i] == SLOT_EMPTY || b->values[i] == SLOT_REMOVED) {
            if (b->values[i] == SLOT_EMPTY)
                b->used++;
            b->keys[i] = key;
            b->values[i] = value;
            b->live++;
            return 0;
        }
    }
}

int sp_io_registry_init(sp_measurement *m)
{
    struct sp_io_registry *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    for (int p = 0; p < SP_IO_PARADIGM_COUNT; p++) {
        if (pthread_mutex_init(&r->paradigm[p].lock, NULL) != 0 ||
            bindings_alloc(&r->paradigm[p], 16) != 0) {
            m->io = r;
            sp_io_registry_free(m);
            return -1;
        }
    }
    m->io = r;
    return 0;
}

void sp_io_registry_free(sp_measurement *m)
{
    struct sp_io_registry *r = m->io;
    if (!r)
        return;
    for (int p = 0; p < SP_IO_PARADIGM_COUNT; p++) {
        free(r->paradigm[p].keys);
        free(r->paradigm[p].values);
        pthread_mutex_destroy(&r->paradigm[p].lock);
    }
    free(r);
    m->io = NULL;
}

static io_bindings *bindings_of(sp_io_paradigm paradigm)
{
    struct sp_io_registry *r = sp_meas.io;
    return r && (unsigned)paradigm < SP_IO_PARADIGM_COUNT ? &r->paradigm[paradigm] : NULL;
}

static void bind(sp_io_paradigm paradigm, uint64_t native, uint32_t handle)
{
    io_bindings *b = bindings_of(paradigm);
    if (!b || handle == SP_NO_ID)
        return;
    pthread_mutex_lock(&b->lock);
    /* Out of memory: the handle stays unknown, its operations are recorded as calls only. */
    (void)bindings_put(b, native, handle);
    pthread_mutex_unlock(&b->lock);
}

/* The handle bound to `native` (SP_NO_ID: none), unbound too when `unbind`. */
static uint32_t find_handle(sp_io_paradigm paradigm, uint64_t native, bool unbind)
{
    io_bindings *b = bindings_of(paradigm);
    if (!b)
        return SP_NO_ID;
    pthread_mutex_lock(&b->lock);
    size_t at = bindings_find(b, native);
    uint32_t handle = at == SIZE_MAX ? SP_NO_ID : b->values[at];
    if (unbind && at != SIZE_MAX) {
        b->values[at] = SLOT_REMOVED;
        b->live--;
    }
    pthread_mutex_unlock(&b->lock);
    return handle;
}

uint32_t sp_io_handle_lookup(sp_io_paradigm paradigm, uint64_t native)
{
    return find_handle(paradigm, native, false);
}

uint32_t sp_io_handle_unbind(sp_io_paradigm paradigm, uint64_t native)
{
    return find_handle(paradigm, native, true);
}

void sp_io_handle_rebind(sp_io_paradigm paradigm, uint64_t native, uint32_t handle)
{
    bind(paradigm, native, handle);
}

/* ---- definitions ----------------------------------------------------------------------- */

/* Set once by the I/O adapter's constructor, before any thread exists; read only after. */
static const sp_io_call *io_calls;
static size_t io_call_count;

void sp_io_describe_calls(const sp_io_call *calls, size_t count)
{
    io_calls = calls;
    io_call_count = count;
}

const sp_io_call *sp_io_calls(size_t *count)
{
    *count = io_call_count;
    return io_calls;
}

uint32_t sp_io_file_define(const char *path)
{
    if (!sp_meas.io || !path)
        return SP_NO_ID;
    char resolved[PATH_MAX];
    const char *name = realpath(path, resolved) ? resolved : path;
    return sp_defs_io_file(&sp_meas.defs, name);
}

uint32_t sp_io_handle_precreated(sp_io_paradigm paradigm, uint64_t native, const char *name,
                                 uint32_t file, uint32_t flags, sp_io_access_mode mode,
                                 uint32_t status_flags, uint32_t unify_key)
{
    if (!sp_meas.io)
        return SP_NO_ID;
    sp_io_handle h = {
        .file = file,
        .parent = SP_NO_ID,
        .comm = SP_NO_ID,
        .unify_key = unify_key,
        .paradigm = (uint8_t)paradigm,
        .flags = (uint8_t)(flags | SP_IO_HANDLE_PRE_CREATED),
        .access_mode = (uint8_t)mode,
        .status_flags = status_flags,
    };
    uint32_t id = sp_defs_io_handle(&sp_meas.defs, &h, name);
    bind(paradigm, native, id);
    return id;
}

uint32_t sp_io_handle_proxy(sp_io_paradigm paradigm, const char *name)
{
    if (!sp_meas.io)
        return SP_NO_ID;
    sp_io_handle h = {
        .file = SP_NO_ID,
        .parent = SP_NO_ID,
        .comm = SP_NO_ID,
        .unify_key = 1,
        .paradigm = (uint8_t)paradigm,
        .flags = SP_IO_HANDLE_PRE_CREATED | SP_IO_HANDLE_ALL_PROXY,
        .access_mode = SP_IO_ACCESS_READ_WRITE,
    };
    return sp_defs_io_handle(&sp_meas.defs, &h, name);
}

uint32_t sp_io_handle_begin(sp_location *loc, sp_io_paradigm paradigm, const char *name,
                            uint32_t comm, uint32_t unify_key)
{
    if (!sp_meas.io)
        return SP_NO_ID;
    uint32_t depth = loc->io_creating_depth;
    uint32_t capacity = sizeof loc->io_creating / sizeof loc->io_creating[0];
    sp_io_handle h = {
        .file = SP_NO_ID,
        .parent = depth && depth <= capacity ? loc->io_creating[depth - 1] : SP_NO_ID,
        .comm = comm,
        .unify_key = unify_key,
        .paradigm = (uint8_t)paradigm,
    };
    uint32_t id = sp_defs_io_handle(&sp_meas.defs, &h, name);
    if (depth < capacity)
        loc->io_creating[depth] = id;
    loc->io_creating_depth = depth + 1;
    return id;
}

static void creation_ended(sp_location *loc)
{
    if (loc->io_creating_depth)
        loc->io_creating_depth--;
}

void sp_io_handle_complete(sp_location *loc, uint32_t handle, uint32_t file, uint64_t native)
{
    creation_ended(loc);
    if (handle == SP_NO_ID)
        return;
    if (file != SP_NO_ID)
        sp_defs_io_handle_set_file(&sp_meas.defs, handle, file);
    pthread_mutex_lock(&sp_meas.defs.lock);
    sp_io_paradigm paradigm = (sp_io_paradigm)sp_meas.defs.io_handles[handle].paradigm;
    pthread_mutex_unlock(&sp_meas.defs.lock);
    bind(paradigm, native, handle);
}

void sp_io_handle_drop(sp_location *loc, uint32_t handle)
{
    (void)handle;
    creation_ended(loc);
}

uint32_t sp_io_handle_duplicate(sp_io_paradigm paradigm, uint32_t old, uint64_t native)
{
    if (!sp_meas.io || old == SP_NO_ID)
        return SP_NO_ID;
    sp_defs *d = &sp_meas.defs;
    pthread_mutex_lock(&d->lock);
    if (old >= d->io_handle_count) {
        pthread_mutex_unlock(&d->lock);
        return SP_NO_ID;
    }
    sp_io_handle h = d->io_handles[old];
    /* The copy needs the name as text: sp_defs_io_handle interns it again (same id). */
    const char *name = sp_defs_str(d, h.name);
    char *copy = strdup(name);
    pthread_mutex_unlock(&d->lock);
    if (!copy)
        return SP_NO_ID;
    h.flags = 0; /* a duplicate is not pre-created, whatever its original was */
    h.unify_key = 0;
    h.paradigm = (uint8_t)paradigm;
    uint32_t id = sp_defs_io_handle(d, &h, copy);
    free(copy);
    bind(paradigm, native, id);
    return id;
}

uint32_t sp_io_handle_file(uint32_t handle)
{
    sp_defs *d = &sp_meas.defs;
    if (!sp_meas.io || handle == SP_NO_ID)
        return SP_NO_ID;
    pthread_mutex_lock(&d->lock);
    uint32_t file = handle < d->io_handle_count ? d->io_handles[handle].file : SP_NO_ID;
    pthread_mutex_unlock(&d->lock);
    return file;
}
