#include "core/unify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/measurement.h"
#include "core/part.h"
#include "core/serial.h"
#include "core/tables.h"

/* ---- what a rank reports -------------------------------------------------------------- */

static void serialize_io(const sp_defs *d, sp_buffer *b)
{
    sp_buffer_u32(b, d->io_paradigms_used);
    sp_buffer_u32(b, d->io_file_count);
    for (uint32_t i = 0; i < d->io_file_count; i++)
        sp_buffer_u32(b, d->io_files[i].name);
    sp_buffer_u32(b, d->io_handle_count);
    for (uint32_t i = 0; i < d->io_handle_count; i++) {
        const sp_io_handle *h = &d->io_handles[i];
        sp_buffer_u32(b, h->name);
        sp_buffer_u32(b, h->file);
        sp_buffer_u32(b, h->parent);
        sp_buffer_u32(b, h->comm);
        sp_buffer_u32(b, h->unify_key);
        sp_buffer_u32(b, (uint32_t)h->paradigm | (uint32_t)h->flags << 8 |
                             (uint32_t)h->access_mode << 16);
        sp_buffer_u32(b, h->status_flags);
    }
}

/* A process's (or a merged subtree's) definitions. */
static void serialize_defs(const sp_defs *d, sp_buffer *b)
{
    sp_buffer_u32(b, (uint32_t)d->strings.count);
    for (size_t i = 0; i < d->strings.count; i++)
        sp_buffer_str(b, d->strings.strings[i]);
    sp_buffer_u32(b, d->region_count);
    for (uint32_t i = 0; i < d->region_count; i++) {
        const sp_region *r = &d->regions[i];
        sp_buffer_u32(b, r->name);
        sp_buffer_u32(b, r->canonical);
        sp_buffer_u32(b, r->file);
        sp_buffer_u32(b, (uint32_t)r->begin_line);
        sp_buffer_u32(b, (uint32_t)r->end_line);
        sp_buffer_u32(b, (uint32_t)r->paradigm | (uint32_t)r->role << 8 | (uint32_t)r->kind << 16);
        sp_buffer_u32(b, r->group);
    }
    sp_buffer_u32(b, d->parameter_count);
    for (uint32_t i = 0; i < d->parameter_count; i++) {
        sp_buffer_u32(b, d->parameters[i].name);
        sp_buffer_u32(b, d->parameters[i].type);
    }
    sp_buffer_u32(b, d->comm_count);
    for (uint32_t i = 0; i < d->comm_count; i++) {
        const sp_comm *c = &d->comms[i];
        sp_buffer_u64(b, c->key);
        sp_buffer_u64(b, c->parent);
        sp_buffer_u32(b, (uint32_t)c->kind | (uint32_t)c->root << 8 | (uint32_t)c->created << 9);
        sp_buffer_u32(b, c->name);
        sp_buffer_u32(b, c->size);
        sp_buffer_put(b, c->members, c->size * sizeof *c->members);
        sp_buffer_u32(b, c->remote_size);
        sp_buffer_put(b, c->remote, c->remote_size * sizeof *c->remote);
    }
    sp_buffer_u32(b, d->win_count);
    for (uint32_t i = 0; i < d->win_count; i++) {
        sp_buffer_u64(b, d->wins[i].key);
        sp_buffer_u32(b, d->wins[i].comm);
        sp_buffer_u32(b, d->wins[i].name);
    }
    serialize_io(d, b);
    sp_buffer_u32(b, d->context_count);
    for (uint32_t i = 0; i < d->context_count; i++) {
        sp_buffer_u32(b, d->contexts[i].region);
        sp_buffer_u32(b, d->contexts[i].parent);
    }
}

/* What a process reports about itself; its string ids are those of the definitions sent
 * with it. */
static void serialize_rank(const sp_unified_rank *rank, sp_buffer *b)
{
    sp_buffer_u32(b, rank->rank);
    sp_buffer_u32(b, rank->world);
    sp_buffer_u32(b, rank->world_rank);
    sp_buffer_u32(b, rank->name);
    sp_buffer_u32(b, rank->host);
    sp_buffer_u32(b, (uint32_t)rank->thread_requested);
    sp_buffer_u32(b, (uint32_t)rank->thread_provided);
    sp_buffer_u64(b, rank->start_ns);
    sp_buffer_u64(b, rank->end_ns);
    sp_buffer_u64(b, rank->realtime_start_ns);
    sp_buffer_u32(b, rank->location_count);
    for (uint32_t i = 0; i < rank->location_count; i++) {
        sp_buffer_u64(b, rank->locations[i].id);
        sp_buffer_u32(b, rank->locations[i].name);
        sp_buffer_u64(b, rank->locations[i].events);
    }
    sp_buffer_u32(b, rank->parent);
    sp_buffer_u64(b, rank->pid);
    sp_buffer_u64(b, rank->parent_pid);
    sp_buffer_u32(b, rank->method);
}

/* A report: definitions, then the processes they belong to (one process, or every process
 * of a subtree after merging). */
static void serialize_report(const sp_defs *d, const sp_unified_rank *ranks, uint32_t count,
                             sp_buffer *b)
{
    serialize_defs(d, b);
    sp_buffer_u32(b, count);
    for (uint32_t r = 0; r < count; r++)
        serialize_rank(&ranks[r], b);
}

void sp_unify_report(const sp_defs *d, const sp_unified_rank *mine, sp_buffer *b)
{
    serialize_report(d, mine, 1, b);
}

/* ---- rank 0: merging ------------------------------------------------------------------- */

typedef struct {
    sp_u64map region_index; /* hash of a region's identity -> global region (probed) */
    sp_u64map io_unified_handles; /* (paradigm, unify key, name) -> global handle */
} merge_state;



static uint64_t region_hash(const sp_region *r)
{
    uint64_t h = sp_hash_mix(((uint64_t)r->name << 32) | r->canonical);
    h = sp_hash_mix(h ^ (((uint64_t)r->file << 32) | (uint32_t)r->begin_line));
    h = sp_hash_mix(h ^ ((uint64_t)(uint32_t)r->end_line << 24) ^ ((uint64_t)r->paradigm << 16) ^
                    ((uint64_t)r->role << 8) ^ r->kind);
    return sp_hash_mix(h ^ r->group);
}

