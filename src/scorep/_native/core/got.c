/* Getting the calls of every loaded object to hooked libc functions into the clients'
 * wrappers (core/got.h), without LD_PRELOAD and without re-executing the interpreter.
 *
 * Every call from one shared object (or the executable) to a libc function goes through a
 * slot of that object's global offset table, filled in by the dynamic linker: the jump slot
 * of the function (and, where the function's address is taken, a GLOB_DAT or absolute
 * data relocation, as sqlite's table of system calls has them). While I/O is recorded those
 * slots hold the wrappers' addresses; each wrapper calls the libc function. Slots that
 * point elsewhere (another tool's interposer) are left alone. Read-only slots (RELRO) are
 * made writable for the moment of the write.
 *
 * Objects loaded later are patched as soon as the program can reach them:
 *   - dlopen with a path (how Python imports extension modules): right after it returns;
 *   - dlopen with a bare name searches the *caller's* RPATH/RUNPATH, so it must be called
 *     from the caller: the wrapper jumps to it (a tail call, which leaves the caller's
 *     return address in place) and the new objects are patched at the next dlsym on a
 *     handle (how ctypes and plugin loaders reach a library's functions) or the next I/O
 *     call, whichever comes first;
 *   - dlsym(RTLD_DEFAULT/RTLD_NEXT) depends on the caller as well: a tail call too.
 * dlsym on a handle returns the wrapper for a recorded function (ctypes' libc.write).
 * Objects unloaded since the last scan (dlclose) are forgotten before it, with their slots:
 * another object loaded at the same base, or the same file loaded again, is patched as new.
 *
 * Never patched: libc and the dynamic linker themselves (their internal calls are not
 * interposable anyway), and the tool's own libraries (libscorep_core, the extension
 * modules, libscorep_mpi, libotf2), so that the measurement's own files are never
 * recorded. At the end every slot still pointing at a wrapper gets its value back.
 *
 * x86-64 only: the tail calls are a few instructions of assembly below. */
#include "core/got.h"

#include <stdint.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "the GOT patching (I/O and native memory recording) supports x86-64 only"
#endif

atomic_bool sp_got_objects_pending;

#define SPG_HIDDEN __attribute__((visibility("hidden")))

/* ---- the dl* functions: assembly entries that keep the caller where it matters --------- */

SPG_HIDDEN void *spg_real_dlopen, *spg_real_dlsym, *spg_real_dlvsym;
SPG_HIDDEN int spg_dlopen_keeps_caller(const char *file);
SPG_HIDDEN void *spg_dlopen_then_patch(const char *file, int mode);
SPG_HIDDEN int spg_dlsym_keeps_caller(void *handle);
SPG_HIDDEN void *spg_dlsym_then_map(void *handle, const char *name);
SPG_HIDDEN void *spg_dlvsym_then_map(void *handle, const char *name, const char *version);
SPG_HIDDEN void spg_dlopen_entry(void);
SPG_HIDDEN void spg_dlsym_entry(void);
SPG_HIDDEN void spg_dlvsym_entry(void);

void *spg_real_dlopen, *spg_real_dlsym, *spg_real_dlvsym;

/* Each entry asks a C predicate (the argument registers saved around the call, the stack
 * aligned for it), then either jumps to the real function with the caller's return address
 * untouched or to a C function that calls it and patches afterwards. endbr64 keeps it a
 * valid indirect-branch target where CET is enforced. */
#define SPG_DL_ENTRY(entry, predicate, real, then)                                        \
    ".text\n"                                                                              \
    ".p2align 4\n"                                                                         \
    ".globl " entry "\n"                                                                   \
    ".hidden " entry "\n"                                                                  \
    ".type " entry ",@function\n" entry ":\n"                                              \
    "    endbr64\n"                                                                        \
    "    pushq %rdi\n"                                                                     \
    "    pushq %rsi\n"                                                                     \
    "    pushq %rdx\n"                                                                     \
    "    call " predicate "\n"                                                             \
    "    popq %rdx\n"                                                                      \
    "    popq %rsi\n"                                                                      \
    "    popq %rdi\n"                                                                      \
    "    testl %eax, %eax\n"                                                               \
    "    jz 1f\n"                                                                          \
    "    jmp *" real "(%rip)\n"                                                            \
    "1:  jmp " then "\n"                                                                   \
    ".size " entry ", .-" entry "\n"

