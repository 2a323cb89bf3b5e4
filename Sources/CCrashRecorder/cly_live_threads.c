// Live capture of other threads (the hang watchdog): every thread keeps running.
//
// What runs where:
//   normal code (the watchdog thread), cly_live_capture:
//     1. refuse when a crash started or an earlier capture still has a slot being written;
//     2. slot 0 = the subject thread, then the other threads of /proc/self/task (raw getdents64), the calling
//        thread excepted, up to the capacity; names from /proc/self/task/<tid>/comm;
//     3. each slot is marked REQUESTED and its thread is sent SIGSYS with a cookie (rt_tgsigqueueinfo), unless
//        its /proc status shows SIGSYS blocked;
//     4. wait on the answer counter (futex), at most `wait_ms`; then every slot still REQUESTED is cancelled
//        (a late signal finds nothing to write and returns), and a slot caught WRITING is waited for at most
//        50 ms more (after that it is reported unanswered and the next capture is refused until it is done);
//     5. copy the answered slots out.
//   signal context (each asked thread), live_handler:
//     - not our cookie: hand the signal to the action that was installed before ours;
//     - a crash started: return at once (the crash path owns the threads now);
//     - claim its REQUESTED slot (compare-and-swap to WRITING), unwind its interrupted context into it with
//       cly_unwind_from_ucontext (signal-safe, allocation-free once primed), mark it DONE, count itself in
//       (atomic + futex wake) and return. It never parks and never allocates. Between the unwind and DONE it
//       walks its async callers into the slot too (cly_async_walk).
// A fault inside that unwind (a corrupt stack) reaches the crash handler, which jumps back here
// (cly_live_escape_if_unwinding) and the thread answers with the frames it had.
// Crash during or after a capture: the crash handler installs its own SIGSYS handler (cly_threads.c) before
// signalling; a thread inside live_handler has SIGSYS blocked until it returns, so the crash's request is
// delivered right after, to the crash path's handler. Capture slots are separate from the crash path's.
// Calls in the handler: getpid, gettid, rt_sigprocmask (sigsetjmp), futex, sigaction/tgkill (only when
// forwarding a foreign SIGSYS to the default action), libunwind's local unwinder. No malloc, no locks, no stdio.
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <string.h>

#include "cly_internal.h"
#include "cly_live_threads.h"
#include "cly_writer.h"

#define LIVE_SIGNAL SIGSYS
#define LIVE_COOKIE 0x636c796c  // "clyl": marks a live-capture request in si_value
#define WRITING_GRACE_NS (50ull * 1000000ull)

enum { SLOT_IDLE, SLOT_REQUESTED, SLOT_WRITING, SLOT_DONE };

static cly_thread live_slots[CLY_MAX_THREADS];
static atomic_int slot_tid[CLY_MAX_THREADS];
static atomic_int slot_state[CLY_MAX_THREADS];
static atomic_int unwinding_tid[CLY_MAX_THREADS];
static sigjmp_buf unwind_jumps[CLY_MAX_THREADS];
static atomic_int answered_count;
static atomic_int capture_busy;
static atomic_int installed;
static struct sigaction previous_action;

int32_t cly_live_current_tid(void) { return (int32_t)cly_gettid(); }

void cly_live_name_current_thread(const char *name) {
    char truncated[16];
    size_t length = strnlen(name, sizeof truncated - 1);
    memcpy(truncated, name, length);
    truncated[length] = 0;
    pthread_setname_np(pthread_self(), truncated);
}

/// Hands a SIGSYS that is not ours to the action installed before ours (signal context).
static void forward(int signal_number, siginfo_t *info, void *context) {
    if ((previous_action.sa_flags & SA_SIGINFO) != 0) {
        if (previous_action.sa_sigaction != NULL) previous_action.sa_sigaction(signal_number, info, context);
        return;
    }
    if (previous_action.sa_handler == SIG_IGN) return;
    if (previous_action.sa_handler != SIG_DFL) {
        previous_action.sa_handler(signal_number);
        return;
    }
    cly_die_of(signal_number);  // the default action ends the process: do exactly that
}