static bool same_region(const sp_region *a, const sp_region *b)
{
    return a->name == b->name && a->canonical == b->canonical && a->file == b->file &&
           a->begin_line == b->begin_line && a->end_line == b->end_line &&
           a->paradigm == b->paradigm && a->role == b->role && a->kind == b->kind &&
           a->group == b->group;
}

static uint32_t global_string(const uint32_t *map, uint32_t count, uint32_t local)
{
    return local < count ? map[local] : 0;
}

/* A rank's I/O files and handles into the global definitions: files are one per path,
 * handles one per process except those with a unify key (the standard streams). */
static int merge_io(sp_unified *u, merge_state *st, sp_reader *r, sp_buffer *maps,
                    const uint32_t *smap, uint32_t nstrings, const uint32_t *cmap,
                    uint32_t ncomms)
{
    sp_defs *g = &u->global;
    g->io_paradigms_used |= sp_reader_u32(r);
    uint32_t nfiles = sp_reader_u32(r);
    if (r->failed || nfiles > r->size / 4)
        return -1;
    uint32_t *fmap = malloc((nfiles ? nfiles : 1) * sizeof *fmap);
    if (!fmap)
        return -1;
    sp_buffer_u32(maps, nfiles);
    for (uint32_t i = 0; i < nfiles && !r->failed; i++) {
        fmap[i] = sp_defs_io_file(g, sp_defs_str(g, global_string(smap, nstrings,
                                                                      sp_reader_u32(r))));
        sp_buffer_u32(maps, fmap[i]);
    }
    uint32_t nhandles = sp_reader_u32(r);
    if (r->failed || nhandles > r->size / 28) {
        free(fmap);
        return -1;
    }
    uint32_t *hmap = malloc((nhandles ? nhandles : 1) * sizeof *hmap);
    if (!hmap) {
        free(fmap);
        return -1;
    }
    sp_buffer_u32(maps, nhandles);
    int status = 0;
    for (uint32_t i = 0; i < nhandles && !r->failed && status == 0; i++) {
        uint32_t name = global_string(smap, nstrings, sp_reader_u32(r));
        uint32_t file = sp_reader_u32(r), parent = sp_reader_u32(r), comm = sp_reader_u32(r);
        uint32_t unify_key = sp_reader_u32(r), bits = sp_reader_u32(r);
        sp_io_handle h = {
            .file = file < nfiles ? fmap[file] : SP_NO_ID,
            .parent = parent < i ? hmap[parent] : SP_NO_ID,
            .comm = comm < ncomms ? cmap[comm] : SP_NO_ID,
            .unify_key = unify_key,
            .paradigm = bits & 0xff,
            .flags = (bits >> 8) & 0xff,
            .access_mode = (bits >> 16) & 0xff,
            .status_flags = sp_reader_u32(r),
        };
        /* One handle for all processes with the same key, name, paradigm and communicator
         * (an MPI file opened collectively: Score-P's key counts the files opened on each
         * communicator, the same on all its members). */
        uint64_t key = sp_hash_mix(((uint64_t)name << 32 | unify_key) ^
                                   sp_hash_mix((uint64_t)h.paradigm << 32 | h.comm));
        uint32_t id = SP_NO_ID;
        for (; unify_key; key++) {
            id = sp_u64map_get(&st->io_unified_handles, key);
            if (id == SP_NO_ID)
                break;
            const sp_io_handle *o = &g->io_handles[id];
            if (o->name == name && o->unify_key == unify_key && o->paradigm == h.paradigm &&
                o->comm == h.comm)
                break;
        }
        if (id == SP_NO_ID) {
            id = sp_defs_io_handle(g, &h, sp_defs_str(g, name));
            if (id == SP_NO_ID ||
                (unify_key && sp_u64map_put(&st->io_unified_handles, key, id) != 0))
                status = -1;
        }
        hmap[i] = id;
        sp_buffer_u32(maps, id);
    }
    free(fmap);
    free(hmap);
    return r->failed ? -1 : status;
}

/* A report's calling contexts into the merged tree: each one's region (through the report's
 * region map `rmap`) and parent (which comes before it, in the report as in the merged set). */
static int merge_contexts(sp_defs *g, sp_reader *r, sp_buffer *maps, const uint32_t *rmap,
                          uint32_t nregions)
{
    uint32_t ncontexts = sp_reader_u32(r);
    if (r->failed || ncontexts > r->size / 8)
        return -1;
    uint32_t *ccmap = malloc((ncontexts ? ncontexts : 1) * sizeof *ccmap);
    if (!ccmap)
        return -1;
    sp_buffer_u32(maps, ncontexts);
    int status = 0;
    for (uint32_t i = 0; i < ncontexts && !r->failed && status == 0; i++) {
        uint32_t region = sp_reader_u32(r), parent = sp_reader_u32(r);
        uint32_t global_region = region < nregions ? rmap[region] : SP_NO_ID;
        uint32_t global_parent = parent < i ? ccmap[parent] : SP_NO_ID;
        ccmap[i] = global_region == SP_NO_ID ? SP_NO_ID
                                             : sp_defs_calling_context(g, global_region,
                                                                       global_parent);
        if (global_region != SP_NO_ID && ccmap[i] == SP_NO_ID)
            status = -1;
        sp_buffer_u32(maps, ccmap[i]);
    }
    free(ccmap);
    return r->failed || maps->failed ? -1 : status;
}

/* Room for one more process in u->ranks. */
static sp_unified_rank *next_rank(sp_unified *u, uint32_t *capacity)
{
    if (u->rank_count == *capacity) {
        uint32_t bigger = *capacity ? *capacity * 2 : 16;
        sp_unified_rank *ranks = realloc(u->ranks, bigger * sizeof *ranks);
        if (!ranks)
            return NULL;
        u->ranks = ranks;
        *capacity = bigger;
    }
    sp_unified_rank *rank = &u->ranks[u->rank_count++];
    memset(rank, 0, sizeof *rank);
    return rank;
}

/* Merges a report into `u` (its definitions and processes): the maps from the report's ids
 * to u's go into `maps`. */