__asm__(SPG_DL_ENTRY("spg_dlopen_entry", "spg_dlopen_keeps_caller", "spg_real_dlopen",
                      "spg_dlopen_then_patch")
        SPG_DL_ENTRY("spg_dlsym_entry", "spg_dlsym_keeps_caller", "spg_real_dlsym",
                      "spg_dlsym_then_map")
        SPG_DL_ENTRY("spg_dlvsym_entry", "spg_dlsym_keeps_caller", "spg_real_dlvsym",
                      "spg_dlvsym_then_map"));

int spg_dlopen_keeps_caller(const char *file)
{
    if (!file)
        return 1; /* the program itself: nothing is loaded */
    if (strchr(file, '/'))
        return 0;
    atomic_store(&sp_got_objects_pending, true);
    return 1;
}

void *spg_dlopen_then_patch(const char *file, int mode)
{
    void *handle = ((void *(*)(const char *, int))spg_real_dlopen)(file, mode);
    if (handle)
        sp_got_patch_new_objects();
    return handle;
}

int spg_dlsym_keeps_caller(void *handle)
{
    return handle == RTLD_DEFAULT || handle == RTLD_NEXT;
}

/* A recorded function's address becomes its wrapper's (after the hooks, below). */
static void *as_wrapper(void *address);

void *spg_dlsym_then_map(void *handle, const char *name)
{
    /* Objects a bare-name dlopen loaded are reached through this: patched first. */
    sp_got_patch_new_objects();
    return as_wrapper(((void *(*)(void *, const char *))spg_real_dlsym)(handle, name));
}

void *spg_dlvsym_then_map(void *handle, const char *name, const char *version)
{
    sp_got_patch_new_objects();
    return as_wrapper(((void *(*)(void *, const char *, const char *))spg_real_dlvsym)(
        handle, name, version));
}

/* ---- what is patched ---------------------------------------------------------------------- */

typedef struct {
    const char *symbol;
    void *wrapper;
    void *accept[3]; /* what a slot may hold to be patched: the definitions in use */
    void *real;      /* what the wrapper calls */
    bool skip_interpreter;
    bool mapped;     /* dlsym on a handle returns the wrapper (not for dlopen and dlsym) */
} hook;

/* The clients' hooks, then dlopen, dlsym, dlvsym. Rebuilt under patch_lock whenever a
 * client comes or goes, read by the scans and the dl entries after it. Global because the
 * dl_iterate_phdr callbacks and the wrappers have no other context. */
#define HOOK_MAX (SP_GOT_MAX_HOOKS + 3)
static hook hooks[HOOK_MAX];
static int hook_count;
static const sp_got_client *clients[SP_GOT_MAX_CLIENTS];
static size_t client_count;
#define HASH_SIZE 128
static int8_t hook_hash[HASH_SIZE]; /* symbol hash -> first hook, -1 none (chained) */
static int8_t hook_next[HOOK_MAX];

typedef struct {
    void **slot;
    void *original;
    int hook; /* index into hooks */
} patched_slot;

typedef struct {
    uintptr_t base;
    const void *phdr;  /* with the base and the layout: tells another object at the same address apart */
    uint64_t layout;   /* layout_of(): objects share base and phdr (e_phoff is 64 in nearly all) */
    size_t first_slot, slot_count;
    uintptr_t relro_begin, relro_end; /* whole pages the loader made read-only */
    bool loaded;                      /* found by prune_unloaded's look */
} scanned_object;

/* Objects scanned (patched or skipped) and the slots patched, for the restore at the end.
 * Global because the loader's callbacks carry only a pointer; guarded by patch_lock. */
static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;
static scanned_object *objects;
static size_t object_count, object_capacity;
static patched_slot *slots;
static size_t slot_count, slot_capacity;
static unsigned long long last_adds; /* the loader's count of loaded objects, when scanned */
static unsigned long long last_subs; /* its count of unloaded ones, when last pruned */
static bool patching;                /* while any client is added */
static char own_dir[4096];           /* the tool's own libraries live here */
static size_t own_dir_len;

