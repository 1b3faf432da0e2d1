/* Definitions of one measurement: strings, regions and parameters, with dense ids that
 * events refer to. Adding a definition takes a lock (it happens once per region, not per
 * event, and MPI wrappers may define from threads that do not hold the GIL). */
#ifndef SCOREP_CORE_DEFS_H
#define SCOREP_CORE_DEFS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/tables.h"

typedef enum {
    SP_PARADIGM_USER = 0,        /* Python functions and user regions (as Score-P does) */
    SP_PARADIGM_MEASUREMENT = 1, /* the program root and artificial regions */
    SP_PARADIGM_MPI = 2,
    SP_PARADIGM_IO = 3,
} sp_paradigm;

typedef enum {
    SP_ROLE_FUNCTION = 0,
    SP_ROLE_ARTIFICIAL,
    SP_ROLE_WRAPPER,
    SP_ROLE_POINT2POINT,
    SP_ROLE_BARRIER,
    SP_ROLE_COLL_ONE2ALL,
    SP_ROLE_COLL_ALL2ONE,
    SP_ROLE_COLL_ALL2ALL,
    SP_ROLE_COLL_OTHER,
    SP_ROLE_FILE_IO,
    SP_ROLE_CODE,
} sp_role;

/* What created a region; scorep-score and the reports group by it. */
typedef enum {
    SP_REGION_PYTHON = 0, /* a Python code object, named module[.Class]:function */
    SP_REGION_USER,       /* user:<name>, user_instrumenter:<name>, error_region */
    SP_REGION_MPI,
    SP_REGION_PROGRAM,    /* the root of every call path */
} sp_region_kind;

typedef struct {
    uint32_t name;      /* string ids */
    uint32_t canonical; /* the name as given (module:qualname), for the mangled name */
    uint32_t file;      /* absolute source path, or "" */
    int32_t begin_line; /* -1 when unknown */
    int32_t end_line;
    uint8_t paradigm;   /* sp_paradigm */
    uint8_t role;       /* sp_role */
    uint8_t kind;       /* sp_region_kind */
    uint8_t excluded;   /* left out by the filter (named regions; decided when defined) */
} sp_region;

typedef enum {
    SP_PARAM_INT64 = 0,
    SP_PARAM_UINT64 = 1,
    SP_PARAM_STRING = 2,
} sp_param_type;

typedef struct {
    uint32_t name; /* string id */
    uint8_t type;  /* sp_param_type */
} sp_parameter;

typedef enum {
    SP_COMM_WORLD = 0, /* MPI_COMM_WORLD of the process's world */
    SP_COMM_SELF = 1,
    SP_COMM_OTHER = 2, /* an intra-communicator */
    SP_COMM_INTER = 3, /* an inter-communicator: `members` one group, `remote` the other */
    SP_COMM_GROUP = 4, /* an MPI group (of an RMA epoch): a group, no communicator */
} sp_comm_kind;

/* Communicators are told apart across processes by their key: 0 the first world's
 * MPI_COMM_WORLD, 1 MPI_COMM_SELF; otherwise chosen when the communicator is created (the
 * adapter makes it unique in the job) or derived from the members (groups). */
#define SP_COMM_KEY_WORLD 0
#define SP_COMM_KEY_SELF 1
#define SP_COMM_NO_PARENT UINT64_MAX

/* A process of the job: its world (0 for the first one, the token of a world started with
 * MPI_Comm_spawn otherwise) and its rank in that world. The unification numbers all
 * processes of all worlds consecutively. */
#define SP_PROCESS(world, rank) ((uint64_t)(world) << 32 | (uint32_t)(rank))
#define SP_PROCESS_WORLD(p) ((uint32_t)((p) >> 32))
#define SP_PROCESS_RANK(p) ((uint32_t)(p))