static int merge_report(sp_unified *u, merge_state *st, sp_reader *r, sp_buffer *maps,
                        uint32_t *rank_capacity)
{
    sp_defs *g = &u->global;
    uint32_t nstrings = sp_reader_u32(r);
    uint32_t *smap = calloc(nstrings ? nstrings : 1, sizeof *smap);
    if (!smap)
        return -1;
    for (uint32_t i = 0; i < nstrings && !r->failed; i++)
        smap[i] = sp_strings_intern(&g->strings, sp_reader_str(r));
#define GLOBAL_STRING(x) global_string(smap, nstrings, (x))
    sp_buffer_u32(maps, nstrings);
    sp_buffer_put(maps, smap, nstrings * sizeof *smap);

    uint32_t nregions = sp_reader_u32(r);
    sp_buffer_u32(maps, nregions);
    /* The report's regions -> merged ones, for its calling contexts. */
    uint32_t *rmap = r->failed || nregions > r->size / 28
                         ? NULL : malloc((nregions ? nregions : 1) * sizeof *rmap);
    if (!rmap) {
        free(smap);
        return -1;
    }
    for (uint32_t i = 0; i < nregions && !r->failed; i++) {
        sp_region local = {0};
        local.name = GLOBAL_STRING(sp_reader_u32(r));
        local.canonical = GLOBAL_STRING(sp_reader_u32(r));
        local.file = GLOBAL_STRING(sp_reader_u32(r));
        local.begin_line = (int32_t)sp_reader_u32(r);
        local.end_line = (int32_t)sp_reader_u32(r);
        uint32_t bits = sp_reader_u32(r);
        local.paradigm = bits & 0xff;
        local.role = (bits >> 8) & 0xff;
        local.kind = (bits >> 16) & 0xff;
        local.group = GLOBAL_STRING(sp_reader_u32(r));
        uint32_t id = SP_NO_ID;
        uint64_t key = region_hash(&local);
        for (;; key++) {
            id = sp_u64map_get(&st->region_index, key);
            if (id == SP_NO_ID || same_region(&g->regions[id], &local))
                break;
        }
        if (id == SP_NO_ID) {
            id = sp_defs_new_region(g, sp_defs_str(g, local.name), sp_defs_str(g, local.canonical),
                                    sp_defs_str(g, local.file), local.begin_line, local.end_line,
                                    local.paradigm, local.role, local.kind);
            if (id == SP_NO_ID || sp_u64map_put(&st->region_index, key, id) != 0 ||
                sp_defs_set_group(g, id, sp_defs_str(g, local.group)) != 0) {
                free(smap);
                free(rmap);
                return -1;
            }
        }
        rmap[i] = id;
        sp_buffer_u32(maps, id);
    }

    uint32_t nparams = sp_reader_u32(r);
    sp_buffer_u32(maps, nparams);
    for (uint32_t i = 0; i < nparams && !r->failed; i++) {
        uint32_t name = GLOBAL_STRING(sp_reader_u32(r));
        uint32_t type = sp_reader_u32(r);
        sp_buffer_u32(maps, sp_defs_parameter(g, sp_defs_str(g, name), (sp_param_type)type));
    }

    uint32_t ncomms = sp_reader_u32(r);
    sp_buffer_u32(maps, ncomms);
    uint32_t *cmap = r->failed || ncomms > r->size / 8 ? NULL
                                                       : malloc((ncomms ? ncomms : 1) * sizeof *cmap);
    if (!cmap) {
        free(smap);
        free(rmap);
        return -1;
    }
    for (uint32_t i = 0; i < ncomms && !r->failed; i++) {
        sp_comm_spec c = {0};
        c.key = sp_reader_u64(r);
        c.parent = sp_reader_u64(r);
        uint32_t bits = sp_reader_u32(r);
        c.kind = (sp_comm_kind)(bits & 0xff);
        c.root = (bits >> 8) & 1;
        c.created = (bits >> 9) & 1;
        c.name = sp_defs_str(g, GLOBAL_STRING(sp_reader_u32(r)));
        c.size = sp_reader_u32(r);
        uint64_t *members = NULL, *remote = NULL;
        if (c.size <= r->size / 8 && (members = malloc((c.size ? c.size : 1) * 8)))
            for (uint32_t k = 0; k < c.size; k++)
                members[k] = sp_reader_u64(r);
        c.remote_size = sp_reader_u32(r);
        if (members && c.remote_size <= r->size / 8 &&
            (remote = malloc((c.remote_size ? c.remote_size : 1) * 8)))
            for (uint32_t k = 0; k < c.remote_size; k++)
                remote[k] = sp_reader_u64(r);
        c.members = members;
        c.remote = remote;
        cmap[i] = members && remote ? sp_defs_comm(g, &c) : SP_NO_ID;
        free(members);
        free(remote);
        if (cmap[i] == SP_NO_ID) {
            free(cmap);
            free(smap);
            free(rmap);
            return -1;
        }
        sp_buffer_u32(maps, cmap[i]);
    }
    uint32_t nwins = sp_reader_u32(r);
    sp_buffer_u32(maps, nwins);
    for (uint32_t i = 0; i < nwins && !r->failed; i++) {
        uint64_t key = sp_reader_u64(r);
        uint32_t comm = sp_reader_u32(r);
        uint32_t name = GLOBAL_STRING(sp_reader_u32(r));
        sp_buffer_u32(maps, sp_defs_rma_win(g, key, comm < ncomms ? cmap[comm] : SP_NO_ID,
                                            sp_defs_str(g, name)));
    }
    int io_status = merge_io(u, st, r, maps, smap, nstrings, cmap, ncomms);
    free(cmap);
    int context_status = io_status == 0 ? merge_contexts(g, r, maps, rmap, nregions) : -1;
    free(rmap);
    if (context_status != 0) {
        free(smap);
        return -1;
    }

    uint32_t nranks = sp_reader_u32(r);
    if (r->failed || nranks > r->size / 16) {
        free(smap);
        return -1;
    }
    for (uint32_t k = 0; k < nranks; k++) {
        sp_unified_rank *rank_out = next_rank(u, rank_capacity);
        if (!rank_out) {
            free(smap);
            return -1;
        }
        rank_out->rank = sp_reader_u32(r);
        rank_out->world = sp_reader_u32(r);
        rank_out->world_rank = sp_reader_u32(r);
        rank_out->name = GLOBAL_STRING(sp_reader_u32(r));
        rank_out->host = GLOBAL_STRING(sp_reader_u32(r));
        rank_out->thread_requested = (int32_t)sp_reader_u32(r);
        rank_out->thread_provided = (int32_t)sp_reader_u32(r);
        rank_out->start_ns = sp_reader_u64(r);
        rank_out->end_ns = sp_reader_u64(r);
        rank_out->realtime_start_ns = sp_reader_u64(r);
        rank_out->location_count = sp_reader_u32(r);
        if (r->failed || rank_out->location_count > SP_MAX_LOCATIONS) {
            free(smap);
            return -1;
        }
        rank_out->locations = calloc(rank_out->location_count ? rank_out->location_count : 1,
                                     sizeof *rank_out->locations);
        if (!rank_out->locations) {
            free(smap);
            return -1;
        }
        for (uint32_t i = 0; i < rank_out->location_count; i++) {
            rank_out->locations[i].id = sp_reader_u64(r);
            rank_out->locations[i].name = GLOBAL_STRING(sp_reader_u32(r));
            rank_out->locations[i].events = sp_reader_u64(r);
        }
        rank_out->parent = sp_reader_u32(r);
        rank_out->pid = sp_reader_u64(r);
        rank_out->parent_pid = sp_reader_u64(r);
        uint32_t method = sp_reader_u32(r);
        rank_out->method = method == SP_NO_ID ? SP_NO_ID : GLOBAL_STRING(method);
    }
#undef GLOBAL_STRING
    free(smap);
    return r->failed || maps->failed ? -1 : 0;
}

