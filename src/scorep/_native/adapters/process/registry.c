/* The group's registry in the experiment directory (see process.h): numbering members,
 * who is alive (a root holds an flock, which the kernel lets go of when it dies, whatever
 * killed it; a member is its pid and the time its process started, so that it holds no
 * descriptor its program could see), joining as root or member, fork, and cleaning up. */
#include "adapters/process/internal.h"
#include "core/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

sp_process_state sp_proc = {.lock_fd = -1};

/* What a child forked now inherits: computed in the parent just before fork (the core in
 * the child stops at once and can no longer answer). Global for the fork handlers. */
static sp_process_lineage fork_lineage;
static bool fork_lineage_valid;

/* `text` into `out`, cut to fit. */
static void copy_text(char *out, size_t size, const char *text)
{
    size_t n = strnlen(text, size - 1);
    memcpy(out, text, n);
    out[n] = '\0';
}

/* When something happened, comparable between processes (CLOCK_REALTIME, ns). */
static uint64_t realtime_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

double sp_process_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void sp_process_sleep(double seconds)
{
    struct timespec t = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

static void path_in_registry(const char *file, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", sp_proc.registry, file);
}

void sp_process_member_path(uint32_t number, const char *file, char *out, size_t size)
{
    if (file)
        snprintf(out, size, "%s/%u/%s", sp_proc.registry, number, file);
    else
        snprintf(out, size, "%s/%u", sp_proc.registry, number);
}

int sp_process_lock_registry(void)
{
    char path[4400];
    path_in_registry("registry", path, sizeof path);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return -1;
    while (flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            close(fd);
            return -1;
        }
    }
    return fd;
}

void sp_process_unlock_registry(int fd)
{
    if (fd >= 0)
        close(fd); /* closing the only descriptor lets go of the lock */
}

/* A file that some living process holds an flock on. */
static bool locked_by_someone(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool held = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return held;
}


static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

bool sp_process_root_closed(void)
{
    char path[4400], name[64];
    snprintf(name, sizeof name, "root-%u.closed", sp_proc.root);
    path_in_registry(name, path, sizeof path);
    if (exists(path))
        return true;
    snprintf(name, sizeof name, "root-%u", sp_proc.root);
    path_in_registry(name, path, sizeof path);
    return !locked_by_someone(path); /* the root died (or never was) */
}

/* An flock'ed file this process holds until it ends; -1 when it cannot. */
static int hold_lock(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* ---- the members' info files -------------------------------------------------------- */

static void write_info(void)
{
    char path[4400], text[1024];
    sp_process_member_path(sp_proc.number, "info", path, sizeof path);
    int n = snprintf(text, sizeof text,
                     "pid %llu\npid_start %llu\nparent %u\nroot %u\nstarted %llu\nmethod %s\n"
                     "name %s\n",
                     (unsigned long long)sp_proc.pid, (unsigned long long)sp_proc.pid_start,
                     sp_proc.parent, sp_proc.root, (unsigned long long)sp_proc.started_ns,
                     sp_proc.method, sp_proc.info.name);
    /* Best effort, as every registry file: a reader takes a missing one for "not yet". */
    if (n > 0 && (size_t)n < sizeof text && sp_file_write_atomic(path, text, (size_t)n, NULL, 0))
        return;
}

/* A member's file in the registry: "info" (write_info) once it joined, "reserved"
 * (sp_process_reserve) before. Both are lines "key value"; what is found goes into `m`,
 * and its root into `root`. False when the file is not there or names no root (then the
 * member belongs to no group we can tell). */
static bool read_member_file(uint32_t number, const char *file, sp_member *m, uint32_t *root)
{
    char path[4400], line[512];
    sp_process_member_path(number, file, path, sizeof path);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    memset(m, 0, sizeof *m);
    m->number = number;
    bool has_root = false;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *value = strchr(line, ' ');
        if (!value)
            continue;
        *value++ = '\0';
        const char *key = line;
        unsigned long long v;
        bool numeric = sscanf(value, "%llu", &v) == 1;
        if (strcmp(key, "pid") == 0 && numeric)
            m->pid = v;
        else if (strcmp(key, "pid_start") == 0 && numeric)
            m->pid_start = v;
        else if (strcmp(key, "parent") == 0 && numeric)
            m->parent = (uint32_t)v;
        else if (strcmp(key, "root") == 0 && numeric) {
            *root = (uint32_t)v;
            has_root = true;
        } else if (strcmp(key, "started") == 0 && numeric)
            m->started_ns = v;
        else if (strcmp(key, "method") == 0)
            copy_text(m->method, sizeof m->method, value);
        else if (strcmp(key, "name") == 0)
            copy_text(m->name, sizeof m->name, value);
    }
    fclose(f);
    return has_root;
}

