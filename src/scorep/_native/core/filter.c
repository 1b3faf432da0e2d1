#include "core/filter.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { BLOCK_NONE, BLOCK_REGIONS, BLOCK_FILES } block_kind;

typedef struct {
    char *pattern;
    unsigned char block;   /* block_kind */
    unsigned char exclude;
    unsigned char mangled;
} rule;

struct sp_filter {
    rule *rules;
    size_t count, capacity;
};

static const char *const block_begin[] = {"", "SCOREP_REGION_NAMES_BEGIN", "SCOREP_FILE_NAMES_BEGIN"};
static const char *const block_end[] = {"", "SCOREP_REGION_NAMES_END", "SCOREP_FILE_NAMES_END"};

static int add_rule(sp_filter *f, const char *pattern, block_kind block, bool exclude,
                    bool mangled)
{
    if (f->count == f->capacity) {
        size_t cap = f->capacity ? f->capacity * 2 : 16;
        rule *rules = realloc(f->rules, cap * sizeof *rules);
        if (!rules)
            return -1;
        f->rules = rules;
        f->capacity = cap;
    }
    char *copy = strdup(pattern);
    if (!copy)
        return -1;
    f->rules[f->count++] = (rule){copy, (unsigned char)block, exclude, mangled};
    return 0;
}

/* The next token of the line at *p (whitespace-separated; '#' starts a comment; a
 * backslash keeps the next character in the token, the backslash too, for fnmatch).
 * Returns false at the end of the line. */
static bool next_token(const char **p, char *token, size_t size, bool *too_long)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t' || *s == '\r')
        s++;
    if (*s == '\0' || *s == '\n' || *s == '#') {
        *p = s;
        return false;
    }
    size_t n = 0;
    *too_long = false;
    while (*s && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\n' && *s != '#') {
        int take = (*s == '\\' && s[1] && s[1] != '\n') ? 2 : 1;
        for (int i = 0; i < take; i++, s++) {
            if (n + 1 < size)
                token[n++] = *s;
            else
                *too_long = true;
        }
    }
    token[n] = '\0';
    *p = s;
    return true;
}

int sp_filter_parse(const char *text, const char *source, sp_filter **out, char *err,
                    size_t errlen)
{
    sp_filter *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errlen, "%s: out of memory", source);
        return -1;
    }
    /* Score-P's grammar (its scorep_filter_parser.c): keywords are case-sensitive;
     * INCLUDE/EXCLUDE switch the rule kind inside a block and may stand without patterns;
     * MANGLED (DEMANGLED) makes the following patterns of the rule match the mangled
     * (demangled) name, any number of times; a block left open at the end is accepted. */
    block_kind block = BLOCK_NONE;
    int action = -1; /* -1: no INCLUDE/EXCLUDE yet in this block, 0 include, 1 exclude */
    bool mangled = false;
    int line = 0;
    char token[4096];
    const char *p = text;
    while (*p) {
        line++;
        const char *eol = strchr(p, '\n');
        bool too_long;
        while (next_token(&p, token, sizeof token, &too_long)) {
            if (too_long) {
                snprintf(err, errlen, "%s:%d: pattern too long (at most %zu characters)", source,
                         line, sizeof token - 1);
                goto fail;
            }
            block_kind begins = strcmp(token, block_begin[BLOCK_REGIONS]) == 0 ? BLOCK_REGIONS
                                : strcmp(token, block_begin[BLOCK_FILES]) == 0 ? BLOCK_FILES
                                                                              : BLOCK_NONE;
            block_kind ends = strcmp(token, block_end[BLOCK_REGIONS]) == 0 ? BLOCK_REGIONS
                              : strcmp(token, block_end[BLOCK_FILES]) == 0 ? BLOCK_FILES
                                                                          : BLOCK_NONE;
            if (begins != BLOCK_NONE) {
                if (block != BLOCK_NONE) {
                    snprintf(err, errlen, "%s:%d: %s inside a block (expected %s first)", source,
                             line, token, block_end[block]);
                    goto fail;
                }
                block = begins;
                action = -1;
            } else if (ends != BLOCK_NONE) {
                if (block != ends) {
                    snprintf(err, errlen, "%s:%d: %s without %s", source, line, token,
                             block_begin[ends]);
                    goto fail;
                }
                block = BLOCK_NONE;
            } else if (block == BLOCK_NONE) {
                snprintf(err, errlen,
                         "%s:%d: expected SCOREP_REGION_NAMES_BEGIN or SCOREP_FILE_NAMES_BEGIN, "
                         "found '%s'",
                         source, line, token);
                goto fail;
            } else if (strcmp(token, "INCLUDE") == 0 || strcmp(token, "EXCLUDE") == 0) {
                action = token[0] == 'E';
                mangled = false;
            } else if (strcmp(token, "MANGLED") == 0 || strcmp(token, "DEMANGLED") == 0) {
                if (block != BLOCK_REGIONS || action < 0) {
                    snprintf(err, errlen,
                             "%s:%d: %s belongs after INCLUDE or EXCLUDE in a "
                             "SCOREP_REGION_NAMES block",
                             source, line, token);
                    goto fail;
                }
                mangled = token[0] == 'M';
            } else if (action < 0) {
                snprintf(err, errlen, "%s:%d: expected INCLUDE or EXCLUDE before pattern '%s'",
                         source, line, token);
                goto fail;
            } else if (add_rule(f, token, block, action == 1, mangled) != 0) {
                snprintf(err, errlen, "%s: out of memory", source);
                goto fail;
            }
        }
        if (!eol)
            break;
        p = eol + 1;
    }
    *out = f;
    return 0;
