/* The experiment directory: made when missing, and the one policy for an existing one
 * (also used by the Python side through the bindings): an empty directory is reused, a
 * non-empty one is moved aside (renamed with its modification time), never deleted. */
#ifndef SCOREP_CORE_EXPERIMENT_DIR_H
#define SCOREP_CORE_EXPERIMENT_DIR_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

/* mkdir -p. */
SP_MUST_CHECK int sp_make_directories(const char *path, char *err, size_t errlen);

/* Renames an existing file or directory `path` to `path-YYYYmmdd_HHMMSS` (its modification
 * time; `-2`, `-3`, ... when taken). Writes the new name into `aside` when given.
 * Returns 0 (also when `path` does not exist: aside is then "") or -1. */
SP_MUST_CHECK int sp_move_aside(const char *path, char *aside, size_t aside_len, char *err,
                                size_t errlen);

/* Makes `path` an empty experiment directory: an existing non-empty one is moved aside when
 * `overwrite` (SCOREP_OVERWRITE_EXPERIMENT_DIRECTORY), else it is an error. */
SP_MUST_CHECK int sp_experiment_dir_prepare(const char *path, bool overwrite, char *err,
                                            size_t errlen);

#endif
