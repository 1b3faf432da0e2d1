/* Terminating signals that must not be lost. A measured process handles SIGTERM, SIGHUP
 * and SIGQUIT in Python (the results are written, then the process dies by the signal);
 * plain python dies by the default action wherever it is. A Python handler only runs when
 * the main thread checks for signals: between bytecodes, or when a blocking call returns
 * EINTR. A signal that arrives after the main thread's last check and before it blocks
 * (a pool worker about to wait for its queue's lock when pool.terminate() signals it) is
 * noticed by nobody, and the process waits forever; so did terminate() (issue 13).
 *
 * So each such signal is watched: a C handler runs Python's (which marks the signal for the
 * main thread) and wakes a small thread that sends the signal to the main thread again
 * every 50 ms until the Python handler says it started. Each delivery interrupts a
 * blocking call, whose EINTR path runs the Python handler. The watcher never touches
 * Python or the measurement itself. */
#include "adapters/python/internal.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Process-wide because signal handlers carry no context; one watcher per process. */
static struct {
    sem_t wake;
    bool ready;                 /* `wake` initialized in this process */
    pid_t thread_pid;           /* the process whose watcher thread runs (0: none) */
    pthread_t main_thread;      /* where Python runs its handlers */
    volatile sig_atomic_t signal;  /* the last watched signal that arrived */
    volatile sig_atomic_t started; /* the Python handler started since */
    struct sigaction previous[NSIG];
    bool watched[NSIG];
} watch;

static void on_signal(int sig, siginfo_t *info, void *context)
{
    int saved = errno;
    watch.signal = sig;
    const struct sigaction *prev = &watch.previous[sig];
    if (prev->sa_flags & SA_SIGINFO)
        prev->sa_sigaction(sig, info, context);
    else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN)
        prev->sa_handler(sig);
    sem_post(&watch.wake); /* async-signal-safe */
    errno = saved;
}

static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

static void *watcher(void *unused)
{
    (void)unused;
    for (;;) {
        while (sem_wait(&watch.wake) != 0)
            ;
        int sig = watch.signal;
        /* Until the Python handler ran (at most 10 s: a handler the program replaced
         * never reports). */
        for (int tries = 0; tries < 200 && !watch.started; tries++) {
            pause_ms(50);
            if (!watch.started)
                pthread_kill(watch.main_thread, sig);
        }
        /* The deliveries above woke us again: start afresh. */
        while (sem_trywait(&watch.wake) == 0)
            ;
        watch.started = 0;
    }
    return NULL;
}

int sp_python_watch_signal(int sig)
{
    if (sig <= 0 || sig >= NSIG)
        return -1;
    pid_t pid = getpid();
    if (watch.thread_pid != pid) {
        /* A forked child inherits no thread: its own watcher. */
        if (watch.ready)
            sem_destroy(&watch.wake);
        if (sem_init(&watch.wake, 0, 0) != 0)
            return -1;
        watch.ready = true;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        /* The watcher takes no signal itself: they go to the threads that handle them. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pthread_t thread;
        int failed = pthread_create(&thread, &attr, watcher, NULL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
        if (failed)
            return -1;
        watch.thread_pid = pid;
        memset(watch.watched, 0, sizeof watch.watched);
    }
    watch.main_thread = pthread_self();
    watch.started = 0;
    /* Python's handler (just installed by signal.signal) runs first, from ours. */
    struct sigaction ours, current;
    if (sigaction(sig, NULL, &current) != 0)
        return -1;
    if (current.sa_flags & SA_SIGINFO && current.sa_sigaction == on_signal)
        return 0;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_signal;
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&ours.sa_mask);
    watch.previous[sig] = current;
    if (sigaction(sig, &ours, NULL) != 0)
        return -1;
    watch.watched[sig] = true;
    return 0;
}

void sp_python_signal_handled(void)
{
    watch.started = 1;
}
