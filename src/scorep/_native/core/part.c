#include "core/part.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/experiment_dir.h"
#include "core/files.h"

/* One magic for both kinds of parts; the number after it is the layout's version. */
#define MAGIC "SPPART02"

static void part_path(char *path, size_t len, const char *dir, uint32_t world, uint32_t rank)
{
    snprintf(path, len, "%s/" SP_PART_DIR "/part-%08x-%u", dir, world, rank);
}

void sp_part_encode(const sp_part_contents *c, sp_buffer *out)
{
    sp_buffer_put(out, MAGIC, 8);
    sp_buffer_u32(out, c->world);
    sp_buffer_u32(out, c->number);
    sp_buffer_u64(out, (uint64_t)c->clock.offset_begin_ns);
    sp_buffer_u64(out, c->clock.sync_begin_ns);
    sp_buffer_u64(out, (uint64_t)c->clock.offset_end_ns);
    sp_buffer_u64(out, c->clock.sync_end_ns);
    sp_buffer_u64(out, c->clock.first_ns);
    sp_buffer_u64(out, c->clock.last_ns);
    sp_buffer_u32(out, c->location_count);
    sp_buffer_put(out, c->locations, (size_t)c->location_count * 4);
    sp_buffer_u64(out, c->report_size);
    sp_buffer_put(out, c->report, c->report_size);
    sp_buffer_u32(out, SP_PART_COUNTERS);
    for (int k = 0; k < SP_PART_COUNTERS; k++)
        sp_buffer_u64(out, c->counters[k]);
    uint32_t sections = 0;
    for (uint32_t s = 0; s < SP_SUBSTRATE_SLOTS; s++)
        sections += c->section_size[s] != 0;
    sp_buffer_u32(out, sections);
    for (uint32_t s = 0; s < SP_SUBSTRATE_SLOTS; s++)
        if (c->section_size[s]) {
            sp_buffer_u32(out, s);
            sp_buffer_u64(out, c->section_size[s]);
            sp_buffer_put(out, c->section[s], c->section_size[s]);
        }
}

bool sp_part_decode(const void *data, uint64_t size, sp_part_contents *c)
{
    memset(c, 0, sizeof *c);
    if (size < 8 || memcmp(data, MAGIC, 8) != 0)
        return false;
    sp_reader r;
    sp_reader_init(&r, (const unsigned char *)data + 8, size - 8);
    c->world = sp_reader_u32(&r);
    c->number = sp_reader_u32(&r);
    c->clock.offset_begin_ns = (int64_t)sp_reader_u64(&r);
    c->clock.sync_begin_ns = sp_reader_u64(&r);
    c->clock.offset_end_ns = (int64_t)sp_reader_u64(&r);
    c->clock.sync_end_ns = sp_reader_u64(&r);
    c->clock.first_ns = sp_reader_u64(&r);
    c->clock.last_ns = sp_reader_u64(&r);
    c->location_count = sp_reader_u32(&r);
    if (r.failed || c->location_count > (r.size - r.pos) / 4)
        return false;
    c->locations = r.data + r.pos;
    r.pos += (size_t)c->location_count * 4;
    c->report_size = sp_reader_u64(&r);
    if (r.failed || c->report_size > r.size - r.pos)
        return false;
    c->report = r.data + r.pos;
    r.pos += c->report_size;
    uint32_t ncounters = sp_reader_u32(&r);
    for (uint32_t k = 0; k < ncounters && !r.failed; k++) {
        uint64_t value = sp_reader_u64(&r);
        if (k < SP_PART_COUNTERS)
            c->counters[k] = value;
    }
    uint32_t nsections = sp_reader_u32(&r);
    for (uint32_t k = 0; k < nsections && !r.failed; k++) {
        uint32_t slot = sp_reader_u32(&r);
        uint64_t bytes = sp_reader_u64(&r);
        if (r.failed || slot >= SP_SUBSTRATE_SLOTS || bytes > r.size - r.pos)
            return false;
        c->section[slot] = r.data + r.pos;
        c->section_size[slot] = bytes;
        r.pos += bytes;
    }
    return !r.failed && r.pos == r.size;
}

uint32_t sp_part_location(const sp_part_contents *c, uint32_t i)
{
    uint32_t index;
    memcpy(&index, c->locations + (size_t)i * 4, sizeof index);
    return index;
}

int sp_part_write(const char *dir, const sp_part_contents *c, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/" SP_PART_DIR, dir);
    if (sp_make_directories(path, err, errlen) != 0)
        return -1;
    sp_buffer b;
    sp_buffer_init(&b);
    sp_part_encode(c, &b);
    int status = -1;
    if (b.failed) {
        sp_error(err, errlen, "out of memory while writing this process's part");
    } else {
        part_path(path, sizeof path, dir, c->world, c->number);
        status = sp_file_write_atomic(path, b.data, b.size, err, errlen);
    }
    sp_buffer_free(&b);
    return status;
}

int sp_part_announce(const char *dir, uint32_t world, uint32_t size, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/" SP_PART_DIR, dir);
    if (sp_make_directories(path, err, errlen) != 0)
        return -1;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char text[64];
    int n = snprintf(text, sizeof text, "%u %lld\n", size,
                     (long long)now.tv_sec * 1000000000LL + now.tv_nsec);
    snprintf(path, sizeof path, "%s/" SP_PART_DIR "/world-%08x", dir, world);
    return sp_file_write_atomic(path, text, (size_t)n, err, errlen);
}

/* ---- the root --------------------------------------------------------------------------- */

typedef struct {
    uint32_t world, size;
    long long announced;
} world_info;

