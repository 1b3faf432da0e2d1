#include "core/serial.h"

#include <stdlib.h>
#include <string.h>

void sp_buffer_init(sp_buffer *b)
{
    b->data = NULL;
    b->size = b->capacity = 0;
    b->failed = false;
}

void sp_buffer_free(sp_buffer *b)
{
    free(b->data);
    sp_buffer_init(b);
}

void sp_buffer_put(sp_buffer *b, const void *data, size_t size)
{
    if (b->failed)
        return;
    if (b->size + size > b->capacity) {
        size_t cap = b->capacity ? b->capacity : 4096;
        while (cap < b->size + size)
            cap *= 2;
        unsigned char *bigger = realloc(b->data, cap);
        if (!bigger) {
            b->failed = true;
            return;
        }
        b->data = bigger;
        b->capacity = cap;
    }
    if (size)
        memcpy(b->data + b->size, data, size);
    b->size += size;
}

void sp_buffer_u32(sp_buffer *b, uint32_t v)
{
    sp_buffer_put(b, &v, sizeof v);
}

void sp_buffer_u64(sp_buffer *b, uint64_t v)
{
    sp_buffer_put(b, &v, sizeof v);
}

void sp_buffer_f64(sp_buffer *b, double v)
{
    sp_buffer_put(b, &v, sizeof v);
}

void sp_buffer_str(sp_buffer *b, const char *s)
{
    s = s ? s : "";
    size_t n = strlen(s) + 1;
    sp_buffer_u32(b, (uint32_t)n);
    sp_buffer_put(b, s, n);
}

void sp_reader_init(sp_reader *r, const void *data, size_t size)
{
    r->data = data;
    r->size = size;
    r->pos = 0;
    r->failed = false;
}

static const void *take(sp_reader *r, size_t n)
{
    if (r->failed || r->size - r->pos < n) {
        r->failed = true;
        return NULL;
    }
    const void *p = r->data + r->pos;
    r->pos += n;
    return p;
}

/* The next n bytes into `out`; `out` stays as it is past the end. */
static void take_into(sp_reader *r, void *out, size_t n)
{
    const void *p = take(r, n);
    if (p)
        memcpy(out, p, n);
}

uint32_t sp_reader_u32(sp_reader *r)
{
    uint32_t v = 0;
    take_into(r, &v, sizeof v);
    return v;
}

uint64_t sp_reader_u64(sp_reader *r)
{
    uint64_t v = 0;
    take_into(r, &v, sizeof v);
    return v;
}

double sp_reader_f64(sp_reader *r)
{
    double v = 0;
    take_into(r, &v, sizeof v);
    return v;
}

const char *sp_reader_str(sp_reader *r)
{
    uint32_t n = sp_reader_u32(r);
    const char *s = n ? take(r, n) : NULL;
    if (!s || s[n - 1] != '\0') {
        r->failed = true;
        return "";
    }
    return s;
}
