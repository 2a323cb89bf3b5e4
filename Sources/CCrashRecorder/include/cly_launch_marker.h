// The launch marker's C part (cly_launch_marker.c): the path of this launch's marker file, removed on a
// normal exit (atexit) and by the crash handler once a report is committed. The marker's contents, and
// what a later launch makes of a marker left behind, live in Swift (CohorlyCrash/LaunchMarker*.swift).
#ifndef CLY_LAUNCH_MARKER_H
#define CLY_LAUNCH_MARKER_H

#ifdef __cplusplus
extern "C" {
#endif

/// Makes `path` this process's launch marker: it is unlinked at a normal exit (an atexit handler,
/// registered once) and when the crash handler has committed a report — only ever by this process (a
/// forked child that exits or crashes leaves its parent's marker alone). Replaces an earlier marker path.
/// Returns 0, EINVAL (NULL) or ENAMETOOLONG. Normal code, not async-signal-safe.
int cly_launch_marker_set(const char *path);

/// Unlinks this process's marker now and forgets it (before an exec: the launch ends here without
/// an exit). Does nothing in a process that does not own the marker. Normal code.
void cly_launch_marker_clear(void);

#ifdef __cplusplus
}
#endif

#endif
