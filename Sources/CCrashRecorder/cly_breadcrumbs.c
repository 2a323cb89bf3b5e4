// Breadcrumbs: a bounded ring of the last N things the app did, copied by the crash handler without locks.
//
// The ring is one mapped block (never freed: a crash may be reading it) of fixed-size slots, plus as many
// spare slots for the crash handler's copy. Breadcrumb number n (counting from 1) lives in slot n % capacity.
// Each slot carries a sequence counter (a per-slot seqlock): a writer makes it odd, fills the slot, makes it
// even again. Writers are normal code on any thread; they serialize on a mutex among themselves (so two never
// fill one slot), and they stop adding once a crash began.
//
// What runs in the crash handler (cly_report_write calls both, after cly_crash_started is set):
//   cly_breadcrumbs_prepare_for_crash - loads the published ring and the count of breadcrumbs added (atomic
//     loads), copies the slots newest first (memcpy of plain memory; a slot whose counter is odd, or moved
//     during the copy, or holds another number, is being written: it is skipped, never waited for), and
//     measures each one's JSON with a counting cly_writer (no fd, no syscall), keeping the newest that fit in
//     CLY_MAX_BREADCRUMB_REPORT_BYTES;
//   cly_breadcrumbs_write - writes them oldest first through the report's cly_writer.
// No lock, no allocation, no stdio: only atomics, memcpy and the writer (see cly_writer.c).
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "cly_breadcrumbs.h"
#include "cly_internal.h"
#include "cly_tasks.h"
#include "cly_writer.h"

typedef struct {
    atomic_uint_fast64_t sequence;  // odd while a writer fills the slot
    uint64_t number;                // which breadcrumb the slot holds (0: none yet)
    uint64_t timestamp_ms;
    uint64_t task;  // the Swift task that added it (0: none)
    uint16_t category_length;
    uint16_t message_length;
    uint16_t data_length;  // 0: no data (`{}`)
    char category[CLY_BREADCRUMB_CATEGORY_BYTES];
    char message[CLY_BREADCRUMB_MESSAGE_BYTES];
    char data[CLY_BREADCRUMB_DATA_BYTES];
} slot;

typedef struct {
    uint32_t capacity;
    size_t mapped_bytes;
    slot *slots;   // the ring
    slot *copies;  // the crash handler's copy, newest first
} ring;

static _Atomic(ring *) current_ring;
static atomic_uint_fast64_t added;  // the number of the newest breadcrumb
static atomic_uint capacity_setting = CLY_DEFAULT_BREADCRUMBS;
static pthread_mutex_t writer_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stall_next;  // test hooks (cly_test_stall_next_breadcrumb)
static atomic_int stalled;

// The crash handler's selection (static: the handler allocates nothing).
static ring *crash_ring;
static size_t crash_kept;      // copies[0..crash_kept) are written, newest first
static uint64_t crash_dropped; // kept in the ring but left out (being written, or beyond the byte cap)

/// Maps a ring of `capacity` slots. Normal code.
static ring *map_ring(uint32_t capacity) {
    size_t bytes = sizeof(ring) + 2 * (size_t)capacity * sizeof(slot);
    void *memory = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return NULL;
    ring *r = memory;  // mmap gives zeroed, page-aligned memory: every counter starts at 0
    r->capacity = capacity;
    r->mapped_bytes = bytes;
    r->slots = (slot *)((char *)memory + sizeof(ring));
    r->copies = r->slots + capacity;
    return r;
}

/// Copies slot `s` into `out` if it stably holds breadcrumb `number`. Signal-safe (atomics and memcpy).
static bool read_slot(slot *s, uint64_t number, slot *out) {
    uint_fast64_t before = atomic_load_explicit(&s->sequence, memory_order_acquire);
    if ((before & 1u) != 0) return false;
    out->number = s->number;
    out->timestamp_ms = s->timestamp_ms;
    out->task = s->task;
    out->category_length = s->category_length;
    out->message_length = s->message_length;
    out->data_length = s->data_length;
    memcpy(out->category, s->category, sizeof out->category);
    memcpy(out->message, s->message, sizeof out->message);
    memcpy(out->data, s->data, sizeof out->data);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&s->sequence, memory_order_relaxed) != before || out->number != number) return false;
    // Lengths are bounded again: the copy is consistent, but be strict about what the writer will read.
    if (out->category_length > sizeof out->category) out->category_length = sizeof out->category;
    if (out->message_length > sizeof out->message) out->message_length = sizeof out->message;
    if (out->data_length > sizeof out->data) out->data_length = 0;
    return true;
}

