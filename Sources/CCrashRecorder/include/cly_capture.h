// Live capture for non-fatal events (handled errors, hangs): the calling thread's stack and the loaded
// modules, taken in normal code while the process keeps running.
//
// Nothing here runs in a signal handler: these functions may take the loader lock and (on first use) let
// libunwind allocate, so they are for ordinary threads only. The crash path is in cly_recorder.h.
#ifndef CLY_CAPTURE_H
#define CLY_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cly_async.h"
#include "cly_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Makes live capture usable: loads libunwind privately (as `cly_install` does; a no-op once either of them
/// did) and notes the executable's path. Safe to call from any thread, any number of times.
/// Returns 0, or an errno value with a message in `error` (NUL-terminated, at most `error_size` bytes).
int cly_capture_prepare(char *error, size_t error_size);

/// Records the calling thread's stack, innermost first, as return addresses: `getcontext` here, then the
/// recorder's unwinder (`cly_unwind_from_ucontext`). This function's own frame and the `skip` frames above
/// it are dropped, so with `skip` = the number of the caller's own wrapper frames, `frames[0]` is the return
/// address into the code that asked for the capture. Writes at most `capacity` (≤ CLY_MAX_FRAMES) addresses;
/// `*truncated` tells whether the stack went deeper. Returns how many were written (0 when
/// `cly_capture_prepare` has not succeeded). Never inlined (the frame count depends on it). Normal code only.
int cly_capture_current_stack(uintptr_t *frames, int capacity, int skip, bool *truncated);

/// `cly_capture_current_stack`, plus the calling thread's async callers into `async` (count 0 when it is not
/// running async code, or the walk is off): resume points of the functions that awaited the one running,
/// innermost first; `async->anchor` indexes `frames` (the async function the chain continues from). Every
/// frame written is a return address (look up at address − 1); the async frames are resume-funclet entries
/// (look up as is). Never inlined. Normal code only.
int cly_capture_current_stack_async(uintptr_t *frames, int capacity, int skip, bool *truncated,
                                    cly_async_chain *async);

/// The calling thread's kernel thread id (gettid).
int cly_capture_thread_id(void);

/// The calling thread's name (`prctl(PR_GET_NAME)`, at most 15 bytes + NUL) into `out`.
void cly_capture_thread_name(char out[16]);

/// One loaded ELF object, as `cly_capture_list_modules` reports it.
typedef struct {
    /// The path the loader knows (the executable's own path for the main program); valid during the call.
    const char *path;
    /// Address of the first `PT_LOAD` page.
    uintptr_t base;
    /// Extent of the `PT_LOAD` segments.
    uintptr_t size;
    /// GNU build id bytes (`build_id_length` of them; 0 when the object has none).
    uint8_t build_id[32];
    int build_id_length;
} cly_capture_module;

typedef void (*cly_capture_module_visitor)(const cly_capture_module *module, void *context);

/// Calls `visit` for every loaded object (`dl_iterate_phdr`, which holds the loader lock meanwhile: `visit`
/// must not load or unload libraries). Normal code only.
void cly_capture_list_modules(cly_capture_module_visitor visit, void *context);

/// A number that changes whenever a library is loaded or unloaded (the loader's add and sub counters), so
/// a module list can be reused until it does. Cheap (stops at the first object). Normal code only.
uint64_t cly_capture_modules_generation(void);

#ifdef __cplusplus
}
#endif

#endif
