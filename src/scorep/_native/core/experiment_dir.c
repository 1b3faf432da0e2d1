#include "core/experiment_dir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int sp_make_directories(const char *path, char *err, size_t errlen)
{
    size_t len = strlen(path);
    char *buffer = malloc(len + 1);
    if (!buffer)
        return sp_error(err, errlen, "out of memory");
    memcpy(buffer, path, len + 1);
    int error = 0;
    for (char *p = buffer + 1; *p && !error; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buffer, 0777) != 0 && errno != EEXIST)
            error = errno;
        *p = '/';
    }
    if (!error && mkdir(buffer, 0777) != 0 && errno != EEXIST)
        error = errno;
    free(buffer);
    if (error)
        return sp_error(err, errlen, "cannot create directory %s: %s", path, strerror(error));
    return 0;
}

int sp_move_aside(const char *path, char *aside, size_t aside_len, char *err, size_t errlen)
{
    if (aside && aside_len)
        aside[0] = '\0';
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    struct tm tm;
    time_t when = st.st_mtime;
    localtime_r(&when, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d_%H%M%S", &tm);
    size_t room = strlen(path) + sizeof stamp + 24;
    char *candidate = malloc(room);
    if (!candidate)
        return sp_error(err, errlen, "out of memory");
    snprintf(candidate, room, "%s-%s", path, stamp);
    for (int k = 2; access(candidate, F_OK) == 0; k++)
        snprintf(candidate, room, "%s-%s-%d", path, stamp, k);
    int status = 0;
    if (rename(path, candidate) != 0)
        status = sp_error(err, errlen, "cannot move %s aside: %s", path, strerror(errno));
    else if (aside && aside_len)
        snprintf(aside, aside_len, "%s", candidate);
    free(candidate);
    return status;
}

int sp_experiment_dir_prepare(const char *path, bool overwrite, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return sp_error(err, errlen, "experiment directory %s exists and is not a directory",
                            path);
        bool empty = rmdir(path) == 0; /* an empty one goes and is made again below */
        if (!empty) {
            if (!overwrite)
                return sp_error(err, errlen,
                                "experiment directory %s exists and "
                                "SCOREP_OVERWRITE_EXPERIMENT_DIRECTORY is false",
                                path);
            if (sp_move_aside(path, NULL, 0, err, errlen) != 0)
                return -1;
        }
    }
    char why[512];
    if (sp_make_directories(path, why, sizeof why) != 0)
        return sp_error(err, errlen, "experiment directory: %s", why);
    return 0;
}