static void *as_wrapper(void *address)
{
    if (!address)
        return NULL;
    for (int i = 0; i < hook_count; i++)
        if (hooks[i].mapped && hooks[i].real &&
            (hooks[i].real == address || hooks[i].accept[0] == address ||
             hooks[i].accept[1] == address || hooks[i].accept[2] == address))
            return hooks[i].wrapper;
    return address;
}

static unsigned name_hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % HASH_SIZE;
}

static const hook *find_hook(const char *name)
{
    for (int i = hook_hash[name_hash(name)]; i >= 0; i = hook_next[i])
        if (strcmp(hooks[i].symbol, name) == 0)
            return &hooks[i];
    return NULL;
}

static bool basename_starts(const char *path, const char *prefix)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, prefix, strlen(prefix)) == 0;
}

/* Objects whose calls are never recorded. */
static bool excluded(const struct dl_phdr_info *info)
{
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    if (info->dlpi_phdr == (const void *)getauxval(AT_PHDR))
        return false; /* the executable (its name is "") */
    if (!name[0] || info->dlpi_addr == getauxval(AT_SYSINFO_EHDR))
        return true; /* the vDSO: no relocations of ours */
    if (own_dir_len && strncmp(name, own_dir, own_dir_len) == 0 && name[own_dir_len] == '/')
        return true;
    static const char *const system[] = {"libc.so", "ld-linux", "ld64.so", "libpthread.so",
                                         "libdl.so", "linux-vdso", "linux-gate", "libotf2",
                                         "libscorep_"};
    for (size_t i = 0; i < sizeof system / sizeof system[0]; i++)
        if (basename_starts(name, system[i]))
            return true;
    return false;
}

/* The interpreter's own code: the executable and a shared libpython. */
static bool is_interpreter(const struct dl_phdr_info *info)
{
    if (info->dlpi_phdr == (const void *)getauxval(AT_PHDR))
        return true;
    return info->dlpi_name && basename_starts(info->dlpi_name, "libpython");
}

/* ---- scanning one object ---------------------------------------------------------------- */

typedef struct {
    const ElfW(Sym) *symtab;
    const char *strtab;
    size_t strsz;
    uintptr_t base, lo, hi;
    bool interpreter;
} object_view;

static uintptr_t dyn_ptr(uintptr_t value, uintptr_t base)
{
    /* The loader relocates these in place on x86-64; an object that kept them relative
     * (as the vDSO) gets the base added. */
    return value < base ? value + base : value;
}

static int add_slot(void **slot, void *original, int hook_index)
{
    if (slot_count == slot_capacity) {
        size_t cap = slot_capacity ? slot_capacity * 2 : 256;
        patched_slot *more = realloc(slots, cap * sizeof *more);
        if (!more)
            return -1;
        slots = more;
        slot_capacity = cap;
    }
    slots[slot_count++] = (patched_slot){slot, original, hook_index};
    return 0;
}

/* Collects the slots of `relocs` that call a hooked function (their originals stay in
 * `slots` until written). */
static void collect(const object_view *v, const ElfW(Rela) *relocs, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const ElfW(Rela) *r = &relocs[i];
        unsigned type = ELF64_R_TYPE(r->r_info);
        size_t sym = ELF64_R_SYM(r->r_info);
        if (!sym || (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT &&
                     type != R_X86_64_64))
            continue;
        if (type == R_X86_64_64 && r->r_addend != 0)
            continue;
        size_t name_offset = v->symtab[sym].st_name;
        if (name_offset >= v->strsz)
            continue;
        const hook *h = find_hook(v->strtab + name_offset);
        if (!h || (h->skip_interpreter && v->interpreter))
            continue;
        void **slot = (void **)(v->base + r->r_offset);
        void *current = *slot;
        if (current == h->wrapper)
            continue; /* patched already */
        bool ours = current == h->accept[0] || current == h->accept[1] ||
                    current == h->accept[2] ||
                    /* a jump slot not bound yet points into the object's own PLT */
                    (type == R_X86_64_JUMP_SLOT && (uintptr_t)current >= v->lo &&
                     (uintptr_t)current < v->hi);
        if (ours) /* out of memory: this call stays unrecorded */
            (void)add_slot(slot, current, (int)(h - hooks));
    }
}

