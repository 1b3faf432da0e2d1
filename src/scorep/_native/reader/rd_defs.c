/* Opening an OTF2 archive and reading its global definitions into plain arrays. */
#include "reader/rd.h"

#include <otf2/otf2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Definition refs are dense in every writer we know (Score-P, ours, python3-otf2); a ref
 * beyond this is refused instead of allocating a table for it. */
#define RD_MAX_REF (1u << 26)

typedef struct def_ctx {
    rd_defs *defs;
    bool oom;
    bool bad_ref;
} def_ctx;

static bool grow(void **array, uint32_t *count, uint32_t ref, size_t size, def_ctx *c)
{
    if (ref >= RD_MAX_REF) {
        c->bad_ref = true;
        return false;
    }
    if (ref < *count)
        return true;
    uint32_t n = *count ? *count : 16;
    while (n <= ref)
        n *= 2;
    void *p = realloc(*array, (size_t)n * size);
    if (!p) {
        c->oom = true;
        return false;
    }
    memset((char *)p + (size_t)*count * size, 0, (size_t)(n - *count) * size);
    *array = p;
    *count = n;
    return true;
}

static OTF2_CallbackCode on_clock(void *ud, uint64_t resolution, uint64_t offset,
                                  uint64_t length, uint64_t realtime)
{
    rd_defs *d = ((def_ctx *)ud)->defs;
    d->resolution = resolution;
    d->offset = offset;
    d->length = length;
    d->realtime = realtime;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_string(void *ud, OTF2_StringRef self, const char *s)
{
    def_ctx *c = ud;
    rd_defs *d = c->defs;
    if (!grow((void **)&d->strings, &d->nstrings, self, sizeof *d->strings, c))
        return OTF2_CALLBACK_INTERRUPT;
    free(d->strings[self]);
    d->strings[self] = strdup(s ? s : "");
    if (!d->strings[self]) {
        c->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_region(void *ud, OTF2_RegionRef self, OTF2_StringRef name,
                                   OTF2_StringRef canonical, OTF2_StringRef description,
                                   OTF2_RegionRole role, OTF2_Paradigm paradigm,
                                   OTF2_RegionFlag flags, OTF2_StringRef file, uint32_t begin,
                                   uint32_t end)
{
    (void)description, (void)flags;
    def_ctx *c = ud;
    rd_defs *d = c->defs;
    if (!grow((void **)&d->regions, &d->nregions, self, sizeof *d->regions, c))
        return OTF2_CALLBACK_INTERRUPT;
    rd_region *r = &d->regions[self];
    r->name = name;
    r->canonical = canonical;
    r->file = file;
    r->begin_line = begin;
    r->end_line = end;
    r->role = (uint8_t)role;
    r->paradigm = (uint8_t)paradigm;
    r->defined = true;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_stnode(void *ud, OTF2_SystemTreeNodeRef self, OTF2_StringRef name,
                                   OTF2_StringRef class_name, OTF2_SystemTreeNodeRef parent)
{
    def_ctx *c = ud;
    rd_defs *d = c->defs;
    if (!grow((void **)&d->stnodes, &d->nstnodes, self, sizeof *d->stnodes, c))
        return OTF2_CALLBACK_INTERRUPT;
    d->stnodes[self] = (rd_stnode){name, class_name, parent, true};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_lgroup(void *ud, OTF2_LocationGroupRef self, OTF2_StringRef name,
                                   OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef parent,
                                   OTF2_LocationGroupRef creator)
{
    (void)creator;
    def_ctx *c = ud;
    rd_defs *d = c->defs;
    if (!grow((void **)&d->lgroups, &d->nlgroups, self, sizeof *d->lgroups, c))
        return OTF2_CALLBACK_INTERRUPT;
    d->lgroups[self] = (rd_lgroup){name, (uint8_t)type, parent, true};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_location(void *ud, OTF2_LocationRef self, OTF2_StringRef name,
                                     OTF2_LocationType type, uint64_t events,
                                     OTF2_LocationGroupRef group)
{
    def_ctx *c = ud;
    rd_defs *d = c->defs;
    if (d->nlocations == d->location_cap) {
        uint32_t n = d->location_cap ? 2 * d->location_cap : 16;
        rd_location *p = realloc(d->locations, (size_t)n * sizeof *p);
        if (!p) {
            c->oom = true;
            return OTF2_CALLBACK_INTERRUPT;
        }
        d->locations = p;
        d->location_cap = n;
    }
    d->locations[d->nlocations++] = (rd_location){self, name, group, (uint8_t)type, events};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_group(void *ud, OTF2_GroupRef self, OTF2_StringRef name,
                                  OTF2_GroupType type, OTF2_Paradigm paradigm,
                                  OTF2_GroupFlag flags, uint32_t n, const uint64_t *members)
{
    (void)name, (void)flags;
    def_ctx *c = ud;
    rd_defs *d = c->defs;
    if (!grow((void **)&d->groups, &d->ngroups, self, sizeof *d->groups, c))
        return OTF2_CALLBACK_INTERRUPT;
    rd_group *g = &d->groups[self];
    free(g->members);
    g->members = malloc((size_t)(n ? n : 1) * sizeof *g->members);
    if (!g->members) {
        c->oom = true;
        return OTF2_CALLBACK_INTERRUPT;
    }
    if (n)
        memcpy(g->members, members, (size_t)n * sizeof *members);
    g->size = n;
    g->type = (uint8_t)type;
    g->paradigm = (uint8_t)paradigm;
    g->defined = true;
    return OTF2_CALLBACK_SUCCESS;
}

/* One-sided windows: their communicator (the wait-state replay's fences). */
static OTF2_CallbackCode on_rma_win(void *ud, OTF2_RmaWinRef self, OTF2_StringRef name,
                                    OTF2_CommRef comm, OTF2_RmaWinFlag flags)
{
    (void)name, (void)flags;
    def_ctx *c = ud;
    rd_defs *d = c->defs;
    uint32_t before = d->nwins;
    if (!grow((void **)&d->win_comm, &d->nwins, self, sizeof *d->win_comm, c))
        return OTF2_CALLBACK_INTERRUPT;
    for (uint32_t i = before; i < d->nwins; i++)
        d->win_comm[i] = RD_NONE;
    d->win_comm[self] = comm;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_comm(void *ud, OTF2_CommRef self, OTF2_StringRef name,
                                 OTF2_GroupRef group, OTF2_CommRef parent, OTF2_CommFlag flags)
{
    (void)flags;
    def_ctx *c = ud;
    rd_defs *d = c->defs;
    if (!grow((void **)&d->comms, &d->ncomms, self, sizeof *d->comms, c))
        return OTF2_CALLBACK_INTERRUPT;
    rd_comm *m = &d->comms[self];
    m->name = name;
    m->group = group;
    m->parent = parent;
    m->defined = true;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_inter_comm(void *ud, OTF2_CommRef self, OTF2_StringRef name,
                                       OTF2_GroupRef group_a, OTF2_GroupRef group_b,
                                       OTF2_CommRef common, OTF2_CommFlag flags)
{
    OTF2_CallbackCode s = on_comm(ud, self, name, group_a, common, flags);
    if (s == OTF2_CALLBACK_SUCCESS) {
        rd_comm *m = &((def_ctx *)ud)->defs->comms[self];
        m->inter = true;
        m->remote_group = group_b;
    }
    return s;
}

static OTF2_CallbackCode on_io_paradigm(void *ud, OTF2_IoParadigmRef self,
                                        OTF2_StringRef identification, OTF2_StringRef name,
                                        OTF2_IoParadigmClass ioClass, OTF2_IoParadigmFlag flags,
                                        uint8_t nprops, const OTF2_IoParadigmProperty *props,
                                        const OTF2_Type *types, const OTF2_AttributeValue *values)
{
    (void)identification, (void)ioClass, (void)flags, (void)nprops, (void)props, (void)types,
        (void)values;
    def_ctx *c = ud;
    rd_defs *d = c->defs;
    uint32_t before = d->nio_paradigms;
    if (!grow((void **)&d->io_paradigm_names, &d->nio_paradigms, self,
              sizeof *d->io_paradigm_names, c))
        return OTF2_CALLBACK_INTERRUPT;
    for (uint32_t i = before; i < d->nio_paradigms; i++)
        d->io_paradigm_names[i] = RD_NONE;
    d->io_paradigm_names[self] = name;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_io_file(void *ud, OTF2_IoFileRef self, OTF2_StringRef name,
                                    OTF2_SystemTreeNodeRef scope)
{
    (void)scope;
    def_ctx *c = ud;
    rd_defs *d = c->defs;
    if (!grow((void **)&d->io_files, &d->nio_files, self, sizeof *d->io_files, c))
        return OTF2_CALLBACK_INTERRUPT;
    d->io_files[self] = (rd_io_file){name, true};
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_io_handle(void *ud, OTF2_IoHandleRef self, OTF2_StringRef name,
                                      OTF2_IoFileRef file, OTF2_IoParadigmRef paradigm,
                                      OTF2_IoHandleFlag flags, OTF2_CommRef comm,
                                      OTF2_IoHandleRef parent)
{
    (void)flags, (void)comm;
    def_ctx *c = ud;
    rd_defs *d = c->defs;
    if (!grow((void **)&d->io_handles, &d->nio_handles, self, sizeof *d->io_handles, c))
        return OTF2_CALLBACK_INTERRUPT;
    d->io_handles[self] = (rd_io_handle){
        name, file == OTF2_UNDEFINED_IO_FILE ? RD_NONE : file,
        parent == OTF2_UNDEFINED_IO_HANDLE ? RD_NONE : parent, paradigm, true};
    return OTF2_CALLBACK_SUCCESS;
}

const char *rd_string(const rd_defs *defs, uint32_t ref)
{
    if (ref < defs->nstrings && defs->strings[ref])
        return defs->strings[ref];
    return "";
}

typedef struct id_index {
    uint64_t id;
    uint32_t index;
} id_index;

static int cmp_id_index(const void *a, const void *b)
{
    uint64_t x = ((const id_index *)a)->id, y = ((const id_index *)b)->id;
    return x < y ? -1 : x > y;
}

uint32_t rd_location_index(const rd_defs *defs, uint64_t id)
{
    uint32_t lo = 0, hi = defs->nlocations;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (defs->loc_ids_sorted[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < defs->nlocations && defs->loc_ids_sorted[lo] == id)
        return defs->loc_index_sorted[lo];
    return RD_NONE;
}

uint64_t rd_to_ns(const rd_defs *defs, uint64_t time)
{
    uint64_t t = time > defs->offset ? time - defs->offset : 0;
    if (defs->resolution == 1000000000u || defs->resolution == 0)
        return t;
    return (uint64_t)((double)t * (1e9 / (double)defs->resolution) + 0.5);
}

/* Communicator rank -> location group: a COMM_GROUP's members index the COMM_LOCATIONS
 * group of the same paradigm, whose members are location ids (OTF2's rules); a
 * COMM_SELF group has no members and its one rank is the caller. */
static uint32_t *group_lgroups(rd_defs *d, uint32_t group, uint32_t locations_group,
                               uint32_t *size)
{
    *size = 0;
    if (group >= d->ngroups || !d->groups[group].defined)
        return NULL;
    const rd_group *g = &d->groups[group];
    if (g->type != OTF2_GROUP_TYPE_COMM_GROUP && g->type != OTF2_GROUP_TYPE_COMM_LOCATIONS)
        return NULL;
    uint32_t *map = malloc((size_t)(g->size ? g->size : 1) * sizeof(uint32_t));
    if (!map)
        return NULL;
    *size = g->size;
    for (uint32_t r = 0; r < g->size; r++) {
        uint64_t location = g->members[r];
        if (g->type == OTF2_GROUP_TYPE_COMM_GROUP) {
            const rd_group *all = locations_group != RD_NONE ? &d->groups[locations_group] : NULL;
            location = all && g->members[r] < all->size ? all->members[g->members[r]]
                                                         : UINT64_MAX;
        }
        uint32_t li = location == UINT64_MAX ? RD_NONE : rd_location_index(d, location);
        map[r] = li == RD_NONE ? RD_NONE : d->locations[li].group;
    }
    return map;
}

static void resolve_comms(rd_defs *d)
{
    uint32_t locations_group = RD_NONE;
    for (uint32_t g = 0; g < d->ngroups; g++)
        if (d->groups[g].defined && d->groups[g].type == OTF2_GROUP_TYPE_COMM_LOCATIONS) {
            locations_group = g;
            break;
        }
    for (uint32_t c = 0; c < d->ncomms; c++) {
        rd_comm *m = &d->comms[c];
        if (!m->defined)
            continue;
        m->rank_to_lgroup = group_lgroups(d, m->group, locations_group, &m->size);
        if (m->inter)
            m->remote_to_lgroup = group_lgroups(d, m->remote_group, locations_group,
                                                &m->remote_size);
    }
}

uint32_t rd_comm_peer(const rd_defs *defs, uint32_t comm, uint32_t rank, uint32_t self_group)
{
    /* In an inter-communicator the peer is a rank of the group the caller is not in. */
    if (comm < defs->ncomms && defs->comms[comm].inter) {
        const rd_comm *m = &defs->comms[comm];
        bool in_first = false;
        for (uint32_t r = 0; m->rank_to_lgroup && r < m->size && !in_first; r++)
            in_first = m->rank_to_lgroup[r] == self_group;
        const uint32_t *other = in_first ? m->remote_to_lgroup : m->rank_to_lgroup;
        uint32_t size = in_first ? m->remote_size : m->size;
        return other && rank < size && other[rank] != RD_NONE ? other[rank] : rank;
    }
    if (comm < defs->ncomms && defs->comms[comm].rank_to_lgroup && rank < defs->comms[comm].size &&
        defs->comms[comm].rank_to_lgroup[rank] != RD_NONE)
        return defs->comms[comm].rank_to_lgroup[rank];
    /* MPI_COMM_SELF has no members: its one rank is the caller. A communicator without a
     * definition leaves the rank as it is (right for MPI_COMM_WORLD traces whose location
     * groups are the ranks). */
    if (comm < defs->ncomms && defs->comms[comm].defined && defs->comms[comm].group < defs->ngroups &&
        defs->groups[defs->comms[comm].group].type == OTF2_GROUP_TYPE_COMM_SELF)
        return self_group;
    return rank;
}

/* OTF2's error callback is process-wide and takes no per-call context we control, so the
 * first error message of a quiet section is kept here, per thread, for rd_quiet_message(). */
static _Thread_local char quiet_message[512];
static _Thread_local OTF2_ErrorCallback quiet_previous;
static _Thread_local void *quiet_previous_data;
static _Thread_local int quiet_depth;

static OTF2_ErrorCode quiet_callback(void *user, const char *file, uint64_t line,
                                     const char *function, OTF2_ErrorCode code,
                                     const char *fmt, va_list va)
{
    (void)user, (void)file, (void)line, (void)function;
    if (!quiet_message[0]) {
        char text[400];
        vsnprintf(text, sizeof text, fmt ? fmt : "", va);
        snprintf(quiet_message, sizeof quiet_message, "%s%s%s", text, text[0] ? ": " : "",
                 OTF2_Error_GetDescription(code));
    }
    return code;
}

void rd_quiet_begin(void)
{
    if (quiet_depth++ == 0) {
        quiet_message[0] = '\0';
        quiet_previous = OTF2_Error_RegisterCallback(quiet_callback, NULL);
        quiet_previous_data = NULL;
    }
}

void rd_quiet_end(void)
{
    if (quiet_depth > 0 && --quiet_depth == 0)
        OTF2_Error_RegisterCallback(quiet_previous, quiet_previous_data);
}

const char *rd_quiet_message(void)
{
    return quiet_message;
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

rd_trace *rd_open(const char *anchor, char *err, size_t errlen)
{
    rd_trace *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(anchor))) {
        free(t);
        set_err(err, errlen, "out of memory");
        return NULL;
    }
    OTF2_Reader *r = OTF2_Reader_Open(anchor);
    if (!r) {
        set_err(err, errlen, "%s: not an OTF2 archive (%s)", anchor,
                rd_quiet_message()[0] ? rd_quiet_message() : "OTF2 cannot open it");
        rd_close(t);
        return NULL;
    }
    OTF2_Reader_SetSerialCollectiveCallbacks(r);
    OTF2_Reader_GetVersion(r, &t->defs.version[0], &t->defs.version[1], &t->defs.version[2]);
    char *creator = NULL;
    if (OTF2_Reader_GetCreator(r, &creator) == OTF2_SUCCESS && creator) {
        t->defs.creator = strdup(creator);
        free(creator);
    }
    OTF2_GlobalDefReader *gdr = OTF2_Reader_GetGlobalDefReader(r);
    if (!gdr) {
        set_err(err, errlen, "%s: the global definitions (traces.def) cannot be read", anchor);
        OTF2_Reader_Close(r);
        rd_close(t);
        return NULL;
    }
    OTF2_GlobalDefReaderCallbacks *cb = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, on_clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, on_string);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, on_region);
    OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cb, on_stnode);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, on_lgroup);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, on_location);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, on_group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, on_comm);
    OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(cb, on_rma_win);
    OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(cb, on_inter_comm);
    OTF2_GlobalDefReaderCallbacks_SetIoParadigmCallback(cb, on_io_paradigm);
    OTF2_GlobalDefReaderCallbacks_SetIoRegularFileCallback(cb, on_io_file);
    OTF2_GlobalDefReaderCallbacks_SetIoDirectoryCallback(cb, on_io_file);
    OTF2_GlobalDefReaderCallbacks_SetIoHandleCallback(cb, on_io_handle);
    def_ctx ctx = {&t->defs, false, false};
    OTF2_Reader_RegisterGlobalDefCallbacks(r, gdr, cb, &ctx);
    OTF2_GlobalDefReaderCallbacks_Delete(cb);
    uint64_t n = 0;
    OTF2_ErrorCode status = OTF2_Reader_ReadAllGlobalDefinitions(r, gdr, &n);
    OTF2_Reader_CloseGlobalDefReader(r, gdr);
    OTF2_Reader_Close(r);
    if (ctx.oom || ctx.bad_ref || status != OTF2_SUCCESS) {
        if (ctx.oom)
            set_err(err, errlen, "out of memory reading the definitions of %s", anchor);
        else if (ctx.bad_ref)
            set_err(err, errlen, "%s: definition ids beyond %u are not supported", anchor,
                    RD_MAX_REF);
        else
            set_err(err, errlen, "%s: reading the definitions failed: %s", anchor,
                    rd_quiet_message()[0] ? rd_quiet_message() : OTF2_Error_GetDescription(status));
        rd_close(t);
        return NULL;
    }
    rd_defs *d = &t->defs;
    for (uint32_t i = 0; i < d->nregions; i++)
        if (d->regions[i].defined)
            d->regions[i].name_len = (uint32_t)strlen(rd_string(d, d->regions[i].name));
    uint32_t nl = d->nlocations;
    d->loc_ids_sorted = malloc((size_t)(nl ? nl : 1) * sizeof(uint64_t));
    d->loc_index_sorted = malloc((size_t)(nl ? nl : 1) * sizeof(uint32_t));
    id_index *pairs = malloc((size_t)(nl ? nl : 1) * sizeof *pairs);
    if (!d->loc_ids_sorted || !d->loc_index_sorted || !pairs) {
        free(pairs);
        set_err(err, errlen, "out of memory");
        rd_close(t);
        return NULL;
    }
    for (uint32_t i = 0; i < nl; i++)
        pairs[i] = (id_index){d->locations[i].id, i};
    qsort(pairs, nl, sizeof *pairs, cmp_id_index);
    for (uint32_t i = 0; i < nl; i++) {
        d->loc_ids_sorted[i] = pairs[i].id;
        d->loc_index_sorted[i] = pairs[i].index;
    }
    free(pairs);
    resolve_comms(d);
    return t;
}

void rd_close(rd_trace *t)
{
    if (!t)
        return;
    rd_defs *d = &t->defs;
    for (uint32_t i = 0; i < d->nstrings; i++)
        free(d->strings[i]);
    free(d->strings);
    free(d->regions);
    free(d->locations);
    free(d->lgroups);
    free(d->stnodes);
    for (uint32_t i = 0; i < d->ngroups; i++)
        free(d->groups[i].members);
    free(d->groups);
    for (uint32_t i = 0; i < d->ncomms; i++) {
        free(d->comms[i].rank_to_lgroup);
        free(d->comms[i].remote_to_lgroup);
    }
    free(d->comms);
    free(d->win_comm);
    free(d->loc_ids_sorted);
    free(d->loc_index_sorted);
    free(d->io_files);
    free(d->io_handles);
    free(d->io_paradigm_names);
    free(d->creator);
    free(t->path);
    free(t);
}