fail:
    sp_filter_free(f);
    return -1;
}

int sp_filter_load(const char *path, sp_filter **filter, char *err, size_t errlen)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        snprintf(err, errlen, "cannot read filter file %s: %s", path, strerror(errno));
        return -1;
    }
    size_t size = 0, capacity = 4096;
    char *text = malloc(capacity);
    size_t n;
    while (text && (n = fread(text + size, 1, capacity - size - 1, file)) > 0) {
        size += n;
        if (size + 1 == capacity) {
            char *bigger = realloc(text, capacity * 2);
            if (!bigger) {
                free(text);
                text = NULL;
                break;
            }
            text = bigger;
            capacity *= 2;
        }
    }
    bool failed = ferror(file);
    fclose(file);
    if (!text || failed) {
        free(text);
        snprintf(err, errlen, "cannot read filter file %s", path);
        return -1;
    }
    text[size] = '\0';
    if (memchr(text, '\0', size)) {
        free(text);
        snprintf(err, errlen, "%s: not a text file", path);
        return -1;
    }
    int status = sp_filter_parse(text, path, filter, err, errlen);
    free(text);
    return status;
}

bool sp_filter_excludes(const sp_filter *filter, const char *name, const char *mangled,
                        const char *file)
{
    if (!filter)
        return false;
    bool file_excluded = false, name_excluded = false;
    for (size_t i = 0; i < filter->count; i++) {
        const rule *r = &filter->rules[i];
        if (r->block == BLOCK_FILES) {
            if (file && fnmatch(r->pattern, file, 0) == 0)
                file_excluded = r->exclude;
        } else {
            const char *subject = r->mangled && mangled ? mangled : name;
            if (fnmatch(r->pattern, subject, 0) == 0)
                name_excluded = r->exclude;
        }
    }
    return file_excluded || name_excluded;
}

size_t sp_filter_rule_count(const sp_filter *filter)
{
    return filter ? filter->count : 0;
}

void sp_filter_free(sp_filter *filter)
{
    if (!filter)
        return;
    for (size_t i = 0; i < filter->count; i++)
        free(filter->rules[i].pattern);
    free(filter->rules);
    free(filter);
}
