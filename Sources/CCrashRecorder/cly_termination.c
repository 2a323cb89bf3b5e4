// The termination monitor: a launch ended by a termination signal is recorded as what it is.
//
// `systemctl stop`, `docker stop` and Kubernetes send SIGTERM; a terminal sends SIGINT or SIGHUP. An app that does
// not handle them dies without its exit hooks, so its launch marker stays, and without this monitor the next
// launch would report a fatal abnormal exit for every deploy. This file watches SIGTERM, SIGINT and SIGHUP (when
// their action is the default one or an app's handler) and SIGQUIT, SIGUSR1 and SIGUSR2 (only when their action is
// the default one: the Swift runtime's backtracer owns SIGQUIT when it is on, and an app's USR1/USR2 handler is
// not about ending the launch). Ignored signals are left ignored (nohup, a DispatchSource's SIG_IGN).
//
// What runs in the handler (termination_handler), in call order:
//   - the previous action was the default one: cly_launch_marker_record_termination("ended") (open, pwrite,
//     close), cly_symbolication_marker_remove_at_end (unlink), then cly_die_of: SIG_DFL, unblock, tgkill — the
//     process dies of the signal, so its parent sees the same status as without us (143 for SIGTERM);
//   - the previous action was the app's handler: record "handling", call that handler with the same arguments
//     (it was installed with the same flags and mask as ours: its handling is unchanged), then, if it returned,
//     record "handled" — the app chose to go on; the next launch then knows a SIGTERM came before the end.
// What runs later: the next launch reads the record (LaunchMarker+Format.swift, AbnormalExits.swift).
// Every call is async-signal-safe (sigaction, sigprocmask, open, close, unlink, getpid, clock_gettime; pwrite:
// a plain system call with no userspace state) or a raw syscall (gettid, tgkill). No malloc, no locks, no stdio.
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "cly_internal.h"
#include "cly_termination.h"

static const int watched_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define WATCHED_COUNT ((int)(sizeof watched_signals / sizeof watched_signals[0]))

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction previous_actions[WATCHED_COUNT];  // written before our handler is installed
static atomic_bool watching[WATCHED_COUNT];

static int watched_index(int signal_number) {
    for (int i = 0; i < WATCHED_COUNT; i++)
        if (watched_signals[i] == signal_number) return i;
    return -1;
}

static bool is_app_handler(const struct sigaction *action) {
    if ((action->sa_flags & SA_SIGINFO) != 0) return action->sa_sigaction != NULL;
    return action->sa_handler != SIG_DFL && action->sa_handler != SIG_IGN;
}

static void termination_handler(int signal_number, siginfo_t *info, void *context) {
    int saved_errno = errno;
    int index = watched_index(signal_number);
    const struct sigaction *previous = index >= 0 ? &previous_actions[index] : NULL;
    if (previous == NULL || !is_app_handler(previous)) {
        cly_launch_marker_record_termination(signal_number, info, CLY_TERMINATION_ENDED);
        cly_symbolication_marker_remove_at_end();  // a symbolication under way did not end the launch
        cly_die_of(signal_number);  // the default action: terminate (a core for SIGQUIT)
        errno = saved_errno;
        return;  // not reached: the signal was unblocked with its default action
    }
    cly_launch_marker_record_termination(signal_number, info, CLY_TERMINATION_HANDLING);
    if ((previous->sa_flags & SA_SIGINFO) != 0)
        previous->sa_sigaction(signal_number, info, context);
    else
        previous->sa_handler(signal_number);
    cly_launch_marker_record_termination(signal_number, info, CLY_TERMINATION_HANDLED);
    errno = saved_errno;
}

static bool ours(const struct sigaction *action) {
    return (action->sa_flags & SA_SIGINFO) != 0 && action->sa_sigaction == termination_handler;
}

int cly_termination_install(void) {
    pthread_mutex_lock(&install_lock);
    int result = 0;
    for (int i = 0; i < WATCHED_COUNT; i++) {
        int signal_number = watched_signals[i];
        struct sigaction current;
        if (sigaction(signal_number, NULL, &current) != 0) {
            result = errno;
            continue;
        }
        if (ours(&current)) continue;  // installed before: the saved action stays the app's
        bool default_action = (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_DFL;
        bool terminal = signal_number == SIGTERM || signal_number == SIGINT || signal_number == SIGHUP;
        if (!default_action && !(terminal && is_app_handler(&current))) continue;
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
        previous_actions[i] = current;
        if (sigaction(signal_number, &action, NULL) != 0) {
            result = errno;
            continue;
        }
        atomic_store(&watching[i], true);
    }
    pthread_mutex_unlock(&install_lock);
    return result;
}

void cly_termination_uninstall(void) {
    pthread_mutex_lock(&install_lock);
    for (int i = 0; i < WATCHED_COUNT; i++) {
        if (!atomic_load(&watching[i])) continue;
        struct sigaction current;
        if (sigaction(watched_signals[i], NULL, &current) == 0 && ours(&current))
            sigaction(watched_signals[i], &previous_actions[i], NULL);
        atomic_store(&watching[i], false);
    }
    pthread_mutex_unlock(&install_lock);
}