/* From /proc/<pid>/stat: the process's state letter and when it started (field 22, clock
 * ticks since boot: with the pid, what tells this process from a later one that got the
 * same pid). False when it cannot be read (no /proc, the process has ended). */
static bool proc_stat(uint64_t pid, char *state, uint64_t *start_ticks)
{
    char path[64], stat[1024];
    snprintf(path, sizeof path, "/proc/%llu/stat", (unsigned long long)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    /* After the command name in parentheses (which may itself hold ") "): the state is
     * field 3, the start time field 22. */
    const char *p = strrchr(stat, ')');
    if (!p || p[1] != ' ')
        return false;
    *state = p[2];
    *start_ticks = 0;
    p += 2;
    for (int field = 3; field < 22 && p; field++) {
        p = strchr(p, ' ');
        if (p)
            p++;
    }
    if (p)
        *start_ticks = strtoull(p, NULL, 10);
    return true;
}

/* When this process started (0: not known). */
static uint64_t own_start_ticks(void)
{
    char state;
    uint64_t ticks;
    return proc_stat((uint64_t)getpid(), &state, &ticks) ? ticks : 0;
}

/* A process that exists and has not ended (a zombie has ended); started at `start_ticks`
 * unless that is 0 (not known). */
static bool process_running_since(uint64_t pid, uint64_t start_ticks)
{
    if (pid == 0)
        return false;
    if (kill((pid_t)pid, 0) != 0 && errno != EPERM)
        return false;
    char state;
    uint64_t ticks;
    if (!proc_stat(pid, &state, &ticks))
        return true; /* without /proc, kill() is all there is to tell */
    return state != 'Z' && (start_ticks == 0 || ticks == 0 || ticks == start_ticks);
}

static bool process_running(uint64_t pid)
{
    return process_running_since(pid, 0);
}

/* A member lives while its process runs: the pid it registered, started when it said (a
 * pid the system gave again to a later process is not the member). Not an flock of its
 * own, as the root's: a descriptor held by the member would be one its program sees
 * (CPython's test_subprocess lists a child's descriptors), one that daemon code closes
 * (os.closerange) and one that takes the number its program's next open would get. A
 * member that ends, is killed or crashes stops running; one that execs without ending
 * its measurement (only C code can: os.exec* ends it first) counts as running until its
 * new program ends, and is waited for as any member that still runs. */
bool sp_process_member_alive(const sp_member *m)
{
    return process_running_since(m->pid, m->pid_start);
}

/* The state letter of /proc/<pid>/task/<tid>/stat (or of `path`'s stat line): '\0' when it
 * cannot be read. */
static char stat_state(const char *path)
{
    char stat[256];
    FILE *f = fopen(path, "re");
    if (!f)
        return '\0';
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    /* After the command name in parentheses, which may itself hold ") ". */
    const char *close_paren = strrchr(stat, ')');
    return close_paren && close_paren[1] == ' ' ? close_paren[2] : '\0';
}

/* Whether one of pid's threads, or of its descendants' (to `depth` generations, at most
 * `*budget` processes), runs or waits for a CPU (R) or for a disk (D). A thread blocked
 * in read, accept, poll, sleep or a lock is S; a stopped one T. */
static bool tree_working(uint64_t pid, int depth, int *budget)
{
    if (*budget <= 0)
        return false;
    --*budget;
    char path[128];
    snprintf(path, sizeof path, "/proc/%llu/task", (unsigned long long)pid);
    DIR *tasks = opendir(path);
    if (!tasks)
        return false; /* it has ended */
    bool working = false;
    struct dirent *e;
    while (!working && (e = readdir(tasks)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char file[160];
        snprintf(file, sizeof file, "/proc/%llu/task/%.20s/stat", (unsigned long long)pid,
                 e->d_name);
        char state = stat_state(file);
        working = state == 'R' || state == 'D';
        if (working || depth <= 0)
            continue;
        snprintf(file, sizeof file, "/proc/%llu/task/%.20s/children", (unsigned long long)pid,
                 e->d_name);
        FILE *f = fopen(file, "re");
        if (!f)
            continue;
        unsigned long long child;
        while (!working && fscanf(f, "%llu", &child) == 1)
            working = tree_working(child, depth - 1, budget);
        fclose(f);
    }
    closedir(tasks);
    return working;
}

bool sp_process_working(uint64_t pid)
{
    /* Without /proc nothing can be told: every child counts as working (then only
     * SCOREP_CHILDREN_TIMEOUT ends the wait, as before). A pid not known yet: a child
     * being started. */
    static const char self[] = "/proc/self/stat";
    if (pid == 0 || stat_state(self) == '\0')
        return true;
    int budget = 64;
    return tree_working(pid, 3, &budget);
}

/* How long a reserved child may take to join (an interpreter starting under load); one
 * that has not joined by then is not measured (python -I, -S, a failed exec). */
#define JOIN_GRACE_SECONDS 10.0

/* A number reserved for a child that has not joined: it counts as running (the root waits
 * for it) while its process runs and it is young enough to join still. */
static bool read_reservation(uint32_t number, sp_member *m, uint32_t *root)
{
    if (!read_member_file(number, "reserved", m, root))
        return false;
    m->reserved = true;
    /* The child's pid comes in a file of its own: known only once it was started. */
    char path[4400];
    sp_process_member_path(number, "pid", path, sizeof path);
    FILE *f = fopen(path, "re");
    if (f) {
        unsigned long long pid;
        if (fscanf(f, "%llu", &pid) == 1)
            m->pid = pid;
        fclose(f);
    }
    uint64_t now = realtime_ns();
    double age = now > m->started_ns ? (double)(now - m->started_ns) * 1e-9 : 0.0;
    m->alive = age < JOIN_GRACE_SECONDS && (m->pid == 0 || process_running(m->pid));
    return true;
}

static int by_number(const void *a, const void *b)
{
    uint32_t x = ((const sp_member *)a)->number, y = ((const sp_member *)b)->number;
    return x < y ? -1 : x > y;
}

sp_member *sp_process_scan_members(uint32_t *count)
{
    *count = 0;
    DIR *d = opendir(sp_proc.registry);
    if (!d)
        return NULL;
    size_t capacity = 16;
    sp_member *list = malloc(capacity * sizeof *list);
    struct dirent *e;
    while (list && (e = readdir(d)) != NULL) {
        char *end;
        unsigned long number = strtoul(e->d_name, &end, 10);
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end)
            continue;
        sp_member m;
        uint32_t root = 0;
        bool known = read_member_file((uint32_t)number, "info", &m, &root) ||
                     read_reservation((uint32_t)number, &m, &root);
        if (!known || root != sp_proc.root)
            continue;
        if (!m.reserved) {
            char path[4400];
            sp_process_member_path(m.number, "arrived", path, sizeof path);
            m.arrived = exists(path);
            m.alive = sp_process_member_alive(&m);
        }
        if (*count == capacity) {
            capacity *= 2;
            sp_member *more = realloc(list, capacity * sizeof *list);
            if (!more)
                break;
            list = more;
        }
        list[(*count)++] = m;
    }
    closedir(d);
    if (list)
        qsort(list, *count, sizeof *list, by_number);
    return list;
}

/* ---- joining ------------------------------------------------------------------------------ */

static void prepare_fork(void);
static void in_forked_child(void);

static void register_fork_handlers_once(void)
{
    if (pthread_atfork(prepare_fork, NULL, in_forked_child) != 0)
        return; /* then forked children are not followed */
}

static void register_fork_handlers(void)
{
    /* pthread_atfork handlers cannot be removed: registered once per process. */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    (void)pthread_once(&once, register_fork_handlers_once);
}

static void set_registry(const char *dir)
{
    snprintf(sp_proc.dir, sizeof sp_proc.dir, "%s", dir);
    snprintf(sp_proc.registry, sizeof sp_proc.registry, "%s/.scorep-processes", dir);
}

/* The root's number and the first number of its children: its MPI rank and the number of
 * ranks, else 0 and 1. False while the group it writes with is not formed yet (an MPI
 * program before MPI_Init: its experiment directory is not agreed on). */
static bool root_identity(uint32_t *number, uint32_t *base)
{
    uint32_t rank, size;
    if (sp_measurement_group(&rank, &size)) {
        *number = rank;
        *base = size;
        return true;
    }
    *number = 0;
    *base = 1;
    return !sp_measurement_config()->mpi;
}

/* The root's files: its lock (held while it lives) in the registry. */
static int ensure_root_ready(void)
{
    if (!sp_proc.joined || sp_proc.member)
        return -1;
    if (sp_proc.root_ready)
        return 0;
    const char *dir = sp_measurement_experiment_dir();
    uint32_t number, base;
    if (!dir || !root_identity(&number, &base))
        return -1;
    set_registry(dir);
    sp_proc.root = sp_proc.number = number;
    sp_proc.base = base;
    if (mkdir(sp_proc.registry, 0777) != 0 && errno != EEXIST)
        return -1;
    char path[4400], name[64];
    snprintf(name, sizeof name, "root-%u", number);
    path_in_registry(name, path, sizeof path);
    sp_proc.lock_fd = hold_lock(path);
    if (sp_proc.lock_fd < 0)
        return -1;
    sp_proc.root_ready = true;
    return 0;
}

/* What joining as root and as member begin with: a running measurement, forks followed,
 * and no state left of an earlier group. */
SP_MUST_CHECK static int start_joining(char *err, size_t errlen)
{
    if (!sp_measurement_running())
        return sp_error(err, errlen, "no measurement is running");
    register_fork_handlers();
    free(sp_proc.outcomes);
    memset(&sp_proc, 0, sizeof sp_proc);
    sp_proc.lock_fd = -1;
    return 0;
}

int sp_process_root(double timeout, char *err, size_t errlen)
{
    if (start_joining(err, errlen) != 0)
        return -1;
    sp_proc.joined = true;
    sp_proc.timeout = timeout;
    sp_proc.pid = (uint64_t)getpid();
    sp_proc.ipc = (sp_ipc){.ops = &sp_process_ipc_ops, .ctx = NULL, .rank = 0, .size = 1};
    sp_proc.info = (sp_process_info){.member = false, .parent = SP_NO_PARENT,
                                     .pid = sp_proc.pid, .timeout = timeout};
    /* Without MPI the directory is known: ready now, so that any child finds the root
     * alive, however it was started. With MPI: once the ranks agreed (first child). */
    (void)ensure_root_ready();
    sp_processes_joined(&sp_proc.ipc, &sp_proc.info);
    return 0;
}

/* The next number (counted in the registry file itself), under the registry lock `fd`;
 * SP_PROCESS_NONE when the file cannot be written. */
static uint32_t next_number(int fd, uint32_t base)
{
    char text[32] = "";
    ssize_t got = pread(fd, text, sizeof text - 1, 0);
    text[got > 0 ? got : 0] = '\0';
    unsigned long next = strtoul(text, NULL, 10);
    uint32_t number = next >= base ? (uint32_t)next : base;
    int length = snprintf(text, sizeof text, "%u\n", number + 1);
    if (pwrite(fd, text, (size_t)length, 0) != length || ftruncate(fd, length) != 0)
        return SP_PROCESS_NONE;
    return number;
}

static void write_small_file(const char *path, const char *text)
{
    /* Best effort: a reader takes a missing file for "not yet". */
    if (sp_file_write_atomic(path, text, strlen(text), NULL, 0) != 0)
        return;
}

uint32_t sp_process_reserve(void)
{
    sp_process_lineage lineage;
    if (!sp_process_lineage_for_child(&lineage))
        return SP_PROCESS_NONE;
    int fd = sp_process_lock_registry();
    if (fd < 0)
        return SP_PROCESS_NONE;
    uint32_t number = next_number(fd, lineage.base);
    char path[4400], text[200];
    if (number != SP_PROCESS_NONE) {
        sp_process_member_path(number, NULL, path, sizeof path);
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            number = SP_PROCESS_NONE;
    }
    if (number != SP_PROCESS_NONE) {
        sp_process_member_path(number, "reserved", path, sizeof path);
        snprintf(text, sizeof text, "parent %u\nroot %u\nparent_pid %llu\nstarted %llu\n",
                 lineage.parent, lineage.root, (unsigned long long)lineage.parent_pid,
                 (unsigned long long)realtime_ns());
        write_small_file(path, text);
    }
    sp_process_unlock_registry(fd);
    return number;
}

void sp_process_reserved_pid(uint32_t number, uint64_t pid)
{
    if (number == SP_PROCESS_NONE || !sp_proc.registry[0])
        return;
    char path[4400], text[32];
    sp_process_member_path(number, "pid", path, sizeof path);
    snprintf(text, sizeof text, "%llu\n", (unsigned long long)pid);
    write_small_file(path, text);
}

void sp_process_unreserve(uint32_t number)
{
    if (number == SP_PROCESS_NONE || !sp_proc.registry[0])
        return;
    char path[4400];
    sp_process_member_path(number, "info", path, sizeof path);
    if (access(path, F_OK) == 0)
        return; /* the child joined after all */
    const char *files[] = {"reserved", "pid", "named", NULL};
    for (int i = 0; files[i]; i++) {
        sp_process_member_path(number, files[i], path, sizeof path);
        unlink(path);
    }
    sp_process_member_path(number, NULL, path, sizeof path);
    rmdir(path);
}

int sp_process_member(const sp_process_lineage *lineage, const char *method, double timeout,
                      uint32_t reserved, char *err, size_t errlen)
{
    if (start_joining(err, errlen) != 0)
        return -1;
    set_registry(lineage->dir);
    sp_proc.root = lineage->root;
    sp_proc.parent = lineage->parent;
    sp_proc.base = lineage->base;
    sp_proc.parent_pid = lineage->parent_pid;
    sp_proc.pid = (uint64_t)getpid();
    sp_proc.timeout = timeout;
    snprintf(sp_proc.method, sizeof sp_proc.method, "%s", method);
    sp_proc.started_ns = realtime_ns();
    sp_proc.pid_start = own_start_ticks();
    if (mkdir(sp_proc.registry, 0777) != 0 && errno != EEXIST)
        return sp_error(err, errlen, "cannot join the measurement in %s: %s", lineage->dir,
                        strerror(errno));
    int fd = sp_process_lock_registry();
    if (fd < 0)
        return sp_error(err, errlen, "cannot join the measurement in %s: %s", lineage->dir,
                        strerror(errno));
    uint32_t number = reserved != SP_PROCESS_NONE ? reserved : next_number(fd, lineage->base);
    int status = number == SP_PROCESS_NONE ? -1 : 0;
    char path[4400];
    sp_proc.number = number;
    sp_process_member_path(number, NULL, path, sizeof path);
    if (status == 0 && mkdir(path, 0777) != 0 && errno != EEXIST)
        status = -1;
    int error = errno;
    if (status == 0)
        write_info();
    sp_process_unlock_registry(fd);
    if (status != 0)
        return sp_error(err, errlen, "cannot join the measurement in %s: %s", lineage->dir,
                        strerror(error));
    sp_proc.joined = sp_proc.member = true;
    sp_proc.ipc = (sp_ipc){.ops = &sp_process_ipc_ops, .ctx = NULL, .rank = 1, .size = 2};
    sp_proc.info = (sp_process_info){.member = true, .number = number,
                                     .parent = lineage->parent, .pid = sp_proc.pid,
                                     .parent_pid = lineage->parent_pid, .timeout = timeout};
    snprintf(sp_proc.info.method, sizeof sp_proc.info.method, "%s", method);
    char part_dir[4400];
    sp_process_member_path(number, NULL, part_dir, sizeof part_dir);
    if (snprintf(sp_proc.info.part_dir, sizeof sp_proc.info.part_dir, "%s", part_dir) >=
            (int)sizeof sp_proc.info.part_dir ||
        snprintf(sp_proc.info.alone_dir, sizeof sp_proc.info.alone_dir, "%s/process-%u",
                 lineage->dir, number) >= (int)sizeof sp_proc.info.alone_dir)
        return sp_error(err, errlen, "the experiment directory's path is too long");
    sp_processes_joined(&sp_proc.ipc, &sp_proc.info);
    return 0;
}

bool sp_process_lineage_for_child(sp_process_lineage *out)
{
    if (!sp_proc.joined || !sp_measurement_running())
        return false;
    if (!sp_proc.member && ensure_root_ready() != 0)
        return false;
    memset(out, 0, sizeof *out);
    snprintf(out->dir, sizeof out->dir, "%s", sp_proc.dir);
    out->root = sp_proc.root;
    out->parent = sp_proc.number;
    out->base = sp_proc.base;
    out->parent_pid = (uint64_t)getpid();
    return true;
}

void sp_process_set_name(const char *name)
{
    if (!sp_proc.joined || !sp_proc.member || !name)
        return;
    snprintf(sp_proc.info.name, sizeof sp_proc.info.name, "%s", name);
    /* One line in the info file: no line breaks in it. */
    for (char *c = sp_proc.info.name; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    sp_processes_set_name(sp_proc.info.name);
    write_info();
}

/* ---- fork ------------------------------------------------------------------------------- */

/* In the parent, just before fork (any fork: os.fork, multiprocessing, C libraries): what
 * the child will inherit, while the core can still answer. */
static void prepare_fork(void)
{
    fork_lineage_valid = sp_process_lineage_for_child(&fork_lineage);
}

/* In the child of a fork: the parent's lock is not the child's (closing this descriptor
 * leaves the parent's lock held), and the child is nobody in the group until it joins as
 * a member (the Python side does, for forks made from Python). */
static void in_forked_child(void)
{
    if (sp_proc.lock_fd >= 0)
        close(sp_proc.lock_fd);
    sp_proc.lock_fd = -1;
    sp_proc.joined = sp_proc.member = sp_proc.root_ready = false;
    /* Copies of the parent's lists: freeing them would be harmless, but they are not ours
     * to keep either. */
    sp_proc.members = NULL;
    sp_proc.member_count = 0;
    sp_proc.outcomes = NULL;
    sp_proc.outcome_count = 0;
}

bool sp_process_forked_lineage(sp_process_lineage *out)
{
    if (!fork_lineage_valid)
        return false;
    *out = fork_lineage;
    return true;
}

void sp_process_forget(void)
{
    in_forked_child();
    fork_lineage_valid = false;
}

/* ---- the end ---------------------------------------------------------------------------- */

static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char child[4600];
            snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            struct stat st;
            if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
                remove_tree(child);
            else
                unlink(child);
        }
        closedir(d);
    }
    rmdir(path);
}