static void live_handler(int signal_number, siginfo_t *info, void *context) {
    int saved_errno = errno;
    bool ours = info != NULL && info->si_code == SI_QUEUE && info->si_pid == getpid() &&
                info->si_value.sival_int == LIVE_COOKIE;
    if (!ours) {
        forward(signal_number, info, context);
        errno = saved_errno;
        return;
    }
    if (atomic_load(&cly_crash_started) != 0) {
        errno = saved_errno;
        return;
    }
    pid_t tid = cly_gettid();
    for (int i = 0; i < CLY_MAX_THREADS; i++) {
        if (atomic_load(&slot_tid[i]) != tid) continue;
        int expected = SLOT_REQUESTED;
        if (!atomic_compare_exchange_strong(&slot_state[i], &expected, SLOT_WRITING)) continue;
        // The slot is ours while WRITING: the capturing thread reassigns slots only when they are IDLE.
        cly_thread *slot = &live_slots[i];
        atomic_store(&unwinding_tid[i], tid);
        // sigsetjmp saves the mask (one rt_sigprocmask); the crash handler jumps back here if the unwind faults.
        if (sigsetjmp(unwind_jumps[i], 1) == 0) cly_unwind_from_ucontext((ucontext_t *)context, true, slot);
        else slot->truncated = true;
        atomic_store(&unwinding_tid[i], 0);
        cly_async_walk(slot);  // its reads cannot fault: outside the escape hatch (the unwind's alone)
        slot->answered = true;
        atomic_store(&slot_state[i], SLOT_DONE);
        atomic_fetch_add(&answered_count, 1);
        cly_futex_wake(&answered_count);
        break;
    }
    errno = saved_errno;
}

void cly_live_escape_if_unwinding(pid_t tid) {
    for (int i = 0; i < CLY_MAX_THREADS; i++)
        if (atomic_load(&unwinding_tid[i]) == tid) siglongjmp(unwind_jumps[i], 1);
}

int cly_live_install(void) {
    if (atomic_load(&installed) != 0) return 0;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = live_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&action.sa_mask);
    struct sigaction previous;
    if (sigaction(LIVE_SIGNAL, &action, &previous) != 0) return errno;
    if (previous.sa_sigaction == live_handler) return 0;
    previous_action = previous;
    atomic_store(&installed, 1);
    return 0;
}

typedef struct {
    int capacity;
    int count;
    pid_t subject;
    pid_t self;
} live_census;

/// Slot 0 is the subject's; every other thread but the caller gets the next free slot, up to the capacity.
static void add_thread(const char *name, bool regular_file, void *context) {
    (void)regular_file;
    live_census *census = context;
    if (*name < '0' || *name > '9') return;
    pid_t tid = 0;
    for (const char *c = name; *c >= '0' && *c <= '9'; c++) tid = tid * 10 + (*c - '0');
    if (tid == census->subject || tid == census->self || census->count == census->capacity) return;
    atomic_store(&slot_tid[census->count++], tid);
}

static bool send_request(pid_t pid, pid_t tid) {
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_signo = LIVE_SIGNAL;
    info.si_code = SI_QUEUE;
    info.si_pid = pid;
    info.si_uid = getuid();
    info.si_value.sival_int = LIVE_COOKIE;
    return syscall(SYS_rt_tgsigqueueinfo, pid, tid, LIVE_SIGNAL, &info) == 0;
}

static int finish(int result) {
    atomic_store(&capture_busy, 0);
    return result;
}

