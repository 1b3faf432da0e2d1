#include "core/paths.h"

#include <string.h>

bool sp_path_absolute(const char *cwd, const char *path, char *out, size_t out_len)
{
    if (out_len == 0)
        return false;
    if (path[0] == '<' || path[0] == '\0') {
        size_t n = strlen(path);
        if (n + 1 > out_len)
            return false;
        memcpy(out, path, n + 1);
        return true;
    }
    /* Segments are appended to `out` one by one; ".." drops the last one. */
    size_t len = 0;
    out[len++] = '/';
    for (int part = path[0] == '/' ? 1 : 0; part < 2; part++) {
        const char *p = part == 0 ? cwd : path;
        while (*p) {
            while (*p == '/')
                p++;
            const char *seg = p;
            while (*p && *p != '/')
                p++;
            size_t seg_len = (size_t)(p - seg);
            if (seg_len == 0 || (seg_len == 1 && seg[0] == '.'))
                continue;
            if (seg_len == 2 && seg[0] == '.' && seg[1] == '.') {
                while (len > 1 && out[len - 1] != '/')
                    len--;
                if (len > 1)
                    len--; /* the slash before the dropped segment */
                continue;
            }
            if (len > 1) {
                if (len + 1 >= out_len)
                    return false;
                out[len++] = '/';
            }
            if (len + seg_len >= out_len)
                return false;
            memcpy(out + len, seg, seg_len);
            len += seg_len;
        }
    }
    out[len] = '\0';
    return true;
}

bool sp_path_is_within(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}
