/* Small files the measurement writes and removes: parts, announcements, the child
 * processes' registry and messages. One way to write one so that a reader never sees half
 * of it, one way to take a flat directory of them away. */
#ifndef SCOREP_CORE_FILES_H
#define SCOREP_CORE_FILES_H

#include <stddef.h>

#include "core/error.h"

/* Writes `size` bytes to `path.tmp` and renames it to `path` (a reader sees the old file,
 * no file, or the whole new one). Returns 0, or -1 with the reason in err (err may be NULL
 * for callers that only need to know). The temporary file is gone either way. */
SP_MUST_CHECK int sp_file_write_atomic(const char *path, const void *data, size_t size,
                                       char *err, size_t errlen);

/* Removes every entry of the directory `path` (files, no subdirectories are expected) and
 * then the directory itself; what cannot be removed stays. */
void sp_dir_remove_flat(const char *path);

#endif
