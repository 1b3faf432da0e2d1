/* What several C tests share: a measurement configured for a test, and an archive read
 * back with the OTF2 library's reader. Compiled into every test binary (Makefile); its
 * checks (CHECK of ctest.h) count in the test that called. */
#ifndef SCOREP_TESTS_CTEST_SUPPORT_H
#define SCOREP_TESTS_CTEST_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include <otf2/otf2.h>

#include "core/measurement.h"

/* A traced and profiled measurement into `dir` with `total_memory` bytes for its buffers,
 * the program called "prog", times from clock_gettime: a test changes what it needs in
 * the copy it gets. */
sp_config ctest_config(const char *dir, uint64_t total_memory);

/* Removes the experiment directory `dir` once the test has read it back. */
void ctest_remove_tree(const char *dir);

/* Sets on an OTF2 callback set what a test wants to see of an archive. */
typedef void (*ctest_definition_callbacks)(OTF2_GlobalDefReaderCallbacks *callbacks);
typedef void (*ctest_event_callbacks)(OTF2_GlobalEvtReaderCallbacks *callbacks);

/* Opens <dir>/traces.otf2 and reads its global definitions through the callbacks that
 * `set_callbacks` sets (NULL: none), each handed `user`. NULL (a failed check) when the
 * archive cannot be opened; else the reader, for ctest_trace_read_events. */
OTF2_Reader *ctest_trace_open(const char *dir, ctest_definition_callbacks set_callbacks,
                              void *user);

/* Reads the local definitions of the `count` locations (the ids that the global
 * definitions named), then all their events merged in time order through the callbacks
 * that `set_callbacks` sets, each handed `user`; closes `reader`. */
void ctest_trace_read_events(OTF2_Reader *reader, const uint64_t *locations, size_t count,
                             ctest_event_callbacks set_callbacks, void *user);

#endif
