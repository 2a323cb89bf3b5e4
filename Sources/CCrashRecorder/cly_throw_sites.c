// Throw sites: the return addresses of each `throw`, kept in a fixed table keyed by the error's box.
//
// The Swift runtime's `swift_willThrow` (and `swift_willThrowTypedImpl`, which boxes a typed error for it) calls
// the function in `_swift_willThrow` with the error's `SwiftError` box. Ours (will_throw) runs on every throw of
// the process, so it is cheap and bounded:
//   - the stack: `unw_backtrace` of the private libunwind (cly_unwind.c loads it; its per-thread trace cache
//     makes a walk of a few frames cost about a microsecond), at most CLY_THROW_SITE_FRAMES frames after the
//     runtime's own; nothing is symbolicated here (only a captured error's frames ever are);
//   - the table: CLY_THROW_SITES slots, a slot chosen by hashing the box's address, a newer throw overwriting
//     the older one there (bounded: nothing grows). A slot is taken with a flag; a throw that finds its slot
//     busy records nothing rather than wait;
//   - the key is checked: the slot holds a weak reference to the box (swift_weakInit/Assign, what Swift Testing's
//     own table holds), which keeps the error alive no longer than the app does; a box address whose weak
//     reference is gone names an error that was freed (its address may now hold another one). A rethrow of an
//     error the table holds, still alive (`catch { throw error }`), keeps the first throw's stack;
//   - per thread, the last throw (slot, sequence number, the box's type), for a lookup that has no box: a
//     `catch let e as T` binds the value out of its box, and capturing `e` boxes it anew.
// Then it calls the hook installed before it (Swift Testing's, say). Normal code (never a signal handler).
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "cly_throw_sites.h"

typedef void (*will_throw_fn)(void *box);

// libswiftCore: `std::atomic<void (*)(SwiftError *)> _swift_willThrow` and weak references (a `WeakReference` is
// one word). Weak symbols: a runtime without them leaves the addresses NULL (no throw sites), and a weak symbol
// reference resolves in static builds where dlsym would not.
extern _Atomic(will_throw_fn) _swift_willThrow __attribute__((weak));
extern void *swift_weakInit(void *reference, void *object) __attribute__((weak));
extern void *swift_weakAssign(void *reference, void *object) __attribute__((weak));
extern void *swift_weakLoadStrong(void *reference) __attribute__((weak));
extern void swift_release(void *object) __attribute__((weak));
extern void swift_willThrow(void) __attribute__((weak));
extern void swift_willThrowTypedImpl(void) __attribute__((weak));

/// How far past their start the runtime's two throw functions may return to (both are a few instructions).
#define RUNTIME_FUNCTION_BYTES 256
/// Frames walked before the first one past the runtime's throw function (ours, a chained hook's).
#define LEADING_FRAMES 6

typedef struct {
    atomic_int busy;
    const void *box;  // NULL: empty
    uintptr_t weak;   // a weak reference to `box` (valid once `has_weak`)
    bool has_weak;
    const void *type;
    uint64_t sequence;
    int count;
    bool truncated;
    uintptr_t frames[CLY_THROW_SITE_FRAMES];
} site;

static site sites[CLY_THROW_SITES];
static _Atomic(will_throw_fn) previous;
static atomic_bool recording;
static atomic_int installed;
static atomic_uint_fast64_t sequence_counter;
static int (*backtrace_fn)(void **frames, int capacity);
static _Thread_local struct {
    uint64_t sequence;
    uint32_t slot;
    const void *type;
} last_throw;

static uint32_t slot_of(const void *box) {
    uint64_t h = ((uint64_t)(uintptr_t)box >> 4) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)((h >> 32) % CLY_THROW_SITES);
}

/// The type metadata of a `SwiftError` box: after the heap object's header (metadata, reference counts).
static const void *box_type(const void *box) { return ((const void *const *)box)[2]; }

static bool in_function(uintptr_t address, void (*function)(void)) {
    uintptr_t start = (uintptr_t)function;
    return function != NULL && address > start && address <= start + RUNTIME_FUNCTION_BYTES;
}