/* Makes the object's read-only slots writable for `write`, then read-only again. Returns
 * false when the kernel refuses (a hardened system): then nothing is written. */
static bool with_slots_writable(scanned_object *o, void (*write)(scanned_object *))
{
    bool protect = false;
    for (size_t i = o->first_slot; i < o->first_slot + o->slot_count; i++) {
        uintptr_t at = (uintptr_t)slots[i].slot;
        if (at >= o->relro_begin && at < o->relro_end)
            protect = true;
    }
    if (protect && mprotect((void *)o->relro_begin, o->relro_end - o->relro_begin,
                            PROT_READ | PROT_WRITE) != 0)
        return false;
    write(o);
    if (protect)
        (void)mprotect((void *)o->relro_begin, o->relro_end - o->relro_begin, PROT_READ);
    return true;
}

/* An aligned pointer store: a thread calling through the slot meanwhile sees the old or
 * the new function, both of which work. */
static void point_at_wrappers(scanned_object *o)
{
    for (size_t i = o->first_slot; i < o->first_slot + o->slot_count; i++)
        __atomic_store_n(slots[i].slot, hooks[slots[i].hook].wrapper, __ATOMIC_RELEASE);
}

static void point_at_originals(scanned_object *o)
{
    for (size_t i = o->first_slot; i < o->first_slot + o->slot_count; i++)
        /* Only what is still ours: the program may have rebound a slot itself. */
        if (*slots[i].slot == hooks[slots[i].hook].wrapper)
            __atomic_store_n(slots[i].slot, slots[i].original, __ATOMIC_RELEASE);
}

/* A hash of the object's program headers. An object the program unloaded (Open MPI closes
 * the components it does not select) can be followed at the same base by another one, whose
 * program headers then sit at the same address: without this, the slots of the first were
 * taken for the second's and written at the end (a crash where the second is smaller), and
 * the second was never patched. prune_unloaded forgets the first at the next scan; until
 * then (a dlopen by bare name waits for the next dlsym or I/O call, perhaps the end) this
 * tells them apart, and it keeps prune_unloaded from reading the first's slots in the
 * second. */
static uint64_t layout_of(const struct dl_phdr_info *info)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t parts[3] = {ph->p_type, ph->p_vaddr, ph->p_memsz};
        for (int k = 0; k < 3; k++)
            h = (h ^ parts[k]) * 1099511628211ull;
    }
    return h;
}

static scanned_object *find_object(const struct dl_phdr_info *info)
{
    uint64_t layout = 0;
    for (size_t i = 0; i < object_count; i++)
        if (objects[i].base == info->dlpi_addr && objects[i].phdr == info->dlpi_phdr) {
            if (!layout)
                layout = layout_of(info);
            if (objects[i].layout == layout)
                return &objects[i];
        }
    return NULL;
}

static scanned_object *add_object(const struct dl_phdr_info *info)
{
    if (object_count == object_capacity) {
        size_t cap = object_capacity ? object_capacity * 2 : 64;
        scanned_object *more = realloc(objects, cap * sizeof *more);
        if (!more)
            return NULL;
        objects = more;
        object_capacity = cap;
    }
    scanned_object *o = &objects[object_count++];
    memset(o, 0, sizeof *o);
    o->base = info->dlpi_addr;
    o->phdr = info->dlpi_phdr;
    o->layout = layout_of(info);
    o->first_slot = slot_count;
    return o;
}

