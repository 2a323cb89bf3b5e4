// What the launch marker (cly_launch_marker.c) and the symbolication marker (cly_symbolication_marker.c) do
// alike: take a path into a fixed buffer, and remove the file only in the process that set it, once.
#ifndef CLY_MARKER_H
#define CLY_MARKER_H

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/// Checks a marker's path for a buffer of `capacity` bytes: 0, EINVAL (NULL) or ENAMETOOLONG (empty, or no room
/// for it and its NUL); its length in *length. Normal code.
static inline int cly_marker_path_check(const char *path, size_t capacity, size_t *length) {
    if (path == NULL) return EINVAL;
    *length = strlen(path);
    return *length == 0 || *length >= capacity ? ENAMETOOLONG : 0;
}

/// Unlinks the marker at `path` when this process set it (`*owner_pid` is its pid), clearing the owner first: of
/// the callers that race (the exit hook, the crash handler, the termination monitor) exactly one unlinks, and a
/// forked child none. getpid, a compare-and-swap, unlink: async-signal-safe.
static inline void cly_marker_unlink_if_owner(atomic_int *owner_pid, const char *path) {
    int expected = (int)getpid();
    if (atomic_compare_exchange_strong(owner_pid, &expected, 0)) unlink(path);
}

#endif
