#include "core/clock.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

sp_timer_kind sp_clock_timer = SP_TIMER_CLOCK_GETTIME;

void sp_clock_take_anchor(sp_clock_anchor *anchor)
{
    if (sp_clock_timer == SP_TIMER_CLOCK_GETTIME) {
        /* The ticks are CLOCK_MONOTONIC: one reading is both, exactly, so that an event
         * stamped with the anchor's ticks lies at the anchor's time. */
        anchor->ticks = anchor->monotonic_ns = sp_clock_monotonic_ns();
    } else {
        /* The tick counter read between two monotonic reads, paired with their midpoint,
         * which halves the error a preemption between the reads would cause. */
        uint64_t before = sp_clock_monotonic_ns();
        anchor->ticks = sp_clock_now();
        uint64_t after = sp_clock_monotonic_ns();
        anchor->monotonic_ns = before + (after - before) / 2;
    }
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    anchor->realtime_ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

uint64_t sp_clock_ticks_per_second(const sp_clock_anchor *start, const sp_clock_anchor *end)
{
    if (sp_clock_timer == SP_TIMER_CLOCK_GETTIME)
        return 1000000000u;
    uint64_t ns = end->monotonic_ns - start->monotonic_ns;
    uint64_t ticks = end->ticks - start->ticks;
    if (ns == 0 || ticks == 0)
        return 1000000000u;
    return (uint64_t)((double)ticks * 1e9 / (double)ns + 0.5);
}

static bool file_has_word(const char *path, const char *word)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[8192];
    bool found = false;
    size_t wl = strlen(word);
    while (!found && fgets(line, sizeof line, f)) {
        for (char *p = strstr(line, word); p; p = strstr(p + 1, word)) {
            bool start_ok = p == line || p[-1] == ' ' || p[-1] == '\t';
            char end = p[wl];
            if (start_ok && (end == ' ' || end == '\n' || end == '\0' || end == '\t')) {
                found = true;
                break;
            }
        }
    }
    fclose(f);
    return found;
}

bool sp_clock_tsc_invariant(void)
{
#if SP_HAVE_TSC
    return file_has_word("/proc/cpuinfo", "constant_tsc") &&
           file_has_word("/proc/cpuinfo", "nonstop_tsc");
#else
    return false;
#endif
}

bool sp_clock_tsc_usable(char *why, size_t why_len)
{
#if SP_HAVE_TSC
    if (!sp_clock_tsc_invariant()) {
        snprintf(why, why_len, "the CPU has no invariant TSC (constant_tsc, nonstop_tsc)");
        return false;
    }
    if (!file_has_word("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                       "tsc")) {
        snprintf(why, why_len, "the kernel does not trust the TSC as its clocksource");
        return false;
    }
    return true;
#else
    snprintf(why, why_len, "this CPU architecture has no TSC");
    return false;
#endif
}

/* ---- are the CPUs' TSCs synchronized? ---------------------------------------------------- */

#if SP_HAVE_TSC
/* A TSC read that is not moved before the loads preceding it. */
static inline uint64_t ordered_tsc(void)
{
    unsigned aux;
    return __rdtscp(&aux);
}

typedef struct {
    int cpu;                 /* where this side runs */
    _Atomic uint64_t *last;  /* the TSC value handed over */
    _Atomic int *turn;       /* whose turn it is: 0 the first CPU's side, 1 the other */
    _Atomic bool *stop;
    int side;
    uint64_t deadline_ns;
    uint64_t hand_overs;
    bool went_back;
} tsc_side;

static void *tsc_ping_pong(void *arg)
{
    tsc_side *me = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(me->cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
        atomic_store(me->stop, true);
        return NULL;
    }
    unsigned spins = 0;
    while (!atomic_load(me->stop)) {
        if (atomic_load_explicit(me->turn, memory_order_acquire) != me->side) {
            if (++spins % 1024 == 0) {
                if (sp_clock_monotonic_ns() > me->deadline_ns)
                    atomic_store(me->stop, true);
                sched_yield(); /* the other side may wait for a CPU (a busy machine) */
            }
            continue;
        }
        uint64_t seen = atomic_load_explicit(me->last, memory_order_relaxed);
        uint64_t now = ordered_tsc();
        if (now < seen) {
            me->went_back = true;
            atomic_store(me->stop, true);
            break;
        }
        atomic_store_explicit(me->last, now, memory_order_relaxed);
        me->hand_overs++;
        atomic_store_explicit(me->turn, 1 - me->side, memory_order_release);
        if (me->hand_overs >= 20000)
            atomic_store(me->stop, true);
    }
    return NULL;
}
#endif

bool sp_clock_tsc_synchronized(unsigned budget_ms, uint64_t *hand_overs_done,
                               uint64_t *resolution_ns, char *why, size_t why_len)
{
    *hand_overs_done = 0;
    *resolution_ns = 0;
#if SP_HAVE_TSC
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        snprintf(why, why_len, "the CPUs this process may run on are not known");
        return false;
    }
    int cpus[CPU_SETSIZE], ncpus = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed))
            cpus[ncpus++] = c;
    for (int k = 1; k < ncpus; k++) {
        _Atomic uint64_t last = 0;
        _Atomic int turn = 0;
        _Atomic bool stop = false;
        uint64_t share = (uint64_t)budget_ms * 1000000u / (uint64_t)(ncpus - 1);
        uint64_t began = sp_clock_monotonic_ns();
        tsc_side sides[2] = {
            {cpus[0], &last, &turn, &stop, 0, began + share, 0, false},
            {cpus[k], &last, &turn, &stop, 1, began + share, 0, false},
        };
        pthread_t threads[2];
        int made = 0;
        for (; made < 2; made++)
            if (pthread_create(&threads[made], NULL, tsc_ping_pong, &sides[made]) != 0)
                break;
        if (made < 2)
            atomic_store(&stop, true);
        for (int i = 0; i < made; i++)
            pthread_join(threads[i], NULL);
        uint64_t hand_overs = sides[0].hand_overs + sides[1].hand_overs;
        *hand_overs_done += hand_overs;
        if (hand_overs) {
            uint64_t each = (sp_clock_monotonic_ns() - began) / hand_overs;
            if (each > *resolution_ns)
                *resolution_ns = each;
        }
        if (sides[0].went_back || sides[1].went_back) {
            snprintf(why, why_len, "the TSC of CPU %d is behind that of CPU %d", cpus[k],
                     cpus[0]);
            return false;
        }
        if (made < 2 || !hand_overs) {
            snprintf(why, why_len, "the TSCs of CPUs %d and %d could not be compared", cpus[0],
                     cpus[k]);
            return false;
        }
    }
    return true;
#else
    (void)budget_ms;
    snprintf(why, why_len, "this CPU architecture has no TSC");
    return false;
#endif
}