/* Patches one object: its slots that call hooked functions now call the wrappers. */
static void patch_object(struct dl_phdr_info *info, scanned_object *o)
{
    object_view v = {.base = info->dlpi_addr, .lo = UINTPTR_MAX, .hi = 0,
                     .interpreter = is_interpreter(info)};
    const ElfW(Dyn) *dyn = NULL;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t start = v.base + ph->p_vaddr;
        if (ph->p_type == PT_DYNAMIC) {
            dyn = (const ElfW(Dyn) *)start;
        } else if (ph->p_type == PT_GNU_RELRO) {
            o->relro_begin = start & ~(page - 1);
            o->relro_end = (start + ph->p_memsz) & ~(page - 1);
        } else if (ph->p_type == PT_LOAD) {
            if (start < v.lo)
                v.lo = start;
            if (start + ph->p_memsz > v.hi)
                v.hi = start + ph->p_memsz;
        }
    }
    if (!dyn)
        return;
    const ElfW(Rela) *jmprel = NULL, *rela = NULL;
    size_t jmprel_size = 0, rela_size = 0;
    long pltrel = DT_RELA;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: v.symtab = (const ElfW(Sym) *)dyn_ptr(d->d_un.d_ptr, v.base); break;
        case DT_STRTAB: v.strtab = (const char *)dyn_ptr(d->d_un.d_ptr, v.base); break;
        case DT_STRSZ: v.strsz = d->d_un.d_val; break;
        case DT_JMPREL: jmprel = (const ElfW(Rela) *)dyn_ptr(d->d_un.d_ptr, v.base); break;
        case DT_PLTRELSZ: jmprel_size = d->d_un.d_val; break;
        case DT_PLTREL: pltrel = (long)d->d_un.d_val; break;
        case DT_RELA: rela = (const ElfW(Rela) *)dyn_ptr(d->d_un.d_ptr, v.base); break;
        case DT_RELASZ: rela_size = d->d_un.d_val; break;
        default: break;
        }
    }
    if (!v.symtab || !v.strtab)
        return;
    o->first_slot = slot_count;
    if (jmprel && pltrel == DT_RELA)
        collect(&v, jmprel, jmprel_size / sizeof *jmprel);
    if (rela)
        collect(&v, rela, rela_size / sizeof *rela);
    o->slot_count = slot_count - o->first_slot;
    if (o->slot_count && !with_slots_writable(o, point_at_wrappers)) {
        slot_count = o->first_slot; /* this object's calls are not recorded */
        o->slot_count = 0;
    }
}

static int patch_callback(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof info->dlpi_adds)
        last_adds = info->dlpi_adds;
    if (find_object(info))
        return 0;
    scanned_object *o = add_object(info);
    if (!o || excluded(info))
        return 0;
    patch_object(info, o);
    return 0;
}

/* Whether the object's slots still call the wrappers. An object loaded again at the same
 * base (the same file: the same program headers) has the loader's values in them. (An
 * object whose every slot the program pointed back at libc itself is patched again.) */
static bool still_patched(const scanned_object *o)
{
    for (size_t i = o->first_slot; i < o->first_slot + o->slot_count; i++)
        if (*slots[i].slot == hooks[slots[i].hook].wrapper)
            return true;
    return !o->slot_count;
}

static int loaded_callback(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    scanned_object *o = find_object(info);
    if (o && still_patched(o))
        o->loaded = true;
    return 0;
}

/* Drops the objects unloaded since the last scan, and their slots (kept in the objects'
 * order), when the loader's count of unloaded objects says there are some. Without this an
 * object loaded at the base of an unloaded one with the same program headers (the same
 * file loaded again) was taken for it and left unpatched. Called with patch_lock held,
 * before a scan: the objects loaded since are not patched yet. */
static void prune_unloaded(unsigned long long subs)
{
    if (subs == last_subs)
        return;
    last_subs = subs;
    for (size_t i = 0; i < object_count; i++)
        objects[i].loaded = false;
    dl_iterate_phdr(loaded_callback, NULL);
    size_t kept = 0, kept_slots = 0;
    for (size_t i = 0; i < object_count; i++) {
        scanned_object o = objects[i];
        if (!o.loaded)
            continue;
        memmove(&slots[kept_slots], &slots[o.first_slot], o.slot_count * sizeof *slots);
        o.first_slot = kept_slots;
        kept_slots += o.slot_count;
        objects[kept++] = o;
    }
    object_count = kept;
    slot_count = kept_slots;
}

