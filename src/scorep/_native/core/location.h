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

/* The frame belongs to the call-path substrate only (a parameter's split of the call
 * path): the event substrates never saw an enter for it. */
#define SP_FRAME_CALLPATH_ONLY 2u

/* The frame was open and recorded when recording went off on its location: leaving it
 * while recording is still off moves the time off to its caller's call path. */
#define SP_FRAME_HOLDS_OFF 4u

/* Keys tell frames apart when leaves are matched: adapters push a code object's address;
 * named regions use their region id with this tag (no object lives that high). */
#define SP_KEY_NAMED ((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1))
/* The key of a parameter's call-path-only frame: no leave ever asks for it by name. */
#define SP_KEY_PARAMETER (SP_KEY_NAMED | ((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 2)))

/* Room for the substrates' per-location state (core/substrates.h asserts that its
 * substrates fit). */
#define SP_SUBSTRATE_SLOTS 4

typedef struct sp_frame {
    uintptr_t key;
    uint32_t region;
    uint32_t flags;
    uint64_t enter_time;
    uint32_t callpath; /* owned by the call-path substrate (its node of this frame) */
    uint32_t folded;   /* owned by the call-path substrate (beyond its depth limit: the
                        * frame's entry in its table of folded calls) */
    /* While calling contexts are recorded (sampling): how many frames of the program's own
     * call stack were below this frame when it was entered; they are part of its path. */
    uint32_t unwound;
} sp_frame;

/* One frame of the program's own call stack as an adapter reads it (sampling): its region
 * and what tells this activation from a later one at the same place (the frame's address). */
typedef struct sp_context_frame {
    uint32_t region;
    uintptr_t frame;
} sp_context_frame;

/* A calling context: frames of the program's own call stack, outermost first. */
typedef struct sp_context_stack {
    sp_context_frame *frames;
    uint32_t count, capacity;
} sp_context_stack;

/* Where a substrate's records of a location stood at a rewind point; its meaning belongs
 * to the substrate that took it. */
typedef struct {
    uintptr_t word[3];
} sp_substrate_mark;

#define SP_MAX_REWIND_DEPTH 8

typedef struct sp_location {
    uint32_t index;        /* dense, in creation order */
    uint64_t id;           /* the OTF2 location id, final at the end of the measurement */
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
    /* A substrate noted something for the location's next event (sp_location_paused): the
     * next event settles it. recording_epoch is made stale meanwhile, so that the event
     * path's one epoch comparison covers both. */
    bool substrate_pending;

    uint64_t enters;           /* recorded enters (visits) */
    uint64_t mpi_events;       /* recorded MPI events */
    uint64_t unmatched_leaves; /* leaves that matched no open frame (ignored) */

    /* Open rewind regions (scorep.user.rewind_begin), innermost last. */
    struct {
        uint32_t region;
        uint32_t depth; /* stack depth before its enter */
        uint64_t time;
        uint64_t mpi_events; /* the location's MPI events before the rewind point */
        bool marked; /* the substrates took a mark */
        sp_substrate_mark mark;
    } rewind[SP_MAX_REWIND_DEPTH];
    uint32_t rewind_count;

    /* I/O handles being created by calls on this location, innermost last: a handle made
     * inside another's creation (the POSIX open an fopen or MPI_File_open does) gets it
     * as its parent. Deeper nesting than this records no parent. */
    uint32_t io_creating[4];
    uint32_t io_creating_depth;

    /* The metrics this location reads at its enters and leaves (core/metrics.h); NULL
     * without metrics. */
    struct sp_location_metrics *metrics;

    /* Each substrate's own state of this location, in the slot core/substrates.h gives it. */
    void *substrate[SP_SUBSTRATE_SLOTS];

    /* Sampling. `key` tells the adapter's threads apart for good (a thread id may be reused
     * by a later thread; 0: none). `context` is the calling context of the location's last
     * sample or enter (which frames are new at the next one), `scratch` room to read the
     * next one into. `sampling` is set while another thread records a sample into this
     * location (see sp_sample_begin). */
    uint64_t key;
    sp_context_stack context, scratch;
    _Atomic int sampling;
    uint64_t samples; /* samples recorded */
    /* What the next sample may stand for: the time since `sample_since` (the last sample,
     * or the location's start) without the measured time of recorded frames that ended
     * since. `covered[k]` is that time for the frames that returned to stack depth k (the
     * callees of the frame at depth k - 1; 0: of the program root), clipped at
     * `sample_since`: a region's time is measured, and a sample taken after it ended (no
     * sample could be taken meanwhile: C code held the GIL, MPI_Init) must not count it
     * again in the Python frames that called it. Grown on the unwinding enter path. */
    uint64_t sample_since;
    /* Time earlier samples stood for that did not fit their room because their pass came
     * early after a late one (the sampler's passes lag its reads unevenly on a loaded
     * machine): given to the next samples as their room allows, instead of to the
     * program root. Dropped when a recorded region takes part of a room (its time is
     * measured). */
    uint64_t sample_owed;
    uint64_t *covered;
    uint32_t covered_capacity;
} sp_location;

/* Grows the stack; the caller has checked depth == capacity. Returns false when out of
 * memory (the frame is then not recorded). */
bool sp_location_grow_stack(sp_location *loc);

/* The calling thread's location: created when the measurement runs and either every thread
 * is measured or `register_thread` is set; otherwise NULL, and NULL is cached too. */
sp_location *sp_location_attach(uint64_t thread_ident, const char *name, bool register_thread);

/* The same for a thread the adapter knows by a unique `key` (never 0): a location that
 * another thread already made for that key (a sampler) is found and becomes the caller's. */
sp_location *sp_location_attach_keyed(uint64_t key, uint64_t thread_ident, const char *name,
                                      bool register_thread);

/* The location of the thread with `key` for another thread to record into (a sampler),
 * made when there is none; NULL when the measurement does not run or records no such
 * thread. The calling thread's own location is not changed. */
sp_location *sp_location_of_key(uint64_t key, uint64_t thread_ident, const char *name);

void sp_location_set_name(sp_location *loc, const char *name);

/* A substrate paused the location from `begin` to `end` to write its buffers (a trace
 * buffer flush, on the location's own thread, possibly in the middle of an event). The
 * other substrates account the pause at the location's next event, under the call path
 * that is current then: Score-P's TRACE BUFFER FLUSH region in the profile. */
void sp_location_paused(sp_location *loc, uint64_t begin, uint64_t end);

#endif