/* Bytes of trace records a member had flushed into its directory (its spill files). */
static uint64_t spilled_bytes(uint32_t number)
{
    char path[4400];
    sp_process_member_path(number, NULL, path, sizeof path);
    DIR *d = opendir(path);
    uint64_t total = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, ".scorep-spill-", 14) != 0)
            continue;
        char file[4600];
        struct stat st;
        if (snprintf(file, sizeof file, "%s/%s", path, e->d_name) < (int)sizeof file &&
            stat(file, &st) == 0)
            total += (uint64_t)st.st_size;
    }
    closedir(d);
    return total;
}

void sp_process_add_outcome(const sp_member *m, sp_process_fate fate)
{
    sp_process_outcome *more =
        realloc(sp_proc.outcomes, (sp_proc.outcome_count + 1) * sizeof *more);
    if (!more)
        return;
    sp_proc.outcomes = more;
    sp_process_outcome *o = &more[sp_proc.outcome_count++];
    memset(o, 0, sizeof *o);
    o->number = m->number;
    o->parent = m->parent;
    o->pid = m->pid;
    o->fate = fate;
    snprintf(o->method, sizeof o->method, "%s", m->method);
    snprintf(o->name, sizeof o->name, "%s", m->name);
    uint64_t now_ns = realtime_ns();
    o->seconds = m->started_ns && now_ns > m->started_ns ? (double)(now_ns - m->started_ns) * 1e-9
                                                         : 0.0;
    if (fate == SP_PROCESS_LOST)
        o->lost_bytes = spilled_bytes(m->number);
    o->idle = fate == SP_PROCESS_LATE && !m->working;
}

