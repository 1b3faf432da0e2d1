#include "core/clock.h"

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

bool sp_clock_tsc_usable(char *why, size_t why_len)
{
#if SP_HAVE_TSC
    if (!file_has_word("/proc/cpuinfo", "constant_tsc") ||
        !file_has_word("/proc/cpuinfo", "nonstop_tsc")) {
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
