/* Child processes in the core: what a member hands over to its root when it ends, and how
 * the root takes the parts of its members into the one experiment it writes. The group
 * itself (who is a member, the files the parts travel through) is the child processes'
 * adapter (adapters/process), reached through core/ipc.h only.
 *
 * A part is encoded as a spawned MPI process's is (core/part.h: one codec): the member's
 * number, its report for the unification (its definitions and location group,
 * core/unify.h), the counters the root's results include, then each substrate's section
 * (core/substrates.h: sp_substrates_part). */
#include "core/core_internal.h"
#include "core/substrates.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sp_processes_joined(const sp_ipc *ipc, const sp_process_info *info)
{
    sp_measurement *m = &sp_meas;
    if (!sp_measurement_running())
        return;
    m->processes.ipc = ipc;
    m->processes.info = *info;
    if (info->member) {
        m->processes.begin_ns = m->start.monotonic_ns;
        /* Its trace spills belong to its part: the root finds what a killed member left. */
        sp_substrates_output_dir_known(info->part_dir);
    }
}

void sp_processes_set_name(const char *name)
{
    if (sp_measurement_running() && name)
        snprintf(sp_meas.processes.info.name, sizeof sp_meas.processes.info.name, "%s", name);
}

void sp_processes_named_by_root(void)
{
    /* Called while the measurement ends (no longer "running"); the next start clears it. */
    if (sp_meas.processes.ipc)
        sp_meas.processes.named = true;
}

/* ---- a member --------------------------------------------------------------------------- */

int sp_processes_hand_over(sp_measurement *m, uint64_t end_time, uint64_t ticks_per_second,
                           char *err, size_t errlen)
{
    const sp_process_info *info = &m->processes.info;
    uint32_t nlocs = atomic_load(&m->location_count);
    for (uint32_t i = 0; i < nlocs; i++)
        m->locations[i]->id = ((uint64_t)m->locations[i]->index << 32) | info->number;
    free(m->output_dir);
    m->output_dir = strdup(info->part_dir);
    if (!m->output_dir)
        return sp_error(err, errlen, "out of memory");
    /* Step 1 as usual, into the part's directory: the trace's event files. */
    if (sp_substrates_prepare(m, m->output_dir, err, errlen) != 0)
        return -1;
    sp_part_contents c;
    sp_buffer report, sections[SP_SUBSTRATE_SLOTS], part;
    sp_buffer_init(&part);
    if (sp_measurement_part(m, end_time, ticks_per_second, false, &c, &report, sections, err,
                            errlen) != 0)
        return -1;
    c.number = info->number;
    sp_results r;
    memset(&r, 0, sizeof r);
    sp_measurement_collect_results(m, end_time, &r);
    uint64_t counters[SP_PART_COUNTERS] = {
        [SP_PART_ENTERS] = r.enters,
        [SP_PART_UNMATCHED_LEAVES] = r.unmatched_leaves,
        [SP_PART_TRACE_FLUSHES] = r.trace_flushes,
        [SP_PART_TRACE_LOST_RECORDS] = r.trace_lost_records,
        [SP_PART_PROFILE_FOLDED_CALLS] = r.profile_folded_calls,
        [SP_PART_PROFILE_DROPPED_CALLS] = r.profile_dropped_calls,
        [SP_PART_PROFILE_FOLDED_PARAMETERS] = r.profile_folded_parameters,
        [SP_PART_TRACE_SPILL_FAILURES] = r.trace_spill_failures,
        [SP_PART_MEMORY_OVER_BUDGET] = r.memory_over_budget_bytes,
        [SP_PART_LOCATIONS] = r.locations,
    };
    memcpy(c.counters, counters, sizeof counters);
    sp_part_encode(&c, &part);
    int status = 0;
    if (part.failed)
        status = sp_error(err, errlen, "out of memory while handing the results over");
    void *all = NULL;
    if (status == 0 && sp_ipc_gather_bytes(m->processes.ipc, part.data, part.size, &all, NULL) != 0)
        status = sp_error(err, errlen, "handing the results over to the parent process failed");
    free(all);
    sp_measurement_part_free(&report, sections);
    sp_buffer_free(&part);
    return status;
}

