/* One pass over a trace's events, location after location: the part the scan and the
 * Chrome writer share. Locations are read one at a time so that only one OTF2 event
 * chunk is in memory whatever the number of locations. */
#ifndef SCOREP_READER_RD_PASS_H
#define SCOREP_READER_RD_PASS_H

#include <otf2/otf2.h>

#include "reader/rd.h"

/* Opens the archive for reading events: every location selected, the local definitions
 * (mapping tables, clock offsets) read so that OTF2 applies them. NULL + err on failure. */
OTF2_Reader *rd_pass_open(const rd_trace *trace, char *err, size_t errlen);
/* Reads all events of location index `li` with these callbacks; 0, or -1 + err. */
int rd_pass_location(OTF2_Reader *reader, const rd_trace *trace, uint32_t li,
                     OTF2_EvtReaderCallbacks *callbacks, void *user, char *err, size_t errlen);
void rd_pass_close(OTF2_Reader *reader);

/* Key of a point-to-point message for matching the two sides: the sender's and the
 * receiver's view give the same key. */
static inline uint64_t rd_hash64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

#endif