/* ---- maps from a report's ids to the merged ones ------------------------------------------
 * Strings, regions, parameters, communicators, RMA windows, I/O files, I/O handles, calling
 * contexts: the order in which merge_report writes them. */

enum { MAP_KINDS = 8, MAP_COMMS = 3 };

typedef struct {
    uint32_t *ids[MAP_KINDS];
    uint32_t count[MAP_KINDS];
} id_maps;

static void maps_free(id_maps *m)
{
    for (int k = 0; k < MAP_KINDS; k++)
        free(m->ids[k]);
    memset(m, 0, sizeof *m);
}

static int maps_read(sp_reader *r, id_maps *m)
{
    memset(m, 0, sizeof *m);
    for (int k = 0; k < MAP_KINDS; k++) {
        uint32_t count = sp_reader_u32(r);
        if (r->failed || count > r->size / 4) {
            maps_free(m);
            return -1;
        }
        m->ids[k] = malloc((count ? count : 1) * sizeof *m->ids[k]);
        if (!m->ids[k]) {
            maps_free(m);
            return -1;
        }
        m->count[k] = count;
        for (uint32_t i = 0; i < count; i++)
            m->ids[k][i] = sp_reader_u32(r);
    }
    if (r->failed) {
        maps_free(m);
        return -1;
    }
    return 0;
}

static void maps_write(const id_maps *m, sp_buffer *b)
{
    for (int k = 0; k < MAP_KINDS; k++) {
        sp_buffer_u32(b, m->count[k]);
        sp_buffer_put(b, m->ids[k], m->count[k] * sizeof *m->ids[k]);
    }
}

/* out = outer after inner: inner maps into the ids outer maps from. */
static int maps_compose(const id_maps *outer, const id_maps *inner, id_maps *out)
{
    memset(out, 0, sizeof *out);
    for (int k = 0; k < MAP_KINDS; k++) {
        out->ids[k] = malloc((inner->count[k] ? inner->count[k] : 1) * sizeof *out->ids[k]);
        if (!out->ids[k]) {
            maps_free(out);
            return -1;
        }
        out->count[k] = inner->count[k];
        for (uint32_t i = 0; i < inner->count[k]; i++) {
            uint32_t mid = inner->ids[k][i];
            out->ids[k][i] = mid < outer->count[k] ? outer->ids[k][mid] : SP_NO_ID;
        }
    }
    return 0;
}

/* The identity over everything `g` defines (the root: its merged ids are the global ones). */
static int maps_identity(const sp_defs *g, id_maps *out)
{
    uint32_t counts[MAP_KINDS] = {(uint32_t)g->strings.count, g->region_count,
                                  g->parameter_count, g->comm_count, g->win_count,
                                  g->io_file_count, g->io_handle_count, g->context_count};
    memset(out, 0, sizeof *out);
    for (int k = 0; k < MAP_KINDS; k++) {
        out->ids[k] = malloc((counts[k] ? counts[k] : 1) * sizeof *out->ids[k]);
        if (!out->ids[k]) {
            maps_free(out);
            return -1;
        }
        out->count[k] = counts[k];
        for (uint32_t i = 0; i < counts[k]; i++)
            out->ids[k][i] = i;
    }
    return 0;
}

/* A process's maps, local -> global, moved into `u` (a process's own maps, u->maps, or a
 * part's). */
static void maps_into(id_maps *m, sp_unified_maps *u)
{
    uint32_t **slots[MAP_KINDS] = {&u->string_map, &u->region_map, &u->parameter_map,
                                   &u->comm_map, &u->win_map, &u->io_file_map,
                                   &u->io_handle_map, &u->context_map};
    uint32_t *counts[MAP_KINDS] = {&u->string_count, &u->region_count, &u->parameter_count,
                                   &u->comm_count, &u->win_count, &u->io_file_count,
                                   &u->io_handle_count, &u->context_count};
    for (int k = 0; k < MAP_KINDS; k++) {
        *slots[k] = m->ids[k];
        *counts[k] = m->count[k];
        m->ids[k] = NULL;
    }
}

/* Renumbers maps' communicator ids (merged -> ordered). */
static void maps_renumber_comms(id_maps *m, const uint32_t *new_id, uint32_t n)
{
    for (uint32_t i = 0; i < m->count[MAP_COMMS]; i++)
        if (m->ids[MAP_COMMS][i] < n)
            m->ids[MAP_COMMS][i] = new_id[m->ids[MAP_COMMS][i]];
}

/* The communicators in the order OTF2 wants them: dense ids, every communicator after the
 * one it was made from (readers check both); MPI groups, which are no communicators, last.
 * The windows and I/O handles follow the new ids; *new_id_out (merged id -> new id, NULL
 * when there are none) is for the maps. */
