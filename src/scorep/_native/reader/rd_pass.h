/* One pass over a trace's events, location after location: the part the scan and the
 * Chrome writer share. Locations are read one at a time so that only one OTF2 event
 * chunk is in memory whatever the number of locations. */
#ifndef SCOREP_READER_RD_PASS_H
#define SCOREP_READER_RD_PASS_H

#include <stdbool.h>
#include <stdint.h>

#include <otf2/otf2.h>

#include "reader/rd.h"

/* Opens the archive for reading events: every location selected, the local definitions
 * (mapping tables, clock offsets) read so that OTF2 applies them. NULL + err on failure. */
OTF2_Reader *rd_pass_open(const rd_trace *trace, char *err, size_t errlen);
/* Reads all events of location index `li` with these callbacks; 0, or -1 + err. */
int rd_pass_location(OTF2_Reader *reader, const rd_trace *trace, uint32_t li,
                     OTF2_EvtReaderCallbacks *callbacks, void *user, char *err, size_t errlen);
void rd_pass_close(OTF2_Reader *reader);

/* A point-to-point message as the four OTF2 events that carry one (MpiSend, MpiIsend,
 * MpiRecv, MpiIrecv) give it. */
typedef struct rd_message_event {
    OTF2_TimeStamp time;
    bool send;
    uint32_t peer; /* the receiver of a send, the sender of a receive: a rank of comm */
    OTF2_CommRef comm;
    uint32_t tag;
    uint64_t length;
    bool blocking;
    uint64_t request; /* of a non-blocking one */
} rd_message_event;
typedef OTF2_CallbackCode rd_message_fn(void *user, const rd_message_event *message);
/* A pass handles the four events in one function: its user data starts with this (the
 * first member of its context) and rd_pass_messages sets the four callbacks that call it. */
typedef struct rd_message_sink {
    rd_message_fn *on_message;
} rd_message_sink;
void rd_pass_messages(OTF2_EvtReaderCallbacks *callbacks);

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
