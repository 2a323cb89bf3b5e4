// The termination monitor: a launch ended by a termination signal is recorded as what it is.
//
// `systemctl stop`, `docker stop` and Kubernetes send SIGTERM; a terminal sends SIGINT or SIGHUP. An app that does
// not handle them dies without its exit hooks, so its launch marker stays, and without this monitor the next
// launch would report a fatal abnormal exit for every deploy. This file watches SIGTERM, SIGINT and SIGHUP (when
// their action is the default one or an app's handler) and SIGQUIT, SIGUSR1 and SIGUSR2 (only when their action is
// the default one: the Swift runtime's backtracer owns SIGQUIT when it is on, and an app's USR1/USR2 handler is
// not about ending the launch). Ignored signals are left ignored (nohup, an app's SIG_IGN).
//
// Apps install their handling after us, too: a server framework's graceful shutdown (ServiceLifecycle's
// `ServiceGroup`, Vapor) makes a dispatch signal source for SIGTERM and SIGINT, and libdispatch then installs its
// own handler (it forwards the signal to its manager thread's signalfd). So the monitor keeps watching: a thread
// ("cohorly-signals", all signals blocked but SIGSYS) looks at the actions every CLY_TERMINATION_RECHECK_MS and
// wraps a new one the way install does. The wrapped actions are kept per signal, newest last, never overwritten
// (at most CLY_TERMINATION_GENERATIONS): a handler running while the next is wrapped reads a stable action, and an
// app's handler that chains to the action it replaced (ours) reaches the action before it, not itself again.
//
// libdispatch's handler only forwards the signal to its manager thread, which reads it from a signalfd — and a
// signalfd may also take a pending SIGTERM before any thread's handler runs, ours included (Linux dequeues a
// process-directed signal for whoever asks first). So when the monitor wraps libdispatch's handler, it also makes a
// dispatch signal source of its own for that signal (libdispatch installs its handler once per signal: ours stays),
// which fires with the app's: when our handler did not see that signal, the source records it as handled (the
// sender unknown).
//
// What runs in the handler (termination_handler), in call order:
//   - the action it stands for: the newest wrapped action, or, when this thread is already inside this handler for
//     this signal (an app's handler chained to ours), the one before;
//   - that action was the default one: cly_launch_marker_record_termination("ended") (open, pwrite, close),
//     cly_symbolication_marker_remove_at_end (unlink), then cly_die_of: SIG_DFL, unblock, tgkill — the process
//     dies of the signal, so its parent sees the same status as without us (143 for SIGTERM);
//   - that action was the app's handler (libdispatch's included): record "handling", call that handler with the
//     same arguments (it was installed with the same flags and mask as ours: its handling is unchanged), then, if
//     it returned, record "handled" — the app chose to go on; the next launch then knows a SIGTERM came before the
//     end (a graceful shutdown SIGKILLed at the supervisor's stop timeout is `killed_after_termination_signal`).
// What runs later: the next launch reads the record (LaunchMarker+Format.swift, AbnormalExits.swift).
// Every call is async-signal-safe (sigaction, sigprocmask, open, close, unlink, getpid, clock_gettime; pwrite:
// a plain system call with no userspace state) or a raw syscall (gettid, tgkill). No malloc, no locks, no stdio.
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "cly_internal.h"
#include "cly_termination.h"

static const int watched_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define WATCHED_COUNT ((int)(sizeof watched_signals / sizeof watched_signals[0]))

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
// The actions our handler stands for, per signal, oldest first: each slot is written once, before the count
// that publishes it, and never again (a running handler never reads a slot being written).
static struct sigaction wrapped_actions[WATCHED_COUNT][CLY_TERMINATION_GENERATIONS];
static atomic_int wrapped_count[WATCHED_COUNT];
static atomic_bool watching[WATCHED_COUNT];
// Nesting of the handler per signal on one thread (an app's handler that chains back to ours).
static atomic_int nesting_tid[WATCHED_COUNT];
static atomic_int nesting_depth[WATCHED_COUNT];

// libdispatch, referenced weakly (NULL when it is not loaded): what a dispatch signal source of our own needs. Its
// objects are passed as plain pointers (the header's transparent unions have the same calling convention).
extern const char _dispatch_source_type_signal[] __attribute__((weak));
extern void *dispatch_source_create(const void *type, uintptr_t handle, uintptr_t mask, void *queue)
    __attribute__((weak));
extern void *dispatch_get_global_queue(intptr_t identifier, uintptr_t flags) __attribute__((weak));
extern void dispatch_set_context(void *object, void *context) __attribute__((weak));
extern void dispatch_source_set_event_handler_f(void *source, void (*handler)(void *)) __attribute__((weak));
extern void dispatch_source_set_registration_handler_f(void *source, void (*handler)(void *)) __attribute__((weak));
extern void dispatch_resume(void *object) __attribute__((weak));
static atomic_bool handler_saw[WATCHED_COUNT];  // our handler recorded the signal (the source need not)
static bool dispatch_observed[WATCHED_COUNT];    // our own source is made (under install_lock)
// Our own source is made but libdispatch has not registered it yet (it does so later, on its manager thread): a
// signal its signalfd takes before any handler runs would not reach us, so the signal is not watched yet.
static atomic_bool dispatch_registering[WATCHED_COUNT];

