#include "core/defs.h"

#include "core/filter.h"

#include <stdlib.h>
#include <string.h>

int sp_defs_init(sp_defs *defs)
{
    memset(defs, 0, sizeof *defs);
    if (pthread_mutex_init(&defs->lock, NULL) != 0)
        return -1;
    if (sp_strings_init(&defs->strings) != 0 || sp_u64map_init(&defs->region_by_name, 64) != 0 ||
        sp_u64map_init(&defs->parameter_by_name, 16) != 0 ||
        sp_u64map_init(&defs->comm_by_key, 16) != 0 ||
        sp_u64map_init(&defs->win_by_key, 16) != 0 ||
        sp_u64map_init(&defs->io_file_by_name, 16) != 0 ||
        sp_u64map_init(&defs->context_by_key, 16) != 0) {
        sp_defs_free(defs);
        return -1;
    }
    /* String 0 is "" so that optional names can point at it. */
    if (sp_strings_intern(&defs->strings, "") != 0) {
        sp_defs_free(defs);
        return -1;
    }
    return 0;
}

void sp_defs_free(sp_defs *defs)
{
    sp_strings_free(&defs->strings);
    sp_u64map_free(&defs->region_by_name);
    sp_u64map_free(&defs->parameter_by_name);
    sp_u64map_free(&defs->comm_by_key);
    sp_u64map_free(&defs->win_by_key);
    sp_u64map_free(&defs->io_file_by_name);
    sp_u64map_free(&defs->context_by_key);
    free(defs->contexts);
    defs->contexts = NULL;
    defs->context_count = defs->context_capacity = 0;
    free(defs->io_files);
    free(defs->io_handles);
    defs->io_files = NULL;
    defs->io_handles = NULL;
    defs->io_file_count = defs->io_file_capacity = 0;
    defs->io_handle_count = defs->io_handle_capacity = 0;
    defs->io_paradigms_used = 0;
    for (uint32_t i = 0; i < defs->comm_count; i++) {
        free(defs->comms[i].members);
        free(defs->comms[i].remote);
    }
    free(defs->comms);
    defs->comms = NULL;
    defs->comm_count = defs->comm_capacity = 0;
    free(defs->wins);
    defs->wins = NULL;
    defs->win_count = defs->win_capacity = 0;
    free(defs->regions);
    free(defs->parameters);
    defs->regions = NULL;
    defs->parameters = NULL;
    defs->region_count = defs->region_capacity = 0;
    defs->parameter_count = defs->parameter_capacity = 0;
    pthread_mutex_destroy(&defs->lock);
}

uint32_t sp_defs_string(sp_defs *defs, const char *text)
{
    pthread_mutex_lock(&defs->lock);
    uint32_t id = sp_strings_intern(&defs->strings, text ? text : "");
    pthread_mutex_unlock(&defs->lock);
    return id;
}

static uint32_t add_region_locked(sp_defs *defs, const char *name, const char *canonical,
                                  const char *file, int32_t begin_line, int32_t end_line,
                                  sp_paradigm paradigm, sp_role role, sp_region_kind kind)
{
    if (defs->region_count == defs->region_capacity) {
        uint32_t cap = defs->region_capacity ? defs->region_capacity * 2 : 256;
        sp_region *regions = realloc(defs->regions, cap * sizeof *regions);
        if (!regions)
            return SP_NO_ID;
        defs->regions = regions;
        defs->region_capacity = cap;
    }
    sp_region r = {
        .name = sp_strings_intern(&defs->strings, name),
        .canonical = sp_strings_intern(&defs->strings, canonical ? canonical : name),
        .file = sp_strings_intern(&defs->strings, file ? file : ""),
        .begin_line = begin_line,
        .end_line = end_line,
        .paradigm = (uint8_t)paradigm,
        .role = (uint8_t)role,
        .kind = (uint8_t)kind,
        .excluded = 0,
        .group = 0,
    };
    if (r.name == SP_NO_ID || r.canonical == SP_NO_ID || r.file == SP_NO_ID)
        return SP_NO_ID;
    defs->regions[defs->region_count] = r;
    return defs->region_count++;
}

