// Breadcrumbs: the last few things the app did, kept where the crash handler can copy them without locks.
//
// Everything here is normal code (any thread, never a signal handler). The crash handler's side is internal
// (cly_internal.h: cly_breadcrumbs_prepare_for_crash / cly_breadcrumbs_write).
#ifndef CLY_BREADCRUMBS_H
#define CLY_BREADCRUMBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cly_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/// One breadcrumb as copied out of the ring. The texts are NUL-terminated; `data` is a JSON object (`{}` when
/// none was given).
typedef struct {
    uint64_t number;        // 1 for the first breadcrumb of the process, then counting up
    uint64_t timestamp_ms;  // unix milliseconds (CLOCK_REALTIME) when it was added
    uint64_t task;          // the id of the Swift task that added it (cly_task_current_id), 0 outside a task
    char category[CLY_BREADCRUMB_CATEGORY_BYTES + 1];
    char message[CLY_BREADCRUMB_MESSAGE_BYTES + 1];
    char data[CLY_BREADCRUMB_DATA_BYTES + 1];
} cly_breadcrumb;

/// Keeps the last `capacity` breadcrumbs (at most CLY_MAX_BREADCRUMBS; 0 turns breadcrumbs off). The newest
/// breadcrumbs already kept stay. The ring's memory is mapped here and never freed (a crash may be reading
/// it); a change of capacity maps a new one, so call it rarely (at install). Returns 0, or EINVAL / ENOMEM.
int cly_breadcrumbs_configure(uint32_t capacity);

/// How many breadcrumbs the ring keeps (CLY_DEFAULT_BREADCRUMBS until configured).
uint32_t cly_breadcrumbs_capacity(void);

/// Adds a breadcrumb stamped now and with the Swift task running on the calling thread. `category` and `message` are cut at CLY_BREADCRUMB_CATEGORY_BYTES and
/// CLY_BREADCRUMB_MESSAGE_BYTES (the writer repairs a cut UTF-8 sequence); `data` must be one JSON object of at
/// most CLY_BREADCRUMB_DATA_BYTES, else it is replaced by `{}` (NULL: `{}`). Any thread; writers serialize on a
/// mutex among themselves, a crash never waits for them (a slot being written is skipped). After a crash began,
/// adds are ignored. Returns false when nothing was added (breadcrumbs off, or a crash began).
bool cly_breadcrumbs_add(const char *category, size_t category_length, const char *message,
                         size_t message_length, const char *data, size_t data_length);

/// Copies the kept breadcrumbs, oldest first, into `out` (the newest `capacity` of them). Returns how many.
/// Normal code (for events sent while the process lives: handled errors, hangs).
size_t cly_breadcrumbs_copy(cly_breadcrumb *out, size_t capacity);

/// Test hook: the next cly_breadcrumbs_add stops for good halfway through filling its slot (holding the
/// writers' mutex), to show that a crash then skips that slot and never waits. Normal code.
void cly_test_stall_next_breadcrumb(void);

/// Test hook: whether an add is stalled by cly_test_stall_next_breadcrumb.
bool cly_test_breadcrumb_stalled(void);

#ifdef __cplusplus
}
#endif

#endif