/* The last process of the experiment's groups (MPI: each rank is a root; late members)
 * removes the registry: when no member directory is left and no root lives. */
static void remove_registry_if_unused(void)
{
    int fd = sp_process_lock_registry();
    if (fd < 0)
        return;
    bool used = false;
    DIR *d = opendir(sp_proc.registry);
    struct dirent *e;
    while (d && !used && (e = readdir(d)) != NULL) {
        if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
            used = true;
        else if (strncmp(e->d_name, "root-", 5) == 0 && !strchr(e->d_name, '.')) {
            char path[4600];
            snprintf(path, sizeof path, "%s/%s", sp_proc.registry, e->d_name);
            used = locked_by_someone(path);
        }
    }
    if (d)
        closedir(d);
    if (!used)
        remove_tree(sp_proc.registry); /* the registry file goes, and with it the lock */
    sp_process_unlock_registry(fd);
}

uint32_t sp_process_finished(const sp_process_outcome **list)
{
    *list = sp_proc.outcomes;
    if (!sp_proc.joined)
        return sp_proc.outcome_count;
    if (sp_proc.member) {
        /* A member that wrote alone cleans up after itself (and the registry when it was
         * the last); one that handed its part over leaves its files to the root. */
        if (sp_proc.alone) {
            char path[4400];
            sp_process_member_path(sp_proc.number, NULL, path, sizeof path);
            remove_tree(path);
            remove_registry_if_unused();
        }
    } else if (sp_proc.root_ready) {
        sp_process_record_gathered();
        *list = sp_proc.outcomes;
        /* Numbers reserved for children that never joined (not Python after all). */
        uint32_t count = 0;
        sp_member *all = sp_process_scan_members(&count);
        for (uint32_t i = 0; all && i < count; i++)
            if (all[i].reserved && !all[i].alive)
                sp_process_unreserve(all[i].number);
        free(all);
        bool late = false;
        for (uint32_t i = 0; i < sp_proc.outcome_count; i++) {
            if (sp_proc.outcomes[i].fate == SP_PROCESS_LATE) {
                late = true;
                continue;
            }
            char path[4400];
            sp_process_member_path(sp_proc.outcomes[i].number, NULL, path, sizeof path);
            remove_tree(path);
        }
        if (!late) {
            char path[4400], name[64];
            snprintf(name, sizeof name, "root-%u.closed", sp_proc.root);
            path_in_registry(name, path, sizeof path);
            unlink(path);
            snprintf(name, sizeof name, "root-%u", sp_proc.root);
            path_in_registry(name, path, sizeof path);
            unlink(path);
        }
        remove_registry_if_unused();
    }
    if (sp_proc.lock_fd >= 0)
        close(sp_proc.lock_fd);
    sp_proc.lock_fd = -1;
    free(sp_proc.members);
    sp_proc.members = NULL;
    sp_proc.member_count = 0;
    sp_proc.joined = sp_proc.member = sp_proc.root_ready = false;
    return sp_proc.outcome_count;
}
