/* The location registry: a location per measured thread, made when the thread first
 * records, found again through the thread-local cache. */
#include "core/core_internal.h"
#include "core/substrates.h"

#include <stdlib.h>
#include <string.h>

SP_TLS sp_thread_state sp_thread;

bool sp_location_grow_stack(sp_location *loc)
{
    uint32_t capacity = loc->capacity ? loc->capacity * 2 : 128;
    sp_frame *stack = realloc(loc->stack, capacity * sizeof *stack);
    if (!stack)
        return false;
    loc->stack = stack;
    loc->capacity = capacity;
    /* The frames' metric start values grow with the stack (nothing without metrics). */
    return sp_metrics_grow(loc) == 0;
}

static void free_location(sp_location *loc)
{
    sp_substrates_location_free(loc);
    free(loc->context.frames);
    free(loc->scratch.frames);
    free(loc->covered);
    sp_metrics_location_free(loc);
    free(loc->stack);
    free(loc->name);
    free(loc);
}

/* The location made for `key` (0: none) in this measurement, or NULL. Locations are only
 * ever appended, so the scan needs no lock for the ones it sees. */
static sp_location *find_keyed(uint64_t key)
{
    if (!key)
        return NULL;
    uint32_t n = atomic_load(&sp_meas.location_count);
    for (uint32_t i = n; i-- > 0;)
        if (sp_meas.locations[i] && sp_meas.locations[i]->key == key)
            return sp_meas.locations[i];
    return NULL;
}

static sp_location *create_location(uint64_t key, uint64_t thread_ident, const char *name)
{
    sp_location *loc = calloc(1, sizeof *loc);
    if (!loc)
        return NULL;
    loc->name = strdup(name);
    loc->key = key;
    loc->thread_ident = thread_ident;
    loc->last_time = sp_meas.start.ticks;
    loc->sample_since = sp_clock_now();
    loc->recording = true;
    loc->recording_epoch = 0;
    if (!loc->name || !sp_location_grow_stack(loc)) {
        free_location(loc);
        return NULL;
    }
    pthread_mutex_lock(&sp_meas.locations_lock);
    sp_location *made = find_keyed(key);
    if (made) {
        /* Another thread made it meanwhile (a sampler, the thread itself). */
        pthread_mutex_unlock(&sp_meas.locations_lock);
        free_location(loc);
        return made;
    }
    uint32_t index = atomic_load(&sp_meas.location_count);
    if (index >= SP_MAX_LOCATIONS) {
        pthread_mutex_unlock(&sp_meas.locations_lock);
        free_location(loc);
        return NULL;
    }
    loc->index = index;
    loc->id = index;
    loc->is_main = index == 0;
    if (sp_metrics_location_open(loc) != 0 || sp_substrates_location_open(loc) != 0) {
        pthread_mutex_unlock(&sp_meas.locations_lock);
        free_location(loc);
        return NULL;
    }
    sp_meas.locations[index] = loc;
    atomic_store(&sp_meas.location_count, index + 1);
    pthread_mutex_unlock(&sp_meas.locations_lock);
    return loc;
}

sp_location *sp_location_attach(uint64_t thread_ident, const char *name, bool register_thread)
{
    return sp_location_attach_keyed(0, thread_ident, name, register_thread);
}

sp_location *sp_location_attach_keyed(uint64_t key, uint64_t thread_ident, const char *name,
                                      bool register_thread)
{
    uint32_t generation = atomic_load_explicit(&sp_live.generation, memory_order_acquire);
    if (sp_thread.generation == generation && sp_thread.location) {
        if (register_thread && name)
            sp_location_set_name(sp_thread.location, name);
        return sp_thread.location;
    }
    sp_location *loc = NULL;
    if (sp_measurement_running() && (register_thread || sp_meas.config.all_threads)) {
        loc = find_keyed(key);
        if (loc && register_thread && name)
            sp_location_set_name(loc, name);
        if (!loc)
            loc = create_location(key, thread_ident, name ? name : "Thread");
    }
    sp_thread.location = loc;
    sp_thread.generation = generation;
    if (loc && loc->is_main) {
        /* ProgramBegin goes first into the first location: no event of the process may be
         * older than it. */
        sp_substrates_program_begin(loc, sp_meas.start.ticks);
    }
    return loc;
}

sp_location *sp_location_of_key(uint64_t key, uint64_t thread_ident, const char *name)
{
    if (!key || !sp_measurement_running() || !sp_meas.config.all_threads)
        return NULL;
    sp_location *loc = find_keyed(key);
    return loc ? loc : create_location(key, thread_ident, name ? name : "Thread");
}

void sp_location_set_name(sp_location *loc, const char *name)
{
    char *copy = strdup(name ? name : "");
    if (!copy)
        return;
    free(loc->name);
    loc->name = copy;
}

void sp_locations_free(sp_measurement *m)
{
    uint32_t n = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < n; i++) {
        if (m->locations[i])
            free_location(m->locations[i]);
        m->locations[i] = NULL;
    }
    atomic_store(&m->location_count, 0);
}
