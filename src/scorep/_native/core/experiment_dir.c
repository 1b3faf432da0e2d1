#include "core/experiment_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

/* Opens `path` and takes the exclusive flock on it: returns the descriptor, SP_NO_LOCK where
 * the file system has no locks (some network file systems) or the directory cannot be
 * opened, or -2 when another running measurement holds it. */
#define HELD_ELSEWHERE (-2)
static int lock_directory(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return SP_NO_LOCK;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return fd;
    int error = errno;
    close(fd);
    return error == EWOULDBLOCK ? HELD_ELSEWHERE : SP_NO_LOCK;
}

static int in_use(const char *path, char *err, size_t errlen)
{
    return sp_error(err, errlen,
                    "experiment directory %s is in use by another running measurement; set "
                    "SCOREP_EXPERIMENT_DIRECTORY to another directory",
                    path);
}

static bool directory_empty(const char *path)
{
    DIR *dir = opendir(path);
    if (!dir)
        return false;
    bool empty = true;
    for (struct dirent *e; empty && (e = readdir(dir));)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(dir);
    return empty;
}

int sp_experiment_dir_prepare(const char *path, bool overwrite, sp_experiment_dir_claim *claim,
                              char *err, size_t errlen)
{
    claim->lock_fd = SP_NO_LOCK;
    claim->moved_to[0] = '\0';
    struct stat st;
    if (lstat(path, &st) == 0) {
        /* A symbolic link to a directory is used as the directory (a non-empty one: the
         * link is moved aside); a dangling one is in the way. */
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            return sp_error(err, errlen, "experiment directory %s exists and is not a directory",
                            path);
        /* A running measurement's directory is neither moved nor written into. */
        int probe = lock_directory(path);
        if (probe == HELD_ELSEWHERE)
            return in_use(path, err, errlen);
        if (probe >= 0)
            close(probe);
        if (!directory_empty(path)) {
            if (!overwrite)
                return sp_error(err, errlen,
                                "experiment directory %s exists and "
                                "SCOREP_OVERWRITE_EXPERIMENT_DIRECTORY is false",
                                path);
            if (sp_move_aside(path, claim->moved_to, sizeof claim->moved_to, err, errlen) != 0)
                return -1;
        }
    }
    char why[512];
    if (sp_make_directories(path, why, sizeof why) != 0)
        return sp_error(err, errlen, "experiment directory: %s", why);
    /* Another run may have made and locked the same new directory in between. */
    claim->lock_fd = lock_directory(path);
    if (claim->lock_fd == HELD_ELSEWHERE) {
        claim->lock_fd = SP_NO_LOCK;
        return in_use(path, err, errlen);
    }
    return 0;
}
