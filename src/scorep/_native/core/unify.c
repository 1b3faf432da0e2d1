#include "core/unify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/measurement.h"
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

static void serialize_local(const sp_defs *d, const sp_unified_rank *mine, sp_buffer *b)
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
        sp_buffer_u32(b, c->kind);
        sp_buffer_u32(b, c->name);
        sp_buffer_u32(b, c->size);
        sp_buffer_put(b, c->members, c->size * sizeof *c->members);
    }
    serialize_io(d, b);
    sp_buffer_u32(b, d->context_count);
    for (uint32_t i = 0; i < d->context_count; i++) {
        sp_buffer_u32(b, d->contexts[i].region);
        sp_buffer_u32(b, d->contexts[i].parent);
    }
    sp_buffer_u32(b, mine->rank);
    sp_buffer_u32(b, mine->name);
    sp_buffer_u32(b, mine->host);
    sp_buffer_u32(b, (uint32_t)mine->thread_requested);
    sp_buffer_u32(b, (uint32_t)mine->thread_provided);
    sp_buffer_u64(b, mine->start_ns);
    sp_buffer_u64(b, mine->end_ns);
    sp_buffer_u64(b, mine->realtime_start_ns);
    sp_buffer_u32(b, mine->location_count);
    for (uint32_t i = 0; i < mine->location_count; i++) {
        sp_buffer_u64(b, mine->locations[i].id);
        sp_buffer_u32(b, mine->locations[i].name);
        sp_buffer_u64(b, mine->locations[i].events);
    }
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
        uint64_t key = (uint64_t)name | (uint64_t)(unify_key & 0xffffff) << 32 |
                       (uint64_t)h.paradigm << 56;
        uint32_t id = unify_key ? sp_u64map_get(&st->io_unified_handles, key) : SP_NO_ID;
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

/* A rank's calling contexts into the global tree: each one's region (through the rank's
 * region map `rmap`) and parent (which comes before it). */
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

/* Merges one rank's report into the global definitions; its maps go into `maps`. */
static int merge_rank(sp_unified *u, merge_state *st, sp_reader *r, sp_buffer *maps,
                      sp_unified_rank *rank_out)
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
        uint64_t key = sp_reader_u64(r);
        uint32_t kind = sp_reader_u32(r);
        uint32_t name = GLOBAL_STRING(sp_reader_u32(r));
        uint32_t size = sp_reader_u32(r);
        uint32_t *members = malloc((size ? size : 1) * sizeof *members);
        if (!members) {
            free(smap);
            free(rmap);
            free(cmap);
            return -1;
        }
        for (uint32_t k = 0; k < size; k++)
            members[k] = sp_reader_u32(r);
        cmap[i] = sp_defs_comm(g, key, (sp_comm_kind)kind, size, members, sp_defs_str(g, name));
        sp_buffer_u32(maps, cmap[i]);
        free(members);
    }
    int io_status = merge_io(u, st, r, maps, smap, nstrings, cmap, ncomms);
    free(cmap);
    int context_status = io_status == 0 ? merge_contexts(g, r, maps, rmap, nregions) : -1;
    free(rmap);
    if (context_status != 0) {
        free(smap);
        return -1;
    }

    rank_out->rank = sp_reader_u32(r);
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
#undef GLOBAL_STRING
    free(smap);
    return r->failed || maps->failed ? -1 : 0;
}

/* ---- every rank: its maps ---------------------------------------------------------------- */