uint32_t sp_defs_new_region(sp_defs *defs, const char *name, const char *canonical,
                            const char *file, int32_t begin_line, int32_t end_line,
                            sp_paradigm paradigm, sp_role role, sp_region_kind kind)
{
    pthread_mutex_lock(&defs->lock);
    uint32_t id = add_region_locked(defs, name, canonical, file, begin_line, end_line,
                                    paradigm, role, kind);
    pthread_mutex_unlock(&defs->lock);
    return id;
}

static uint64_t named_key(uint32_t name, unsigned kind)
{
    return ((uint64_t)kind << 32) | name;
}

uint32_t sp_defs_find_named_region(sp_defs *defs, const char *name, sp_region_kind kind,
                                   bool *excluded)
{
    pthread_mutex_lock(&defs->lock);
    uint32_t id = SP_NO_ID;
    uint32_t name_id = sp_strings_find(&defs->strings, name);
    if (name_id != SP_NO_ID)
        id = sp_u64map_get(&defs->region_by_name, named_key(name_id, kind));
    if (excluded)
        *excluded = id != SP_NO_ID && defs->regions[id].excluded;
    pthread_mutex_unlock(&defs->lock);
    return id;
}

uint32_t sp_defs_named_region_grouped(sp_defs *defs, const char *name, const char *file,
                                      int32_t begin_line, sp_paradigm paradigm, sp_role role,
                                      sp_region_kind kind, const struct sp_filter *filter,
                                      bool *excluded, const char *group)
{
    pthread_mutex_lock(&defs->lock);
    uint32_t id = SP_NO_ID;
    uint32_t name_id = sp_strings_intern(&defs->strings, name);
    if (name_id != SP_NO_ID) {
        id = sp_u64map_get(&defs->region_by_name, named_key(name_id, kind));
        if (id == SP_NO_ID) {
            id = add_region_locked(defs, name, name, file, begin_line, -1, paradigm, role, kind);
            if (id != SP_NO_ID &&
                sp_u64map_put(&defs->region_by_name, named_key(name_id, kind), id) != 0)
                id = SP_NO_ID;
            if (id != SP_NO_ID) {
                defs->regions[id].excluded = sp_filter_excludes(filter, name, name, file);
                uint32_t group_id = group ? sp_strings_intern(&defs->strings, group) : 0;
                defs->regions[id].group = group_id == SP_NO_ID ? 0 : group_id;
            }
        }
    }
    *excluded = id != SP_NO_ID && defs->regions[id].excluded;
    pthread_mutex_unlock(&defs->lock);
    return id;
}

uint32_t sp_defs_named_region_filtered(sp_defs *defs, const char *name, const char *file,
                                       int32_t begin_line, sp_paradigm paradigm, sp_role role,
                                       sp_region_kind kind, const struct sp_filter *filter,
                                       bool *excluded)
{
    return sp_defs_named_region_grouped(defs, name, file, begin_line, paradigm, role, kind,
                                        filter, excluded, NULL);
}

uint32_t sp_defs_named_region(sp_defs *defs, const char *name, const char *file,
                              int32_t begin_line, sp_paradigm paradigm, sp_role role,
                              sp_region_kind kind)
{
    bool excluded;
    return sp_defs_named_region_filtered(defs, name, file, begin_line, paradigm, role, kind,
                                         NULL, &excluded);
}

int sp_defs_set_group(sp_defs *defs, uint32_t region, const char *group)
{
    pthread_mutex_lock(&defs->lock);
    int status = -1;
    if (region < defs->region_count) {
        uint32_t id = sp_strings_intern(&defs->strings, group ? group : "");
        if (id != SP_NO_ID) {
            defs->regions[region].group = id;
            status = 0;
        }
    }
    pthread_mutex_unlock(&defs->lock);
    return status;
}

uint32_t sp_defs_parameter(sp_defs *defs, const char *name, sp_param_type type)
{
    pthread_mutex_lock(&defs->lock);
    uint32_t id = SP_NO_ID;
    uint32_t name_id = sp_strings_intern(&defs->strings, name);
    if (name_id == SP_NO_ID)
        goto out;
    id = sp_u64map_get(&defs->parameter_by_name, named_key(name_id, type));
    if (id != SP_NO_ID)
        goto out;
    if (defs->parameter_count == defs->parameter_capacity) {
        uint32_t cap = defs->parameter_capacity ? defs->parameter_capacity * 2 : 16;
        sp_parameter *params = realloc(defs->parameters, cap * sizeof *params);
        if (!params)
            goto out;
        defs->parameters = params;
        defs->parameter_capacity = cap;
    }
    id = defs->parameter_count;
    if (sp_u64map_put(&defs->parameter_by_name, named_key(name_id, type), id) != 0) {
        id = SP_NO_ID;
        goto out;
    }
    defs->parameters[id] = (sp_parameter){.name = name_id, .type = (uint8_t)type};
    defs->parameter_count++;
out:
    pthread_mutex_unlock(&defs->lock);
    return id;
}

