/* Child processes (core/measurement.h: m->processes): a member encodes its events into OTF2
 * event files of its own part directory and hands over where they are; the root moves them
 * into its archive (an OTF2 event file is one location's, whatever archive wrote it) and
 * writes their location definitions with the maps the unification gave the part.
 *
 * The section a member hands over: u32 ok (its event files exist), its error (or ""),
 * the directory of its event files, u32 locations, then per location u64 id, u64 events. */
#include "substrates/trace/trace_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sp_trace_hand_over(sp_measurement *m, sp_buffer *out)
{
    bool ok = !sp_trace.error[0] && sp_trace.archive && !sp_trace.broken;
    if (ok) {
        /* Only the event files: the root writes every definition. */
        char err[512] = "";
        sp_trace_capture_otf2_messages();
        int status = sp_trace_check(OTF2_Archive_Close(sp_trace.archive), "Close", err,
                                    sizeof err);
        sp_trace_release_otf2_messages(err, sizeof err);
        if (status == 0)
            sp_trace.archive = NULL;
        else {
            ok = false;
            snprintf(sp_trace.error, sizeof sp_trace.error, "%s", err);
        }
    }
    uint32_t nlocs = atomic_load(&m->location_count);
    if (!ok) /* the root makes empty event files: its definitions must say so */
        for (uint32_t i = 0; i < nlocs; i++)
            if (trace_location(m->locations[i]))
                trace_location(m->locations[i])->events = 0;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/traces", m->processes.info.part_dir);
    sp_buffer_u32(out, ok);
    sp_buffer_str(out, sp_trace.error);
    sp_buffer_str(out, dir);
    sp_buffer_u32(out, nlocs);
    for (uint32_t i = 0; i < nlocs; i++) {
        sp_buffer_u64(out, m->locations[i]->id);
        sp_buffer_u64(out, sp_trace_location_events(m->locations[i]));
    }
}

/* A part's section, read: its locations (ids and event counts). */
typedef struct {
    bool ok;
    const char *error, *dir;
    uint32_t count;
    sp_reader locations; /* positioned at the first id */
} part_section;

/* The next location id of a part's section (its event count skipped); false after the last. */
static bool next_location(part_section *s, uint32_t *i, uint64_t *id)
{
    if (*i >= s->count)
        return false;
    *id = sp_reader_u64(&s->locations);
    (void)sp_reader_u64(&s->locations);
    ++*i;
    return true;
}

static bool read_section(const sp_part_contents *p, part_section *s)
{
    const unsigned char *data = p->section[sp_trace.slot];
    if (!data)
        return false;
    sp_reader r;
    sp_reader_init(&r, data, p->section_size[sp_trace.slot]);
    s->ok = sp_reader_u32(&r) != 0;
    s->error = sp_reader_str(&r);
    s->dir = sp_reader_str(&r);
    s->count = sp_reader_u32(&r);
    s->locations = r;
    return !r.failed && s->count <= (r.size - r.pos) / 16;
}

int sp_trace_adopt_events(sp_measurement *m, const char *dir, char *err, size_t errlen)
{
    for (uint32_t k = 0; k < m->processes.part_count; k++) {
        part_section s;
        if (!read_section(&m->processes.parts[k], &s))
            continue;
        uint64_t id;
        for (uint32_t i = 0; next_location(&s, &i, &id);) {
            char from[4400], to[4400];
            snprintf(from, sizeof from, "%s/%llu.evt", s.dir, (unsigned long long)id);
            snprintf(to, sizeof to, "%s/traces/%llu.evt", dir, (unsigned long long)id);
            if (s.ok && rename(from, to) == 0)
                continue;
            /* No events of this location (its process could not write them): an empty
             * event file keeps the archive readable. */
            OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(sp_trace.archive, id);
            if (!w)
                return sp_error(err, errlen, "OTF2 GetEvtWriter failed");
            if (sp_trace_check(OTF2_Archive_CloseEvtWriter(sp_trace.archive, w),
                               "CloseEvtWriter", err, errlen) != 0)
                return -1;
        }
    }
    return 0;
}

int sp_trace_adopted_definitions(sp_measurement *m, const sp_unified *u,
                                 int (*write)(OTF2_DefWriter *dw, const sp_unified_maps *maps,
                                              char *err, size_t errlen),
                                 char *err, size_t errlen)
{
    for (uint32_t k = 0; k < m->processes.part_count && k < u->part_count; k++) {
        part_section s;
        if (!read_section(&m->processes.parts[k], &s))
            continue;
        uint64_t id;
        for (uint32_t i = 0; next_location(&s, &i, &id);) {
            OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(sp_trace.archive, id);
            if (!dw)
                return sp_error(err, errlen, "OTF2 GetDefWriter failed");
            if (write(dw, &u->part_maps[k], err, errlen) != 0 ||
                sp_trace_check(OTF2_Archive_CloseDefWriter(sp_trace.archive, dw),
                               "CloseDefWriter", err, errlen) != 0)
                return -1;
        }
    }
    return 0;
}

void sp_trace_adopted_results(sp_measurement *m, sp_results *r)
{
    for (uint32_t k = 0; k < m->processes.part_count; k++) {
        part_section s;
        if (!read_section(&m->processes.parts[k], &s) || s.ok)
            continue;
        if (r->process_trace_failures++ == 0)
            snprintf(r->process_trace_error, sizeof r->process_trace_error, "process %u: %s",
                     m->processes.parts[k].number, s.error[0] ? s.error : "no event files");
    }
}
