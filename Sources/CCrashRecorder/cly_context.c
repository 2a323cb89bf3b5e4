// The crash-time context: a JSON object the app keeps current (release, distinct id, OS, device, …).
//
// Two static buffers and a sequence counter (a seqlock). An update, serialized by a mutex, writes the buffer
// that is not active, then bumps the counter, whose low bit names the active buffer. The handler reads the
// counter, copies the active buffer, and re-reads the counter: if it moved, an update overlapped the copy and
// it copies again (bounded). Once a crash has begun, updates are refused, so the retry loop ends. Nothing is
// ever freed (the race that bit KSCrash's user-info JSON).
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "cly_internal.h"
#include "cly_recorder.h"

static char buffers[2][CLY_MAX_CONTEXT];
static size_t lengths[2];
static atomic_uint sequence;  // low bit: the active buffer
static pthread_mutex_t update_lock = PTHREAD_MUTEX_INITIALIZER;

int cly_set_context(const char *json_object, size_t length) {
    if (json_object == NULL || length < 2 || json_object[0] != '{' || json_object[length - 1] != '}') return EINVAL;
    if (length > CLY_MAX_CONTEXT) return E2BIG;
    pthread_mutex_lock(&update_lock);
    if (atomic_load(&cly_crash_started) != 0) {
        pthread_mutex_unlock(&update_lock);
        return 0;
    }
    unsigned next = (atomic_load(&sequence) + 1) & 1u;
    memcpy(buffers[next], json_object, length);
    lengths[next] = length;
    atomic_fetch_add(&sequence, 1);  // publishes `next` (release ordering by seq_cst)
    pthread_mutex_unlock(&update_lock);
    return 0;
}

size_t cly_context_copy_for_crash(char *out, size_t capacity) {
    // cly_crash_started is already set by the handler: at most one update is still in flight.
    for (int attempt = 0; attempt < 8; attempt++) {
        unsigned before = atomic_load(&sequence);
        if (before == 0) return 0;  // never set
        unsigned active = before & 1u;
        size_t length = lengths[active];
        if (length > capacity) length = capacity;
        memcpy(out, buffers[active], length);  // memcpy: async-signal-safe (plain memory)
        if (atomic_load(&sequence) == before) return length;
    }
    return 0;
}