static uint64_t *copy_processes(const uint64_t *from, uint32_t count)
{
    uint64_t *copy = malloc((count ? count : 1) * sizeof *copy);
    if (copy && count)
        memcpy(copy, from, count * sizeof *copy);
    return copy;
}

uint32_t sp_defs_comm(sp_defs *defs, const sp_comm_spec *spec)
{
    pthread_mutex_lock(&defs->lock);
    uint32_t id = sp_u64map_get(&defs->comm_by_key, spec->key);
    bool named = spec->name && spec->name[0];
    if (id != SP_NO_ID) {
        /* Known: the root's definition names it and knows its parent. */
        sp_comm *known = &defs->comms[id];
        known->created |= spec->created;
        if (spec->root && !known->root) {
            known->root = 1;
            if (named && !known->name)
                known->name = sp_strings_intern(&defs->strings, spec->name);
            if (known->parent == SP_COMM_NO_PARENT)
                known->parent = spec->parent;
        }
        goto out;
    }
    if (defs->comm_count == defs->comm_capacity) {
        uint32_t cap = defs->comm_capacity ? defs->comm_capacity * 2 : 8;
        sp_comm *comms = realloc(defs->comms, cap * sizeof *comms);
        if (!comms)
            goto out;
        defs->comms = comms;
        defs->comm_capacity = cap;
    }
    uint64_t *members = copy_processes(spec->members, spec->size);
    uint64_t *remote = copy_processes(spec->remote, spec->remote_size);
    uint32_t name_id = sp_strings_intern(&defs->strings, named ? spec->name : "");
    if (!members || !remote || name_id == SP_NO_ID) {
        free(members);
        free(remote);
        goto out;
    }
    id = defs->comm_count;
    if (sp_u64map_put(&defs->comm_by_key, spec->key, id) != 0) {
        free(members);
        free(remote);
        id = SP_NO_ID;
        goto out;
    }
    defs->comms[id] = (sp_comm){.key = spec->key,
                                .size = spec->size,
                                .remote_size = spec->remote_size,
                                .members = members,
                                .remote = remote,
                                .parent = spec->parent,
                                .name = name_id,
                                .kind = (uint8_t)spec->kind,
                                .root = spec->root,
                                .created = spec->created};
    defs->comm_count++;
out:
    pthread_mutex_unlock(&defs->lock);
    return id;
}

void sp_defs_comm_set_name(sp_defs *defs, uint32_t comm, const char *name, bool root)
{
    pthread_mutex_lock(&defs->lock);
    if (comm < defs->comm_count && root && name && name[0] && !defs->comms[comm].name) {
        uint32_t id = sp_strings_intern(&defs->strings, name);
        if (id != SP_NO_ID)
            defs->comms[comm].name = id;
    }
    pthread_mutex_unlock(&defs->lock);
}

uint32_t sp_defs_rma_win(sp_defs *defs, uint64_t key, uint32_t comm, const char *name)
{
    pthread_mutex_lock(&defs->lock);
    uint32_t id = sp_u64map_get(&defs->win_by_key, key);
    if (id != SP_NO_ID)
        goto out;
    if (defs->win_count == defs->win_capacity) {
        uint32_t cap = defs->win_capacity ? defs->win_capacity * 2 : 8;
        sp_rma_win *wins = realloc(defs->wins, cap * sizeof *wins);
        if (!wins)
            goto out;
        defs->wins = wins;
        defs->win_capacity = cap;
    }
    uint32_t name_id = sp_strings_intern(&defs->strings, name ? name : "");
    if (name_id == SP_NO_ID || sp_u64map_put(&defs->win_by_key, key, defs->win_count) != 0)
        goto out;
    id = defs->win_count++;
    defs->wins[id] = (sp_rma_win){.key = key, .comm = comm, .name = name_id};
out:
    pthread_mutex_unlock(&defs->lock);
    return id;
}