/// Writes one breadcrumb object. Signal-safe.
static void write_crumb(cly_writer *w, const slot *crumb) {
    cly_writer_begin_object(w, NULL);
    cly_writer_uint(w, "timestamp_ms", crumb->timestamp_ms);
    if (crumb->task != 0) cly_writer_uint(w, "task", crumb->task);
    cly_writer_string(w, "category", crumb->category, crumb->category_length);
    cly_writer_string(w, "message", crumb->message, crumb->message_length);
    if (crumb->data_length > 0) cly_writer_json(w, "data", crumb->data, crumb->data_length);
    else cly_writer_json(w, "data", "{}", 2);
    cly_writer_end_object(w);
}

/// Publishes a ring of `capacity` slots holding the newest breadcrumbs of the current one. Lock held.
static int replace_ring(uint32_t capacity) {
    ring *old = atomic_load(&current_ring);
    if (old != NULL && old->capacity == capacity) return 0;
    ring *fresh = NULL;
    if (capacity > 0) {
        fresh = map_ring(capacity);
        if (fresh == NULL) return ENOMEM;
        uint64_t last = atomic_load(&added);
        if (old != NULL) {
            uint64_t keep = capacity < old->capacity ? capacity : old->capacity;
            for (uint64_t n = last >= keep ? last - keep + 1 : 1; n <= last && n > 0; n++) {
                slot *to = &fresh->slots[n % capacity];
                if (read_slot(&old->slots[n % old->capacity], n, to)) atomic_store(&to->sequence, 2);
            }
        }
    }
    atomic_store(&current_ring, fresh);  // the old ring stays mapped: a crash may still be copying it
    return 0;
}

int cly_breadcrumbs_configure(uint32_t capacity) {
    if (capacity > CLY_MAX_BREADCRUMBS) return EINVAL;
    pthread_mutex_lock(&writer_lock);
    int result = 0;
    if (atomic_load(&cly_crash_started) == 0) {
        result = replace_ring(capacity);
        if (result == 0) atomic_store(&capacity_setting, capacity);
    }
    pthread_mutex_unlock(&writer_lock);
    return result;
}

uint32_t cly_breadcrumbs_capacity(void) { return atomic_load(&capacity_setting); }

static size_t clamp(size_t length, size_t limit) { return length < limit ? length : limit; }

