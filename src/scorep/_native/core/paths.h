#ifndef SCOREP_CORE_PATHS_H
#define SCOREP_CORE_PATHS_H

#include <stdbool.h>
#include <stddef.h>

/* What os.path.abspath does, without touching the file system: `path` joined to `cwd`
 * when relative, with "." and ".." segments and repeated slashes removed. Names in
 * angle brackets ("<string>", "<frozen os>") are not paths and are copied as they are.
 * Returns false when `out` is too small. */
bool sp_path_absolute(const char *cwd, const char *path, char *out, size_t out_len);

/* Whether `path` is `dir` or lies below it (both absolute and normalized). */
bool sp_path_is_within(const char *path, const char *dir);

#endif
