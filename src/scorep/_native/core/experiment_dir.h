/* The experiment directory: made when missing, and the one policy for an existing one
 * (also used by the Python side through the bindings): an empty directory is reused, a
 * non-empty one is moved aside (renamed with its modification time), never deleted, and a
 * running measurement's one (locked) is left alone. */
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

/* What a run holds of its experiment directory: the exclusive flock (a descriptor, kept
 * open while the measurement runs, closed, never unlocked, by a forked child, which shares
 * it) and where an existing directory went. */
#define SP_NO_LOCK (-1)
typedef struct sp_experiment_dir_claim {
    int lock_fd; /* SP_NO_LOCK: the file system has no locks */
    char moved_to[4096];
} sp_experiment_dir_claim;

/* Makes `path` an empty experiment directory and locks it, the one policy of every run
 * (serial through the bindings, MPI at rank 0): a directory another running measurement
 * holds is an error; an existing non-empty one is moved aside when `overwrite`
 * (SCOREP_OVERWRITE_EXPERIMENT_DIRECTORY), else it is an error; an empty one is used. */
SP_MUST_CHECK int sp_experiment_dir_prepare(const char *path, bool overwrite,
                                            sp_experiment_dir_claim *claim, char *err,
                                            size_t errlen);

#endif
