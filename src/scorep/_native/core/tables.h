/* Small hash tables for the definition registry (slow path only: they are consulted when a
 * region, string or parameter is seen for the first time, never per event). */
#ifndef SCOREP_CORE_TABLES_H
#define SCOREP_CORE_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SP_NO_ID UINT32_MAX

/* uint64 key -> uint32 value, open addressing with linear probing. */
typedef struct {
    uint64_t *keys;
    uint32_t *values; /* SP_NO_ID marks an empty slot */
    size_t capacity;  /* a power of two */
    size_t count;
} sp_u64map;

int sp_u64map_init(sp_u64map *map, size_t initial_capacity);
void sp_u64map_free(sp_u64map *map);
uint32_t sp_u64map_get(const sp_u64map *map, uint64_t key);
int sp_u64map_put(sp_u64map *map, uint64_t key, uint32_t value);

/* Interned strings with dense ids in insertion order. */
typedef struct {
    char **strings;
    size_t count, capacity;
    sp_u64map index; /* hash -> first id with that hash; collisions chain through `next` */
    uint32_t *next;
} sp_string_table;

int sp_strings_init(sp_string_table *table);
void sp_strings_free(sp_string_table *table);
/* The id of `text`, added if new; SP_NO_ID when out of memory. */
uint32_t sp_strings_intern(sp_string_table *table, const char *text);
uint32_t sp_strings_find(const sp_string_table *table, const char *text);
static inline const char *sp_strings_get(const sp_string_table *table, uint32_t id)
{
    return id < table->count ? table->strings[id] : "";
}

uint64_t sp_hash_string(const char *text);
static inline uint64_t sp_hash_mix(uint64_t x)
{
    /* splitmix64 finalizer: spreads ids and pointers over the table */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

#endif
