/* The I/O adapter's part in the measurement's life cycle: at the start the handles that are
 * open already (standard streams, inherited descriptors) and the wrappers put in place; at
 * the end everything patched is undone. Only with SCOREP_IO_POSIX=true. */
#include "adapters/io/io_adapter.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Defined at the start of each measurement, read by fflush(NULL)'s wrapper. */
uint32_t spio_flush_all_handle = SP_NO_ID;

/* Score-P's names of descriptors open at the start: the standard ones by their macro,
 * terminals by their device, others none. */
static void descriptor_name(int fd, char *name, size_t size)
{
    static const char *const standard[] = {"STDIN_FILENO", "STDOUT_FILENO", "STDERR_FILENO"};
    if (fd >= 0 && fd <= 2) {
        snprintf(name, size, "%s", standard[fd]);
        return;
    }
    name[0] = '\0';
    if (isatty(fd) && ttyname_r(fd, name, size) != 0)
        name[0] = '\0';
}

static void precreate_descriptor(int fd)
{
    sp_io_access_mode mode;
    uint32_t status = 0;
    if (!spio_fd_state(fd, &mode, &status))
        return;
    char name[256];
    descriptor_name(fd, name, sizeof name);
    /* fd + 1: every process's descriptor of that number is one handle (never 0). */
    sp_io_handle_precreated(SP_IO_PARADIGM_POSIX, (uint64_t)fd, name, SP_NO_ID, 0, mode, status,
                            (uint32_t)fd + 1);
}

/* Every descriptor open now, from /proc/self/fd (or by trying each number). */
static void precreate_descriptors(void)
{
    DIR *dir = opendir("/proc/self/fd");
    if (dir) {
        int own = dirfd(dir);
        int fds[1024];
        size_t count = 0;
        struct dirent *entry;
        while ((entry = readdir(dir)) != NULL && count < sizeof fds / sizeof fds[0]) {
            char *end;
            long fd = strtol(entry->d_name, &end, 10);
            if (*end || end == entry->d_name || fd == own)
                continue;
            fds[count++] = (int)fd;
        }
        closedir(dir);
        /* In the order of their numbers, as Score-P's loop defines them. */
        for (size_t i = 1; i < count; i++)
            for (size_t j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
                int t = fds[j];
                fds[j] = fds[j - 1];
                fds[j - 1] = t;
            }
        for (size_t i = 0; i < count; i++)
            precreate_descriptor(fds[i]);
        return;
    }
    struct rlimit limit;
    int max = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 65536
                  ? (int)limit.rlim_cur
                  : 1024;
    for (int fd = 0; fd < max; fd++)
        precreate_descriptor(fd);
}

static void precreate_streams(void)
{
    sp_io_handle_precreated(SP_IO_PARADIGM_ISOC, (uint64_t)(uintptr_t)stdin, "stdin", SP_NO_ID,
                            0, SP_IO_ACCESS_READ_ONLY, 0, 1);
    sp_io_handle_precreated(SP_IO_PARADIGM_ISOC, (uint64_t)(uintptr_t)stdout, "stdout",
                            SP_NO_ID, 0, SP_IO_ACCESS_WRITE_ONLY, 0, 1);
    sp_io_handle_precreated(SP_IO_PARADIGM_ISOC, (uint64_t)(uintptr_t)stderr, "stderr",
                            SP_NO_ID, 0, SP_IO_ACCESS_WRITE_ONLY, 0, 1);
    spio_flush_all_handle = sp_io_handle_proxy(SP_IO_PARADIGM_ISOC, "all open output streams");
}

void *spio_real[SPIO_FN_COUNT];

static const char *const symbols[SPIO_FN_COUNT] = {
#define SPIO_SYMBOL(e, region, symbol, role, events, count) [SPIO_FN_##e] = symbol,
    SPIO_FUNCTIONS(SPIO_SYMBOL)
#undef SPIO_SYMBOL
};

/* What the core's GOT patcher puts in place for this adapter; filled once (the wrappers
 * and symbols never change). */
static sp_got_hook got_hooks[SPIO_FN_COUNT];
static const sp_got_client got_client = {got_hooks, SPIO_FN_COUNT, false};

static void fill_got_hooks(void)
{
    for (int fn = 0; fn < SPIO_FN_COUNT; fn++)
        got_hooks[fn] = (sp_got_hook){
            symbols[fn], spio_posix_wrappers[fn] ? spio_posix_wrappers[fn] : spio_isoc_wrappers[fn],
            &spio_real[fn]};
}

static void after_fork_in_child(void)
{
    /* The parent's measurement does not continue in the child (the core abandons it). */
    atomic_store(&spio_recording, false);
}

static void register_once(void)
{
    fill_got_hooks();
    (void)pthread_atfork(NULL, NULL, after_fork_in_child);
}

static int begin(const sp_config *config, char *err, size_t errlen)
{
    if (!config->io_posix)
        return 0;
    /* pthread_atfork handlers cannot be removed: registered once per process. */
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    (void)pthread_once(&once, register_once);
    /* The real functions first: the handles open now are examined with them. */
    char why[256];
    if (sp_got_add(&got_client, why, sizeof why) != 0)
        return sp_error(err, errlen, "I/O recording: %s", why);
    if (!spio_real[SPIO_FN_READ] || !spio_real[SPIO_FN_FCNTL]) {
        sp_got_remove(&got_client);
        return sp_error(err, errlen, "I/O recording: the C library's I/O functions were not "
                                     "found");
    }
    precreate_descriptors();
    precreate_streams();
    atomic_store(&spio_recording, true);
    return 0;
}

static void end(void)
{
    if (!atomic_exchange(&spio_recording, false))
        return;
    sp_got_remove(&got_client);
    spio_flush_all_handle = SP_NO_ID;
}

static const sp_adapter_hooks io_hooks = {.name = "io", .begin = begin, .end = end};

static const sp_io_call calls[SPIO_FN_COUNT] = {
#define SPIO_CALL(e, region, symbol, role, events, count)                                  \
    [SPIO_FN_##e] = {region, SP_IO_CALL_##events, count},
    SPIO_FUNCTIONS(SPIO_CALL)
#undef SPIO_CALL
};

__attribute__((constructor)) static void register_adapter(void)
{
    (void)sp_adapter_register(&io_hooks);
    sp_io_describe_calls(calls, SPIO_FN_COUNT);
}