/* What defines a communicator (the members are copied). */
typedef struct {
    uint64_t key;
    sp_comm_kind kind;
    uint32_t size;
    const uint64_t *members; /* processes, in communicator rank order */
    uint32_t remote_size;    /* inter-communicators: the other group */
    const uint64_t *remote;
    uint64_t parent;         /* key of the communicator it was made from, or SP_COMM_NO_PARENT */
    bool root;               /* this process is rank 0 of it: its name and parent count */
    bool created;            /* its creation and destruction are recorded as events */
    const char *name;        /* NULL or "": unnamed */
} sp_comm_spec;

typedef struct {
    uint64_t key;
    uint32_t size, remote_size;
    uint64_t *members, *remote;
    uint64_t parent;
    uint32_t name;     /* string id ("" when unnamed) */
    uint8_t kind;      /* sp_comm_kind */
    uint8_t root;
    uint8_t created;
} sp_comm;

/* An RMA window; `comm` is the local id of its communicator. */
typedef struct {
    uint64_t key;
    uint32_t comm;
    uint32_t name;
} sp_rma_win;

typedef struct sp_defs {
    pthread_mutex_t lock;
    sp_string_table strings;
    sp_region *regions;
    uint32_t region_count, region_capacity;
    sp_u64map region_by_name; /* (kind, name string) -> region, for named regions */
    sp_parameter *parameters;
    uint32_t parameter_count, parameter_capacity;
    sp_u64map parameter_by_name; /* (type, name string) -> parameter */
    sp_comm *comms;
    uint32_t comm_count, comm_capacity;
    sp_u64map comm_by_key;
    sp_rma_win *wins;
    uint32_t win_count, win_capacity;
    sp_u64map win_by_key;
} sp_defs;

int sp_defs_init(sp_defs *defs);
void sp_defs_free(sp_defs *defs);

uint32_t sp_defs_string(sp_defs *defs, const char *text);

/* A new region (every call makes one: Python code objects are distinct regions even when
 * their names coincide, as in the original bindings). Returns SP_NO_ID when out of memory. */
uint32_t sp_defs_new_region(sp_defs *defs, const char *name, const char *canonical,
                            const char *file, int32_t begin_line, int32_t end_line,
                            sp_paradigm paradigm, sp_role role, sp_region_kind kind);

/* The region of that kind and name, made on first use (user regions, MPI functions). */
uint32_t sp_defs_named_region(sp_defs *defs, const char *name, const char *file,
                              int32_t begin_line, sp_paradigm paradigm, sp_role role,
                              sp_region_kind kind);

struct sp_filter;

/* The same, deciding once, when the region is made, whether `filter` leaves it out;
 * `excluded` tells. */
uint32_t sp_defs_named_region_filtered(sp_defs *defs, const char *name, const char *file,
                                       int32_t begin_line, sp_paradigm paradigm, sp_role role,
                                       sp_region_kind kind, const struct sp_filter *filter,
                                       bool *excluded);

/* An existing named region or SP_NO_ID; `excluded` (may be NULL) tells whether the
 * filter left it out. */
uint32_t sp_defs_find_named_region(sp_defs *defs, const char *name, sp_region_kind kind,
                                   bool *excluded);

uint32_t sp_defs_parameter(sp_defs *defs, const char *name, sp_param_type type);

/* The communicator with spec->key, defined on first use (SP_NO_ID: out of memory). A
 * later definition by the communicator's root gives it its name and parent when the first
 * one had none. */
uint32_t sp_defs_comm(sp_defs *defs, const sp_comm_spec *spec);

/* MPI_Comm_set_name: the name counts when given by the communicator's root, and only the
 * first one (as in Score-P). */
void sp_defs_comm_set_name(sp_defs *defs, uint32_t comm, const char *name, bool root);

/* The window with that key, defined on first use. */
uint32_t sp_defs_rma_win(sp_defs *defs, uint64_t key, uint32_t comm, const char *name);
void sp_defs_rma_win_set_name(sp_defs *defs, uint32_t win, const char *name);

/* Readers for writers at the end of the measurement (no lock: nothing is added then). */
static inline const char *sp_defs_str(const sp_defs *defs, uint32_t id)
{
    return sp_strings_get(&defs->strings, id);
}

#endif
