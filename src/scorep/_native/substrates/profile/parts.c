/* Child processes (core/measurement.h: m->processes): a member hands over its call trees
 * with its own ids (times already in seconds, so its clock does not matter to the root);
 * the root maps them with the maps the unification gave the part and appends them to its
 * own trees, as if one process had recorded them all. */
#include "substrates/profile/profile_internal.h"

#include <string.h>

void sp_profile_part(sp_measurement *m, uint64_t ticks_per_second, sp_buffer *out)
{
    sp_profile_finish_roots(m);
    double seconds_per_tick = 1.0 / (double)(ticks_per_second ? ticks_per_second : 1);
    sp_profile_serialize_trees(m, NULL, m->processes.info.number, 0, seconds_per_tick, out);
}

static uint32_t section_locations(const sp_process_part *p)
{
    const unsigned char *data = p->section[sp_profile.slot];
    if (!data || p->section_size[sp_profile.slot] < 4)
        return 0;
    uint32_t count;
    memcpy(&count, data, sizeof count);
    return count;
}

uint32_t sp_profile_adopted_locations(const sp_measurement *m)
{
    uint32_t total = 0;
    for (uint32_t k = 0; k < m->processes.part_count; k++)
        total += section_locations(&m->processes.parts[k]);
    return total;
}

static inline uint32_t map_id(const uint32_t *map, uint32_t count, uint32_t id)
{
    return id < count ? map[id] : 0;
}

/* One part's trees, copied with their ids mapped (the layout of
 * sp_profile_serialize_trees). A damaged section stops the copy: the count written before
 * no longer matches, which the root's reader reports. */
static void append_part(const sp_process_part *p, const sp_unified_maps *maps, sp_buffer *b)
{
    sp_reader r;
    sp_reader_init(&r, p->section[sp_profile.slot], p->section_size[sp_profile.slot]);
    uint32_t nlocs = sp_reader_u32(&r);
    for (uint32_t l = 0; l < nlocs && !r.failed; l++) {
        sp_buffer_u32(b, sp_reader_u32(&r)); /* the group: the member's number */
        sp_buffer_u32(b, map_id(maps->string_map, maps->string_count, sp_reader_u32(&r)));
        uint32_t count = sp_reader_u32(&r);
        sp_buffer_u32(b, count);
        for (uint32_t i = 0; i < count && !r.failed; i++) {
            sp_buffer_u32(b, sp_reader_u32(&r)); /* parent */
            sp_buffer_u32(b, map_id(maps->region_map, maps->region_count, sp_reader_u32(&r)));
            uint32_t kind = sp_reader_u32(&r);
            sp_buffer_u32(b, kind);
            uint32_t parameter = sp_reader_u32(&r);
            uint64_t value = sp_reader_u64(&r);
            if (kind != SP_NODE_REGION) {
                parameter = map_id(maps->parameter_map, maps->parameter_count, parameter);
                if (kind == SP_NODE_PARAMETER_STRING)
                    value = map_id(maps->string_map, maps->string_count, (uint32_t)value);
            }
            sp_buffer_u32(b, parameter);
            sp_buffer_u64(b, value);
            /* visits, bytes sent and received; time, min and max time (f64) */
            for (int k = 0; k < 6; k++)
                sp_buffer_u64(b, sp_reader_u64(&r));
        }
        /* The I/O bytes per node (sp_profile_io_serialize): no ids in them. */
        uint32_t io_entries = sp_reader_u32(&r);
        sp_buffer_u32(b, io_entries);
        for (uint32_t e = 0; e < io_entries && !r.failed; e++) {
            sp_buffer_u32(b, sp_reader_u32(&r));
            for (int k = 0; k < SP_IO_PARADIGM_COUNT * 2; k++)
                sp_buffer_u64(b, sp_reader_u64(&r));
        }
    }
    if (r.failed)
        b->failed = true;
}

void sp_profile_append_adopted(const sp_measurement *m, const sp_unified *u, sp_buffer *b)
{
    for (uint32_t k = 0; k < m->processes.part_count && k < u->part_count; k++)
        if (section_locations(&m->processes.parts[k]))
            append_part(&m->processes.parts[k], &u->part_maps[k], b);
}
