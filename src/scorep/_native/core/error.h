/* The one error convention of the C code: a fallible function returns 0 on success, or -1
 * after writing one line that explains the failure (no "scorep:" prefix, no newline) into
 * the caller's buffer `err` of `errlen` bytes. SP_MUST_CHECK makes the compiler insist that
 * callers look at the result. */
#ifndef SCOREP_CORE_ERROR_H
#define SCOREP_CORE_ERROR_H

#include <stddef.h>

#define SP_MUST_CHECK __attribute__((warn_unused_result))

/* Formats the line into err and returns -1, so that `return sp_error(err, errlen, ...)`
 * reports and fails in one step. */
int sp_error(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