int cly_live_capture(int32_t subject_tid, cly_live_thread *out, int capacity, uint32_t wait_ms, int *requested,
                     int *answered) {
    int asked = 0;
    if (requested) *requested = 0;
    if (answered) *answered = 0;
    if (atomic_load(&installed) == 0 || capacity <= 0) return -1;
    if (atomic_exchange(&capture_busy, 1) != 0) return -1;
    if (atomic_load(&cly_crash_started) != 0) return finish(-1);
    for (int i = 0; i < CLY_MAX_THREADS; i++)
        if (atomic_load(&slot_state[i]) == SLOT_WRITING) return finish(-1);  // a late answer still writing
    if (capacity > CLY_MAX_THREADS) capacity = CLY_MAX_THREADS;

    char subject_name[32];
    cly_thread_read_name(subject_tid, subject_name, sizeof subject_name);
    char path[64] = "/proc/self/task/";
    cly_format_uint((uint64_t)(uint32_t)subject_tid, path + strlen(path));
    if (access(path, F_OK) != 0) return finish(0);

    for (int i = 0; i < CLY_MAX_THREADS; i++) {
        atomic_store(&slot_state[i], SLOT_IDLE);
        atomic_store(&slot_tid[i], 0);
    }
    live_census census = {capacity, 1, subject_tid, cly_gettid()};
    atomic_store(&slot_tid[0], subject_tid);
    cly_list_directory("/proc/self/task", add_thread, &census);
    atomic_store(&answered_count, 0);
    pid_t pid = getpid();
    for (int i = 0; i < census.count; i++) {
        cly_thread *slot = &live_slots[i];
        slot->tid = atomic_load(&slot_tid[i]);
        slot->frame_count = 0;
        slot->truncated = false;
        slot->answered = false;
        if (i == 0) memcpy(slot->name, subject_name, sizeof slot->name);
        else cly_thread_read_name(slot->tid, slot->name, sizeof slot->name);
        if (cly_thread_blocks_signal(slot->tid, LIVE_SIGNAL)) continue;
        atomic_store(&slot_state[i], SLOT_REQUESTED);
        if (send_request(pid, slot->tid)) asked++;
        else atomic_store(&slot_state[i], SLOT_IDLE);  // the thread ended meanwhile
    }

    uint64_t deadline = cly_monotonic_ns() + (uint64_t)wait_ms * 1000000ull;
    for (;;) {
        int seen = atomic_load(&answered_count);
        uint64_t now = cly_monotonic_ns();
        if (seen >= asked || now >= deadline) break;
        cly_futex_wait(&answered_count, seen, deadline - now);
    }
    // Cancel what did not start; give a thread caught mid-answer a short grace.
    uint64_t grace = cly_monotonic_ns() + WRITING_GRACE_NS;
    for (int i = 0; i < census.count; i++) {
        int expected = SLOT_REQUESTED;
        atomic_compare_exchange_strong(&slot_state[i], &expected, SLOT_IDLE);
        while (atomic_load(&slot_state[i]) == SLOT_WRITING && cly_monotonic_ns() < grace) {
            int seen = atomic_load(&answered_count);
            if (atomic_load(&slot_state[i]) != SLOT_WRITING) break;
            cly_futex_wait(&answered_count, seen, 1000000ull);
        }
    }
    int got = 0;
    for (int i = 0; i < census.count; i++) {
        const cly_thread *slot = &live_slots[i];
        cly_live_thread *entry = &out[i];
        bool done = atomic_load(&slot_state[i]) == SLOT_DONE;
        entry->tid = (int32_t)slot->tid;
        memcpy(entry->name, slot->name, sizeof entry->name);
        entry->answered = done;
        entry->truncated = done && slot->truncated;
        entry->frame_count = done ? slot->frame_count : 0;
        entry->first_frame_kind = slot->first_frame_kind;
        entry->async.count = 0;
        entry->async.anchor = 0;
        entry->async.stop = CLY_ASYNC_STOP_NONE;
        if (done) {
            entry->async = slot->async;
            memcpy(entry->frames, slot->frames, sizeof(uintptr_t) * (size_t)slot->frame_count);
            atomic_store(&slot_state[i], SLOT_IDLE);
            got++;
        }
    }
    if (requested) *requested = asked;
    if (answered) *answered = got;
    return finish(census.count);
}

/// Whether `base` is in the first `count` entries of `bases`.
static bool seen_base(const uintptr_t *bases, int count, uintptr_t base) {
    for (int i = 0; i < count; i++)
        if (bases[i] == base) return true;
    return false;
}

void cly_live_list_modules(const cly_live_thread *threads, int count, cly_live_module_visitor visit, void *context) {
    const cly_module_table *table = cly_modules_current();
    int table_count = table != NULL ? table->count : 0;
    for (int i = 0; i < table_count; i++) {
        const cly_module *module = &table->modules[i];
        visit(table->pool + module->path_offset, module->base, module->size, module->build_id,
              module->build_id_length, context);
    }
    // Frames in objects loaded since the table's last refresh: _dl_find_object, which takes no loader lock (a
    // hung thread may be holding it, inside dlopen).
    uintptr_t extra_bases[CLY_MAX_EXTRA_MODULES];
    int extra_count = 0;
    for (int t = 0; t < count; t++) {
        for (int f = 0; f < threads[t].frame_count && extra_count < CLY_MAX_EXTRA_MODULES; f++) {
            uintptr_t pc = threads[t].frames[f];
            bool known = false;
            for (int i = 0; i < table_count && !known; i++)
                known = pc - table->modules[i].base < table->modules[i].size;
            if (known) continue;
            cly_module module;
            char path[CLY_MAX_PATH];
            if (!cly_modules_find_extra(pc, &module, path, sizeof path) ||
                seen_base(extra_bases, extra_count, module.base))
                continue;
            extra_bases[extra_count++] = module.base;
            visit(path, module.base, module.size, module.build_id, module.build_id_length, context);
        }
    }
}
