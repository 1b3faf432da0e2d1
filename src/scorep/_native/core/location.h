/* A location is one thread of the measured process: its call stack, its clock and the
 * substrates' per-thread state. Each location is touched only by its own thread while the
 * measurement runs, so the event path needs no lock. */
#ifndef SCOREP_CORE_LOCATION_H
#define SCOREP_CORE_LOCATION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The frame's enter reached the substrates (recording was on); only then is its leave
 * recorded, which keeps every location's enters and leaves balanced. */
#define SP_FRAME_RECORDED 1u

/* Keys tell frames apart when leaves are matched: adapters push a code object's address;
 * named regions use their region id with this tag (no object lives that high). */
#define SP_KEY_NAMED ((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1))
/* The key of a parameter's profile-only frame: no leave ever asks for it by name. */
#define SP_KEY_PARAMETER (SP_KEY_NAMED | ((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 2)))

/* The frame belongs to the profile only (a parameter's split of the call path). */
#define SP_FRAME_PROFILE_ONLY 2u

typedef struct sp_frame {
    uintptr_t key;
    uint32_t region;
    uint32_t flags;
    uint64_t enter_time;
    uint32_t profile_node; /* SP_PROFILE_NO_NODE when not in the profile */
} sp_frame;

struct sp_profile_location;
struct sp_trace_record;

typedef struct sp_location {
    uint32_t index;        /* dense, in creation order */
    uint64_t id;           /* the OTF2 location id */
    char *name;            /* thread name, owned */
    uint64_t thread_ident; /* the adapter's thread id (Python's threading.get_ident()) */
    bool is_main;          /* the thread that started the measurement */

    sp_frame *stack;
    uint32_t depth, capacity;
    uint32_t max_depth;

    uint64_t last_time;       /* timestamps never decrease within a location */
    _Atomic int busy;         /* inside an event section (sp_event_section_begin) */
    uint32_t recording_epoch; /* the recording on/off state this location last marked */
    bool recording;           /* that state */

    uint64_t enters;          /* recorded enters (visits) */
    uint64_t unmatched_leaves; /* leaves that matched no open frame (ignored) */
    uint32_t trace_flushes;   /* buffer flushes to disk during the run */
    uint64_t trace_lost_records; /* not even an over-budget chunk could be allocated */

    /* Open rewind regions (scorep.user.rewind_begin), innermost last. */
    struct {
        uint32_t region;
        uint32_t depth; /* stack depth before its enter */
        uint64_t time;
        void *trace_chunk; /* where the trace stood: rewinding goes back there */
        void *trace_pos;
        uint32_t trace_flushes;
    } rewind[8];
    uint32_t rewind_count;

    /* Trace substrate: the event path appends raw records at trace_pos; full chunks wait
     * in a list until they are encoded into OTF2 (at a flush or at the end). */
    struct sp_trace_record *trace_pos, *trace_end;
    void *trace_chunk;
    void *trace_full_first, *trace_full_last;
    void *trace_writer;       /* OTF2_EvtWriter, at the end */
    void *trace_spill;        /* FILE of the chunks flushed to disk during the run */
    bool trace_spill_closed;  /* that file exists but was closed when the thread ended */
    uint64_t trace_events;    /* OTF2 events written for it */
    struct sp_profile_location *profile;
} sp_location;

/* Grows the stack; the caller has checked depth == capacity. Returns false when out of
 * memory (the frame is then not recorded). */
bool sp_location_grow_stack(sp_location *loc);

#endif
