/* Score-P filter files (SCOREP_FILTERING_FILE):
 *
 *   SCOREP_REGION_NAMES_BEGIN          # regions by name, module[.Class]:function
 *     EXCLUDE *
 *     INCLUDE main* mymodule:*         # several patterns per line, and rules may
 *             other:work               # continue on the following lines
 *     EXCLUDE MANGLED helpers:*        # MANGLED: match the canonical module:qualname
 *   SCOREP_REGION_NAMES_END
 *   SCOREP_FILE_NAMES_BEGIN            # regions by the absolute path of their source
 *     EXCLUDE *site-packages*
 *   SCOREP_FILE_NAMES_END
 *
 * Patterns are shell wildcards (* ? [...]; a backslash escapes the next character, also a
 * space or #). Within each kind of block the rules apply in order and the last matching
 * rule decides; everything is included until a rule excludes it. A region is left out
 * when its file or its name is excluded. Keywords are case-insensitive.
 *
 * Deciding costs a string match per rule, so callers decide once per region. */
#ifndef SCOREP_CORE_FILTER_H
#define SCOREP_CORE_FILTER_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sp_filter sp_filter;

/* Parses filter text; `source` names it in messages ("file:line: ..."). Returns 0, or -1
 * with one line in err naming the line and what was expected. */
int sp_filter_parse(const char *text, const char *source, sp_filter **filter, char *err,
                    size_t errlen);

/* Reads and parses a filter file. */
int sp_filter_load(const char *path, sp_filter **filter, char *err, size_t errlen);

/* Whether a region is left out. `mangled` and `file` may be NULL (treated as the name and
 * as no file). */
bool sp_filter_excludes(const sp_filter *filter, const char *name, const char *mangled,
                        const char *file);

/* Number of rules (patterns), for messages. */
size_t sp_filter_rule_count(const sp_filter *filter);

void sp_filter_free(sp_filter *filter);

#endif