static pthread_t watcher;
static bool watcher_started;
static atomic_int watcher_stop;  // also the futex word the watcher sleeps on

static int watched_index(int signal_number) {
    for (int i = 0; i < WATCHED_COUNT; i++)
        if (watched_signals[i] == signal_number) return i;
    return -1;
}

static bool is_app_handler(const struct sigaction *action) {
    if ((action->sa_flags & SA_SIGINFO) != 0) return action->sa_sigaction != NULL;
    return action->sa_handler != SIG_DFL && action->sa_handler != SIG_IGN;
}

/// The action the handler stands for at nesting `depth` of signal `index`, or NULL (nothing older: return).
static const struct sigaction *wrapped_action(int index, int depth) {
    int count = atomic_load(&wrapped_count[index]);
    int slot = count - 1 - depth;
    return slot >= 0 ? &wrapped_actions[index][slot] : NULL;
}

static void termination_handler(int signal_number, siginfo_t *info, void *context) {
    int saved_errno = errno;
    int index = watched_index(signal_number);
    if (index < 0) {
        errno = saved_errno;
        return;
    }
    pid_t tid = cly_gettid();
    int depth = 0;
    bool owner = false;
    if (atomic_load(&nesting_tid[index]) == tid) {
        depth = atomic_fetch_add(&nesting_depth[index], 1) + 1;
    } else {
        int free_slot = 0;
        owner = atomic_compare_exchange_strong(&nesting_tid[index], &free_slot, tid);
    }
    const struct sigaction *previous = wrapped_action(index, depth);
    atomic_store(&handler_saw[index], true);
    if (previous == NULL) {
        // nothing older to stand for
    } else if (!is_app_handler(previous)) {
        cly_launch_marker_record_termination(signal_number, info, CLY_TERMINATION_ENDED);
        cly_symbolication_marker_remove_at_end();  // a symbolication under way did not end the launch
        cly_die_of(signal_number);  // the default action: terminate (a core for SIGQUIT)
    } else {
        cly_launch_marker_record_termination(signal_number, info, CLY_TERMINATION_HANDLING);
        if ((previous->sa_flags & SA_SIGINFO) != 0)
            previous->sa_sigaction(signal_number, info, context);
        else
            previous->sa_handler(signal_number);
        cly_launch_marker_record_termination(signal_number, info, CLY_TERMINATION_HANDLED);
    }
    if (depth > 0) atomic_fetch_sub(&nesting_depth[index], 1);
    if (owner) atomic_store(&nesting_tid[index], 0);
    errno = saved_errno;
}

static bool ours(const struct sigaction *action) {
    return (action->sa_flags & SA_SIGINFO) != 0 && action->sa_sigaction == termination_handler;
}

/// Whether `action` is libdispatch's signal handler (it lies in the object that holds libdispatch).
static bool is_libdispatch_handler(const struct sigaction *action) {
    if (dispatch_source_create == NULL) return false;
    void *handler = (action->sa_flags & SA_SIGINFO) != 0 ? (void *)action->sa_sigaction : (void *)action->sa_handler;
    struct dl_find_object handler_object, dispatch_object;
    return _dl_find_object(handler, &handler_object) == 0 &&
           _dl_find_object((void *)dispatch_source_create, &dispatch_object) == 0 &&
           handler_object.dlfo_map_start == dispatch_object.dlfo_map_start;
}

/// Our dispatch source fired (a dispatch queue's thread): record the signal unless our handler did.
static void dispatched_signal(void *context) {
    int index = (int)(intptr_t)context;
    if (index < 0 || index >= WATCHED_COUNT || atomic_exchange(&handler_saw[index], false)) return;
    cly_launch_marker_record_termination(watched_signals[index], NULL, CLY_TERMINATION_HANDLED);
}

/// libdispatch registered our source (a dispatch queue's thread): from now on it sees every signal it is sent.
static void dispatch_source_registered(void *context) {
    int index = (int)(intptr_t)context;
    if (index >= 0 && index < WATCHED_COUNT) atomic_store(&dispatch_registering[index], false);
}

/// Makes our own dispatch source for watched signal `index`, once (libdispatch's handler is installed for it, so
/// libdispatch leaves the action alone). Called with install_lock held, before our handler replaces libdispatch's.
static void observe_through_dispatch(int index) {
    if (dispatch_observed[index] || _dispatch_source_type_signal == NULL || dispatch_get_global_queue == NULL ||
        dispatch_set_context == NULL || dispatch_source_set_event_handler_f == NULL || dispatch_resume == NULL)
        return;
    void *source = dispatch_source_create(_dispatch_source_type_signal, (uintptr_t)watched_signals[index], 0,
                                          dispatch_get_global_queue(0, 0));
    if (source == NULL) return;
    dispatch_set_context(source, (void *)(intptr_t)index);
    dispatch_source_set_event_handler_f(source, dispatched_signal);
    if (dispatch_source_set_registration_handler_f != NULL) {
        atomic_store(&dispatch_registering[index], true);
        dispatch_source_set_registration_handler_f(source, dispatch_source_registered);
    }
    dispatch_resume(source);  // kept for the life of the process
    dispatch_observed[index] = true;
}

