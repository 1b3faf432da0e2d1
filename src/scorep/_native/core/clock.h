/* The measurement clock: raw ticks on the event path, converted to seconds only when
 * results are written. */
#ifndef SCOREP_CORE_CLOCK_H
#define SCOREP_CORE_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define SP_HAVE_TSC 1
#else
#define SP_HAVE_TSC 0
#endif

typedef enum {
    SP_TIMER_TSC = 0,           /* the CPU's invariant time-stamp counter, ~12 ns a read */
    SP_TIMER_CLOCK_GETTIME = 1, /* CLOCK_MONOTONIC in ns, ~30 ns a read */
} sp_timer_kind;

/* The timer of the running measurement. Global because every event reads it and it is
 * set once, at measurement start, before any event can be recorded. */
extern sp_timer_kind sp_clock_timer;

static inline uint64_t sp_clock_monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline uint64_t sp_clock_now(void)
{
#if SP_HAVE_TSC
    if (sp_clock_timer == SP_TIMER_TSC)
        return __rdtsc();
#endif
    return sp_clock_monotonic_ns();
}

/* A simultaneous reading of the tick counter, CLOCK_MONOTONIC and CLOCK_REALTIME; two of
 * them (measurement start and end) give the tick rate and the wall-clock anchor. */
typedef struct {
    uint64_t ticks;
    uint64_t monotonic_ns;
    uint64_t realtime_ns;
} sp_clock_anchor;

void sp_clock_take_anchor(sp_clock_anchor *anchor);

/* Ticks per second between two anchors (1e9 for clock_gettime). */
uint64_t sp_clock_ticks_per_second(const sp_clock_anchor *start, const sp_clock_anchor *end);

/* Whether the TSC is a correct timer here: x86, constant and nonstop (invariant) TSC, and
 * the kernel itself uses it as clocksource. `why` receives the reason when it is not. */
bool sp_clock_tsc_usable(char *why, size_t why_len);

/* Whether the CPU's TSC is invariant (constant_tsc and nonstop_tsc): it ticks at one rate
 * whatever the CPU's frequency and sleep states. */
bool sp_clock_tsc_invariant(void);

/* Whether the TSCs of the CPUs this process may run on agree (for when the kernel does not
 * use the TSC as its clocksource although it is invariant): for each CPU, TSC reads handed
 * back and forth between a thread on it and one on the first CPU must never go back. At
 * most `budget_ms` milliseconds are spent. `*hand_overs` tells how many hand-overs were
 * checked, `*resolution_ns` the mean time of one on the slowest pair (a smaller skew could
 * go unnoticed); `why` receives the reason when they do not agree. */
bool sp_clock_tsc_synchronized(unsigned budget_ms, uint64_t *hand_overs, uint64_t *resolution_ns,
                               char *why, size_t why_len);

#endif