/* ---- I/O --------------------------------------------------------------------------------- */

const sp_io_paradigm_info sp_io_paradigms[SP_IO_PARADIGM_COUNT] = {
    [SP_IO_PARADIGM_POSIX] = {"POSIX", "POSIX I/O", false, true},
    [SP_IO_PARADIGM_ISOC] = {"ISOC", "ISO C I/O", false, false},
    [SP_IO_PARADIGM_MPI] = {"MPI-IO", "MPI I/O", true, false},
};

uint32_t sp_defs_io_file(sp_defs *defs, const char *path)
{
    pthread_mutex_lock(&defs->lock);
    uint32_t id = SP_NO_ID;
    uint32_t name = sp_strings_intern(&defs->strings, path ? path : "");
    if (name == SP_NO_ID)
        goto out;
    id = sp_u64map_get(&defs->io_file_by_name, name);
    if (id != SP_NO_ID)
        goto out;
    if (defs->io_file_count == defs->io_file_capacity) {
        uint32_t cap = defs->io_file_capacity ? defs->io_file_capacity * 2 : 16;
        sp_io_file *files = realloc(defs->io_files, cap * sizeof *files);
        if (!files)
            goto out;
        defs->io_files = files;
        defs->io_file_capacity = cap;
    }
    if (sp_u64map_put(&defs->io_file_by_name, name, defs->io_file_count) != 0)
        goto out;
    defs->io_files[defs->io_file_count] = (sp_io_file){.name = name};
    id = defs->io_file_count++;
out:
    pthread_mutex_unlock(&defs->lock);
    return id;
}

void sp_defs_rma_win_set_name(sp_defs *defs, uint32_t win, const char *name)
{
    pthread_mutex_lock(&defs->lock);
    if (win < defs->win_count && name) {
        uint32_t id = sp_strings_intern(&defs->strings, name);
        if (id != SP_NO_ID)
            defs->wins[win].name = id;
    }
    pthread_mutex_unlock(&defs->lock);
}

uint32_t sp_defs_io_handle(sp_defs *defs, const sp_io_handle *handle, const char *name)
{
    pthread_mutex_lock(&defs->lock);
    uint32_t id = SP_NO_ID;
    uint32_t name_id = sp_strings_intern(&defs->strings, name ? name : "");
    if (name_id == SP_NO_ID || handle->paradigm >= SP_IO_PARADIGM_COUNT)
        goto out;
    if (defs->io_handle_count == defs->io_handle_capacity) {
        uint32_t cap = defs->io_handle_capacity ? defs->io_handle_capacity * 2 : 64;
        sp_io_handle *handles = realloc(defs->io_handles, cap * sizeof *handles);
        if (!handles)
            goto out;
        defs->io_handles = handles;
        defs->io_handle_capacity = cap;
    }
    id = defs->io_handle_count++;
    defs->io_handles[id] = *handle;
    defs->io_handles[id].name = name_id;
    defs->io_paradigms_used |= 1u << handle->paradigm;
out:
    pthread_mutex_unlock(&defs->lock);
    return id;
}

void sp_defs_io_handle_set_file(sp_defs *defs, uint32_t handle, uint32_t file)
{
    pthread_mutex_lock(&defs->lock);
    if (handle < defs->io_handle_count)
        defs->io_handles[handle].file = file;
    pthread_mutex_unlock(&defs->lock);
}

uint32_t sp_defs_calling_context(sp_defs *defs, uint32_t region, uint32_t parent)
{
    uint64_t key = ((uint64_t)(parent + 1u) << 32) | region;
    pthread_mutex_lock(&defs->lock);
    uint32_t id = sp_u64map_get(&defs->context_by_key, key);
    if (id == SP_NO_ID) {
        if (defs->context_count == defs->context_capacity) {
            uint32_t cap = defs->context_capacity ? defs->context_capacity * 2 : 256;
            sp_calling_context *contexts = realloc(defs->contexts, cap * sizeof *contexts);
            if (!contexts)
                goto out;
            defs->contexts = contexts;
            defs->context_capacity = cap;
        }
        if (sp_u64map_put(&defs->context_by_key, key, defs->context_count) != 0)
            goto out;
        defs->contexts[defs->context_count] = (sp_calling_context){region, parent};
        id = defs->context_count++;
    }
out:
    pthread_mutex_unlock(&defs->lock);
    return id;
}