static uint32_t *read_map(sp_reader *r, uint32_t *count)
{
    *count = sp_reader_u32(r);
    uint32_t *map = malloc((*count ? *count : 1) * sizeof *map);
    if (!map)
        return NULL;
    for (uint32_t i = 0; i < *count; i++)
        map[i] = sp_reader_u32(r);
    return map;
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

int sp_unify(const sp_ipc *ipc, const sp_defs *defs, const sp_unified_rank *mine, sp_unified *u,
             char *err, size_t errlen)
{
    memset(u, 0, sizeof *u);
    uint32_t nranks = ipc->size;
    bool root = ipc->rank == 0;
    int status = -1;
    sp_buffer local, *maps = NULL;
    sp_buffer_init(&local);
    void *all = NULL, *my_maps = NULL;
    uint64_t *sizes = calloc(nranks, sizeof *sizes);
    uint64_t *map_sizes = calloc(nranks, sizeof *map_sizes);
    void **map_parts = calloc(nranks, sizeof *map_parts);
    merge_state st;
    bool st_ready = false;
    if (sp_defs_init(&u->global) != 0 || !sizes || !map_sizes || !map_parts) {
        sp_error(err, errlen, "out of memory while unifying the definitions");
        goto out;
    }

    serialize_local(defs, mine, &local);
    if (local.failed || sp_ipc_gather_bytes(ipc, local.data, local.size, &all, sizes) != 0) {
        snprintf(err, errlen, "collecting the definitions of all ranks failed");
        goto out;
    }
    if (root) {
        st_ready = sp_u64map_init(&st.region_index, 256) == 0;
        if (st_ready && sp_u64map_init(&st.io_unified_handles, 16) != 0) {
            sp_u64map_free(&st.region_index);
            st_ready = false;
        }
        maps = calloc(nranks, sizeof *maps);
        u->ranks = calloc(nranks, sizeof *u->ranks);
        if (!st_ready || !maps || !u->ranks) {
            sp_error(err, errlen, "out of memory while unifying the definitions");
            goto out;
        }
        u->rank_count = nranks;
        uint64_t offset = 0;
        for (uint32_t r = 0; r < nranks; r++) {
            sp_reader reader;
            sp_reader_init(&reader, (unsigned char *)all + offset, sizes[r]);
            offset += sizes[r];
            sp_buffer_init(&maps[r]);
            if (merge_rank(u, &st, &reader, &maps[r], &u->ranks[r]) != 0) {
                snprintf(err, errlen, "merging the definitions of rank %u failed", r);
                goto out;
            }
            map_parts[r] = maps[r].data;
            map_sizes[r] = maps[r].size;
        }
        if (assign_nodes(u) != 0) {
            sp_error(err, errlen, "out of memory while unifying the definitions");
            goto out;
        }
    }
    uint64_t my_size = 0;
    if (sp_ipc_scatter_bytes(ipc, map_parts, map_sizes, &my_maps, &my_size) != 0) {
        snprintf(err, errlen, "sending the unified definitions to all ranks failed");
        goto out;
    }
    sp_reader reader;
    sp_reader_init(&reader, my_maps, my_size);
    u->string_map = read_map(&reader, &u->string_count);
    u->region_map = read_map(&reader, &u->region_count);
    u->parameter_map = read_map(&reader, &u->parameter_count);
    u->comm_map = read_map(&reader, &u->comm_count);
    u->io_file_map = read_map(&reader, &u->io_file_count);
    u->io_handle_map = read_map(&reader, &u->io_handle_count);
    u->context_map = read_map(&reader, &u->context_count);
    if (reader.failed || !u->string_map || !u->region_map || !u->parameter_map || !u->comm_map ||
        !u->io_file_map || !u->io_handle_map || !u->context_map) {
        snprintf(err, errlen, "the unified definitions arrived damaged");
        goto out;
    }
    status = 0;
out:
    if (maps)
        for (uint32_t r = 0; r < nranks; r++)
            sp_buffer_free(&maps[r]);
    free(maps);
    if (st_ready) {
        sp_u64map_free(&st.region_index);
        sp_u64map_free(&st.io_unified_handles);
    }
    sp_buffer_free(&local);
    free(all);
    free(my_maps);
    free(sizes);
    free(map_sizes);
    free(map_parts);
    return status;
}

void sp_unified_free(sp_unified *u)
{
    sp_defs_free(&u->global);
    for (uint32_t r = 0; r < u->rank_count; r++)
        free(u->ranks[r].locations);
    free(u->ranks);
    free(u->nodes);
    free(u->string_map);
    free(u->region_map);
    free(u->parameter_map);
    free(u->comm_map);
    free(u->io_file_map);
    free(u->io_handle_map);
    free(u->context_map);
    memset(u, 0, sizeof *u);
}