/* ---- the root ----------------------------------------------------------------------------- */

int sp_processes_adopt(sp_measurement *m, char *err, size_t errlen)
{
    const sp_ipc *ipc = m->processes.ipc;
    /* The root waits for its members (bounded) and closes its group; the members that
     * arrived are the group now. */
    if (ipc->ops->agree(ipc->ctx, m->processes.info.timeout) != 0)
        return sp_error(err, errlen, "the child processes' parts could not be collected");
    if (ipc->size <= 1)
        return 0;
    uint64_t *sizes = calloc(ipc->size, sizeof *sizes);
    void *all = NULL;
    if (!sizes)
        return sp_error(err, errlen, "out of memory while collecting the child processes' parts");
    if (sp_ipc_gather_bytes(ipc, NULL, 0, &all, sizes) != 0) {
        free(sizes);
        return sp_error(err, errlen, "collecting the child processes' parts failed");
    }
    m->processes.parts = calloc(ipc->size, sizeof *m->processes.parts);
    if (!m->processes.parts) {
        free(all);
        free(sizes);
        return sp_error(err, errlen, "out of memory while collecting the child processes' parts");
    }
    m->processes.received = all;
    uint64_t offset = sizes[0];
    for (uint32_t r = 1; r < ipc->size; offset += sizes[r], r++) {
        sp_part_contents *p = &m->processes.parts[m->processes.part_count];
        if (sizes[r] && sp_part_decode((const unsigned char *)all + offset, sizes[r], p))
            m->processes.part_count++;
    }
    free(sizes);
    return 0;
}

int sp_processes_numbers_end(sp_measurement *m, uint32_t *end, char *err, size_t errlen)
{
    uint32_t mine = m->ipc.size;
    for (uint32_t k = 0; k < m->processes.part_count; k++)
        if (m->processes.parts[k].number >= mine)
            mine = m->processes.parts[k].number + 1;
    *end = mine;
    if (!m->collective || !m->processes.ipc)
        return 0;
    uint64_t *sizes = calloc(m->ipc.size, sizeof *sizes);
    void *all = NULL;
    if (!sizes)
        return sp_error(err, errlen, "out of memory while numbering the processes");
    int status = sp_ipc_gather_bytes(&m->ipc, &mine, sizeof mine, &all, sizes);
    if (status != 0)
        status = sp_error(err, errlen, "numbering the processes of the ranks failed");
    for (uint32_t r = 0; status == 0 && all && r < m->ipc.size; r++) {
        uint32_t theirs;
        if (sizes[r] != sizeof theirs) {
            status = sp_error(err, errlen, "numbering the processes of the ranks failed");
            break;
        }
        memcpy(&theirs, (const unsigned char *)all + (uint64_t)r * sizeof theirs, sizeof theirs);
        if (theirs > *end)
            *end = theirs;
    }
    free(all);
    free(sizes);
    return status;
}

void sp_processes_add_counters(const sp_measurement *m, sp_results *r)
{
    for (uint32_t k = 0; k < m->processes.part_count; k++) {
        const uint64_t *c = m->processes.parts[k].counters;
        r->enters += c[SP_PART_ENTERS];
        r->unmatched_leaves += c[SP_PART_UNMATCHED_LEAVES];
        r->trace_flushes += c[SP_PART_TRACE_FLUSHES];
        r->trace_lost_records += c[SP_PART_TRACE_LOST_RECORDS];
        r->profile_folded_calls += c[SP_PART_PROFILE_FOLDED_CALLS];
        r->profile_dropped_calls += c[SP_PART_PROFILE_DROPPED_CALLS];
        r->profile_folded_parameters += c[SP_PART_PROFILE_FOLDED_PARAMETERS];
        r->trace_spill_failures += c[SP_PART_TRACE_SPILL_FAILURES];
        r->memory_over_budget_bytes += c[SP_PART_MEMORY_OVER_BUDGET];
        r->locations += (uint32_t)c[SP_PART_LOCATIONS];
    }
}

void sp_processes_release(sp_measurement *m)
{
    free(m->processes.parts);
    free(m->processes.received);
    memset(&m->processes, 0, sizeof m->processes);
}
