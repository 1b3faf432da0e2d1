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
    SP_PARADIGM_COMPILER = 4, /* C functions called from Python (Score-P's compiled functions) */
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
    SP_ROLE_FILE_IO_METADATA, /* open, close, seek, dup: I/O calls that move no data */
    SP_ROLE_UNKNOWN, /* Score-P's COLLAPSE */
} sp_role;

/* What created a region; scorep-score and the reports group by it. */
typedef enum {
    SP_REGION_PYTHON = 0, /* a Python code object, named module[.Class]:function */
    SP_REGION_USER,       /* user:<name>, user_instrumenter:<name>, error_region */
    SP_REGION_MPI,
    SP_REGION_PROGRAM,    /* the root of every call path */
    SP_REGION_IO,         /* an I/O function (open64, write, fread, ...) */
    SP_REGION_ARTIFICIAL, /* the measurement's own: MEASUREMENT OFF, TRACE BUFFER FLUSH, COLLAPSE */
    SP_REGION_C,          /* a C function called from Python (builtins, methods of C types) */
} sp_region_kind;

typedef struct {
    uint32_t name;      /* string ids */
    uint32_t canonical; /* the name as given (module:qualname), for the mangled name */
    uint32_t file;      /* absolute source path, or "" */
    int32_t begin_line; /* -1 when unknown */
    int32_t end_line;   /* -1 when unknown (OTF2 gets 0, CUBE -1, as Score-P writes them) */
    uint32_t group;     /* string id of the region's group ("" = none): see sp_defs_set_group */
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
/* ---- I/O (Score-P's I/O management: paradigms, files, handles) ------------------------- */

/* The I/O interfaces whose calls are recorded. A paradigm is a parameter of every I/O
 * definition and event, so that each adapter (POSIX and ISO C here, MPI-IO in the MPI
 * adapter) records through the same core functions and trace records. */
typedef enum {
    SP_IO_PARADIGM_POSIX = 0, /* open/read/write/... on file descriptors */
    SP_IO_PARADIGM_ISOC,      /* fopen/fread/fwrite/... on FILE streams */
    SP_IO_PARADIGM_MPI,       /* MPI_File_* */
    SP_IO_PARADIGM_COUNT,
} sp_io_paradigm;

/* Score-P's description of each paradigm (identification, name, class, flags), as its
 * I/O adapters register them. */
typedef struct {
    const char *identification; /* "POSIX", "ISOC", "MPI-IO" */
    const char *name;           /* "POSIX I/O", "ISO C I/O", "MPI I/O" */
    bool parallel;              /* OTF2_IO_PARADIGM_CLASS_PARALLEL, else SERIAL */
    bool os;                    /* OTF2_IO_PARADIGM_FLAG_OS */
} sp_io_paradigm_info;

extern const sp_io_paradigm_info sp_io_paradigms[SP_IO_PARADIGM_COUNT];

/* The numeric values below are OTF2's (the trace substrate checks that they agree), so
 * that adapters need not know OTF2. */
typedef enum {
    SP_IO_ACCESS_READ_ONLY = 0,
    SP_IO_ACCESS_WRITE_ONLY = 1,
    SP_IO_ACCESS_READ_WRITE = 2,
    SP_IO_ACCESS_EXECUTE_ONLY = 3,
    SP_IO_ACCESS_SEARCH_ONLY = 4,
} sp_io_access_mode;

enum {
    SP_IO_HANDLE_PRE_CREATED = 1u << 0, /* open before the measurement started */
    SP_IO_HANDLE_ALL_PROXY = 1u << 1,   /* stands for all handles of its paradigm (sync) */
};

enum {
    SP_IO_CREATION_CREATE = 1u << 0,
    SP_IO_CREATION_TRUNCATE = 1u << 1,
    SP_IO_CREATION_DIRECTORY = 1u << 2,
    SP_IO_CREATION_EXCLUSIVE = 1u << 3,
    SP_IO_CREATION_NO_CONTROLLING_TERMINAL = 1u << 4,
    SP_IO_CREATION_NO_FOLLOW = 1u << 5,
    SP_IO_CREATION_PATH = 1u << 6,
    SP_IO_CREATION_TEMPORARY_FILE = 1u << 7,
    SP_IO_CREATION_LARGEFILE = 1u << 8,
    SP_IO_CREATION_NO_SEEK = 1u << 9,
    SP_IO_CREATION_UNIQUE = 1u << 10,
};

enum {
    SP_IO_STATUS_CLOSE_ON_EXEC = 1u << 0,
    SP_IO_STATUS_APPEND = 1u << 1,
    SP_IO_STATUS_NON_BLOCKING = 1u << 2,
    SP_IO_STATUS_ASYNC = 1u << 3,
    SP_IO_STATUS_SYNC = 1u << 4,
    SP_IO_STATUS_DATA_SYNC = 1u << 5,
    SP_IO_STATUS_AVOID_CACHING = 1u << 6,
    SP_IO_STATUS_NO_ACCESS_TIME = 1u << 7,
    SP_IO_STATUS_DELETE_ON_CLOSE = 1u << 8,
};

typedef enum {
    SP_IO_SEEK_FROM_START = 0,
    SP_IO_SEEK_FROM_CURRENT = 1,
    SP_IO_SEEK_FROM_END = 2,
    SP_IO_SEEK_DATA = 3,
    SP_IO_SEEK_HOLE = 4,
} sp_io_seek_whence;

typedef enum {
    SP_IO_MODE_READ = 0,
    SP_IO_MODE_WRITE = 1,
    SP_IO_MODE_FLUSH = 2,
} sp_io_mode;

enum {
    SP_IO_OPERATION_NON_BLOCKING = 1u << 0,
    SP_IO_OPERATION_COLLECTIVE = 1u << 1,
};

/* Bytes of an operation that are unknown (a flush) or of one that failed: OTF2's
 * undefined value, as Score-P writes it. */
#define SP_IO_UNKNOWN_BYTES UINT64_MAX

/* A file that was opened: its path as given, made absolute where it exists. */
typedef struct {
    uint32_t name; /* string id */
} sp_io_file;

/* An I/O handle: one open file descriptor, stream, MPI file, ... from its creation to its
 * destruction (a number reused by the system later is a new handle). */
typedef struct {
    uint32_t name;      /* string id: "" for handles of a file, else e.g. "STDOUT_FILENO" */
    uint32_t file;      /* io file id, SP_NO_ID while unknown or for none */
    uint32_t parent;    /* the handle whose creation made this one, SP_NO_ID for none */
    uint32_t comm;      /* communicator id (MPI-IO), SP_NO_ID for none */
    uint32_t unify_key; /* non-zero: handles of all processes with the same key, name and
                         * paradigm are one (standard streams), else each is its own */
    uint8_t paradigm;   /* sp_io_paradigm */
    uint8_t flags;      /* SP_IO_HANDLE_* */
    uint8_t access_mode;   /* pre-created handles: their state at the start */
    uint32_t status_flags; /* pre-created handles */
} sp_io_handle;

/* A node of the calling-context tree (sampling): a region called from its parent context
 * (SP_NO_ID: a root). OTF2's CallingContext definition. */
typedef struct {
    uint32_t region;
    uint32_t parent;
} sp_calling_context;

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
    sp_io_file *io_files;
    uint32_t io_file_count, io_file_capacity;
    sp_u64map io_file_by_name; /* name string id -> file */
    sp_io_handle *io_handles;
    uint32_t io_handle_count, io_handle_capacity;
    uint32_t io_paradigms_used; /* bit per sp_io_paradigm with a handle */
    sp_calling_context *contexts;
    uint32_t context_count, context_capacity;
    sp_u64map context_by_key; /* (parent + 1) << 32 | region -> calling context */
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

/* The same, with the group (NULL or "" for none) a new region goes into. */
uint32_t sp_defs_named_region_grouped(sp_defs *defs, const char *name, const char *file,
                                      int32_t begin_line, sp_paradigm paradigm, sp_role role,
                                      sp_region_kind kind, const struct sp_filter *filter,
                                      bool *excluded, const char *group);

/* An existing named region or SP_NO_ID; `excluded` (may be NULL) tells whether the
 * filter left it out. */
uint32_t sp_defs_find_named_region(sp_defs *defs, const char *name, sp_region_kind kind,
                                   bool *excluded);

/* Puts the region into the group `group` (a name; "" for none). Score-P makes one region
 * group per (group name, paradigm): an OTF2 GROUP of type REGIONS, and in the CUBE profile
 * the paradigm "<paradigm>:<group>". The Python bindings group every region by its module's
 * top-level package (SCOREP_User_RegionSetGroup). Returns 0, or -1 when out of memory. */
int sp_defs_set_group(sp_defs *defs, uint32_t region, const char *group);

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

/* The I/O file of that path, defined on first use. */
uint32_t sp_defs_io_file(sp_defs *defs, const char *path);

/* A new I/O handle (every call makes one); its file may be set later, once known. Returns
 * SP_NO_ID when out of memory. */
uint32_t sp_defs_io_handle(sp_defs *defs, const sp_io_handle *handle, const char *name);
void sp_defs_io_handle_set_file(sp_defs *defs, uint32_t handle, uint32_t file);

/* The calling context of `region` called from context `parent` (SP_NO_ID: none), defined on
 * first use; SP_NO_ID when out of memory. */
uint32_t sp_defs_calling_context(sp_defs *defs, uint32_t region, uint32_t parent);

/* Readers for writers at the end of the measurement (no lock: nothing is added then). */
static inline const char *sp_defs_str(const sp_defs *defs, uint32_t id)
{
    return sp_strings_get(&defs->strings, id);
}

#endif