static int restore_callback(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    scanned_object *o = find_object(info);
    if (o && o->slot_count)
        (void)with_slots_writable(o, point_at_originals);
    return 0;
}

/* The loader's counts of objects loaded and unloaded so far. */
static int counts_callback(struct dl_phdr_info *info, size_t size, void *data)
{
    unsigned long long *counts = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        counts[0] = info->dlpi_adds;
        counts[1] = info->dlpi_subs;
    }
    return 1; /* the first object tells */
}

/* ---- setting up, keeping up, undoing ---------------------------------------------------- */

/* Whether `address` lies in the executable: a non-PIE executable that takes a function's
 * address defines the function as its own PLT entry (the "canonical PLT"), which every
 * object's references then bind to; calling it would jump through the executable's slot,
 * that is, back into the wrapper. */
static bool in_executable(void *address)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (!dladdr1(address, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return false;
    return !map->l_name || !map->l_name[0];
}

/* The definitions a slot may be bound to: the default one (an interposer loaded before
 * libc comes first, or the executable's canonical PLT entry), libc's own, libpthread's
 * (older glibc exports its own read, write, close, ...) and an older symbol version
 * (dlopen@GLIBC_2.2.5). Returns the function the wrapper calls: the default one, unless
 * that is the executable's PLT entry (then libc's). */
static void *set_accepted(hook *h, void *libc, void *libpthread, const char *old_version)
{
    h->accept[0] = dlsym(RTLD_DEFAULT, h->symbol);
    h->accept[1] = libc ? dlsym(libc, h->symbol) : NULL;
    h->accept[2] = libpthread ? dlsym(libpthread, h->symbol)
                   : old_version ? dlvsym(RTLD_DEFAULT, h->symbol, old_version)
                                 : NULL;
    if (h->accept[0] && in_executable(h->accept[0]))
        return h->accept[1] ? h->accept[1] : h->accept[2];
    return h->accept[0];
}

static void find_own_dir(void)
{
    Dl_info info;
    own_dir_len = 0;
    if (!dladdr((void *)sp_got_add, &info) || !info.dli_fname)
        return;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash || (size_t)(slash - info.dli_fname) >= sizeof own_dir)
        return;
    own_dir_len = (size_t)(slash - info.dli_fname);
    memcpy(own_dir, info.dli_fname, own_dir_len);
    own_dir[own_dir_len] = '\0';
}

/* Rebuilds the hook table from the clients. Returns false when they have more hooks than
 * the table holds. Called with patch_lock held. */
static bool build_hooks(void)
{
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    void *libpthread = dlopen("libpthread.so.0", RTLD_LAZY | RTLD_NOLOAD);
    bool fits = true;
    hook_count = 0;
    for (size_t c = 0; c < client_count; c++)
        for (size_t k = 0; k < clients[c]->count; k++) {
            const sp_got_hook *g = &clients[c]->hooks[k];
            if (hook_count == SP_GOT_MAX_HOOKS) {
                fits = false;
                break;
            }
            hook *h = &hooks[hook_count++];
            memset(h, 0, sizeof *h);
            h->symbol = g->symbol;
            h->wrapper = g->wrapper;
            h->skip_interpreter = clients[c]->skip_interpreter;
            h->mapped = true;
            h->real = set_accepted(h, libc, libpthread, NULL);
            *g->real = h->real;
        }
    static const struct {
        const char *symbol;
        void (*entry)(void);
        void **real;
    } dl[] = {{"dlopen", spg_dlopen_entry, &spg_real_dlopen},
              {"dlsym", spg_dlsym_entry, &spg_real_dlsym},
              {"dlvsym", spg_dlvsym_entry, &spg_real_dlvsym}};
    for (int i = 0; i < 3; i++) {
        hook *h = &hooks[hook_count++];
        memset(h, 0, sizeof *h);
        h->symbol = dl[i].symbol;
        h->wrapper = (void *)dl[i].entry;
        h->real = *dl[i].real = set_accepted(h, libc, NULL, "GLIBC_2.2.5");
    }
    if (libc)
        dlclose(libc);
    if (libpthread)
        dlclose(libpthread);
    memset(hook_hash, -1, sizeof hook_hash);
    for (int i = hook_count; i-- > 0;) {
        /* A function libc lacks (an older glibc) is not hooked: nothing calls it. */
        if (!hooks[i].real || !hooks[i].wrapper)
            continue;
        unsigned bucket = name_hash(hooks[i].symbol);
        hook_next[i] = hook_hash[bucket];
        hook_hash[bucket] = (int8_t)i;
    }
    return fits;
}