static int by_announcement(const void *a, const void *b)
{
    const world_info *x = a, *y = b;
    if (x->announced != y->announced)
        return x->announced < y->announced ? -1 : 1;
    return x->world < y->world ? -1 : x->world > y->world;
}

/* The announced worlds (malloc'ed, sorted by announcement); -1 when out of memory. */
static int list_worlds(const char *dir, world_info **out, uint32_t *count)
{
    *out = NULL;
    *count = 0;
    char path[4200];
    snprintf(path, sizeof path, "%s/" SP_PART_DIR, dir);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    uint32_t cap = 0;
    struct dirent *entry;
    int status = 0;
    while ((entry = readdir(d)) != NULL) {
        unsigned world;
        if (sscanf(entry->d_name, "world-%8x", &world) != 1 || strchr(entry->d_name, '.'))
            continue;
        char file[4600];
        snprintf(file, sizeof file, "%s/%s", path, entry->d_name);
        FILE *f = fopen(file, "r");
        unsigned size = 0;
        long long announced = 0;
        bool ok = f && fscanf(f, "%u %lld", &size, &announced) == 2;
        if (f)
            fclose(f);
        if (!ok)
            continue;
        if (*count == cap) {
            cap = cap ? cap * 2 : 8;
            world_info *bigger = realloc(*out, cap * sizeof *bigger);
            if (!bigger) {
                status = -1;
                break;
            }
            *out = bigger;
        }
        (*out)[(*count)++] = (world_info){world, size, announced};
    }
    closedir(d);
    if (*count)
        qsort(*out, *count, sizeof **out, by_announcement);
    return status;
}

static bool part_exists(const char *dir, uint32_t world, uint32_t rank)
{
    char path[4200];
    part_path(path, sizeof path, dir, world, rank);
    return access(path, R_OK) == 0;
}

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Reads and checks one part file into p. */
static bool read_part(const char *path, sp_part *p)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    bool ok = fseek(f, 0, SEEK_END) == 0;
    long size = ok ? ftell(f) : -1;
    ok = ok && size > 0 && fseek(f, 0, SEEK_SET) == 0;
    p->data = ok ? malloc((size_t)size) : NULL;
    ok = p->data && fread(p->data, 1, (size_t)size, f) == (size_t)size;
    fclose(f);
    if (!ok || !sp_part_decode(p->data, (uint64_t)size, &p->c))
        return false;
    p->size = (uint64_t)size;
    p->location_ids = calloc(p->c.location_count + 1, sizeof *p->location_ids);
    p->location_events = calloc(p->c.location_count + 1, sizeof *p->location_events);
    if (!p->location_ids || !p->location_events)
        return false;
    for (uint32_t i = 0; i < p->c.location_count; i++)
        p->location_ids[i] = (uint64_t)sp_part_location(&p->c, i) << 32;
    return true;
}

static void free_part(sp_part *p)
{
    free(p->data);
    free(p->location_ids);
    free(p->location_events);
    sp_unified_maps_free(&p->maps);
}

int sp_parts_collect(const char *dir, double timeout, uint32_t first_rank, sp_part **parts,
                     uint32_t *count, char *missing, size_t missing_len)
{
    *parts = NULL;
    *count = 0;
    missing[0] = '\0';
    world_info *worlds = NULL;
    uint32_t nworlds = 0;
    double deadline = seconds_now() + timeout;
    /* Until every announced world has all its parts (a part's own announcements come
     * before it), or the time is up. */
    for (;;) {
        free(worlds);
        if (list_worlds(dir, &worlds, &nworlds) != 0)
            return -1;
        bool complete = true;
        for (uint32_t w = 0; w < nworlds && complete; w++)
            for (uint32_t r = 0; r < worlds[w].size && complete; r++)
                complete = part_exists(dir, worlds[w].world, r);
        if (complete || seconds_now() > deadline)
            break;
        struct timespec pause = {0, 20 * 1000000};
        nanosleep(&pause, NULL);
    }
    uint64_t total = 0;
    for (uint32_t w = 0; w < nworlds; w++)
        total += worlds[w].size;
    sp_part *out = calloc(total + 1, sizeof *out);
    if (!out) {
        free(worlds);
        return -1;
    }
    uint32_t n = 0, lost = 0;
    size_t used = 0;
    for (uint32_t w = 0; w < nworlds; w++)
        for (uint32_t r = 0; r < worlds[w].size; r++) {
            char path[4200];
            part_path(path, sizeof path, dir, worlds[w].world, r);
            sp_part p = {0};
            if (!read_part(path, &p) || p.c.world != worlds[w].world || p.c.number != r) {
                free_part(&p);
                lost++;
                if (used + 64 < missing_len)
                    used += (size_t)snprintf(missing + used, missing_len - used,
                                             "%srank %u of spawned world %u",
                                             lost > 1 ? ", " : "", r, w + 1);
                continue;
            }
            p.world_index = w + 1;
            p.rank = first_rank + n;
            for (uint32_t i = 0; i < p.c.location_count; i++)
                p.location_ids[i] |= p.rank;
            out[n++] = p;
        }
    free(worlds);
    *parts = out;
    *count = n;
    return 0;
}

void sp_parts_free(const char *dir, sp_part *parts, uint32_t count, bool remove_files)
{
    for (uint32_t i = 0; i < count; i++)
        free_part(&parts[i]);
    free(parts);
    if (!remove_files || !dir)
        return;
    char path[4200];
    snprintf(path, sizeof path, "%s/" SP_PART_DIR, dir);
    sp_dir_remove_flat(path);
}
