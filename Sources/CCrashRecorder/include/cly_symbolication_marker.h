// The symbolication marker's C part (cly_symbolication_marker.c): `<report>.symbolicating` exists while this
// process symbolicates a report at send time (CohorlyCrash/SymbolicationGuard.swift). A marker left behind means
// the process died inside symbolication, and the report then goes out raw. A launch that ends normally meanwhile
// (exit, a termination signal with its default action) did not die of symbolication: its marker is removed here,
// so the detached sender or the next launch symbolicates the report.
#ifndef CLY_SYMBOLICATION_MARKER_H
#define CLY_SYMBOLICATION_MARKER_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdbool.h>

/// Makes `path` the symbolication marker of this process, before the file is made: it is unlinked at a normal
/// exit (an atexit handler, registered once) and when a termination signal ends the launch, only ever by this
/// process. One marker at a time: returns 0, EBUSY (another one is set), EINVAL (NULL) or ENAMETOOLONG. Normal code.
int cly_symbolication_marker_set(const char *path);

/// Call once the marker's file is made: false (and the file is removed) when the launch began to end meanwhile
/// (the exit hook ran before the file existed). Normal code.
bool cly_symbolication_marker_made(void);

/// Forgets the marker (without unlinking it: the caller removes the file). Normal code; safe to call twice.
void cly_symbolication_marker_forget(void);

#ifdef __cplusplus
}
#endif

#endif