/* Every slot still pointing at a wrapper gets its value back; the scan starts afresh.
 * Called with patch_lock held. */
static void unpatch_all(void)
{
    if (patching)
        dl_iterate_phdr(restore_callback, NULL);
    patching = false;
    free(slots);
    free(objects);
    slots = NULL;
    objects = NULL;
    slot_count = slot_capacity = object_count = object_capacity = 0;
    last_adds = last_subs = 0;
}

/* Patches every loaded object for the clients there are now. Called with patch_lock held. */
static int patch_all(char *err, size_t errlen)
{
    if (!client_count)
        return 0;
    find_own_dir();
    if (!build_hooks())
        return sp_error(err, errlen, "more than %d libc functions to interpose",
                        SP_GOT_MAX_HOOKS);
    if (!spg_real_dlopen || !spg_real_dlsym)
        return sp_error(err, errlen, "the C library's dlopen and dlsym were not found");
    patching = true;
    unsigned long long counts[2] = {0, 0};
    dl_iterate_phdr(counts_callback, counts);
    last_subs = counts[1];
    dl_iterate_phdr(patch_callback, NULL);
    atomic_store(&sp_got_objects_pending, false);
    return 0;
}

static void after_fork_in_child(void);

static void register_fork_handler_once(void)
{
    (void)pthread_atfork(NULL, NULL, after_fork_in_child);
}

int sp_got_add(const sp_got_client *client, char *err, size_t errlen)
{
    /* pthread_atfork handlers cannot be removed: registered once per process. */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    (void)pthread_once(&once, register_fork_handler_once);
    pthread_mutex_lock(&patch_lock);
    for (size_t c = 0; c < client_count; c++)
        if (clients[c] == client) {
            pthread_mutex_unlock(&patch_lock);
            return 0;
        }
    if (client_count == SP_GOT_MAX_CLIENTS) {
        pthread_mutex_unlock(&patch_lock);
        return sp_error(err, errlen, "more than %d adapters interpose libc functions",
                        SP_GOT_MAX_CLIENTS);
    }
    /* Slots are patched from a fresh scan with the new client's hooks among the others
     * (only when a measurement starts: the old values are back for that moment). */
    unpatch_all();
    clients[client_count++] = client;
    int status = patch_all(err, errlen);
    if (status != 0) {
        unpatch_all();
        client_count--;
        char ignored[8];
        (void)patch_all(ignored, sizeof ignored);
    }
    pthread_mutex_unlock(&patch_lock);
    return status;
}

void sp_got_remove(const sp_got_client *client)
{
    pthread_mutex_lock(&patch_lock);
    size_t c = 0;
    while (c < client_count && clients[c] != client)
        c++;
    if (c < client_count) {
        unpatch_all();
        for (; c + 1 < client_count; c++)
            clients[c] = clients[c + 1];
        client_count--;
        char ignored[8];
        (void)patch_all(ignored, sizeof ignored); /* the others' hooks: they worked before */
    }
    pthread_mutex_unlock(&patch_lock);
}

void sp_got_patch_new_objects(void)
{
    atomic_store(&sp_got_objects_pending, false);
    pthread_mutex_lock(&patch_lock);
    if (patching) {
        unsigned long long counts[2] = {0, 0};
        dl_iterate_phdr(counts_callback, counts);
        prune_unloaded(counts[1]);
        if (counts[0] != last_adds)
            dl_iterate_phdr(patch_callback, NULL);
    }
    pthread_mutex_unlock(&patch_lock);
}

/* A child made by fork() while another thread held the lock would wait for ever: it gets
 * a fresh one. Its slots stay as the parent's (they work whether it records or not). */
static void after_fork_in_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&patch_lock, &fresh, sizeof fresh);
}
