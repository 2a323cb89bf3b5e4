// Live capture of other threads: their stacks, taken while the process keeps running (the hang watchdog).
//
// Unlike the crash path, no thread is parked: each thread asked is sent SIGSYS, unwinds its own interrupted
// context into a prepared slot inside the handler and returns at once. The capturing thread waits for the
// answers at most the time it is given. Normal code calls these functions; only the handler (cly_live_threads.c)
// runs in signal context.
#ifndef CLY_LIVE_THREADS_H
#define CLY_LIVE_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cly_async.h"
#include "cly_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/// One thread's stack as a live capture reports it. Frame 0 is the exact interrupted PC (`first_frame_kind`
/// CLY_FRAME_PC), the others are return addresses (as for a crash report's threads); `async` holds the
/// thread's async callers (count 0: none).
typedef struct {
    /// Kernel thread id.
    int32_t tid;
    /// Frames written (0 when the thread did not answer).
    int32_t frame_count;
    /// More frames existed than CLY_MAX_FRAMES, or the unwind stopped at a fault.
    bool truncated;
    /// The thread recorded its stack in time.
    bool answered;
    /// From /proc/self/task/<tid>/comm.
    char name[32];
    uintptr_t frames[CLY_MAX_FRAMES];
    /// The cly_frame_kind of frames[0].
    int32_t first_frame_kind;
    /// The async callers, innermost first; `async.anchor` indexes `frames`.
    cly_async_chain async;
} cly_live_thread;

/// Installs the live-capture handler for SIGSYS, keeping the action that was there: every SIGSYS that is not a
/// live-capture request of this process (a seccomp trap, a signal sent by someone else) goes to it. Needs the
/// recorder's unwinder (`cly_install` first). Normal code; a second call does nothing. Returns 0 or an errno
/// value. The crash path replaces the handler with its own when a crash starts; live capture stops then.
int cly_live_install(void);

/// Captures `subject_tid` (entry 0) and up to `capacity - 1` other threads of this process, the calling thread
/// excepted, without stopping them: each is sent SIGSYS, records its own stack in its handler and returns.
/// A thread that blocks SIGSYS is listed without frames. Waits at most `wait_ms` for the answers (plus at most
/// 50 ms for a thread caught mid-answer). `capacity` is capped at CLY_MAX_THREADS.
/// Returns the number of entries written to `out`; 0 when `subject_tid` is not a thread of this process;
/// -1 when live capture is not installed, another capture is running, or a crash started.
/// `requested` / `answered` (may be NULL) receive how many threads were asked and how many answered.
/// Normal code; one capture at a time (a concurrent call returns -1).
int cly_live_capture(int32_t subject_tid, cly_live_thread *out, int capacity, uint32_t wait_ms, int *requested,
                     int *answered);

/// Receives one loaded object: its path (valid during the call), first PT_LOAD page, extent and GNU build id.
typedef void (*cly_live_module_visitor)(const char *path, uintptr_t base, uintptr_t size, const uint8_t *build_id,
                                        int build_id_length, void *context);

/// Lists the modules for a live capture: the recorder's prepared table (as a crash report has it), plus the
/// objects the frames of `threads` point into that the table lacks. Takes no loader lock (a hung thread may hold
/// it). Normal code.
void cly_live_list_modules(const cly_live_thread *threads, int count, cly_live_module_visitor visit, void *context);

/// Names the calling thread (at most 15 bytes are kept: /proc/self/task/<tid>/comm).
void cly_live_name_current_thread(const char *name);

/// The calling thread's kernel thread id (gettid).
int32_t cly_live_current_tid(void);

#ifdef __cplusplus
}
#endif

#endif