static int order_comms(sp_defs *g, uint32_t **new_id_out)
{
    *new_id_out = NULL;
    uint32_t n = g->comm_count;
    if (!n)
        return 0;
    uint32_t *order = malloc(n * sizeof *order), *new_id = malloc(n * sizeof *new_id);
    sp_comm *sorted = malloc(n * sizeof *sorted);
    bool *placed = calloc(n, sizeof *placed);
    if (!order || !new_id || !sorted || !placed) {
        free(order);
        free(new_id);
        free(sorted);
        free(placed);
        return -1;
    }
    uint32_t k = 0;
    for (bool progress = true; progress;) {
        progress = false;
        for (uint32_t c = 0; c < n; c++) {
            if (placed[c] || g->comms[c].kind == SP_COMM_GROUP)
                continue;
            uint32_t p = g->comms[c].parent == SP_COMM_NO_PARENT
                             ? SP_NO_ID
                             : sp_u64map_get(&g->comm_by_key, g->comms[c].parent);
            if (p == SP_NO_ID || p == c || placed[p] || g->comms[p].kind == SP_COMM_GROUP) {
                placed[c] = true;
                order[k++] = c;
                progress = true;
            }
        }
    }
    for (int groups = 0; groups < 2; groups++) /* a parent cycle (impossible), then groups */
        for (uint32_t c = 0; c < n; c++)
            if (!placed[c] && (groups || g->comms[c].kind != SP_COMM_GROUP)) {
                placed[c] = true;
                order[k++] = c;
            }
    for (uint32_t i = 0; i < n; i++) {
        new_id[order[i]] = i;
        sorted[i] = g->comms[order[i]];
    }
    memcpy(g->comms, sorted, n * sizeof *sorted);
    int status = 0;
    for (uint32_t i = 0; i < n && status == 0; i++)
        status = sp_u64map_put(&g->comm_by_key, g->comms[i].key, i);
    for (uint32_t w = 0; w < g->win_count; w++)
        if (g->wins[w].comm < n)
            g->wins[w].comm = new_id[g->wins[w].comm];
    for (uint32_t h = 0; h < g->io_handle_count; h++)
        if (g->io_handles[h].comm < n)
            g->io_handles[h].comm = new_id[g->io_handles[h].comm];
    free(order);
    free(sorted);
    free(placed);
    if (status != 0) {
        free(new_id);
        return -1;
    }
    *new_id_out = new_id;
    return 0;
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The MPI processes of the experiment (child processes are none) numbered as OTF2's group
 * of MPI locations lists them: by location group id, the job's first world's ranks first,
 * then the spawned worlds' (whose ids follow every other id). */
static int index_processes(sp_unified *u)
{
    if (sp_u64map_init(&u->process_index, 2 * u->rank_count + 16) != 0)
        return -1;
    uint64_t *order = malloc((u->rank_count ? u->rank_count : 1) * sizeof *order);
    if (!order)
        return -1;
    uint32_t n = 0;
    for (uint32_t r = 0; r < u->rank_count; r++)
        if (u->ranks[r].parent == SP_NO_PARENT)
            order[n++] = (uint64_t)u->ranks[r].rank << 32 | r; /* sorted by id */
    qsort(order, n, sizeof *order, by_value);
    int status = 0;
    for (uint32_t k = 0; k < n && status == 0; k++) {
        const sp_unified_rank *rank = &u->ranks[(uint32_t)order[k]];
        status = sp_u64map_put(&u->process_index, SP_PROCESS(rank->world, rank->world_rank), k);
    }
    free(order);
    return status;
}

uint32_t sp_unified_process_rank(const sp_unified *u, uint64_t process)
{
    if (!u->process_index.capacity)
        return UINT32_MAX;
    uint32_t index = sp_u64map_get(&u->process_index, process);
    return index == SP_NO_ID ? UINT32_MAX : index;
}

/* A part's rank in the experiment: its location group number, a name that tells its world
 * ("MPI Rank 0 (spawned 1)"), its locations' ids and their trace event counts. */
static int adopt_part(sp_unified *u, const sp_part *p, sp_unified_rank *rank)
{
    char name[96];
    snprintf(name, sizeof name, "MPI Rank %u (spawned %u)", p->c.number, p->world_index);
    rank->rank = p->rank;
    rank->name = sp_defs_string(&u->global, name);
    if (rank->name == SP_NO_ID)
        return -1;
    for (uint32_t i = 0; i < rank->location_count && i < p->c.location_count; i++) {
        rank->locations[i].id = p->location_ids[i];
        rank->locations[i].events = p->location_events[i];
    }
    return 0;
}

/* The system tree's nodes: one per host, in the order the hosts first appear. */
static int assign_nodes(sp_unified *u)
{
    sp_u64map node_of_host;
    u->nodes = calloc(u->rank_count ? u->rank_count : 1, sizeof *u->nodes);
    if (!u->nodes || sp_u64map_init(&node_of_host, 64) != 0)
        return -1;
    int status = 0;
    for (uint32_t r = 0; r < u->rank_count && status == 0; r++) {
        uint32_t node = sp_u64map_get(&node_of_host, u->ranks[r].host);
        if (node == SP_NO_ID) {
            node = u->node_count++;
            u->nodes[node] = u->ranks[r].host;
            status = sp_u64map_put(&node_of_host, u->ranks[r].host, node);
        }
        u->ranks[r].node = node;
    }
    sp_u64map_free(&node_of_host);
    return status;
}

/* ---- the merging set ---------------------------------------------------------------------- */

/* The definitions merged so far (a process's subtree, or all at the root) and what finds
 * their regions and shared handles again. Ids in it never change: merging only appends. */
typedef struct {
    sp_unified acc;
    merge_state st;
    uint32_t rank_capacity;
} merger;

static int merger_init(merger *m)
{
    memset(m, 0, sizeof *m);
    if (sp_defs_init(&m->acc.global) != 0)
        return -1;
    if (sp_u64map_init(&m->st.region_index, 256) != 0) {
        sp_defs_free(&m->acc.global);
        return -1;
    }
    if (sp_u64map_init(&m->st.io_unified_handles, 16) != 0) {
        sp_u64map_free(&m->st.region_index);
        sp_defs_free(&m->acc.global);
        return -1;
    }
    return 0;
}

static void merger_free(merger *m)
{
    sp_u64map_free(&m->st.region_index);
    sp_u64map_free(&m->st.io_unified_handles);
    sp_unified_free(&m->acc);
}

/* Merges a report; its maps (report ids -> merged ids) into *maps. */
static int merger_add(merger *m, const void *report, uint64_t size, id_maps *maps)
{
    sp_reader r;
    sp_reader_init(&r, report, size);
    sp_buffer b;
    sp_buffer_init(&b);
    int status = merge_report(&m->acc, &m->st, &r, &b, &m->rank_capacity);
    if (status == 0 && !b.failed) {
        sp_reader mr;
        sp_reader_init(&mr, b.data, b.size);
        status = maps_read(&mr, maps);
    } else {
        status = -1;
    }
    sp_buffer_free(&b);
    return status;
}

/* The root's result: the merged set becomes the global definitions. */
static int merger_finish_root(merger *m, sp_unified *u)
{
    u->global = m->acc.global;
    u->ranks = m->acc.ranks;
    u->rank_count = m->acc.rank_count;
    memset(&m->acc.global, 0, sizeof m->acc.global);
    m->acc.ranks = NULL;
    m->acc.rank_count = 0;
    if (sp_defs_init(&m->acc.global) != 0)
        return -1;
    return assign_nodes(u);
}

/* The root, once the group's definitions are merged: merges the parts (processes that ended
 * on their own, core/part.h) as further ranks, makes the merged set the global definitions
 * in OTF2's communicator order and leaves each part's maps in it. *new_id renumbers the
 * communicators of maps into the merged set (NULL: unchanged). */
static int finish_root(merger *m, sp_part *parts, uint32_t part_count, sp_unified *u,
                       uint32_t **new_id, char *err, size_t errlen)
{
    *new_id = NULL;
    id_maps *part_maps = calloc(part_count ? part_count : 1, sizeof *part_maps);
    if (!part_maps)
        return sp_error(err, errlen, "out of memory while unifying the definitions");
    int status = 0;
    for (uint32_t k = 0; k < part_count && status == 0; k++) {
        if (merger_add(m, parts[k].c.report, parts[k].c.report_size, &part_maps[k]) != 0 ||
            !m->acc.rank_count)
            status = sp_error(err, errlen, "merging the definitions of a spawned process failed");
        else if (adopt_part(&m->acc, &parts[k], &m->acc.ranks[m->acc.rank_count - 1]) != 0)
            status = sp_error(err, errlen, "out of memory while unifying the definitions");
    }
    if (status == 0 && (merger_finish_root(m, u) != 0 || order_comms(&u->global, new_id) != 0 ||
                        index_processes(u) != 0))
        status = sp_error(err, errlen, "out of memory while unifying the definitions");
    for (uint32_t k = 0; k < part_count; k++) {
        if (status == 0) {
            if (*new_id)
                maps_renumber_comms(&part_maps[k], *new_id, u->global.comm_count);
            maps_into(&part_maps[k], &parts[k].maps);
        }
        maps_free(&part_maps[k]);
    }
    free(part_maps);
    return status;
}

/* ---- all at the root: for groups without point-to-point messages ------------------------- */

static int unify_at_root(const sp_ipc *ipc, const sp_buffer *report, sp_part *parts,
                         uint32_t part_count, sp_unified *u, char *err, size_t errlen)
{
    uint32_t nranks = ipc->size;
    bool root = ipc->rank == 0;
    int status = -1;
    void *all = NULL, *my_maps = NULL;
    uint64_t *sizes = calloc(nranks, sizeof *sizes);
    uint64_t *map_sizes = calloc(nranks, sizeof *map_sizes);
    void **map_parts = calloc(nranks, sizeof *map_parts);
    sp_buffer *map_buffers = NULL;
    id_maps *rank_maps = NULL;
    uint32_t *new_id = NULL;
    merger m;
    bool merging = false;
    id_maps mine;
    memset(&mine, 0, sizeof mine);
    if (!sizes || !map_sizes || !map_parts) {
        sp_error(err, errlen, "out of memory while unifying the definitions");
        goto out;
    }
    if (sp_ipc_gather_bytes(ipc, report->data, report->size, &all, sizes) != 0) {
        sp_error(err, errlen, "collecting the definitions of all ranks failed");
        goto out;
    }
    if (root) {
        merging = merger_init(&m) == 0;
        map_buffers = calloc(nranks, sizeof *map_buffers);
        rank_maps = calloc(nranks, sizeof *rank_maps);
        if (!merging || !map_buffers || !rank_maps) {
            sp_error(err, errlen, "out of memory while unifying the definitions");
            goto out;
        }
        uint64_t offset = 0;
        for (uint32_t r = 0; r < nranks; r++) {
            sp_buffer_init(&map_buffers[r]);
            if (merger_add(&m, (unsigned char *)all + offset, sizes[r], &rank_maps[r]) != 0) {
                sp_error(err, errlen, "merging the definitions of rank %u failed", r);
                goto out;
            }
            offset += sizes[r];
        }
        if (finish_root(&m, parts, part_count, u, &new_id, err, errlen) != 0)
            goto out;
        for (uint32_t r = 0; r < nranks; r++) {
            if (new_id)
                maps_renumber_comms(&rank_maps[r], new_id, u->global.comm_count);
            maps_write(&rank_maps[r], &map_buffers[r]);
            map_parts[r] = map_buffers[r].data;
            map_sizes[r] = map_buffers[r].size;
        }
    }
    uint64_t my_size = 0;
    if (sp_ipc_scatter_bytes(ipc, map_parts, map_sizes, &my_maps, &my_size) != 0) {
        sp_error(err, errlen, "sending the unified definitions to all ranks failed");
        goto out;
    }
    sp_reader reader;
    sp_reader_init(&reader, my_maps, my_size);
    if (maps_read(&reader, &mine) != 0) {
        sp_error(err, errlen, "the unified definitions arrived damaged");
        goto out;
    }
    maps_into(&mine, &u->maps);
    status = 0;
out:
    if (map_buffers)
        for (uint32_t r = 0; r < nranks; r++)
            sp_buffer_free(&map_buffers[r]);
    free(map_buffers);
    if (rank_maps)
        for (uint32_t r = 0; r < nranks; r++)
            maps_free(&rank_maps[r]);
    free(rank_maps);
    free(new_id);
    if (merging)
        merger_free(&m);
    maps_free(&mine);
    free(all);
    free(my_maps);
    free(sizes);
    free(map_sizes);
    free(map_parts);
    return status;
}

/* ---- along a binomial tree: for groups with point-to-point messages ----------------------
 * Rank r merges the reports of its children r + 1, r + 2, r + 4, ... (those below the lowest
 * set bit of r) into its own, then sends the merged report to its parent; the root's merged
 * set is the global definitions. The maps then travel down: each process gets from its parent
 * how its merged ids map to the global ones and passes on to each child the composition with
 * that child's maps. Every message starts with a status word, so that a failure anywhere
 * reaches every process instead of leaving one waiting. With ranks that share most of their
 * definitions, what a process holds and sends is the union of its subtree's definitions, not
 * their sum: the root no longer needs memory in proportion to the number of ranks. */

enum { MESSAGE_OK = 0, MESSAGE_FAILED = 1 };

static int send_message(const sp_ipc *ipc, uint32_t dest, uint32_t status, const sp_buffer *body)
{
    sp_buffer b;
    sp_buffer_init(&b);
    sp_buffer_u32(&b, status);
    if (status == MESSAGE_OK && body)
        sp_buffer_put(&b, body->data, body->size);
    if (b.failed) {
        sp_buffer_free(&b);
        sp_buffer_u32(&b, MESSAGE_FAILED);
    }
    int sent = b.failed ? -1 : ipc->ops->send(ipc->ctx, b.data, b.size, dest);
    sp_buffer_free(&b);
    return sent;
}

/* The body of the next message from `source` (NULL, 0 when it says it failed). */
static int recv_message(const sp_ipc *ipc, uint32_t source, void **data, uint64_t *body_size,
                        const unsigned char **body)
{
    *data = NULL;
    *body = NULL;
    *body_size = 0;
    uint64_t size = 0;
    if (ipc->ops->recv(ipc->ctx, data, &size, source) != 0 || size < 4)
        return -1;
    uint32_t status;
    memcpy(&status, *data, sizeof status);
    if (status != MESSAGE_OK)
        return -1;
    *body = (const unsigned char *)*data + 4;
    *body_size = size - 4;
    return 0;
}

static int unify_tree(const sp_ipc *ipc, const sp_buffer *report, sp_part *parts,
                      uint32_t part_count, sp_unified *u, char *err, size_t errlen)
{
    uint32_t rank = ipc->rank, size = ipc->size;
    bool ok = true;
    const char *why = NULL;
    merger m;
    id_maps local, child_maps[32], to_global;
    uint32_t children[32], nchildren = 0;
    memset(&local, 0, sizeof local);
    memset(&to_global, 0, sizeof to_global);
    if (merger_init(&m) != 0)
        return sp_error(err, errlen, "out of memory while unifying the definitions");
    if (merger_add(&m, report->data, report->size, &local) != 0) {
        ok = false;
        why = "merging this rank's own definitions failed";
    }
    /* Up: the children's subtrees, then the merged report to the parent. */
    uint32_t parent = UINT32_MAX;
    for (uint32_t step = 1; step < size; step <<= 1) {
        if (rank & step) {
            parent = rank - step;
            sp_buffer merged;
            sp_buffer_init(&merged);
            if (ok)
                serialize_report(&m.acc.global, m.acc.ranks, m.acc.rank_count, &merged);
            if (send_message(ipc, parent, ok && !merged.failed ? MESSAGE_OK : MESSAGE_FAILED,
                             &merged) != 0) {
                ok = false;
                why = why ? why : "sending the definitions up the tree failed";
            }
            sp_buffer_free(&merged);
            break;
        }
        uint32_t child = rank + step;
        if (child >= size)
            continue;
        void *data;
        const unsigned char *body;
        uint64_t body_size;
        memset(&child_maps[nchildren], 0, sizeof child_maps[nchildren]);
        children[nchildren] = child;
        if (recv_message(ipc, child, &data, &body_size, &body) != 0) {
            ok = false;
            why = why ? why : "the definitions of a subtree did not arrive";
        } else if (ok && merger_add(&m, body, body_size, &child_maps[nchildren]) != 0) {
            ok = false;
            why = "merging the definitions of a subtree failed";
        }
        free(data);
        nchildren++;
    }
    /* Down: merged ids -> global ids from the parent (the root's are the identity). */
    if (rank == 0) {
        uint32_t *new_id = NULL;
        char part_err[256] = "";
        if (ok && (maps_identity(&m.acc.global, &to_global) != 0 ||
                   finish_root(&m, parts, part_count, u, &new_id, part_err,
                               sizeof part_err) != 0)) {
            ok = false;
            why = part_err[0] ? "merging the definitions of the spawned processes failed"
                              : "out of memory while unifying the definitions";
        }
        if (ok && new_id)
            maps_renumber_comms(&to_global, new_id, u->global.comm_count);
        free(new_id);
    } else {
        void *data;
        const unsigned char *body;
        uint64_t body_size;
        if (recv_message(ipc, parent, &data, &body_size, &body) != 0) {
            ok = false;
            why = why ? why : "the unification failed on another rank";
        } else {
            sp_reader r;
            sp_reader_init(&r, body, body_size);
            if (ok && maps_read(&r, &to_global) != 0) {
                ok = false;
                why = "the unified definitions arrived damaged";
            }
        }
        free(data);
    }
    for (uint32_t c = nchildren; c-- > 0;) {
        id_maps composed;
        sp_buffer b;
        sp_buffer_init(&b);
        bool sent_ok = ok && maps_compose(&to_global, &child_maps[c], &composed) == 0;
        if (sent_ok) {
            maps_write(&composed, &b);
            maps_free(&composed);
        }
        if (send_message(ipc, children[c], sent_ok && !b.failed ? MESSAGE_OK : MESSAGE_FAILED,
                         &b) != 0 && ok) {
            ok = false;
            why = "sending the unified definitions down the tree failed";
        }
        sp_buffer_free(&b);
        maps_free(&child_maps[c]);
    }
    if (ok) {
        id_maps mine;
        if (maps_compose(&to_global, &local, &mine) == 0)
            maps_into(&mine, &u->maps);
        else {
            ok = false;
            why = "out of memory while unifying the definitions";
        }
    }
    maps_free(&local);
    maps_free(&to_global);
    merger_free(&m);
    if (!ok)
        return sp_error(err, errlen, "unifying the definitions failed: %s",
                        why ? why : "on another rank");
    return 0;
}

/* The group's unification of one report (this process's, or its merged set with its child
 * processes' parts); the root adopts the spawned processes' parts. */
static int unify_report(const sp_ipc *ipc, const sp_buffer *report, sp_part *parts,
                        uint32_t part_count, sp_unified *u, char *err, size_t errlen)
{
    int status;
    if (ipc->size > 1 && ipc->ops->send && ipc->ops->recv)
        status = unify_tree(ipc, report, parts, part_count, u, err, errlen);
    else
        status = unify_at_root(ipc, report, parts, part_count, u, err, errlen);
    if (status == 0 && u->global.strings.count == 0 && sp_defs_init(&u->global) != 0)
        status = sp_error(err, errlen, "out of memory while unifying the definitions");
    return status;
}

int sp_unify(const sp_ipc *ipc, const sp_defs *defs, const sp_unified_rank *mine,
             sp_part *parts, uint32_t part_count, sp_unified *u, char *err, size_t errlen)
{
    return sp_unify_parts(ipc, defs, mine, NULL, 0, parts, part_count, u, err, errlen);
}

/* Maps (merged ids -> global) as id_maps, borrowed. */
static id_maps maps_of(const sp_unified_maps *u)
{
    id_maps m = {{u->string_map, u->region_map, u->parameter_map, u->comm_map, u->win_map,
                  u->io_file_map, u->io_handle_map, u->context_map},
                 {u->string_count, u->region_count, u->parameter_count, u->comm_count,
                  u->win_count, u->io_file_count, u->io_handle_count, u->context_count}};
    return m;
}

void sp_unified_maps_free(sp_unified_maps *maps)
{
    free(maps->string_map);
    free(maps->region_map);
    free(maps->parameter_map);
    free(maps->comm_map);
    free(maps->win_map);
    free(maps->io_file_map);
    free(maps->io_handle_map);
    free(maps->context_map);
    memset(maps, 0, sizeof *maps);
}

int sp_unify_parts(const sp_ipc *ipc, const sp_defs *defs, const sp_unified_rank *mine,
                   const sp_unify_part *children, uint32_t nchildren, sp_part *parts,
                   uint32_t part_count, sp_unified *u, char *err, size_t errlen)
{
    memset(u, 0, sizeof *u);
    int status = -1;
    sp_buffer report;
    sp_buffer_init(&report);
    serialize_report(defs, mine, 1, &report);
    if (report.failed) {
        sp_buffer_free(&report);
        return sp_error(err, errlen, "out of memory while unifying the definitions");
    }
    if (nchildren == 0) {
        status = unify_report(ipc, &report, parts, part_count, u, err, errlen);
        sp_buffer_free(&report);
        return status;
    }
    /* The children's parts first merged with this process's own definitions (as a rank
     * merges its subtree's): the group unifies the merged set, and each part's maps are its
     * maps into the set followed by the set's into the global ids. */
    merger m;
    id_maps own, *part_ids = calloc(nchildren, sizeof *part_ids);
    sp_buffer merged;
    sp_buffer_init(&merged);
    memset(&own, 0, sizeof own);
    bool merging = part_ids && merger_init(&m) == 0;
    if (!merging) {
        sp_error(err, errlen, "out of memory while unifying the definitions");
        goto out;
    }
    if (merger_add(&m, report.data, report.size, &own) != 0) {
        sp_error(err, errlen, "merging this process's definitions failed");
        goto out;
    }
    for (uint32_t k = 0; k < nchildren; k++)
        if (merger_add(&m, children[k].data, children[k].size, &part_ids[k]) != 0) {
            sp_error(err, errlen, "merging the definitions of a child process failed");
            goto out;
        }
    serialize_report(&m.acc.global, m.acc.ranks, m.acc.rank_count, &merged);
    if (merged.failed) {
        sp_error(err, errlen, "out of memory while unifying the definitions");
        goto out;
    }
    if (unify_report(ipc, &merged, parts, part_count, u, err, errlen) != 0)
        goto out;
    id_maps to_global = maps_of(&u->maps), composed;
    u->part_maps = calloc(nchildren, sizeof *u->part_maps);
    if (!u->part_maps) {
        sp_error(err, errlen, "out of memory while unifying the definitions");
        goto out;
    }
    for (uint32_t k = 0; k < nchildren; k++, u->part_count++) {
        if (maps_compose(&to_global, &part_ids[k], &composed) != 0) {
            sp_error(err, errlen, "out of memory while unifying the definitions");
            goto out;
        }
        maps_into(&composed, &u->part_maps[k]);
    }
    if (maps_compose(&to_global, &own, &composed) != 0) {
        sp_error(err, errlen, "out of memory while unifying the definitions");
        goto out;
    }
    for (int k = 0; k < MAP_KINDS; k++)
        free(to_global.ids[k]); /* u's maps of the merged set, replaced by its own */
    maps_into(&composed, &u->maps);
    status = 0;
out:
    if (merging)
        merger_free(&m);
    maps_free(&own);
    for (uint32_t k = 0; part_ids && k < nchildren; k++)
        maps_free(&part_ids[k]);
    free(part_ids);
    sp_buffer_free(&merged);
    sp_buffer_free(&report);
    return status;
}

void sp_unified_free(sp_unified *u)
{
    sp_defs_free(&u->global);
    for (uint32_t r = 0; r < u->rank_count; r++)
        free(u->ranks[r].locations);
    free(u->ranks);
    free(u->nodes);
    sp_unified_maps_free(&u->maps);
    for (uint32_t k = 0; k < u->part_count; k++)
        sp_unified_maps_free(&u->part_maps[k]);
    free(u->part_maps);
    if (u->process_index.capacity)
        sp_u64map_free(&u->process_index);
    memset(u, 0, sizeof *u);
}
