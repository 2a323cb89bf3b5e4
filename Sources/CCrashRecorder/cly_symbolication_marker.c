// The symbolication marker (see cly_symbolication_marker.h): removed when the launch ends in a way that is not a
// death inside symbolication.
//   - at_exit (registered with atexit, normal code at exit time): unlink the set path — an exit() while another
//     thread symbolicates (a CLI tool, a health check that exits right away) leaves no marker. The path is set
//     before the file is made, and its maker checks after making it whether the launch began to end meanwhile
//     (cly_symbolication_marker_made), so an exit at any moment leaves none;
//   - cly_symbolication_marker_remove_at_end (the termination monitor, cly_termination.c, before the process
//     dies of SIGTERM…): unlink(2), async-signal-safe.
//   - cly_symbolication_marker_remove_for_crash (the crash handler, once the report is committed): unlink(2) unless
//     the crashed thread is the one symbolicating — a crash loop's launch that dies of its own crash while its
//     delivery thread symbolicates an earlier report did not die of symbolication (async-signal-safe).
// Each acts only in the process that set it (`owner_pid`); a forked child's exit leaves it alone. The path is
// written before the owner pid is published and read after it, as in cly_launch_marker.c.
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cly_internal.h"
#include "cly_marker.h"
#include "cly_symbolication_marker.h"

static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;
static char marker_path[CLY_MAX_PATH];
static atomic_int owner_pid;   // 0: no marker
static atomic_int ending_pid;  // the process whose launch is ending (exit hook or termination signal ran)
static atomic_int owner_tid;   // the thread that set the marker (the one symbolicating)
static bool exit_hook_registered;

/// The launch ends: first say so (a marker made from now on is removed by its maker, cly_symbolication_marker_made),
/// then remove the one set. Sequentially consistent atomics: either the maker sees the end, or this unlink comes
/// after its file exists.
static void end_launch(void) {
    atomic_store(&ending_pid, (int)getpid());
    cly_marker_unlink_if_owner(&owner_pid, marker_path);
}

static void at_exit(void) { end_launch(); }

int cly_symbolication_marker_set(const char *path) {
    size_t length = 0;
    int problem = cly_marker_path_check(path, sizeof marker_path, &length);
    if (problem != 0) return problem;
    pthread_mutex_lock(&set_lock);
    int owner = atomic_load(&owner_pid);
    if (owner != 0 && owner == (int)getpid()) {
        pthread_mutex_unlock(&set_lock);
        return EBUSY;
    }
    atomic_store(&owner_pid, 0);
    memcpy(marker_path, path, length + 1);
    atomic_store(&owner_tid, (int)cly_gettid());
    atomic_store(&owner_pid, (int)getpid());
    if (!exit_hook_registered) {
        exit_hook_registered = true;
        atexit(at_exit);
    }
    pthread_mutex_unlock(&set_lock);
    return 0;
}

bool cly_symbolication_marker_made(void) {
    if (atomic_load(&ending_pid) != (int)getpid()) return true;
    cly_symbolication_marker_forget();
    unlink(marker_path);  // made after the exit hook ran: this launch is ending, not dying inside symbolication
    return false;
}

void cly_symbolication_marker_forget(void) {
    pthread_mutex_lock(&set_lock);
    int expected = (int)getpid();
    atomic_compare_exchange_strong(&owner_pid, &expected, 0);
    pthread_mutex_unlock(&set_lock);
}

void cly_symbolication_marker_remove_at_end(void) { end_launch(); }  // getpid, atomics, unlink: all AS-safe

void cly_symbolication_marker_remove_for_crash(pid_t crashed_tid) {
    if (atomic_load(&owner_tid) == (int)crashed_tid) return;  // symbolication itself crashed: the marker tells
    end_launch();
}