static bool try_take(site *s) {
    int expected = 0;
    return atomic_compare_exchange_strong_explicit(&s->busy, &expected, 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

static void give_back(site *s) { atomic_store_explicit(&s->busy, 0, memory_order_release); }

/// Whether the slot's box is still the error it was recorded for (its weak reference holds). Slot taken.
static bool box_alive(site *s) {
    if (!s->has_weak || s->box == NULL) return false;
    void *object = swift_weakLoadStrong(&s->weak);
    if (object == NULL) return false;
    swift_release(object);  // never the last reference: the caller holds the error
    return true;
}

/// Takes a slot for reading: waits for a throw that is writing it (a copy of a few words), boundedly.
static bool take_for_reading(site *s) {
    for (int tries = 0; tries < 10000; tries++) {
        if (try_take(s)) return true;
        sched_yield();
    }
    return false;
}

__attribute__((noinline)) static void record(void *box) {
    uint32_t index = slot_of(box);
    site *s = &sites[index];
    const void *type = box_type(box);
    // A rethrow of an error the table holds keeps its first stack (a racy peek; checked again under the flag).
    if (__atomic_load_n(&s->box, __ATOMIC_RELAXED) == box && try_take(s)) {
        bool rethrow = s->box == box && box_alive(s);
        if (rethrow) {
            last_throw.sequence = s->sequence;
            last_throw.slot = index;
            last_throw.type = type;
        }
        give_back(s);
        if (rethrow) return;
    }
    void *raw[LEADING_FRAMES + CLY_THROW_SITE_FRAMES + 1];
    int n = backtrace_fn(raw, (int)(sizeof raw / sizeof raw[0]));
    int start = -1;
    for (int i = 0; i < n && i < LEADING_FRAMES; i++) {
        uintptr_t address = (uintptr_t)raw[i];
        if (in_function(address, swift_willThrow) || in_function(address, swift_willThrowTypedImpl)) {
            start = i + 1;
            break;
        }
    }
    if (start < 0) start = n > 2 ? 2 : n;  // not found: drop this function's frame and its caller (the hook)
    if (!try_take(s)) return;
    if (s->has_weak) {
        swift_weakAssign(&s->weak, box);
    } else {
        swift_weakInit(&s->weak, box);
        s->has_weak = true;
    }
    __atomic_store_n(&s->box, box, __ATOMIC_RELAXED);
    uint64_t sequence = atomic_fetch_add_explicit(&sequence_counter, 1, memory_order_relaxed) + 1;
    s->type = type;
    s->sequence = sequence;
    int count = n - start;
    if (count > CLY_THROW_SITE_FRAMES) count = CLY_THROW_SITE_FRAMES;
    if (count < 0) count = 0;
    for (int i = 0; i < count; i++) s->frames[i] = (uintptr_t)raw[start + i];
    s->count = count;
    s->truncated = n == (int)(sizeof raw / sizeof raw[0]);
    give_back(s);
    last_throw.sequence = sequence;
    last_throw.slot = index;
    last_throw.type = type;
}

__attribute__((noinline)) static void will_throw(void *box) {
    if (box != NULL && atomic_load_explicit(&recording, memory_order_relaxed)) record(box);
    will_throw_fn chained = atomic_load_explicit(&previous, memory_order_acquire);
    if (chained != NULL) chained(box);
}

int cly_throw_sites_install(void) {
    if (&_swift_willThrow == NULL || swift_weakInit == NULL || swift_weakAssign == NULL ||
        swift_weakLoadStrong == NULL || swift_release == NULL)
        return ENOSYS;
    if (atomic_load(&installed) == 0 && backtrace_fn == NULL) {
        // The recorder's private copy (loaded by cly_capture_prepare / cly_install; RTLD_NOLOAD finds it).
        void *library = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (library == NULL) return ENOSYS;
        backtrace_fn = (int (*)(void **, int))dlsym(library, "unw_backtrace");
        if (backtrace_fn == NULL) return ENOSYS;
    }
    atomic_store(&recording, true);
    int expected = 0;
    if (!atomic_compare_exchange_strong(&installed, &expected, 1)) return 0;
    // `previous` is set before the hook is visible, so no throw runs ours without its predecessor.
    will_throw_fn old = atomic_load(&_swift_willThrow);
    do {
        atomic_store(&previous, old);
    } while (!atomic_compare_exchange_weak(&_swift_willThrow, &old, will_throw));
    return 0;
}

void cly_throw_sites_set_enabled(bool enabled) { atomic_store(&recording, enabled); }

bool cly_throw_sites_installed(void) { return atomic_load(&installed) != 0; }

bool cly_throw_sites_enabled(void) { return atomic_load(&installed) != 0 && atomic_load(&recording); }

static int copy_out(site *s, uintptr_t *frames, int capacity, bool *truncated) {
    int count = s->count < capacity ? s->count : capacity;
    memcpy(frames, s->frames, (size_t)count * sizeof frames[0]);
    if (truncated != NULL) *truncated = s->truncated || count < s->count;
    return count;
}

int cly_throw_sites_find(const void *box, const void *type, uintptr_t *frames, int capacity, bool *truncated) {
    if (truncated != NULL) *truncated = false;
    if (frames == NULL || capacity <= 0 || atomic_load(&installed) == 0) return 0;
    int count = 0;
    if (box != NULL) {
        site *s = &sites[slot_of(box)];
        if (take_for_reading(s)) {
            if (s->box == box && box_alive(s)) count = copy_out(s, frames, capacity, truncated) + 1;
            give_back(s);
        }
    }
    if (count == 0 && type != NULL && last_throw.sequence != 0 && last_throw.type == type) {
        site *s = &sites[last_throw.slot];
        if (take_for_reading(s)) {
            if (s->sequence == last_throw.sequence) count = copy_out(s, frames, capacity, truncated) + 1;
            give_back(s);
        }
    }
    return count > 0 ? count - 1 : 0;
}

const void *cly_test_throw_site_box_type(const void *box) { return box == NULL ? NULL : box_type(box); }
