/* Score-P's perf metric source (SCOREP_METRIC_PERF, ..._PER_PROCESS): perf_event_open
 * counters of the calling thread, one group per location read with one read() at every
 * enter and leave. Names as Score-P's scorep_metric_perf.c takes them (perf list's names:
 * cycles, instructions, page-faults, task-clock, L1-dcache-load-misses, r<hex> ...), values
 * counted in user mode (exclude_kernel, as Score-P). A counter this machine cannot count
 * (hardware counters in a VM, perf_event_paranoid) is one line on stderr and not recorded;
 * the run goes on. */
#include "core/measurement.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct {
    const char *name;
    uint32_t type;
    uint64_t config;
} perf_name;

static const perf_name names[] = {
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
    {"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"idle-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS},
    {"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS},
};

/* Each metric's perf type and config, by its definition's code. */
static perf_name chosen[SP_MAX_METRICS];
static uint32_t chosen_count;

/* perf list's cache events: <cache>-<op><result>, e.g. L1-dcache-load-misses. */
static bool cache_event(const char *name, perf_name *out)
{
    static const char *const caches[] = {"L1-dcache-", "L1-icache-", "LLC-", "dTLB-",
                                         "iTLB-", "branch-", "node-"};
    static const char *const ops[] = {"load", "store", "prefetch"};
    static const char *const results[] = {"s", "-misses"};
    for (unsigned c = 0; c < sizeof caches / sizeof caches[0]; c++)
        for (unsigned o = 0; o < 3; o++)
            for (unsigned r = 0; r < 2; r++) {
                char full[64];
                snprintf(full, sizeof full, "%s%s%s", caches[c], ops[o], results[r]);
                if (strcmp(full, name) == 0) {
                    out->type = PERF_TYPE_HW_CACHE;
                    out->config = c | (o << 8) | ((uint64_t)r << 16);
                    return true;
                }
            }
    return false;
}

static bool lookup(const char *name, perf_name *out)
{
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i].name, name) == 0) {
            *out = names[i];
            return true;
        }
    if (cache_event(name, out))
        return true;
    if (name[0] == 'r' && name[1]) {
        char *end;
        unsigned long long raw = strtoull(name + 1, &end, 16);
        if (!*end) {
            out->type = PERF_TYPE_RAW;
            out->config = raw;
            return true;
        }
    }
    return false;
}

static int open_counter(const perf_name *p, int group)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = p->type;
    attr.config = p->config;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.read_format = PERF_FORMAT_GROUP;
    /* A group leader starts disabled and is enabled once its members are in. A member added
     * to a running group is scheduled in only through its own PMU's context, and a group
     * mixing software PMUs (page-faults with task-clock) lives in the leader's: the member then
     * counts nothing until the thread's next context switch (seen on Linux 6.18, ~1 run in 3
     * lost all of task-clock in a busy function). Enabling the leader schedules the group. */
    attr.disabled = group < 0;
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, group, PERF_FLAG_FD_CLOEXEC);
}

static int paranoid_level(void)
{
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int level = -99;
    if (f) {
        if (fscanf(f, "%d", &level) != 1)
            level = -99;
        fclose(f);
    }
    return level;
}

static int perf_begin(const sp_metric_request *requests, size_t count, char *err, size_t errlen)
{
    chosen_count = 0;
    for (size_t i = 0; i < count; i++) {
        const char *variable = requests[i].per_process ? "SCOREP_METRIC_PERF_PER_PROCESS"
                                                       : "SCOREP_METRIC_PERF";
        perf_name p;
        if (!lookup(requests[i].name, &p))
            return sp_error(err, errlen,
                            "%s: unknown perf event '%s' (perf list names it: cycles, "
                            "instructions, page-faults, task-clock, ...)",
                            variable, requests[i].name);
        int fd = open_counter(&p, -1);
        if (fd < 0) {
            int e = errno;
            const char *why = e == ENOENT || e == EOPNOTSUPP || e == ENODEV
                                  ? "this machine cannot count it (no such counter; "
                                    "virtual machines often have no hardware counters)"
                                  : e == EACCES || e == EPERM
                                        ? "not permitted (see /proc/sys/kernel/perf_event_paranoid)"
                                        : "perf_event_open failed";
            sp_metric_warn("%s: '%s' is not recorded: %s: %s (perf_event_paranoid=%d)", variable,
                           requests[i].name, why, strerror(e), paranoid_level());
            continue;
        }
        close(fd);
        sp_metric_def def = {.type = SP_METRIC_TYPE_OTHER, .mode = SP_METRIC_ACCUMULATED_START,
                             .source = SP_METRIC_SOURCE_PERF,
                             .per_process = requests[i].per_process, .code = chosen_count};
        snprintf(def.name, sizeof def.name, "%s", requests[i].name);
        snprintf(def.unit, sizeof def.unit, "#");
        if (chosen_count >= SP_MAX_METRICS || sp_metric_define(&def, err, errlen) != 0)
            return sp_error(err, errlen, "%s: too many metrics", variable);
        chosen[chosen_count++] = p;
    }
    return 0;
}

