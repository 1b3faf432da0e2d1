/* Interposing libc functions in every loaded object through its global offset table, for
 * adapters that wrap C library calls (the I/O adapter's read/write/..., the native memory
 * adapter's malloc/free/...). The core library is loaded with dlopen, so defining `write`
 * or `malloc` in it would intercept nothing, and LD_PRELOAD would mean re-executing the
 * interpreter.
 *
 * An adapter adds a client (a table of symbols and wrappers) when its recording begins and
 * removes it when it ends; while any client is there the slots of every loaded object (and
 * of objects loaded later: dlopen is interposed too) that call one of the clients' symbols
 * point at the wrappers. Each hook's `real` receives the function the wrapper calls. One
 * patcher for all clients, because they share the dlopen/dlsym entries and a slot has only
 * one value. x86-64 Linux only (a few instructions of assembly). */
#ifndef SCOREP_CORE_GOT_H
#define SCOREP_CORE_GOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

typedef struct sp_got_hook {
    const char *symbol;
    void *wrapper;
    void **real; /* set by sp_got_add: the libc function (NULL: this libc lacks it) */
} sp_got_hook;

typedef struct sp_got_client {
    const sp_got_hook *hooks;
    size_t count;
    /* The interpreter's own calls (the executable, libpython) are left alone: the native
     * memory adapter counts what the Python allocators do not, and they call malloc. */
    bool skip_interpreter;
} sp_got_client;

#define SP_GOT_MAX_CLIENTS 4
#define SP_GOT_MAX_HOOKS 96

/* Puts the client's wrappers in place (a client added twice counts once). Returns 0, or -1
 * with one line in err (the C library's dl functions not found, too many hooks). */
SP_MUST_CHECK int sp_got_add(const sp_got_client *client, char *err, size_t errlen);

/* The client's slots get their original values back; the others' stay patched. */
void sp_got_remove(const sp_got_client *client);

/* Objects a dlopen with a bare name loaded since (their patching waits for the next dlsym
 * on a handle or for a client that calls this): patched now (cheap when none were). */
void sp_got_patch_new_objects(void);

/* Set when an object was loaded whose slots are not patched yet. */
extern atomic_bool sp_got_objects_pending;

#endif
