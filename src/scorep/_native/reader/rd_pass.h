/* One pass over a trace's events, location after location: the part the scan, the
 * Chrome writer and the offline wait states share. Locations are read one at a time so
 * that only one OTF2 event chunk is in memory whatever the number of locations. */
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
/* What a pass shares with the callbacks it registers: its context starts with this. The
 * four message events reach on_message (rd_pass_messages sets their callbacks); the first
 * failure is kept, and every callback then interrupts the reading. */
typedef struct rd_pass_ctx {
    rd_message_fn *on_message;
    bool failed;
    char *err;
    size_t errlen;
} rd_pass_ctx;
/* Keeps the first failure's message in err. */
void rd_pass_fail(rd_pass_ctx *pass, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline OTF2_CallbackCode rd_pass_result(const rd_pass_ctx *pass)
{
    return pass->failed ? OTF2_CALLBACK_INTERRUPT : OTF2_CALLBACK_SUCCESS;
}
void rd_pass_messages(OTF2_EvtReaderCallbacks *callbacks);

#endif
