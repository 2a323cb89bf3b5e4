// An app's own termination handler (scenario wait-for-signal --app-sigterm MODE): what a server does to stop
// cleanly. The handler only counts the signal (write, atomic store: async-signal-safe); the main loop acts on it.
#define _GNU_SOURCE
#include "crash_demo_support.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int termination_count;

static void count_termination(int signal_number) {
    (void)signal_number;
    atomic_fetch_add(&termination_count, 1);
    static const char line[] = "app handler: SIGTERM\n";
    ssize_t written = write(1, line, sizeof line - 1);
    (void)written;
}

int demo_install_sigterm_handler(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = count_termination;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    return sigaction(SIGTERM, &action, NULL);
}

int demo_sigterm_count(void) { return atomic_load(&termination_count); }

int demo_sigterm_is_ignored(void) {
    struct sigaction current;
    if (sigaction(SIGTERM, NULL, &current) != 0) return -1;
    return (current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_IGN;
}

void demo_unblock_all_signals(void) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

int demo_is_sleep_syscall(long number) { return number == SYS_clock_nanosleep || number == SYS_nanosleep; }
