/* The MPI functions as regions of paradigm MPI, their SCOREP_MPI_ENABLE_GROUPS groups, and
 * the enter/leave of every wrapper. */
#include "adapters/mpi/mpi_adapter.h"

#include <stdatomic.h>

static const struct {
    const char *name;
    sp_role role;
    uint32_t groups;
} functions[FN_COUNT] = {
#define SPMPI_ENTRY(ID, NAME, ROLE, GROUPS) [FN_##ID] = {NAME, SP_ROLE_##ROLE, GROUPS},
    SPMPI_FUNCTIONS(SPMPI_ENTRY)
#undef SPMPI_ENTRY
};

uint32_t spmpi_enabled = G_DEFAULT;
/* The measurement whose SCOREP_MPI_ENABLE_GROUPS spmpi_enabled holds. Global for the same
 * reason; written by whichever wrapper first sees a new measurement (the same value). */
static _Atomic uint32_t groups_generation;

static void refresh_groups(void)
{
    uint32_t generation = sp_measurement_generation();
    if (atomic_load_explicit(&groups_generation, memory_order_relaxed) == generation)
        return;
    sp_location *loc = sp_event_section_begin(); /* the configuration stays while it runs */
    if (!loc)
        return;
    spmpi_enabled = spmpi_parse_groups(sp_measurement_config()->mpi_groups);
    atomic_store(&groups_generation, generation);
    sp_event_section_end(loc);
}

/* generation << 32 | region, per function: defined once per measurement. */
static _Atomic uint64_t region_cache[FN_COUNT];

static uint32_t region_of(int fn)
{
    uint32_t generation = sp_measurement_generation();
    uint64_t cached = atomic_load(&region_cache[fn]);
    if ((uint32_t)(cached >> 32) == generation)
        return (uint32_t)cached;
    uint32_t region = sp_region_define_paradigm(functions[fn].name, SP_PARADIGM_MPI,
                                                functions[fn].role, SP_REGION_MPI);
    atomic_store(&region_cache[fn], (uint64_t)generation << 32 | region);
    return region;
}

uint64_t spmpi_enter(int fn)
{
    refresh_groups();
    if (!spmpi_on(functions[fn].groups))
        return 0;
    uint64_t time = sp_clock_now();
    sp_location *loc = sp_event_section_begin();
    if (!loc)
        return time;
    uint32_t region = region_of(fn);
    if (region != SP_NO_ID)
        sp_enter(loc, region, SP_KEY_NAMED | region, time);
    sp_event_section_end(loc);
    return time;
}

sp_location *spmpi_after(int fn)
{
    if (!spmpi_on(functions[fn].groups))
        return NULL;
    return sp_event_section_begin();
}

void spmpi_leave(sp_location *loc, int fn)
{
    uint32_t region = region_of(fn);
    if (region != SP_NO_ID)
        sp_leave(loc, SP_KEY_NAMED | region, sp_clock_now());
    sp_event_section_end(loc);
}
