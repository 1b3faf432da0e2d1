/* Byte buffers for what ranks send each other at the end of an MPI measurement
 * (definitions, call trees): appended in native byte order (all ranks run the same
 * binary) and read back with bounds checks. */
#ifndef SCOREP_CORE_SERIAL_H
#define SCOREP_CORE_SERIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    unsigned char *data;
    size_t size, capacity;
    bool failed; /* out of memory: the buffer is unusable */
} sp_buffer;

void sp_buffer_init(sp_buffer *b);
void sp_buffer_free(sp_buffer *b);
void sp_buffer_put(sp_buffer *b, const void *data, size_t size);
void sp_buffer_u32(sp_buffer *b, uint32_t v);
void sp_buffer_u64(sp_buffer *b, uint64_t v);
void sp_buffer_f64(sp_buffer *b, double v);
void sp_buffer_str(sp_buffer *b, const char *s);

typedef struct {
    const unsigned char *data;
    size_t size, pos;
    bool failed; /* read past the end: the data is malformed */
} sp_reader;

void sp_reader_init(sp_reader *r, const void *data, size_t size);
uint32_t sp_reader_u32(sp_reader *r);
uint64_t sp_reader_u64(sp_reader *r);
double sp_reader_f64(sp_reader *r);
/* A pointer into the data (NUL-terminated as written); "" when malformed. */
const char *sp_reader_str(sp_reader *r);

#endif
