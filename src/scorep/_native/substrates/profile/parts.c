/* Child processes (core/measurement.h: m->processes): a member hands over its call trees
 * with its own ids (sp_profile_part: times already in seconds, so its clock does not matter
 * to the root); the root maps them with the maps the unification gave the part and appends
 * them to its own trees, as if one process had recorded them all. Spawned MPI ranks' parts
 * (core/part.h) carry the same section; write.c adopts those at the experiment's root. */
#include "substrates/profile/profile_internal.h"

uint32_t sp_profile_adopted_locations(const sp_measurement *m)
{
    uint32_t total = 0;
    for (uint32_t k = 0; k < m->processes.part_count; k++) {
        const sp_part_contents *p = &m->processes.parts[k];
        total += sp_profile_part_locations(p->section[sp_profile.slot],
                                           p->section_size[sp_profile.slot]);
    }
    return total;
}

void sp_profile_append_adopted(const sp_measurement *m, const sp_unified *u, sp_buffer *b)
{
    for (uint32_t k = 0; k < m->processes.part_count && k < u->part_count; k++) {
        const sp_part_contents *p = &m->processes.parts[k];
        const unsigned char *section = p->section[sp_profile.slot];
        uint64_t size = p->section_size[sp_profile.slot];
        if (sp_profile_part_locations(section, size))
            sp_profile_remap_trees(section, size, &u->part_maps[k], p->number, SP_NO_ID, b);
    }
}
