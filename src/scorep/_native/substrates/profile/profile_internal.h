/* What the profile substrate's files share. Nothing outside substrates/profile/ includes
 * this. */
#ifndef SCOREP_SUBSTRATES_PROFILE_INTERNAL_H
#define SCOREP_SUBSTRATES_PROFILE_INTERNAL_H

#include "substrates/profile/profile.h"

typedef struct sp_profile_state {
    sp_measurement *meas;
    unsigned slot; /* this substrate's slot in sp_location.substrate */
} sp_profile_state;

/* The profile of the running measurement. Global because the event path's slow paths carry
 * no context of ours, and there is one measurement per process. */
extern sp_profile_state sp_profile;

/* remapping_spec.c: the remapping.spec member of every profile.cubex. */
extern const char sp_profile_remapping_spec[];

static inline sp_profile_location *profile_location(const sp_location *loc)
{
    return (sp_profile_location *)loc->substrate[sp_profile.slot];
}

#include "core/serial.h"

/* io.c */
void sp_profile_io_free(sp_profile_location *p);
/* The location's I/O bytes for the writer: a count, then per node its index and
 * bytes[paradigm][read, write] (write.c reads them back). */
void sp_profile_io_serialize(const sp_profile_location *p, sp_buffer *b);

/* metrics.c */
void sp_profile_metrics_free(sp_profile_location *p);
/* The location's metric sums for the writer: the metric count, the rows, then rows x count
 * values (write.c reads them back). */
void sp_profile_metrics_serialize(const sp_profile_location *p, sp_buffer *b);

#endif
