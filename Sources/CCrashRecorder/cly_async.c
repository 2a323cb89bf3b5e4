// Async Swift callers: the chain of async contexts a captured thread's current async function was awaited
// through, walked inside signal handlers (the crashed thread, the threads answering a live capture) and by
// live captures of the calling thread.
//
// Why: an async function's callers are not on the physical stack. Async calls are tail calls, so a thread
// running async code shows the current partial function ("funclet") and then the executor (swift_job_run,
// libdispatch, start_thread). The awaiting functions exist only as a linked list of async contexts in the heap:
// offset 0 `Parent` (the caller's context, 0 at the task's root), offset 8 `ResumeParent` (the caller's resume
// funclet). (docs/crash-reporting.md "Async stacks" has the facts and what was measured.)
//
// What is recorded during the unwind (cly_unwind.c), per physical frame: the async context register as
// libunwind restores it for that frame (r14 on x86_64, x22 on aarch64; frame 0's from the ucontext) and the
// frame pointer (rbp / x29), whose [fp - 8] holds the context in an async frame that keeps one.
//
// cly_async_walk, after the unwind (signal-safe: no malloc, no locks, every read bounded and fault-free):
//   1. the thread must be running async code: one of its frames is in swift_job_run (its range resolved at
//      prepare time from the runtime's own symbol, a weak reference, so it works with -static-stdlib too); a
//      stale context in an idle worker's registers never makes a chain. Frames from swift_job_run outwards, and
//      the concurrency runtime's frames just inside it (runJobInEstablishedExecutorContext, when
//      libswift_Concurrency is a library of its own), are the executor: candidates come from the frames inside;
//   2. candidates, innermost frame first: the register, then the word at [fp - 8]; the first candidate whose
//      walk gives at least one entry is taken (at -Onone the register of frame 0 may be clobbered by the
//      runtime's own code while the funclet's frame keeps the context);
//   3. the walk validates every step: context non-zero and 16-byte aligned; both words readable (process_vm_readv
//      on our own pid, which fails with EFAULT instead of faulting; where it is refused — seccomp — the pipe opened
//      at prepare time: write(2) the words into it, read(2) them back); ResumeParent a resume point (below); no
//      context twice; at most CLY_MAX_ASYNC_FRAMES entries;
//   4. the anchor is the outermost frame inside the executor that holds the same context (the funclet itself,
//      not a synchronous function it called).
// A torn or invalid chain only ends the chain (its `stop` says why); the physical frames are never touched.
//
// A resume point (is_resume_point) is an address in a loaded object (_dl_find_object) where a function starts:
//   - an FDE starts exactly there (libunwind's unw_get_proc_info_by_ip: start_ip == the address). swiftc gives
//     every funclet of an app an FDE; an address inside a function an FDE covers is never a resume point;
//   - or no FDE covers the address and the object's symbol table names a Swift resume funclet (`…TQ<n>_`,
//     `…TY<n>_`) starting exactly there (cly_resume_points.c: the symbols are read from the files off the crash
//     path, on a thread of its own, into a static table). This is what the toolchain's own libraries need: the
//     concurrency runtime has no FDE at many of its resume funclets (TaskLocal.withValue's,
//     withTaskCancellationHandler's), and the Swift runtime's backtracer, which decides by the same names, walks
//     past them. Without it the chain ended at the first caller inside the runtime.
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/uio.h>

#include "cly_async.h"
#include "cly_internal.h"

#define CORRUPT_ADDRESS ((uintptr_t)16)  // in the never-mapped page 0: reading it fails

static atomic_int walk_disabled;
static int corrupt_mode;
static int pipe_fds[2] = {-1, -1};
static atomic_int read_through_pipe;
static atomic_int pipe_busy;
static uintptr_t job_run_start, job_run_end;
static uintptr_t runtime_start, runtime_end;  // libswift_Concurrency.so, when it is not the executable

const char *cly_async_stop_name(int32_t stop) {
    switch (stop) {
    case CLY_ASYNC_STOP_TASK_ROOT: return "task_root";
    case CLY_ASYNC_STOP_FAULT: return "fault";
    case CLY_ASYNC_STOP_VALIDATION: return "validation";
    case CLY_ASYNC_STOP_LOOP: return "loop";
    case CLY_ASYNC_STOP_LIMIT: return "limit";
    default: return "";
    }
}

