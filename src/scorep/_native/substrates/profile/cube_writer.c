/* CUBE4 writer; see cube_writer.h for the contract and docs/FORMATS.md section 2 for the
 * format. Layout of the archive, mirroring CubeW as Score-P uses it:
 *
 *   <m>.data   "CUBEX.DATA" + one row per cnode (nlocations values, native byte order)
 *   <m>.index  "CUBEX.INDEX", uint32 1 (native order: tells readers our endianness),
 *              uint16 0, uint8 1 (SPARSE), uint32 n, n x uint32 row positions 0..n-1
 *   anchor.xml metadata, written last like CubeW does
 *   two zero blocks
 *
 * Every member is written as a placeholder header, then its content is streamed, then the
 * header is patched with the real size. That keeps memory flat (rows come from the callback
 * one at a time and go straight to the file) and makes a size mismatch impossible. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* fseeko, ftello */
#endif
#define _FILE_OFFSET_BITS 64 /* data files of big runs pass 2 GiB on 32-bit hosts */

#include "substrates/profile/cube_writer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#if defined(__GNUC__)
#define CW_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CW_PRINTF(fmt, args)
#endif

#define TAR_BLOCK 512

static void set_err(char *err, size_t errlen, const char *fmt, ...) CW_PRINTF(3, 4);

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    /* The message is promised to be one line; names of files or metrics may hold newlines. */
    for (char *p = err; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

/* ---- XML escaping ------------------------------------------------------------------------ */

typedef void (*emit_fn)(void *ctx, const char *bytes, size_t n);

/* Length of the valid UTF-8 sequence at p that is also an allowed XML 1.0 character, or 0.
 * Reads no further than the first byte that breaks the sequence, so the NUL terminator
 * stops it. */
static size_t xml_char_len(const unsigned char *p)
{
    unsigned c = p[0];
    if (c < 0x80)
        return (c >= 0x20 || c == '\t' || c == '\n' || c == '\r') ? 1 : 0;
    if (c >= 0xC2 && c <= 0xDF)
        return (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned lo = c == 0xE0 ? 0xA0 : 0x80; /* no overlong forms */
        unsigned hi = c == 0xED ? 0x9F : 0xBF; /* no UTF-16 surrogates */
        if (p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xEF && p[1] == 0xBF && (p[2] == 0xBE || p[2] == 0xBF))
            return 0; /* U+FFFE and U+FFFF are not XML characters */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned lo = c == 0xF0 ? 0x90 : 0x80;
        unsigned hi = c == 0xF4 ? 0x8F : 0xBF; /* nothing above U+10FFFF */
        if (p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        return 4;
    }
    return 0;
}

static void escape_to(const char *s, emit_fn emit, void *ctx)
{
    const unsigned char *p = (const unsigned char *)s;
    const unsigned char *run = p; /* start of bytes that pass through unchanged */
    while (*p) {
        const char *entity = NULL;
        size_t len = 1;
        switch (*p) {
        case '&': entity = "&amp;"; break;
        case '<': entity = "&lt;"; break;
        case '>': entity = "&gt;"; break;
        case '"': entity = "&quot;"; break;
        case '\'': entity = "&apos;"; break;
        /* Parsers turn raw tab/newline in attribute values into spaces; references survive. */
        case '\t': entity = "&#9;"; break;
        case '\n': entity = "&#10;"; break;
        case '\r': entity = "&#13;"; break;
        default:
            len = xml_char_len(p);
            if (len == 0) {
                entity = "?";
                len = 1;
            }
        }
        if (entity != NULL) {
            if (p > run)
                emit(ctx, (const char *)run, (size_t)(p - run));
            emit(ctx, entity, strlen(entity));
            p += len;
            run = p;
        } else {
            p += len;
        }
    }
    if (p > run)
        emit(ctx, (const char *)run, (size_t)(p - run));
}

typedef struct {
    char *out;
    size_t cap; /* bytes available for text (outlen - 1) */
    size_t len; /* full length, may exceed cap */
} buf_ctx;

static void emit_buf(void *ctx, const char *bytes, size_t n)
{
    buf_ctx *b = ctx;
    if (b->len < b->cap) {
        size_t room = b->cap - b->len;
        memcpy(b->out + b->len, bytes, n < room ? n : room);
    }
    b->len += n;
}

size_t cube_xml_escape(const char *s, char *out, size_t outlen)
{
    buf_ctx b = {out, outlen ? outlen - 1 : 0, 0};
    escape_to(s ? s : "", emit_buf, &b);
    if (outlen)
        out[b.len < b.cap ? b.len : b.cap] = '\0';
    return b.len;
}

/* ---- tar ------------------------------------------------------------------------------- */

/* width - 1 octal digits and a NUL, the ustar convention for numeric fields. */
static void put_octal(unsigned char *field, size_t width, uint64_t value)
{
    field[width - 1] = '\0';
    for (size_t i = width - 1; i-- > 0;) {
        field[i] = (unsigned char)('0' + (value & 7));
        value >>= 3;
    }
}

int cube_tar_header(unsigned char block[TAR_BLOCK], const char *name, uint64_t size,
                    int64_t mtime)
{
    size_t len = name ? strlen(name) : 0;
    if (len == 0 || len >= 100)
        return -1;
    memset(block, 0, TAR_BLOCK);
    memcpy(block, name, len);
    put_octal(block + 100, 8, 0644);
    put_octal(block + 108, 8, 0); /* uid */
    put_octal(block + 116, 8, 0); /* gid */
    if (size <= UINT64_C(077777777777)) {
        put_octal(block + 124, 12, size);
    } else {
        /* Base-256: top bit set in the first byte, big-endian binary in the other 11. */
        block[124] = 0x80;
        for (int i = 11; i >= 1; i--) {
            block[124 + i] = (unsigned char)(size & 0xFF);
            size >>= 8;
        }
    }
    uint64_t t = mtime < 0 ? 0 : (uint64_t)mtime;
    put_octal(block + 136, 12, t > UINT64_C(077777777777) ? UINT64_C(077777777777) : t);
    block[156] = '0'; /* regular file */
    memcpy(block + 257, "ustar", 6); /* magic with its NUL */
    block[263] = '0';
    block[264] = '0';
    put_octal(block + 329, 8, 0); /* devmajor */
    put_octal(block + 337, 8, 0); /* devminor */
    /* The checksum is computed with its own field read as eight spaces. */
    memset(block + 148, ' ', 8);
    unsigned sum = 0;
    for (size_t i = 0; i < TAR_BLOCK; i++)
        sum += block[i];
    put_octal(block + 148, 7, sum); /* six digits, NUL ... */
    block[155] = ' ';               /* ... and a space, as GNU tar and CubeW write it */
    return 0;
}

/* ---- output with sticky error ----------------------------------------------------------- */

typedef struct {
    FILE *f;
    const char *path; /* the final path, for messages */
    char *err;
    size_t errlen;
    int failed;       /* once set, every further write is skipped */
    off_t member;     /* offset of the current member's header */
    int64_t mtime;
} writer;

static void w_fail_errno(writer *w, const char *what)
{
    if (w->failed)
        return;
    int e = errno ? errno : EIO;
    w->failed = 1;
    set_err(w->err, w->errlen, "%s: %s: %s", w->path, what, strerror(e));
}

static void w_bytes(writer *w, const void *p, size_t n)
{
    if (w->failed || n == 0)
        return;
    errno = 0;
    if (fwrite(p, 1, n, w->f) != n)
        w_fail_errno(w, "write failed");
}

static void w_str(writer *w, const char *s) { w_bytes(w, s, strlen(s)); }

static void w_printf(writer *w, const char *fmt, ...) CW_PRINTF(2, 3);

static void w_printf(writer *w, const char *fmt, ...)
{
    if (w->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    errno = 0;
    int rc = vfprintf(w->f, fmt, ap);
    va_end(ap);
    if (rc < 0)
        w_fail_errno(w, "write failed");
}

static void emit_file(void *ctx, const char *bytes, size_t n) { w_bytes(ctx, bytes, n); }

static void w_esc(writer *w, const char *s) { escape_to(s ? s : "", emit_file, w); }

/* <tag>escaped text</tag> on one line */
static void w_elem(writer *w, const char *tag, const char *text)
{
    w_printf(w, "<%s>", tag);
    w_esc(w, text);
    w_printf(w, "</%s>\n", tag);
}

static void w_zeros(writer *w, size_t n)
{
    static const unsigned char zeros[TAR_BLOCK]; /* read-only */
    while (n > 0 && !w->failed) {
        size_t chunk = n < sizeof zeros ? n : sizeof zeros;
        w_bytes(w, zeros, chunk);
        n -= chunk;
    }
}

static void member_begin(writer *w)
{
    if (w->failed)
        return;
    errno = 0;
    w->member = ftello(w->f);
    if (w->member < 0) {
        w_fail_errno(w, "cannot tell the file position");
        return;
    }
    w_zeros(w, TAR_BLOCK); /* placeholder, patched by member_end */
}

static void member_end(writer *w, const char *name)
{
    if (w->failed)
        return;
    errno = 0;
    off_t end = ftello(w->f);
    if (end < 0) {
        w_fail_errno(w, "cannot tell the file position");
        return;
    }
    uint64_t size = (uint64_t)(end - w->member) - TAR_BLOCK;
    size_t pad = (size_t)((TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK);
    unsigned char header[TAR_BLOCK];
    if (cube_tar_header(header, name, size, w->mtime) != 0) {
        w->failed = 1;
        set_err(w->err, w->errlen, "%s: member name '%s' does not fit a tar header", w->path,
                name);
        return;
    }
    w_zeros(w, pad);
    if (w->failed)
        return;
    errno = 0;
    if (fseeko(w->f, w->member, SEEK_SET) != 0) {
        w_fail_errno(w, "cannot seek");
        return;
    }
    w_bytes(w, header, TAR_BLOCK);
    errno = 0;
    if (!w->failed && fseeko(w->f, 0, SEEK_END) != 0)
        w_fail_errno(w, "cannot seek");
}

/* ---- validation ---------------------------------------------------------------------- */

/* `path` (may be NULL) prefixes the messages, as cube_write's messages name the file. */
static int validate_tree(const cube_cnode *cnodes, size_t n, const char *path, char *err,
                         size_t errlen)
{
    const char *pre = path ? path : "", *sep = path ? ": " : "";
    if (n > UINT32_MAX) {
        set_err(err, errlen, "%s%s%zu cnodes are more than 32-bit row numbers allow", pre, sep,
                n);
        return -1;
    }
    if (n > 0 && cnodes == NULL) {
        set_err(err, errlen, "%s%scnode array is NULL", pre, sep);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t parent = cnodes[i].parent;
        if (parent != -1 && (parent < 0 || (uint64_t)parent >= i)) {
            set_err(err, errlen,
                    "%s%scnode %zu has parent %" PRId64
                    ", which is neither -1 nor an earlier cnode",
                    pre, sep, i, parent);
            return -1;
        }
    }
    return 0;
}

static int validate_attrs(const char *path, const char *owner, const cube_attr *attrs, size_t n,
                          char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++) {
        if (attrs == NULL || attrs[i].key == NULL || attrs[i].value == NULL) {
            set_err(err, errlen, "%s: attribute %zu of %s lacks a key or value", path, i, owner);
            return -1;
        }
    }
    return 0;
}

static int validate(const char *path, const cube_profile *p, char *err, size_t errlen)
{
    if (p->ncnodes == 0) {
        set_err(err, errlen, "%s: a profile needs at least the root cnode", path);
        return -1;
    }
    if (validate_tree(p->cnodes, p->ncnodes, path, err, errlen) != 0)
        return -1;
    for (size_t i = 1; i < p->ncnodes; i++) {
        if (p->cnodes[i].parent == -1) {
            set_err(err, errlen, "%s: cnode %zu is a second root; CUBE readers need exactly one",
                    path, i);
            return -1;
        }
    }
    if (p->cnodes[0].parent != -1) {
        set_err(err, errlen, "%s: cnode 0 must be the root (parent -1)", path);
        return -1;
    }
    if (p->nregions > 0 && p->regions == NULL) {
        set_err(err, errlen, "%s: region array is NULL", path);
        return -1;
    }
    for (size_t i = 0; i < p->nregions; i++) {
        if (p->regions[i].name == NULL) {
            set_err(err, errlen, "%s: region %zu has no name", path, i);
            return -1;
        }
    }
    for (size_t i = 0; i < p->ncnodes; i++) {
        const cube_cnode *c = &p->cnodes[i];
        if (c->region >= p->nregions) {
            set_err(err, errlen, "%s: cnode %zu calls region %" PRIu32 " of %zu", path, i,
                    c->region, p->nregions);
            return -1;
        }
        if (c->param_kind != CUBE_PARAM_NONE && c->param_kind != CUBE_PARAM_INT &&
            c->param_kind != CUBE_PARAM_STRING) {
            set_err(err, errlen, "%s: cnode %zu has unknown parameter kind %d", path, i,
                    (int)c->param_kind);
            return -1;
        }
        if (c->param_kind != CUBE_PARAM_NONE && c->param_name == NULL) {
            set_err(err, errlen, "%s: parameter cnode %zu has no parameter name", path, i);
            return -1;
        }
    }
    if (p->nmetrics > 0 && (p->metrics == NULL || (p->row == NULL && p->fill_rows == NULL))) {
        set_err(err, errlen, "%s: metrics given without %s", path,
                p->metrics == NULL ? "a metric array" : "a row callback");
        return -1;
    }
    for (size_t i = 0; i < p->nmetrics; i++) {
        const cube_metric *m = &p->metrics[i];
        if (m->uniq_name == NULL || m->uniq_name[0] == '\0') {
            set_err(err, errlen, "%s: metric %zu has no uniq_name", path, i);
            return -1;
        }
        if ((unsigned)m->dtype > CUBE_DTYPE_MAXDOUBLE) {
            set_err(err, errlen, "%s: metric %s has unknown dtype %d", path, m->uniq_name,
                    (int)m->dtype);
            return -1;
        }
        if (m->type != CUBE_EXCLUSIVE && m->type != CUBE_INCLUSIVE) {
            set_err(err, errlen, "%s: metric %s has unknown type %d", path, m->uniq_name,
                    (int)m->type);
            return -1;
        }
        if (m->type == CUBE_INCLUSIVE &&
            (m->dtype == CUBE_DTYPE_MINDOUBLE || m->dtype == CUBE_DTYPE_MAXDOUBLE)) {
            /* An inclusive minimum cannot be turned into an exclusive one; CubeW refuses. */
            set_err(err, errlen, "%s: metric %s: MINDOUBLE/MAXDOUBLE must be EXCLUSIVE", path,
                    m->uniq_name);
            return -1;
        }
        if (m->child_of > i) {
            set_err(err, errlen, "%s: metric %s comes before its parent", path, m->uniq_name);
            return -1;
        }
        /* Preorder: everything between the parent and this metric lies below the parent. */
        for (size_t j = m->child_of; m->child_of && j < i; j++) {
            uint32_t a = p->metrics[j].child_of;
            while (a && a != m->child_of)
                a = p->metrics[a - 1].child_of;
            if (a != m->child_of) {
                set_err(err, errlen, "%s: metric %s is not in preorder of the metric tree",
                        path, m->uniq_name);
                return -1;
            }
        }
        for (size_t j = 0; j < i; j++) {
            if (strcmp(p->metrics[j].uniq_name, m->uniq_name) == 0) {
                set_err(err, errlen, "%s: metrics %zu and %zu are both named %s", path, j, i,
                        m->uniq_name);
                return -1;
            }
        }
    }
    if (validate_attrs(path, "the profile", p->attrs, p->nattrs, err, errlen) != 0 ||
        validate_attrs(path, "the machine", p->machine_attrs, p->nmachine_attrs, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < p->nregions; i++)
        if (validate_attrs(path, p->regions[i].name, p->regions[i].attrs, p->regions[i].nattrs,
                           err, errlen) != 0)
            return -1;
    for (size_t i = 0; i < p->nmirrors; i++) {
        if (p->mirrors == NULL || p->mirrors[i] == NULL) {
            set_err(err, errlen, "%s: mirror %zu is NULL", path, i);
            return -1;
        }
    }
    if (p->nlocations == 0 || p->locations == NULL) {
        set_err(err, errlen, "%s: a profile needs at least one location", path);
        return -1;
    }
    if (p->nlocations > UINT32_MAX || p->nlocations > SIZE_MAX / 8) {
        set_err(err, errlen, "%s: %zu locations are too many", path, p->nlocations);
        return -1;
    }
    if ((p->ngroups > 0 && p->groups == NULL) || (p->nnodes > 0 && p->nodes == NULL)) {
        set_err(err, errlen, "%s: location group or system node array is NULL", path);
        return -1;
    }
    for (size_t i = 0; i < p->nnodes; i++) {
        if (p->nodes[i].name == NULL) {
            set_err(err, errlen, "%s: system node %zu has no name", path, i);
            return -1;
        }
    }
    for (size_t i = 0; i < p->ngroups; i++) {
        const cube_location_group *g = &p->groups[i];
        if (g->name == NULL || g->node >= p->nnodes) {
            set_err(err, errlen, "%s: location group %zu has %s", path, i,
                    g->name == NULL ? "no name" : "a node index out of range");
            return -1;
        }
        if (i > 0 && g->node < p->groups[i - 1].node) {
            set_err(err, errlen,
                    "%s: location group %zu is on node %" PRIu32 " after a group on node %" PRIu32
                    "; order groups by node so ids follow document order",
                    path, i, g->node, p->groups[i - 1].node);
            return -1;
        }
    }
    for (size_t i = 0; i < p->nlocations; i++) {
        const cube_location *l = &p->locations[i];
        if (l->name == NULL || l->group >= p->ngroups) {
            set_err(err, errlen, "%s: location %zu has %s", path, i,
                    l->name == NULL ? "no name" : "a group index out of range");
            return -1;
        }
        if (i > 0 && l->group < p->locations[i - 1].group) {
            set_err(err, errlen,
                    "%s: location %zu is in group %" PRIu32 " after a location of group %" PRIu32
                    "; order locations by group so ids follow document order",
                    path, i, l->group, p->locations[i - 1].group);
            return -1;
        }
    }
    return 0;
}

/* ---- row orders ------------------------------------------------------------------------ */

int cube_row_orders(const cube_cnode *cnodes, size_t n, uint32_t *deep, uint32_t *wide,
                    char *err, size_t errlen)
{
    if (validate_tree(cnodes, n, NULL, err, errlen) != 0)
        return -1;
    if (n == 0 || (deep == NULL && wide == NULL))
        return 0;
    /* Children as a compressed adjacency list: kids[first[v] .. first[v+1]) in index order. */
    uint32_t *first = calloc(n + 1, sizeof *first);
    uint32_t *kids = malloc(n * sizeof *kids);
    uint32_t *stack = malloc(n * sizeof *stack);
    if (first == NULL || kids == NULL || stack == NULL) {
        free(first);
        free(kids);
        free(stack);
        set_err(err, errlen, "out of memory ordering %zu cnodes", n);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (cnodes[i].parent >= 0)
            first[cnodes[i].parent + 1]++;
    for (size_t i = 0; i < n; i++)
        first[i + 1] += first[i];
    /* `stack` serves as the fill cursor first; it is free again before the walks. */
    memcpy(stack, first, n * sizeof *stack);
    for (size_t i = 0; i < n; i++)
        if (cnodes[i].parent >= 0)
            kids[stack[cnodes[i].parent]++] = (uint32_t)i;

    /* Iterative walks: Python recursion can make call trees thousands of levels deep. Every
     * node is pushed exactly once, so n stack slots suffice. */
    if (deep != NULL) {
        size_t sp = 0, k = 0;
        for (size_t i = n; i-- > 0;)
            if (cnodes[i].parent == -1)
                stack[sp++] = (uint32_t)i;
        while (sp > 0) {
            uint32_t v = stack[--sp];
            deep[k++] = v;
            for (uint32_t j = first[v + 1]; j-- > first[v];)
                stack[sp++] = kids[j];
        }
    }
    if (wide != NULL) {
        size_t k = 0;
        for (size_t r = 0; r < n; r++) {
            if (cnodes[r].parent != -1)
                continue;
            wide[k++] = (uint32_t)r;
            size_t sp = 0;
            stack[sp++] = (uint32_t)r;
            while (sp > 0) {
                uint32_t v = stack[--sp];
                for (uint32_t j = first[v]; j < first[v + 1]; j++)
                    wide[k++] = kids[j];
                for (uint32_t j = first[v + 1]; j-- > first[v];)
                    stack[sp++] = kids[j];
            }
        }
    }
    free(first);
    free(kids);
    free(stack);
    return 0;
}

/* ---- the archive ----------------------------------------------------------------------- */

static const char *dtype_name(cube_dtype d)
{
    switch (d) {
    case CUBE_DTYPE_UINT64: return "UINT64";
    case CUBE_DTYPE_DOUBLE: return "DOUBLE";
    case CUBE_DTYPE_MINDOUBLE: return "MINDOUBLE";
    case CUBE_DTYPE_MAXDOUBLE: return "MAXDOUBLE";
    }
    return "DOUBLE";
}

static void write_metric_files(writer *w, const cube_profile *p, uint32_t m,
                               const uint32_t *order, void *row, uint64_t *offsets)
{
    char name[48];
    size_t row_bytes = p->nlocations * 8;

    snprintf(name, sizeof name, "%" PRIu32 ".data", m);
    member_begin(w);
    w_bytes(w, "CUBEX.DATA", 10);
    if (p->fill_rows && !w->failed) {
        /* the rows' hole: written by fill_rows once the archive around it is complete */
        errno = 0;
        off_t at = ftello(w->f);
        if (at < 0 || fseeko(w->f, (off_t)((uint64_t)p->ncnodes * row_bytes), SEEK_CUR) != 0)
            w_fail_errno(w, "cannot seek");
        offsets[m] = (uint64_t)at;
    }
    for (size_t k = 0; k < p->ncnodes && !w->failed && !p->fill_rows; k++) {
        /* A callback that leaves locations untouched writes zeros, not stale values. */
        memset(row, 0, row_bytes);
        if (p->row(p->row_user, m, order[k], row) != 0) {
            w->failed = 1;
            set_err(w->err, w->errlen, "%s: row callback failed for metric %s at cnode %" PRIu32,
                    w->path, p->metrics[m].uniq_name, order[k]);
            return;
        }
        w_bytes(w, row, row_bytes);
    }
    member_end(w, name);

    snprintf(name, sizeof name, "%" PRIu32 ".index", m);
    member_begin(w);
    const uint32_t endian = 1;
    const uint16_t version = 0;
    const uint8_t format = 1; /* SPARSE: the only format pycubexr reads */
    const uint32_t nrows = (uint32_t)p->ncnodes;
    w_bytes(w, "CUBEX.INDEX", 11);
    w_bytes(w, &endian, sizeof endian);
    w_bytes(w, &version, sizeof version);
    w_bytes(w, &format, sizeof format);
    w_bytes(w, &nrows, sizeof nrows);
    for (uint32_t k = 0; k < nrows && !w->failed; k++)
        w_bytes(w, &k, sizeof k);
    member_end(w, name);
}

static void write_attr(writer *w, const char *key, const char *value)
{
    w_str(w, "<attr key=\"");
    w_esc(w, key);
    w_str(w, "\" value=\"");
    w_esc(w, value);
    w_str(w, "\"/>\n");
}

static void write_anchor(writer *w, const cube_profile *p, const uint32_t *deep,
                         const uint32_t *id_of, uint32_t *open)
{
    member_begin(w);
    w_str(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n<cube version=\"4.4\">\n");
    if (p->nmirrors || p->remapping_spec)
        write_attr(w, "CubePL Version", "1.1"); /* the CubePL of remapping.spec */
    write_attr(w, "Cube anchor.xml syntax version", "4.4");
    write_attr(w, "Creator", p->creator ? p->creator : "scorep");
    write_attr(w, "CUBE_CT_AGGR", "SUM");
    for (size_t i = 0; i < p->nattrs; i++)
        write_attr(w, p->attrs[i].key, p->attrs[i].value);
    if (p->nmirrors) {
        w_str(w, "<doc>\n<mirrors>\n");
        for (size_t i = 0; i < p->nmirrors; i++)
            w_elem(w, "murl", p->mirrors[i]);
        w_str(w, "</mirrors>\n</doc>\n");
    }

    w_str(w, "<metrics>\n");
    /* The metric tree: each <metric> stays open while its children (which follow it in
     * preorder) are written inside it. `open_elements` counts the open ancestors of the next one. */
    size_t open_elements = 0;
    for (size_t i = 0; i < p->nmetrics; i++) {
        const cube_metric *m = &p->metrics[i];
        size_t depth = 0;
        for (uint32_t a = m->child_of; a; a = p->metrics[a - 1].child_of)
            depth++;
        for (; open_elements > depth; open_elements--)
            w_str(w, "</metric>\n");
        w_printf(w, "<metric id=\"%zu\" type=\"%s\">\n", i,
                 m->type == CUBE_INCLUSIVE ? "INCLUSIVE" : "EXCLUSIVE");
        w_elem(w, "disp_name", m->disp_name ? m->disp_name : m->uniq_name);
        w_elem(w, "uniq_name", m->uniq_name);
        w_elem(w, "dtype", dtype_name(m->dtype));
        w_elem(w, "uom", m->uom);
        w_elem(w, "url", m->url);
        w_elem(w, "descr", m->description);
        open_elements++;
    }
    for (; open_elements > 0; open_elements--)
        w_str(w, "</metric>\n");
    w_str(w, "</metrics>\n<program>\n");

    for (size_t i = 0; i < p->nregions; i++) {
        const cube_region *r = &p->regions[i];
        /* pycubexr parses begin/end as ints, so both are always present (-1 = unknown). */
        w_printf(w, "<region id=\"%zu\" mod=\"", i);
        w_esc(w, r->file);
        w_printf(w, "\" begin=\"%d\" end=\"%d\">\n", r->begin_line, r->end_line);
        w_elem(w, "name", r->name);
        w_elem(w, "mangled_name", r->canonical ? r->canonical : r->name);
        w_elem(w, "paradigm", r->paradigm ? r->paradigm : "user");
        w_elem(w, "role", r->role ? r->role : "function");
        w_elem(w, "url", "");
        w_elem(w, "descr", r->description);
        for (size_t a = 0; a < r->nattrs; a++)
            write_attr(w, r->attrs[a].key, r->attrs[a].value);
        w_str(w, "</region>\n");
    }

    /* Cnodes in preorder; `open` holds the chain of cnodes whose element is still open. */
    size_t depth = 0;
    for (size_t k = 0; k < p->ncnodes && !w->failed; k++) {
        const cube_cnode *c = &p->cnodes[deep[k]];
        while (depth > 0 && (int64_t)open[depth - 1] != c->parent) {
            w_str(w, "</cnode>\n");
            depth--;
        }
        w_printf(w, "<cnode id=\"%" PRIu32 "\" calleeId=\"%" PRIu32 "\">\n", id_of[deep[k]],
                 c->region);
        if (c->param_kind == CUBE_PARAM_INT) {
            w_str(w, "<parameter partype=\"numeric\" parkey=\"");
            w_esc(w, c->param_name);
            w_printf(w, "\" parvalue=\"%" PRId64 "\"/>\n", c->param_int);
        } else if (c->param_kind == CUBE_PARAM_STRING) {
            w_str(w, "<parameter partype=\"string\" parkey=\"");
            w_esc(w, c->param_name);
            w_str(w, "\" parvalue=\"");
            w_esc(w, c->param_string);
            w_str(w, "\"/>\n");
        }
        open[depth++] = deep[k];
    }
    while (depth > 0) {
        w_str(w, "</cnode>\n");
        depth--;
    }
    w_str(w, "</program>\n<system>\n");

    w_str(w, "<systemtreenode Id=\"0\">\n");
    w_elem(w, "name", p->machine_name ? p->machine_name : "machine Linux");
    w_elem(w, "class", "machine");
    for (size_t a = 0; a < p->nmachine_attrs; a++)
        write_attr(w, p->machine_attrs[a].key, p->machine_attrs[a].value);
    size_t g = 0, l = 0; /* groups are sorted by node and locations by group (validated) */
    for (size_t n = 0; n < p->nnodes; n++) {
        w_printf(w, "<systemtreenode Id=\"%zu\">\n", n + 1);
        w_elem(w, "name", p->nodes[n].name);
        w_elem(w, "class", "node");
        for (; g < p->ngroups && p->groups[g].node == n; g++) {
            w_printf(w, "<locationgroup Id=\"%zu\">\n", g);
            w_elem(w, "name", p->groups[g].name);
            w_printf(w, "<rank>%" PRIu32 "</rank>\n<type>process</type>\n", p->groups[g].rank);
            for (uint32_t rank = 0; l < p->nlocations && p->locations[l].group == g; l++) {
                w_printf(w, "<location Id=\"%zu\">\n", l);
                w_elem(w, "name", p->locations[l].name);
                w_printf(w, "<rank>%" PRIu32 "</rank>\n<type>thread</type>\n</location>\n",
                         rank++);
            }
            w_str(w, "</locationgroup>\n");
        }
        w_str(w, "</systemtreenode>\n");
    }
    w_str(w, "</systemtreenode>\n</system>\n</cube>\n");
    member_end(w, "anchor.xml");
}

/* Writes the whole archive to `tmp`; messages name `path`. Returns 0 or -1. */
static int write_archive(const char *tmp, const char *path, const cube_profile *p,
                         const uint32_t *deep, uint32_t *wide, const uint32_t *id_of, void *row,
                         uint64_t *offsets, char *err, size_t errlen)
{
    errno = 0;
    FILE *f = fopen(tmp, "wb");
    if (f == NULL) {
        set_err(err, errlen, "%s: cannot create %s: %s", path, tmp, strerror(errno));
        return -1;
    }
    writer w = {f, path, err, errlen, 0, 0, (int64_t)time(NULL)};
    if (p->remapping_spec) {
        member_begin(&w);
        w_str(&w, p->remapping_spec);
        member_end(&w, "remapping.spec");
    }
    for (size_t m = 0; m < p->nmetrics && !w.failed; m++)
        write_metric_files(&w, p, (uint32_t)m, p->metrics[m].type == CUBE_INCLUSIVE ? wide : deep,
                           row, offsets);
    if (p->extra_name && !w.failed) {
        size_t len = 0;
        char *text = p->extra_text(p->extra_user, id_of, &len);
        if (!text) {
            set_err(err, errlen, "%s: out of memory", path);
            w.failed = 1;
        } else {
            member_begin(&w);
            w_bytes(&w, text, len);
            member_end(&w, p->extra_name);
            free(text);
        }
    }
    /* `wide` is not needed any more: it becomes the stack of open cnode elements. */
    write_anchor(&w, p, deep, id_of, wide);
    w_zeros(&w, 2 * TAR_BLOCK); /* end-of-archive marker */
    errno = 0;
    if (fflush(f) != 0)
        w_fail_errno(&w, "write failed");
    errno = 0;
    if (fclose(f) != 0) /* delayed write errors (NFS, full disk) surface here */
        w_fail_errno(&w, "close failed");
    return w.failed ? -1 : 0;
}

int cube_write(const char *path, const cube_profile *profile, char *err, size_t errlen)
{
    if (path == NULL || profile == NULL) {
        set_err(err, errlen, "cube_write: %s is NULL", path == NULL ? "path" : "profile");
        return -1;
    }
    if (validate(path, profile, err, errlen) != 0)
        return -1;

    const size_t n = profile->ncnodes;
    uint32_t *deep = calloc(n, sizeof *deep); /* zeroed only to reassure static analysers */
    uint32_t *wide = malloc(n * sizeof *wide);
    uint32_t *id_of = malloc(n * sizeof *id_of); /* cnode index -> id in the file */
    void *row =
        profile->nmetrics && !profile->fill_rows ? malloc(profile->nlocations * 8) : NULL;
    uint64_t *offsets = calloc(profile->nmetrics + 1, sizeof *offsets);
    size_t tmplen = strlen(path) + 32;
    char *tmp = malloc(tmplen);
    int rc = -1;
    if (deep == NULL || wide == NULL || id_of == NULL || tmp == NULL || offsets == NULL ||
        (profile->nmetrics && !profile->fill_rows && row == NULL)) {
        set_err(err, errlen, "%s: out of memory", path);
    } else if (cube_row_orders(profile->cnodes, n, deep, wide, err, errlen) == 0) {
        for (size_t k = 0; k < n; k++)
            id_of[deep[k]] = (uint32_t)k;
        snprintf(tmp, tmplen, "%s.tmp%ld", path, (long)getpid());
        if (write_archive(tmp, path, profile, deep, wide, id_of, row, offsets, err, errlen) !=
                0 ||
            (profile->fill_rows &&
             profile->fill_rows(profile->fill_user, tmp, offsets, err, errlen) != 0)) {
            remove(tmp);
        } else if (rename(tmp, path) != 0) {
            set_err(err, errlen, "%s: cannot rename %s into place: %s", path, tmp,
                    strerror(errno));
            remove(tmp);
        } else {
            rc = 0;
        }
    }
    free(deep);
    free(wide);
    free(id_of);
    free(row);
    free(offsets);
    free(tmp);
    return rc;
}
