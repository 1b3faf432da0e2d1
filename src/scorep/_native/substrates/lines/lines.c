#include "substrates/lines/lines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/serial.h"

/* The running measurement and this substrate's slot. Global because the event path carries
 * no context of ours, and there is one measurement per process. */
static struct {
    sp_measurement *meas;
    unsigned slot;
} lines;

int sp_lines_start(sp_measurement *m, unsigned slot, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    lines.meas = m;
    lines.slot = slot;
    return 0;
}

void sp_lines_stop(sp_measurement *m)
{
    (void)m;
}

static sp_lines_location *table_of(sp_location *loc, bool create)
{
    sp_lines_location *t = loc->substrate[lines.slot];
    if (t || !create)
        return t;
    t = calloc(1, sizeof *t);
    if (!t || sp_u64map_init(&t->index, 64) != 0) {
        free(t);
        return NULL;
    }
    loc->substrate[lines.slot] = t;
    return t;
}

void sp_lines_location_free(sp_location *loc)
{
    if (!lines.meas)
        return;
    sp_lines_location *t = loc->substrate[lines.slot];
    if (!t)
        return;
    sp_u64map_free(&t->index);
    free(t->entries);
    free(t);
    loc->substrate[lines.slot] = NULL;
}

void sp_lines_record(sp_location *loc, uint32_t region, uint32_t line, uint32_t hits,
                     uint64_t duration)
{
    sp_lines_location *t = table_of(loc, true);
    if (!t)
        return;
    uint64_t key = (uint64_t)region << 32 | line;
    uint32_t index = sp_u64map_get(&t->index, key);
    if (index == SP_NO_ID) {
        if (t->count == t->capacity) {
            uint32_t capacity = t->capacity ? t->capacity * 2 : 64;
            sp_line_entry *bigger = realloc(t->entries, capacity * sizeof *bigger);
            if (!bigger) {
                t->dropped++;
                return;
            }
            t->entries = bigger;
            t->capacity = capacity;
        }
        index = t->count;
        if (sp_u64map_put(&t->index, key, index) != 0) {
            t->dropped++;
            return;
        }
        t->entries[t->count++] = (sp_line_entry){region, line, 0, 0};
    }
    t->entries[index].hits += hits;
    t->entries[index].time += duration;
}

/* ---- the end ----------------------------------------------------------------------------- */

/* What a process reports: per location with lines its name (global string) and its entries
 * (global region ids, time in seconds). */
