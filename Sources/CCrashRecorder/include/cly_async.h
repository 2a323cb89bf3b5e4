// Async Swift callers of a captured thread: the chain of async contexts its current async function was
// awaited through (see cly_async.c), and the kind of every frame address the recorder reports.
#ifndef CLY_ASYNC_H
#define CLY_ASYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "cly_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/// What a frame address is, so it is looked up right: `pc` as is (an interrupted instruction),
/// `return_address` at address − 1, `async_resume` as is (the entry of an async resume funclet).
typedef enum {
    CLY_FRAME_PC = 0,
    CLY_FRAME_RETURN_ADDRESS = 1,
    CLY_FRAME_ASYNC_RESUME = 2,
} cly_frame_kind;

/// Why an async walk ended (report format v2's `async.stop`).
typedef enum {
    /// No chain (the walk found nothing, or did not run).
    CLY_ASYNC_STOP_NONE = 0,
    /// A context's Parent was 0: the task's root.
    CLY_ASYNC_STOP_TASK_ROOT = 1,
    /// A context could not be read.
    CLY_ASYNC_STOP_FAULT = 2,
    /// A ResumeParent was not a function start (an FDE start, or where no FDE covers it a Swift resume funclet's
    /// symbol), or a context was misaligned.
    CLY_ASYNC_STOP_VALIDATION = 3,
    /// A context repeated.
    CLY_ASYNC_STOP_LOOP = 4,
    /// CLY_MAX_ASYNC_FRAMES entries.
    CLY_ASYNC_STOP_LIMIT = 5,
} cly_async_stop;

/// The async callers of one thread: `count` resume points (kind `async_resume`), innermost first — the first
/// in the function that awaited the anchor's function, the last the task's root (the runtime's completion
/// function when the walk reached Parent 0). Beside the physical frames, not counted in them.
typedef struct {
    /// Entries in `frames` (0: no chain).
    int32_t count;
    /// Index of the physical frame the chain continues from (the async function running on the thread).
    int32_t anchor;
    /// A cly_async_stop.
    int32_t stop;
    uintptr_t frames[CLY_MAX_ASYNC_FRAMES];
} cly_async_chain;

/// The report's name of a stop reason ("task_root", "fault", "validation", "loop", "limit"; "" for none).
const char *cly_async_stop_name(int32_t stop);

/// Test hook (off by default): corrupts what the async walk reads after its first entry, to show that the
/// walk then stops cleanly, the physical stack kept. `mode`: 0 off, CLY_ASYNC_STOP_FAULT (the next context
/// reads from an unmapped address), CLY_ASYNC_STOP_VALIDATION (its ResumeParent is off by one),
/// CLY_ASYNC_STOP_LOOP (its Parent is the context itself). Call before the capture (normal code).
void cly_test_corrupt_async_walk(int32_t mode);

/// Benchmark and test hook: turns the async walk off (false) or on (true, the default) for every capture.
void cly_test_set_async_walk(bool enabled);

/// Test hook: unwinds `ucontext` (a signal handler's third argument) as `cly_test_unwind_context` does, then
/// walks its async callers as the crash path does; returns the frames written (at most `capacity`) and sets
/// `*async_count` to the chain's length (0: none). Signal-safe.
int cly_test_unwind_context_async(void *ucontext, uintptr_t *frames, int capacity, int *async_count);

/// Test hook: makes the walk read memory through its pipe fallback (as when process_vm_readv is refused),
/// opening the pipe now if install did not. Returns 0 or an errno value. Normal code.
int cly_test_async_use_pipe(void);

/// Test hook: waits (a futex, at most `timeout_ms`) until the scan for resume funclets without unwind info
/// (cly_resume_points.c) has covered every library loaded when it was last asked for. True when it has. Normal
/// code.
bool cly_test_wait_resume_points(uint32_t timeout_ms);

/// Test hook: how many resume funclets without unwind info the walk recognises now (all modules). Signal-safe.
int32_t cly_test_resume_point_count(void);

/// Test hook: copies up to `capacity` of those addresses into `out` (each module's sorted); returns how many.
int32_t cly_test_resume_points_list(uintptr_t *out, int32_t capacity);

#ifdef __cplusplus
}
#endif

#endif
