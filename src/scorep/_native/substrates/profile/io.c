/* I/O bytes per call path (Score-P's io_bytes_read and io_bytes_written metrics, with a
 * child metric per I/O paradigm): a table beside the tree, since only the nodes of I/O
 * calls have any. */
#include "substrates/profile/profile_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t bytes[SP_IO_PARADIGM_COUNT][2];
} io_entry;

struct sp_profile_io {
    sp_u64map index; /* node -> entry */
    io_entry *entries;
    uint32_t count, capacity;
};

static struct sp_profile_io *io_table(sp_profile_location *p)
{
    if (p->io)
        return p->io;
    struct sp_profile_io *io = calloc(1, sizeof *io);
    if (!io || sp_u64map_init(&io->index, 16) != 0) {
        free(io);
        return NULL;
    }
    p->io = io;
    return io;
}

void sp_profile_io_bytes(sp_profile_location *p, uint32_t node, sp_io_paradigm paradigm,
                         sp_io_mode mode, uint64_t bytes)
{
    if (node == SP_PROFILE_NO_NODE || (unsigned)paradigm >= SP_IO_PARADIGM_COUNT ||
        (mode != SP_IO_MODE_READ && mode != SP_IO_MODE_WRITE))
        return;
    struct sp_profile_io *io = io_table(p);
    if (!io)
        return;
    uint32_t e = sp_u64map_get(&io->index, node);
    if (e == SP_NO_ID) {
        if (io->count == io->capacity) {
            uint32_t cap = io->capacity ? io->capacity * 2 : 16;
            io_entry *entries = realloc(io->entries, cap * sizeof *entries);
            if (!entries)
                return;
            io->entries = entries;
            io->capacity = cap;
        }
        if (sp_u64map_put(&io->index, node, io->count) != 0)
            return;
        e = io->count++;
        memset(&io->entries[e], 0, sizeof io->entries[e]);
    }
    io->entries[e].bytes[paradigm][mode] += bytes;
}

bool sp_profile_io_of(const sp_profile_location *p, uint32_t node,
                      uint64_t bytes[SP_IO_PARADIGM_COUNT][2])
{
    uint32_t e = p->io ? sp_u64map_get(&p->io->index, node) : SP_NO_ID;
    if (e == SP_NO_ID)
        return false;
    memcpy(bytes, p->io->entries[e].bytes, sizeof p->io->entries[e].bytes);
    return true;
}

void sp_profile_io_free(sp_profile_location *p)
{
    if (!p->io)
        return;
    sp_u64map_free(&p->io->index);
    free(p->io->entries);
    free(p->io);
    p->io = NULL;
}

void sp_profile_io_serialize(const sp_profile_location *p, sp_buffer *b)
{
    const struct sp_profile_io *io = p->io;
    uint32_t count = io ? io->count : 0;
    sp_buffer_u32(b, count);
    if (!count)
        return;
    /* The entries' nodes: the index maps node -> entry. */
    for (size_t slot = 0; slot < io->index.capacity; slot++) {
        uint32_t e = io->index.values[slot];
        if (e == SP_NO_ID)
            continue;
        sp_buffer_u32(b, (uint32_t)io->index.keys[slot]);
        for (int q = 0; q < SP_IO_PARADIGM_COUNT; q++)
            for (int mode = 0; mode < 2; mode++)
                sp_buffer_u64(b, io->entries[e].bytes[q][mode]);
    }
}
