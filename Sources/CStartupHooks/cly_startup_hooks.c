// The client's startup hooks (see cly_startup_hooks.h). The crash recorder's side is referenced weakly, as
// cly_sender_mode.c references the Swift sender: a program that links the client without the crash recorder
// resolves it to NULL, and the hook does nothing.
#include "cly_startup_hooks.h"

/// Defined by CCrashRecorder (cly_reserve.c): takes the crash report's reserve in `directory` unless this process
/// has one.
extern void cly_reserve_before_queue_opens(const char *directory) __attribute__((weak));

void cly_startup_before_queue_opens(const char *directory) {
    if (cly_reserve_before_queue_opens != 0 && directory != 0) cly_reserve_before_queue_opens(directory);
}