bool cly_breadcrumbs_add(const char *category, size_t category_length, const char *message,
                         size_t message_length, const char *data, size_t data_length) {
    if (atomic_load(&cly_crash_started) != 0) return false;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t timestamp_ms = (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;
    uint64_t task = cly_task_current_id();
    if (category == NULL) category_length = 0;
    if (message == NULL) message_length = 0;
    bool data_ok = data != NULL && data_length >= 2 && data_length <= CLY_BREADCRUMB_DATA_BYTES && data[0] == '{' &&
                   data[data_length - 1] == '}';
    pthread_mutex_lock(&writer_lock);
    ring *r = atomic_load(&current_ring);
    if (r == NULL && atomic_load(&capacity_setting) > 0) {
        replace_ring(atomic_load(&capacity_setting));  // first breadcrumb before any configure: the default ring
        r = atomic_load(&current_ring);
    }
    if (r == NULL || atomic_load(&cly_crash_started) != 0) {
        pthread_mutex_unlock(&writer_lock);
        return false;
    }
    uint64_t number = atomic_load(&added) + 1;
    slot *s = &r->slots[number % r->capacity];
    uint_fast64_t sequence = atomic_load_explicit(&s->sequence, memory_order_relaxed);
    atomic_store_explicit(&s->sequence, sequence + 1, memory_order_relaxed);  // odd: being written
    atomic_thread_fence(memory_order_release);
    s->number = number;
    if (atomic_exchange(&stall_next, 0) != 0) {
        atomic_store(&stalled, 1);
        for (;;) pause();  // test hook: a writer that never finishes (normal code, not the handler)
    }
    s->timestamp_ms = timestamp_ms;
    s->task = task;
    s->category_length = (uint16_t)clamp(category_length, sizeof s->category);
    s->message_length = (uint16_t)clamp(message_length, sizeof s->message);
    s->data_length = data_ok ? (uint16_t)data_length : 0;
    if (s->category_length > 0) memcpy(s->category, category, s->category_length);
    if (s->message_length > 0) memcpy(s->message, message, s->message_length);
    if (s->data_length > 0) memcpy(s->data, data, s->data_length);
    atomic_store_explicit(&s->sequence, sequence + 2, memory_order_release);  // even: stable
    atomic_store_explicit(&added, number, memory_order_release);
    pthread_mutex_unlock(&writer_lock);
    return true;
}

size_t cly_breadcrumbs_copy(cly_breadcrumb *out, size_t capacity) {
    pthread_mutex_lock(&writer_lock);  // normal code: no slot is half written while the lock is held
    ring *r = atomic_load(&current_ring);
    size_t count = 0;
    if (r != NULL && capacity > 0) {
        uint64_t last = atomic_load(&added);
        uint64_t keep = capacity < r->capacity ? capacity : r->capacity;
        for (uint64_t n = last >= keep ? last - keep + 1 : 1; n <= last && n > 0; n++) {
            const slot *s = &r->slots[n % r->capacity];
            if (s->number != n) continue;
            cly_breadcrumb *crumb = &out[count++];
            crumb->number = n;
            crumb->timestamp_ms = s->timestamp_ms;
            crumb->task = s->task;
            memcpy(crumb->category, s->category, s->category_length);
            crumb->category[s->category_length] = 0;
            memcpy(crumb->message, s->message, s->message_length);
            crumb->message[s->message_length] = 0;
            if (s->data_length > 0) {
                memcpy(crumb->data, s->data, s->data_length);
                crumb->data[s->data_length] = 0;
            } else {
                memcpy(crumb->data, "{}", 3);
            }
        }
    }
    pthread_mutex_unlock(&writer_lock);
    return count;
}

size_t cly_breadcrumbs_prepare_for_crash(void) {
    crash_kept = 0;
    crash_dropped = 0;
    crash_ring = atomic_load(&current_ring);
    ring *r = crash_ring;
    if (r == NULL) return 0;
    uint64_t last = atomic_load_explicit(&added, memory_order_acquire);
    uint64_t first = last >= r->capacity ? last - r->capacity + 1 : 1;
    // `"breadcrumbs":[` … `],"breadcrumbs_dropped":<20 digits>` and a separating comma.
    size_t total = 64;
    for (uint64_t n = last; n >= first && n > 0; n--) {
        slot *copy = &r->copies[crash_kept];
        if (!read_slot(&r->slots[n % r->capacity], n, copy)) {
            crash_dropped++;
            continue;
        }
        cly_writer counter;  // fd -1: counts the bytes, writes nothing
        char scratch[256];
        cly_writer_init(&counter, -1, scratch, sizeof scratch, (size_t)-1);
        counter.needs_comma = true;
        write_crumb(&counter, copy);
        size_t bytes = cly_writer_size(&counter);
        if (total + bytes > CLY_MAX_BREADCRUMB_REPORT_BYTES) {
            crash_dropped += n - first + 1;  // this one and every older one
            break;
        }
        total += bytes;
        crash_kept++;
    }
    return total;
}

void cly_breadcrumbs_write(cly_writer *w) {
    if (crash_ring == NULL) return;
    cly_writer_begin_array(w, "breadcrumbs");
    for (size_t i = crash_kept; i > 0; i--) write_crumb(w, &crash_ring->copies[i - 1]);
    cly_writer_end_array(w);
    cly_writer_uint(w, "breadcrumbs_dropped", crash_dropped);
}

void cly_test_stall_next_breadcrumb(void) { atomic_store(&stall_next, 1); }

bool cly_test_breadcrumb_stalled(void) { return atomic_load(&stalled) != 0; }
