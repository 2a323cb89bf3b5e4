// Unwinding from signal handlers under an allocation guard (scenario handler-unwinds).
//
// The recorder promises that its unwind (cly_unwind_from_ucontext), called from a signal handler on any
// thread, neither allocates nor initialises anything. With tests/fixtures' alloc_guard preloaded
// (LD_PRELOAD), every malloc/mmap/pipe2 call a thread makes while armed is counted and reported on stderr.
// Here each thread of the process is sent SIGSYS (the one signal libdispatch and Swift concurrency workers
// leave unblocked) and unwinds its own interrupted context with the guard armed; then the crash itself goes
// through the recorder's handler with the crashing thread armed. Each handler also walks its thread's async
// callers (cly_test_unwind_context_async), so the walk is checked the same way.
#define _GNU_SOURCE
#include "crash_demo_support.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cly_async.h"
#include "cly_recorder.h"

static void (*guard_arm)(int);
static long (*guard_count)(void);
static atomic_int answered;
static atomic_int frames_seen;
static atomic_int chain_seen;
static struct sigaction recorder_segv;

static void unwind_handler(int signal_number, siginfo_t *info, void *context) {
    (void)signal_number;
    (void)info;
    int saved_errno = errno;
    uintptr_t frames[128];
    if (guard_arm != NULL) guard_arm(1);
    int chain = 0;
    int count = cly_test_unwind_context_async(context, frames, 128, &chain);
    if (guard_arm != NULL) guard_arm(0);
    atomic_store(&chain_seen, chain);
    atomic_store(&frames_seen, count);
    atomic_fetch_add(&answered, 1);
    errno = saved_errno;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/// Sends SIGSYS to `tid` and waits (at most a second) for its handler to answer; returns its frame count, -1
/// when it did not answer, -2 when the thread is gone (a pool worker may end between listing and signal).
static int unwind_thread(pid_t tid) {
    int before = atomic_load(&answered);
    atomic_store(&frames_seen, -1);
    if (syscall(SYS_tgkill, getpid(), tid, SIGSYS) != 0) return -2;
    uint64_t deadline = now_ns() + 1000000000ull;
    while (atomic_load(&answered) == before && now_ns() < deadline) {
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    return atomic_load(&answered) == before ? -1 : atomic_load(&frames_seen);
}

int demo_unwind_threads_in_handlers(demo_handler_unwinds *result) {
    memset(result, 0, sizeof *result);
    guard_arm = (void (*)(int))dlsym(RTLD_DEFAULT, "alloc_guard_arm");
    guard_count = (long (*)(void))dlsym(RTLD_DEFAULT, "alloc_guard_count");
    result->guard_loaded = guard_arm != NULL && guard_count != NULL;
    if (result->guard_loaded) {  // the guard's self-test: one deliberate allocation while armed
        guard_arm(1);
        void *pointer = malloc(16);
        demo_opaque(pointer);  // keeps the compiler from removing the pair
        guard_arm(0);
        free(pointer);
        result->self_test_calls = guard_count();
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = unwind_handler;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    struct sigaction previous;
    if (sigaction(SIGSYS, &action, &previous) != 0) return -1;
    result->fewest_frames = 1 << 30;
    DIR *tasks = opendir("/proc/self/task");
    if (tasks == NULL) return -1;
    pid_t tids[256];
    int count = 0;
    for (struct dirent *entry; (entry = readdir(tasks)) != NULL && count < 256;)
        if (entry->d_name[0] >= '0' && entry->d_name[0] <= '9') tids[count++] = (pid_t)atoi(entry->d_name);
    closedir(tasks);
    for (int i = 0; i < count; i++) {
        int frames = unwind_thread(tids[i]);
        if (frames == -2) continue;
        result->threads++;
        if (frames < 0) continue;
        result->answered++;
        if (frames < result->fewest_frames) result->fewest_frames = frames;
        if (frames > result->most_frames) result->most_frames = frames;
        if (atomic_load(&chain_seen) > 0) result->chains++;
    }
    sigaction(SIGSYS, &previous, NULL);
    if (result->answered == 0) result->fewest_frames = 0;
    result->guard_calls = result->guard_loaded ? guard_count() - result->self_test_calls : -1;
    return 0;
}

static void armed_crash_handler(int signal_number, siginfo_t *info, void *context) {
    if (guard_arm != NULL) guard_arm(1);
    recorder_segv.sa_sigaction(signal_number, info, context);
}

int demo_arm_guard_for_crash(void) {
    if (sigaction(SIGSEGV, NULL, &recorder_segv) != 0 || (recorder_segv.sa_flags & SA_SIGINFO) == 0) return -1;
    struct sigaction action = recorder_segv;
    action.sa_sigaction = armed_crash_handler;
    return sigaction(SIGSEGV, &action, NULL);
}