/* task-clock and cpu-clock as the program spent them: the counter less the measurement's
 * own reads (in nanoseconds, the counters' unit), reported only ever growing. */
typedef struct {
    uint64_t raw, value, own_seen_ns, debt_ns;
    bool started;
} perf_clock;

typedef struct {
    int fd[2];     /* group leaders: strict, per-process (-1: none) */
    int members[2][SP_MAX_METRICS];
    uint32_t n[2];
    uint64_t buffer[1 + SP_MAX_METRICS];
    perf_clock clock[2][SP_MAX_METRICS];
} perf_state;

static bool is_clock(const perf_name *p)
{
    return p->type == PERF_TYPE_SOFTWARE &&
           (p->config == PERF_COUNT_SW_TASK_CLOCK || p->config == PERF_COUNT_SW_CPU_CLOCK);
}

static uint64_t program_clock(perf_clock *c, uint64_t raw, uint64_t own_ns)
{
    if (!c->started) {
        *c = (perf_clock){.raw = raw, .value = raw, .own_seen_ns = own_ns, .started = true};
        return raw;
    }
    c->debt_ns += own_ns - c->own_seen_ns;
    c->own_seen_ns = own_ns;
    if (raw > c->raw) {
        uint64_t increase = raw - c->raw;
        uint64_t paid = c->debt_ns < increase ? c->debt_ns : increase;
        c->debt_ns -= paid;
        c->value += increase - paid;
        c->raw = raw;
    }
    return c->value;
}

static void *perf_location_open(bool first_location)
{
    perf_state *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    const sp_metric_set *set = sp_measurement_metrics();
    for (int k = 0; k < 2; k++) {
        st->fd[k] = -1;
        if (k == 1 && !first_location)
            continue;
        uint32_t first = set->first[SP_METRIC_SOURCE_PERF][k];
        for (uint32_t i = 0; i < set->n[SP_METRIC_SOURCE_PERF][k]; i++) {
            int fd = open_counter(&chosen[set->defs[first + i].code], st->fd[k]);
            st->members[k][i] = fd;
            if (st->fd[k] < 0)
                st->fd[k] = fd;
            st->n[k]++;
        }
        if (st->fd[k] >= 0)
            ioctl(st->fd[k], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
    }
    return st;
}

static void perf_read(void *state, bool per_process, uint64_t own_ns, uint64_t *values)
{
    perf_state *st = state;
    const sp_metric_set *set = sp_measurement_metrics();
    uint32_t first = set->first[SP_METRIC_SOURCE_PERF][per_process];
    uint32_t n = set->n[SP_METRIC_SOURCE_PERF][per_process];
    /* PERF_FORMAT_GROUP: the number of counters, then their values in group order. */
    if (st && st->fd[per_process] >= 0 &&
        read(st->fd[per_process], st->buffer, (1 + st->n[per_process]) * sizeof(uint64_t)) > 0) {
        for (uint32_t i = 0; i < n; i++) {
            values[i] = i < st->buffer[0] ? st->buffer[1 + i] : 0;
            if (is_clock(&chosen[set->defs[first + i].code]))
                values[i] = program_clock(&st->clock[per_process][i], values[i], own_ns);
        }
        return;
    }
    memset(values, 0, n * sizeof *values);
}

static void perf_location_close(void *state)
{
    perf_state *st = state;
    for (int k = 0; k < 2; k++)
        for (uint32_t i = 0; i < st->n[k]; i++)
            if (st->members[k][i] >= 0)
                close(st->members[k][i]);
    free(st);
}

static const sp_metric_source_ops perf_source = {
    .id = SP_METRIC_SOURCE_PERF,
    .begin = perf_begin,
    .location_open = perf_location_open,
    .read = perf_read,
    .location_close = perf_location_close,
};

__attribute__((constructor)) static void register_perf(void)
{
    (void)sp_metric_source_register(&perf_source);
}
