/* A minimal unit-test harness for the C core: CHECK records a failure and goes on,
 * CTEST_MAIN runs the listed tests and exits non-zero when any check failed. */
#ifndef SCOREP_CTEST_H
#define SCOREP_CTEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Failed checks so far: one count for the test and the shared helpers (ctest_support.c)
 * linked into it; CTEST_MAIN defines it. */
extern int ctest_failures;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
            ctest_failures++;                                                          \
        }                                                                              \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                             \
    do {                                                                               \
        uint64_t ctest_a = (uint64_t)(a), ctest_b = (uint64_t)(b);                     \
        if (ctest_a != ctest_b) {                                                      \
            fprintf(stderr, "%s:%d: %s == %s failed: %" PRIu64 " != %" PRIu64 "\n",    \
                    __FILE__, __LINE__, #a, #b, ctest_a, ctest_b);                     \
            ctest_failures++;                                                          \
        }                                                                              \
    } while (0)

#define CHECK_STR(a, b)                                                                \
    do {                                                                               \
        const char *ctest_a = (a), *ctest_b = (b);                                     \
        if (!ctest_a || !ctest_b || strcmp(ctest_a, ctest_b) != 0) {                   \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__,    \
                    __LINE__, #a, #b, ctest_a ? ctest_a : "(null)",                    \
                    ctest_b ? ctest_b : "(null)");                                     \
            ctest_failures++;                                                          \
        }                                                                              \
    } while (0)

typedef void (*ctest_fn)(void);

#define CTEST_MAIN(...)                                                                \
    int ctest_failures;                                                                \
    int main(void)                                                                     \
    {                                                                                  \
        ctest_fn tests[] = {__VA_ARGS__};                                              \
        for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)                    \
            tests[i]();                                                                \
        if (ctest_failures) {                                                          \
            fprintf(stderr, "%s: %d check(s) failed\n", __FILE__, ctest_failures);     \
            return 1;                                                                  \
        }                                                                              \
        printf("%s: all %zu tests passed\n", __FILE__, sizeof tests / sizeof tests[0]); \
        return 0;                                                                      \
    }

#endif