/// Wraps every watched signal whose action is not ours and is one we watch (see the top of this file). Called with
/// install_lock held. Returns 0 or an errno value.
static int wrap_current_actions(void) {
    int result = 0;
    for (int i = 0; i < WATCHED_COUNT; i++) {
        int signal_number = watched_signals[i];
        struct sigaction current;
        if (sigaction(signal_number, NULL, &current) != 0) {
            result = errno;
            continue;
        }
        if (ours(&current)) continue;  // still ours: the wrapped action stays the app's
        bool default_action = (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_DFL;
        bool terminal = signal_number == SIGTERM || signal_number == SIGINT || signal_number == SIGHUP;
        if (!default_action && !(terminal && is_app_handler(&current))) continue;
        int count = atomic_load(&wrapped_count[i]);
        if (count == CLY_TERMINATION_GENERATIONS) continue;  // an app that keeps replacing its action: let it
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = termination_handler;
        if (default_action) {
            action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
            sigemptyset(&action.sa_mask);
        } else {
            // The app's flags and mask: its handler runs as it would have (restarted calls, stack, resets).
            action.sa_flags = current.sa_flags | SA_SIGINFO;
            action.sa_mask = current.sa_mask;
        }
        // Our source first: once our handler is in place, cly_termination_watches says so only after it is
        // registered (it joins libdispatch's existing registration for the signal: the action stays ours).
        if (is_libdispatch_handler(&current)) observe_through_dispatch(i);
        wrapped_actions[i][count] = current;
        atomic_store(&wrapped_count[i], count + 1);
        if (sigaction(signal_number, &action, NULL) != 0) {
            result = errno;
            continue;
        }
        atomic_store(&watching[i], true);
    }
    return result;
}

static void *watch_actions(void *unused) {
    (void)unused;
    pthread_setname_np(pthread_self(), "cohorly-signals");
    while (atomic_load(&watcher_stop) == 0) {
        cly_futex_wait(&watcher_stop, 0, (uint64_t)CLY_TERMINATION_RECHECK_MS * 1000000ull);
        if (atomic_load(&watcher_stop) != 0) break;
        pthread_mutex_lock(&install_lock);
        wrap_current_actions();
        pthread_mutex_unlock(&install_lock);
    }
    return NULL;
}

// A forked child has no watcher, and must not inherit install_lock held by the parent's watcher: it starts afresh
// (no lock is taken around fork: a crash handler that starts a process must never wait for the watcher, which
// the crash may have stopped anywhere).
static void forget_watcher_in_child(void) {
    pthread_mutex_t unlocked = PTHREAD_MUTEX_INITIALIZER;
    install_lock = unlocked;
    watcher_started = false;
}

/// Starts the watcher thread once per process (a forked child starts its own when it installs the monitor).
static void start_watcher(void) {
    static bool fork_handlers;
    if (!fork_handlers) fork_handlers = pthread_atfork(NULL, NULL, forget_watcher_in_child) == 0;
    if (watcher_started) return;
    sigset_t all, previous;
    sigfillset(&all);
    sigdelset(&all, SIGSYS);  // the crash handler's capture signal: a crash still records this thread
    pthread_sigmask(SIG_SETMASK, &all, &previous);  // the new thread inherits the mask
    atomic_store(&watcher_stop, 0);
    watcher_started = pthread_create(&watcher, NULL, watch_actions, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
}

int cly_termination_install(void) {
    pthread_mutex_lock(&install_lock);
    int result = wrap_current_actions();
    start_watcher();
    pthread_mutex_unlock(&install_lock);
    return result;
}

bool cly_termination_watches(int signal_number) {
    int index = watched_index(signal_number);
    struct sigaction current;
    return index >= 0 && sigaction(signal_number, NULL, &current) == 0 && ours(&current) &&
           !atomic_load(&dispatch_registering[index]);
}

void cly_termination_uninstall(void) {
    pthread_mutex_lock(&install_lock);
    bool stop = watcher_started;
    watcher_started = false;
    atomic_store(&watcher_stop, 1);
    cly_futex_wake(&watcher_stop);
    for (int i = 0; i < WATCHED_COUNT; i++) {
        if (!atomic_load(&watching[i])) continue;
        struct sigaction current;
        int count = atomic_load(&wrapped_count[i]);
        if (count > 0 && sigaction(watched_signals[i], NULL, &current) == 0 && ours(&current))
            sigaction(watched_signals[i], &wrapped_actions[i][count - 1], NULL);
        atomic_store(&watching[i], false);
    }
    pthread_mutex_unlock(&install_lock);
    if (stop) pthread_join(watcher, NULL);  // outside the lock: the watcher takes it
}
