#include "core/tables.h"

#include <stdlib.h>
#include <string.h>

int sp_u64map_init(sp_u64map *map, size_t initial_capacity)
{
    size_t cap = 16;
    while (cap < initial_capacity * 2)
        cap *= 2;
    map->keys = malloc(cap * sizeof *map->keys);
    map->values = malloc(cap * sizeof *map->values);
    if (!map->keys || !map->values) {
        free(map->keys);
        free(map->values);
        map->keys = NULL;
        map->values = NULL;
        return -1;
    }
    memset(map->values, 0xff, cap * sizeof *map->values);
    map->capacity = cap;
    map->count = 0;
    return 0;
}

void sp_u64map_free(sp_u64map *map)
{
    free(map->keys);
    free(map->values);
    map->keys = NULL;
    map->values = NULL;
    map->capacity = map->count = 0;
}

uint32_t sp_u64map_get(const sp_u64map *map, uint64_t key)
{
    if (!map->capacity)
        return SP_NO_ID;
    size_t mask = map->capacity - 1;
    for (size_t i = sp_hash_mix(key) & mask;; i = (i + 1) & mask) {
        if (map->values[i] == SP_NO_ID)
            return SP_NO_ID;
        if (map->keys[i] == key)
            return map->values[i];
    }
}

static int u64map_grow(sp_u64map *map)
{
    sp_u64map bigger;
    if (sp_u64map_init(&bigger, map->capacity) != 0)
        return -1;
    for (size_t i = 0; i < map->capacity; i++)
        if (map->values[i] != SP_NO_ID)
            sp_u64map_put(&bigger, map->keys[i], map->values[i]);
    sp_u64map_free(map);
    *map = bigger;
    return 0;
}

int sp_u64map_put(sp_u64map *map, uint64_t key, uint32_t value)
{
    if ((map->count + 1) * 2 > map->capacity && u64map_grow(map) != 0)
        return -1;
    size_t mask = map->capacity - 1;
    for (size_t i = sp_hash_mix(key) & mask;; i = (i + 1) & mask) {
        if (map->values[i] == SP_NO_ID) {
            map->keys[i] = key;
            map->values[i] = value;
            map->count++;
            return 0;
        }
        if (map->keys[i] == key) {
            map->values[i] = value;
            return 0;
        }
    }
}

uint64_t sp_hash_string(const char *text)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    return h;
}

int sp_strings_init(sp_string_table *table)
{
    table->strings = NULL;
    table->next = NULL;
    table->count = table->capacity = 0;
    return sp_u64map_init(&table->index, 64);
}

void sp_strings_free(sp_string_table *table)
{
    for (size_t i = 0; i < table->count; i++)
        free(table->strings[i]);
    free(table->strings);
    free(table->next);
    sp_u64map_free(&table->index);
    table->strings = NULL;
    table->next = NULL;
    table->count = table->capacity = 0;
}

uint32_t sp_strings_find(const sp_string_table *table, const char *text)
{
    uint32_t id = sp_u64map_get(&table->index, sp_hash_string(text));
    while (id != SP_NO_ID && strcmp(table->strings[id], text) != 0)
        id = table->next[id];
    return id;
}

uint32_t sp_strings_intern(sp_string_table *table, const char *text)
{
    uint64_t hash = sp_hash_string(text);
    uint32_t first = sp_u64map_get(&table->index, hash);
    for (uint32_t id = first; id != SP_NO_ID; id = table->next[id])
        if (strcmp(table->strings[id], text) == 0)
            return id;
    if (table->count >= SP_NO_ID - 1)
        return SP_NO_ID;
    if (table->count == table->capacity) {
        size_t cap = table->capacity ? table->capacity * 2 : 256;
        char **strings = realloc(table->strings, cap * sizeof *strings);
        if (!strings)
            return SP_NO_ID;
        table->strings = strings;
        uint32_t *next = realloc(table->next, cap * sizeof *next);
        if (!next)
            return SP_NO_ID;
        table->next = next;
        table->capacity = cap;
    }
    char *copy = strdup(text);
    if (!copy)
        return SP_NO_ID;
    uint32_t id = (uint32_t)table->count;
    if (sp_u64map_put(&table->index, hash, id) != 0) {
        free(copy);
        return SP_NO_ID;
    }
    table->strings[id] = copy;
    table->next[id] = first;
    table->count++;
    return id;
}