void cly_test_corrupt_async_walk(int32_t mode) { corrupt_mode = mode; }

void cly_test_set_async_walk(bool enabled) { atomic_store(&walk_disabled, enabled ? 0 : 1); }

static int open_pipe(void) {
    if (pipe_fds[0] >= 0) return 0;
    return pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) == 0 ? 0 : errno;
}

int cly_test_async_use_pipe(void) {
    int result = open_pipe();
    if (result == 0) atomic_store(&read_through_pipe, 1);
    return result;
}

/// Reads `size` bytes (at most 16) at `address` without faulting. Signal-safe.
static bool read_memory(pid_t pid, uintptr_t address, void *out, size_t size) {
    if (atomic_load(&read_through_pipe) == 0) {
        struct iovec local = {out, size};
        struct iovec remote = {(void *)address, size};
        return syscall(SYS_process_vm_readv, pid, &local, 1ul, &remote, 1ul, 0ul) == (long)size;
    }
    // The pipe is one for the process: a walk that finds it in use by another thread's walk gives up on this
    // read (never waits).
    int expected = 0;
    if (!atomic_compare_exchange_strong(&pipe_busy, &expected, 1)) return false;
    ssize_t written = write(pipe_fds[1], (const void *)address, size);  // EFAULT for a bad address
    bool read_back = written > 0 && read(pipe_fds[0], out, (size_t)written) == written;
    atomic_store(&pipe_busy, 0);
    return read_back && (size_t)written == size;
}

bool cly_read_memory(uintptr_t address, void *out, size_t size) { return read_memory(getpid(), address, out, size); }

void cly_async_prepare(void) {
    if (job_run_end != 0) return;
    cly_resume_points_refresh();
    if (swift_job_run != NULL) {
        uintptr_t start = 0;
        uintptr_t end = 0;
        if (cly_unwind_function_range((uintptr_t)swift_job_run, &start, &end)) {
            job_run_start = start;
            struct dl_find_object found;
            if (_dl_find_object((void *)swift_job_run, &found) == 0 && found.dlfo_link_map != NULL &&
                found.dlfo_link_map->l_name != NULL && strstr(found.dlfo_link_map->l_name, "libswift_Concurrency")) {
                runtime_start = (uintptr_t)found.dlfo_map_start;
                runtime_end = (uintptr_t)found.dlfo_map_end;
            }
            job_run_end = end;
        }
    }
    // Is process_vm_readv allowed here (seccomp profiles refuse it)? Else the pipe.
    uint64_t probe = 0x636c79;
    uint64_t copy = 0;
    if (!read_memory(getpid(), (uintptr_t)&probe, &copy, sizeof copy) || copy != probe) cly_test_async_use_pipe();
}

/// `address` as a frame address (a return address looks up at − 1) is in [start, end).
static bool frame_in(uintptr_t pc, bool exact, uintptr_t start, uintptr_t end) {
    uintptr_t address = exact ? pc : pc - 1;
    return end != 0 && address - start < end - start;
}

/// A resume point: an FDE starts exactly at `address`, or none covers it and a Swift resume funclet's symbol
/// starts there (see the top of this file). Signal-safe (_dl_find_object first: lock-free, and it turns away an
/// address in no object before libunwind looks).
static bool is_resume_point(uintptr_t address) {
    struct dl_find_object found;
    if (address == 0 || _dl_find_object((void *)address, &found) != 0) return false;
    uintptr_t start = 0;
    uintptr_t end = 0;
    if (cly_unwind_function_range(address, &start, &end)) return start == address;
    return cly_resume_points_contains(address);
}

