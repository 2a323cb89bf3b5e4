// Sender mode: a process started by CohorlyCrash as the detached crash-event sender (COHORLY_CRASH_SENDER is
// set) runs the sender before `main` and exits, so none of the app's own code runs in it.
// The Swift entry point is referenced weakly: a program without CohorlyCrash's Swift part simply skips this.
// Normal code (a constructor), not the crash path.
//
// The sender's lifetime is bounded here, whatever the destination or the Swift side does: a watchdog thread ends
// the process (`_exit`) CLY_SENDER_GRACE_MS after its timeout (COHORLY_CRASH_SENDER_TIMEOUT_MS, default 120 s),
// so no sender outlives its timeout by more than that and none keeps `crash-sender.lock` for good. What it had not
// sent stays queued (records leave the queue only on a terminal answer) for the next sender or launch.
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cly_internal.h"

/// How long past its timeout a sender may run before the watchdog ends it (its last exchange's answer, the queue's
/// commit): under the 5 s the documentation promises.
#define CLY_SENDER_GRACE_MS 4000L
#define CLY_SENDER_DEFAULT_TIMEOUT_MS 120000L

static struct timespec cly_sender_deadline;

static void *cly_sender_watchdog(void *unused) {
    (void)unused;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &cly_sender_deadline, NULL) == EINTR) {}
    _exit(0);
}

/// Starts the watchdog thread; returns whether it runs.
static int cly_sender_start_watchdog(const char *timeout_ms) {
    long timeout = CLY_SENDER_DEFAULT_TIMEOUT_MS;
    if (timeout_ms != NULL) {
        char *end = NULL;
        long parsed = strtol(timeout_ms, &end, 10);
        if (end != timeout_ms && parsed >= 0 && parsed <= 100L * 24 * 3600 * 1000) timeout = parsed;
    }
    long total = timeout + CLY_SENDER_GRACE_MS;
    clock_gettime(CLOCK_MONOTONIC, &cly_sender_deadline);
    cly_sender_deadline.tv_sec += total / 1000;
    cly_sender_deadline.tv_nsec += (total % 1000) * 1000000L;
    if (cly_sender_deadline.tv_nsec >= 1000000000L) {
        cly_sender_deadline.tv_sec += 1;
        cly_sender_deadline.tv_nsec -= 1000000000L;
    }
    pthread_attr_t attributes;
    if (pthread_attr_init(&attributes) != 0) return 0;
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attributes, 64 * 1024);
    pthread_t thread;
    int started = pthread_create(&thread, &attributes, cly_sender_watchdog, NULL) == 0;
    pthread_attr_destroy(&attributes);
    return started;
}

__attribute__((constructor)) static void cly_sender_mode(void) {
    const char *mode = getenv("COHORLY_CRASH_SENDER");
    if (mode == NULL || mode[0] != '1' || cohorly_crash_sender_main == NULL) return;
    // Without its watchdog a sender could outlive its timeout: it does not send at all then (the next launch does).
    if (!cly_sender_start_watchdog(getenv("COHORLY_CRASH_SENDER_TIMEOUT_MS"))) _exit(0);
    cohorly_crash_sender_main();
    _exit(0);
}
