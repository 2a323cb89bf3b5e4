// Monitor: the Swift runtime's fatal-error message.
//
// libswiftCore exports `swift_getFatalErrorMessageBuffer()` (Swift >= 6.0 on Linux), which returns the
// address of an atomic `const char *` that `swift_reportError` fills (strdup, never freed) before the runtime
// traps or aborts. We reference it weakly: an older runtime without it leaves the pointer NULL (no message,
// no failure), and unlike dlsym a weak reference also resolves with `-static-stdlib`.
// The buffer address is fetched at install; the handler does one atomic load (signal-safe: plain memory).
#include <stddef.h>

#include "cly_internal.h"

static _Atomic(const char *) *message_buffer;

void cly_fatal_message_install(void) {
    if (swift_getFatalErrorMessageBuffer != NULL) message_buffer = swift_getFatalErrorMessageBuffer();
}

const char *cly_swift_fatal_message(void) {
    if (message_buffer == NULL) return NULL;
    return atomic_load(message_buffer);
}