/// Walks from `context`; returns the number of entries written to `chain`. Signal-safe.
static int walk_from(pid_t pid, uintptr_t context, cly_async_chain *chain) {
    uintptr_t visited[CLY_MAX_ASYNC_FRAMES];
    chain->count = 0;
    for (;;) {
        int count = chain->count;
        if (context == 0 || (context & 15) != 0) {
            chain->stop = CLY_ASYNC_STOP_VALIDATION;
            break;
        }
        bool seen = false;
        for (int i = 0; i < count && !seen; i++) seen = visited[i] == context;
        if (seen) {
            chain->stop = CLY_ASYNC_STOP_LOOP;
            break;
        }
        if (count == CLY_MAX_ASYNC_FRAMES) {
            chain->stop = CLY_ASYNC_STOP_LIMIT;
            break;
        }
        bool corrupt = count == 1 && corrupt_mode != 0;
        uintptr_t words[2];
        if (!read_memory(pid, corrupt && corrupt_mode == CLY_ASYNC_STOP_FAULT ? CORRUPT_ADDRESS : context, words,
                         sizeof words)) {
            chain->stop = CLY_ASYNC_STOP_FAULT;
            break;
        }
        uintptr_t parent = corrupt && corrupt_mode == CLY_ASYNC_STOP_LOOP ? context : words[0];
        uintptr_t resume = words[1] + (corrupt && corrupt_mode == CLY_ASYNC_STOP_VALIDATION ? 1 : 0);
        if (!is_resume_point(resume)) {
            chain->stop = CLY_ASYNC_STOP_VALIDATION;
            break;
        }
        visited[count] = context;
        chain->frames[chain->count++] = resume;
        if (parent == 0) {
            chain->stop = CLY_ASYNC_STOP_TASK_ROOT;
            break;
        }
        context = parent;
    }
    return chain->count;
}

/// How many frames, innermost first, run inside the executor (candidates come from them); 0 when the thread is
/// not running async code.
static int frames_inside_executor(const cly_thread *thread) {
    for (int i = 0; i < thread->frame_count; i++) {
        bool exact = i == 0 && thread->first_frame_kind == CLY_FRAME_PC;
        if (!frame_in(thread->frames[i], exact, job_run_start, job_run_end)) continue;
        int inside = i;
        while (inside > 0 && frame_in(thread->frames[inside - 1], inside - 1 == 0 && exact, runtime_start, runtime_end))
            inside--;
        return inside;
    }
    return 0;
}

/// The word at [fp - 8] of frame `index`, or 0 when it cannot be read. Signal-safe.
static uintptr_t frame_slot(pid_t pid, const cly_thread *thread, int index) {
    uintptr_t fp = thread->frame_pointers[index];
    uintptr_t value = 0;
    if (fp < 4096 || (fp & 7) != 0 || !read_memory(pid, fp - 8, &value, sizeof value)) return 0;
    return value;
}

int cly_test_unwind_context_async(void *context, uintptr_t *frames, int capacity, int *async_count) {
    cly_thread thread;
    cly_unwind_from_ucontext((ucontext_t *)context, true, &thread);
    cly_async_walk(&thread);
    *async_count = thread.async.count;
    int count = thread.frame_count < capacity ? thread.frame_count : capacity;
    for (int i = 0; i < count; i++) frames[i] = thread.frames[i];
    return count;
}

void cly_async_walk(cly_thread *thread) {
    cly_async_chain *chain = &thread->async;
    chain->count = 0;
    chain->anchor = 0;
    chain->stop = CLY_ASYNC_STOP_NONE;
    if (atomic_load(&walk_disabled) != 0 || job_run_end == 0) return;
    int inside = frames_inside_executor(thread);
    if (inside == 0) return;
    pid_t pid = getpid();
    uintptr_t tried[2 * CLY_MAX_FRAMES];
    int tried_count = 0;
    for (int i = 0; i < inside; i++) {
        uintptr_t candidates[2] = {thread->async_registers[i], frame_slot(pid, thread, i)};
        for (int c = 0; c < 2; c++) {
            uintptr_t context = candidates[c];
            bool repeated = context == 0 || (context & 15) != 0;
            for (int t = 0; t < tried_count && !repeated; t++) repeated = tried[t] == context;
            if (repeated) continue;
            tried[tried_count++] = context;
            if (walk_from(pid, context, chain) == 0) continue;
            int anchor = i;
            for (int j = i + 1; j < inside; j++)
                if (thread->async_registers[j] == context || frame_slot(pid, thread, j) == context) anchor = j;
            chain->anchor = anchor;
            return;
        }
    }
    chain->count = 0;
    chain->stop = CLY_ASYNC_STOP_NONE;
}
