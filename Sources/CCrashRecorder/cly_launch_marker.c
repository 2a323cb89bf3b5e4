// The launch marker: a file that exists while a launch runs (created by CohorlyCrash, LaunchMarker.swift).
//
// A launch that ends normally (`exit`, return from main) or whose crash the recorder reported removes it; a
// marker left behind means the launch ended some other way — SIGKILL, the OOM killer, a power loss — and
// the next launch reports it as an abnormal exit. This file is the part that removes it:
//   - at_exit (registered with atexit, normal code at exit time): unlink the prepared path;
//   - cly_launch_marker_clear_for_crash (the crash handler, after cly_report_write committed the report, or
//     when the user opted out and no report is written): unlink(2) the prepared path — async-signal-safe;
//   - cly_launch_marker_record_termination (the termination monitor, cly_termination.c): writes what a termination
//     signal did into the marker's ending region — open, pwrite (a plain system call), close: async-signal-safe.
// Both act only in the process that set the marker (`owner_pid`): a forked child shares the memory but is
// not the launch. The path is written before the owner pid is published (release), and read after it
// (acquire), so the handler never reads a half-written path.
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cly_internal.h"
#include "cly_launch_marker.h"
#include "cly_marker.h"
#include "cly_termination.h"

static char marker_path[CLY_MAX_PATH];
static atomic_int owner_pid;  // 0: no marker
static atomic_bool exit_hook_registered;

// Exactly once: the exit hook and the crash handler may both get here.
static void clear_if_owner(void) { cly_marker_unlink_if_owner(&owner_pid, marker_path); }

static void at_exit(void) { clear_if_owner(); }

int cly_launch_marker_set(const char *path) {
    size_t length = 0;
    int problem = cly_marker_path_check(path, sizeof marker_path, &length);
    if (problem != 0) return problem;
    atomic_store(&owner_pid, 0);  // the handler stops reading the old path before it is overwritten
    memcpy(marker_path, path, length + 1);
    atomic_store(&owner_pid, (int)getpid());
    bool expected = false;
    if (atomic_compare_exchange_strong(&exit_hook_registered, &expected, true)) atexit(at_exit);
    return 0;
}

void cly_launch_marker_clear(void) { clear_if_owner(); }

void cly_launch_marker_clear_for_crash(void) { clear_if_owner(); }  // getpid, CAS, unlink: all AS-safe

/// Appends the decimal digits of `value` (with a '-' when negative) at out[n]; returns the new length.
static size_t put_int(char *out, size_t n, size_t capacity, long long value) {
    char digits[24];
    int count = 0;
    unsigned long long magnitude = value < 0 ? 0ull - (unsigned long long)value : (unsigned long long)value;
    do {
        digits[count++] = (char)('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude != 0 && count < (int)sizeof digits);
    if (value < 0 && n < capacity) out[n++] = '-';
    while (count > 0 && n < capacity) out[n++] = digits[--count];
    return n;
}

static size_t put_text(char *out, size_t n, size_t capacity, const char *text) {
    while (*text && n < capacity) out[n++] = *text++;
    return n;
}

void cly_launch_marker_record_termination(int signal_number, const siginfo_t *info, cly_termination_state state) {
    if (atomic_load(&owner_pid) != (int)getpid()) return;  // no marker, or a forked child's signal
    static const char *const states[] = {"ended", "handling", "handled"};
    char record[CLY_LAUNCH_MARKER_ENDING_BYTES];
    const size_t capacity = sizeof record - 1;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    size_t n = put_text(record, 0, capacity, "{\"signal\":");
    n = put_int(record, n, capacity, signal_number);
    n = put_text(record, n, capacity, ",\"state\":\"");
    n = put_text(record, n, capacity, states[state <= CLY_TERMINATION_HANDLED ? state : 0]);
    n = put_text(record, n, capacity, "\",\"code\":");
    n = put_int(record, n, capacity, info ? info->si_code : 0);
    if (info != NULL && info->si_code <= 0) {  // sent by a process (kill, sigqueue): who sent it
        n = put_text(record, n, capacity, ",\"sender_pid\":");
        n = put_int(record, n, capacity, info->si_pid);
        n = put_text(record, n, capacity, ",\"sender_uid\":");
        n = put_int(record, n, capacity, info->si_uid);
    }
    n = put_text(record, n, capacity, ",\"ms\":");
    n = put_int(record, n, capacity, (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000);
    n = put_text(record, n, capacity, "}");
    while (n < capacity) record[n++] = ' ';  // the whole region: an older, longer record leaves nothing behind
    record[n++] = '\n';
    int fd = open(marker_path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t written = pwrite(fd, record, n, CLY_LAUNCH_MARKER_ENDING_OFFSET);
    (void)written;  // nothing more to do in a dying process: the next launch then sees no record
    close(fd);
}
