// Sender mode: a process started by CohorlyCrash as the detached crash-event sender (COHORLY_CRASH_SENDER is
// set) runs the sender before `main` and exits, so none of the app's own code runs in it.
// The Swift entry point is referenced weakly: a program without CohorlyCrash's Swift part simply skips this.
// Normal code (a constructor), not the crash path.
#include <stdlib.h>
#include <unistd.h>

#include "cly_internal.h"

__attribute__((constructor)) static void cly_sender_mode(void) {
    const char *mode = getenv("COHORLY_CRASH_SENDER");
    if (mode == NULL || mode[0] != '1' || cohorly_crash_sender_main == NULL) return;
    cohorly_crash_sender_main();
    _exit(0);
}