static void serialize(sp_measurement *m, const sp_unified *u, double seconds_per_tick,
                      sp_buffer *b)
{
    uint32_t nlocs = atomic_load(&m->location_count);
    uint32_t with_lines = 0;
    for (uint32_t l = 0; l < nlocs; l++)
        with_lines += table_of(m->locations[l], false) != NULL;
    sp_buffer_u32(b, with_lines);
    for (uint32_t l = 0; l < nlocs; l++) {
        sp_location *loc = m->locations[l];
        sp_lines_location *t = table_of(loc, false);
        if (!t)
            continue;
        sp_buffer_u32(b, sp_unified_string(u, sp_defs_string(&m->defs, loc->name)));
        sp_buffer_u32(b, t->count);
        for (uint32_t i = 0; i < t->count; i++) {
            const sp_line_entry *e = &t->entries[i];
            sp_buffer_u32(b, e->region < u->maps.region_count ? u->maps.region_map[e->region] : 0);
            sp_buffer_u32(b, e->line);
            sp_buffer_u64(b, e->hits);
            sp_buffer_f64(b, (double)e->time * seconds_per_tick);
        }
    }
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* One entry of a location's line table, as the ranks reported it (serialize above). */
typedef struct {
    uint32_t region, line;
    uint64_t hits;
    double seconds;
} line_entry;

/* What a pass over the ranks' reports does at each location and each of its lines. */
typedef struct {
    void (*location)(void *ctx, uint32_t rank, uint32_t name);
    void (*line)(void *ctx, uint32_t index, const line_entry *e);
    void (*location_end)(void *ctx);
} lines_visitor;

/* Walks every rank's report in rank order; false when one arrived damaged. Both passes of
 * write_json read the reports through here, so that they cannot read them differently. */
static bool walk_reports(const sp_unified *u, const void *all, const uint64_t *sizes,
                         uint32_t nranks, const lines_visitor *v, void *ctx)
{
    uint64_t offset = 0;
    for (uint32_t r = 0; r < nranks; offset += sizes[r], r++) {
        sp_reader rd;
        sp_reader_init(&rd, (const unsigned char *)all + offset, sizes[r]);
        uint32_t nlocs = sp_reader_u32(&rd);
        for (uint32_t l = 0; l < nlocs && !rd.failed; l++) {
            uint32_t name = sp_reader_u32(&rd);
            uint32_t count = sp_reader_u32(&rd);
            if (v->location)
                v->location(ctx, u->ranks[r].rank, name);
            for (uint32_t i = 0; i < count && !rd.failed; i++) {
                line_entry e;
                e.region = sp_reader_u32(&rd);
                e.line = sp_reader_u32(&rd);
                e.hits = sp_reader_u64(&rd);
                e.seconds = sp_reader_f64(&rd);
                if (!rd.failed && v->line)
                    v->line(ctx, i, &e);
            }
            if (v->location_end)
                v->location_end(ctx);
        }
        if (rd.failed)
            return false;
    }
    return true;
}

typedef struct {
    FILE *f;
    const sp_defs *g;
    bool *listed; /* by global region id: its function is written */
    bool first;
} json_pass;

/* Each region's name, file and first line once, by global region id. */
static void json_function(void *ctx, uint32_t index, const line_entry *e)
{
    (void)index;
    json_pass *j = ctx;
    if (e->region >= j->g->region_count || j->listed[e->region])
        return;
    j->listed[e->region] = true;
    const sp_region *reg = &j->g->regions[e->region];
    fprintf(j->f, "%s\n  \"%u\": {\"name\": ", j->first ? "" : ",", e->region);
    json_string(j->f, sp_defs_str(j->g, reg->name));
    fprintf(j->f, ", \"file\": ");
    json_string(j->f, sp_defs_str(j->g, reg->file));
    fprintf(j->f, ", \"first_line\": %d}", reg->begin_line);
    j->first = false;
}

static void json_location(void *ctx, uint32_t rank, uint32_t name)
{
    json_pass *j = ctx;
    fprintf(j->f, "%s\n  {\"rank\": %u, \"thread\": ", j->first ? "" : ",", rank);
    json_string(j->f, sp_defs_str(j->g, name));
    fprintf(j->f, ", \"lines\": [");
    j->first = false;
}

static void json_line(void *ctx, uint32_t index, const line_entry *e)
{
    json_pass *j = ctx;
    fprintf(j->f, "%s[%u, %u, %llu, %.9g]", index ? ", " : "", e->region, e->line,
            (unsigned long long)e->hits, e->seconds);
}

static void json_location_end(void *ctx)
{
    fprintf(((json_pass *)ctx)->f, "]}");
}

/* The root writes what every process reported. Returns 0, or -1 with err. */
static int write_json(const sp_unified *u, const void *all, const uint64_t *sizes, uint32_t nranks,
                      const char *path, char *err, size_t errlen)
{
    const sp_defs *g = &u->global;
    FILE *f = fopen(path, "w");
    if (!f)
        return sp_error(err, errlen, "cannot write %s: %s", path, strerror(errno));
    fprintf(f, "{\"format\": \"scorep-lines 1\",\n \"functions\": {");
    json_pass j = {f, g, calloc(g->region_count ? g->region_count : 1, sizeof *j.listed), true};
    int status = j.listed ? 0 : sp_error(err, errlen, "out of memory while writing lines.json");
    if (status == 0 &&
        !walk_reports(u, all, sizes, nranks, &(lines_visitor){.line = json_function}, &j))
        status = sp_error(err, errlen, "the line profiles of the ranks arrived damaged");
    fprintf(f, "},\n \"locations\": [");
    j.first = true;
    if (status == 0)
        (void)walk_reports(u, all, sizes, nranks,
                           &(lines_visitor){json_location, json_line, json_location_end}, &j);
    fprintf(f, "\n ]\n}\n");
    free(j.listed);
    if (fclose(f) != 0 && status == 0)
        status = sp_error(err, errlen, "cannot write %s: %s", path, strerror(errno));
    if (status != 0)
        remove(path);
    return status;
}

int sp_lines_write(sp_measurement *m, const sp_unified *u, const char *dir,
                   uint64_t ticks_per_second, char *err, size_t errlen)
{
    const sp_ipc *ipc = m->collective ? &m->ipc : &sp_ipc_single;
    double seconds_per_tick = 1.0 / (double)(ticks_per_second ? ticks_per_second : 1);
    sp_buffer mine;
    sp_buffer_init(&mine);
    serialize(m, u, seconds_per_tick, &mine);
    void *all = NULL;
    uint64_t *sizes = calloc(ipc->size, sizeof *sizes);
    int status = -1;
    if (mine.failed || !sizes) {
        sp_error(err, errlen, "out of memory while writing the line profiles");
    } else if (sp_ipc_gather_bytes(ipc, mine.data, mine.size, &all, sizes) != 0) {
        sp_error(err, errlen, "collecting the line profiles of all ranks failed");
    } else if (ipc->rank != 0) {
        status = 0;
    } else {
        /* Nothing at all: no file (the usual case, no function was chosen). */
        bool any = false;
        uint64_t offset = 0;
        for (uint32_t r = 0; r < ipc->size && !any; offset += sizes[r], r++) {
            sp_reader rd;
            sp_reader_init(&rd, (const unsigned char *)all + offset, sizes[r]);
            any = sp_reader_u32(&rd) > 0;
        }
        status = 0;
        if (any) {
            size_t len = strlen(dir) + 16;
            char *path = malloc(len);
            if (!path) {
                status = sp_error(err, errlen, "out of memory while writing the line profiles");
            } else {
                snprintf(path, len, "%s/lines.json", dir);
                status = write_json(u, all, sizes, ipc->size, path, err, errlen);
                free(path);
            }
        }
    }
    free(all);
    free(sizes);
    sp_buffer_free(&mine);
    return status;
}
