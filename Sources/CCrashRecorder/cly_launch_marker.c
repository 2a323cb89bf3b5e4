// The launch marker: a file that exists while a launch runs (created by CohorlyCrash, LaunchMarker.swift).
//
// A launch that ends normally (`exit`, return from main) or whose crash the recorder reported removes it; a
// marker left behind means the launch ended some other way — SIGKILL, the OOM killer, a power loss — and
// the next launch reports it as an abnormal exit. This file is the part that removes it:
//   - at_exit (registered with atexit, normal code at exit time): unlink the prepared path;
//   - cly_launch_marker_clear_for_crash (the crash handler, after cly_report_write committed the report, or
//     when the user opted out and no report is written): unlink(2) the prepared path — async-signal-safe.
// Both act only in the process that set the marker (`owner_pid`): a forked child shares the memory but is
// not the launch. The path is written before the owner pid is published (release), and read after it
// (acquire), so the handler never reads a half-written path.
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cly_internal.h"
#include "cly_launch_marker.h"

static char marker_path[CLY_MAX_PATH];
static atomic_int owner_pid;  // 0: no marker
static atomic_bool exit_hook_registered;

static void clear_if_owner(void) {
    int pid = getpid();
    int expected = pid;
    // Exactly once: the exit hook and the crash handler may both get here.
    if (atomic_compare_exchange_strong(&owner_pid, &expected, 0)) unlink(marker_path);
}

static void at_exit(void) { clear_if_owner(); }

int cly_launch_marker_set(const char *path) {
    if (path == NULL) return EINVAL;
    size_t length = strlen(path);
    if (length == 0 || length >= sizeof marker_path) return ENAMETOOLONG;
    atomic_store(&owner_pid, 0);  // the handler stops reading the old path before it is overwritten
    memcpy(marker_path, path, length + 1);
    atomic_store(&owner_pid, (int)getpid());
    bool expected = false;
    if (atomic_compare_exchange_strong(&exit_hook_registered, &expected, true)) atexit(at_exit);
    return 0;
}

void cly_launch_marker_clear(void) { clear_if_owner(); }

void cly_launch_marker_clear_for_crash(void) { clear_if_owner(); }  // getpid, CAS, unlink: all AS-safe
