#include "core/files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int write_whole(int fd, const char *p, size_t bytes)
{
    while (bytes) {
        ssize_t n = write(fd, p, bytes);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0 ? ENOSPC : errno;
        p += n;
        bytes -= (size_t)n;
    }
    return 0;
}

int sp_file_write_atomic(const char *path, const void *data, size_t size, char *err,
                         size_t errlen)
{
    char tmp[4400];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp)
        return sp_error(err, errlen, "cannot write %s: %s", path, strerror(ENAMETOOLONG));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        int error = errno;
        return sp_error(err, errlen, "cannot write %s: %s", tmp, strerror(error));
    }
    int error = write_whole(fd, data, size);
    if (close(fd) != 0 && !error)
        error = errno;
    if (!error && rename(tmp, path) != 0)
        error = errno;
    if (!error)
        return 0;
    unlink(tmp);
    return sp_error(err, errlen, "cannot write %s: %s", path, strerror(error));
}

void sp_dir_remove_flat(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *entry;
        while ((entry = readdir(d)) != NULL) {
            if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
                continue;
            char file[4600];
            if ((size_t)snprintf(file, sizeof file, "%s/%s", path, entry->d_name) < sizeof file)
                unlink(file);
        }
        closedir(d);
    }
    rmdir(path);
}
