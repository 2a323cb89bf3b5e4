// Stack unwinding with libunwind, loaded privately.
//
// Why dlopen: Debian's libunwind.so.8 exports the `_Unwind_*` ABI. Linked into the process it would bind
// libstdc++'s exception handling to libunwind for every C++ throw in the app. Loaded with RTLD_LOCAL its
// symbols stay out of the global scope, and we reach the local-only entry points (`_ULx86_64_*`) by dlsym.
//
// At install (normal code): dlopen + dlsym, then libunwind's one-time initialisation, done by one
// `unw_init_local2` on this thread's context and nothing more (see `prime`). That first use is what sets up
// its state: the memory pools (mmap), the global register-state cache, the memory-validation pipe (pipe2),
// a getenv. After it, an unwind from a signal handler on any thread — the crashed one, the others answering
// SIGSYS, a live thread sampled for a hang — makes no allocating or initialising call: its pools were filled
// here and an unwind holds one or two of their objects at a time. HandlerAllocationTests shows it with an
// interposed allocator that counts every malloc/mmap/pipe2 made while a handler unwinds.
// No `unw_step` at install: stepping would page in the unwind tables (.eh_frame) of every module on the
// installing thread's stack, ~200 KiB of resident memory nothing needs before a crash (a crash reads the
// tables of the crashed stack: page faults on mapped files, not allocation).
// In the handler: `unw_init_local2(context, UNW_INIT_SIGNAL_FRAME)` makes frame 0 the exact interrupted PC;
// `unw_step` / `unw_get_reg` are documented signal-safe for local unwinding. We never call
// `unw_get_proc_name` (it may allocate): names are found at symbolication time.
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#define UNW_LOCAL_ONLY 1  // headers only; the library is loaded privately (see above)
#include <libunwind.h>

#include "cly_internal.h"
#include "cly_recorder.h"

typedef int (*init_local2_fn)(unw_cursor_t *, unw_context_t *, int);
typedef int (*step_fn)(unw_cursor_t *);
typedef int (*get_reg_fn)(unw_cursor_t *, unw_regnum_t, unw_word_t *);

static init_local2_fn unw_init_local2_ptr;
static step_fn unw_step_ptr;
static get_reg_fn unw_get_reg_ptr;

static void set_error(char *error, size_t size, const char *a, const char *b) {
    if (size == 0) return;
    size_t n = 0;
    for (const char *s = a; s && *s && n + 1 < size; s++) error[n++] = *s;
    for (const char *s = b; s && *s && n + 1 < size; s++) error[n++] = *s;
    error[n] = 0;
}

/// libunwind's one-time initialisation (tdep_init: memory pools, the global cache, the validation pipe) runs
/// in the first `unw_init_local2` of the process; a cursor made here and dropped is all it takes.
static void prime(void) {
    ucontext_t context;
    getcontext(&context);
    unw_cursor_t cursor;
    unw_init_local2_ptr(&cursor, (unw_context_t *)&context, 0);
}

int cly_unwind_load(char *error, size_t error_size) {
    if (unw_step_ptr != NULL) return 0;
    cly_test_probe_mark("c: start");
    void *library = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    cly_test_probe_mark("c: dlopen libunwind");
    if (library == NULL) {
        set_error(error, error_size, "cannot load libunwind.so.8 (install the libunwind8 package): ", dlerror());
        return ENOENT;
    }
    init_local2_fn init = (init_local2_fn)dlsym(library, "_ULx86_64_init_local2");
    step_fn step = (step_fn)dlsym(library, "_ULx86_64_step");
    get_reg_fn get_reg = (get_reg_fn)dlsym(library, "_ULx86_64_get_reg");
    if (init == NULL || step == NULL || get_reg == NULL) {
        set_error(error, error_size, "libunwind.so.8 lacks the local unwinding API: ", dlerror());
        return ENOSYS;
    }
    unw_init_local2_ptr = init;
    unw_get_reg_ptr = get_reg;
    unw_step_ptr = step;

    prime();
    cly_test_probe_mark("c: libunwind initialised");
    return 0;
}

int cly_test_unwind_context(void *context, uintptr_t *frames, int capacity) {
    cly_thread thread;
    cly_unwind_from_ucontext((ucontext_t *)context, true, &thread);
    int count = thread.frame_count < capacity ? thread.frame_count : capacity;
    for (int i = 0; i < count; i++) frames[i] = thread.frames[i];
    return count;
}

void cly_unwind_from_ucontext(ucontext_t *context, bool signal_frame, cly_thread *thread) {
    thread->frame_count = 0;
    thread->truncated = false;
    if (unw_step_ptr == NULL || context == NULL) return;
    unw_cursor_t cursor;
    // On x86_64 unw_context_t is ucontext_t, so the signal's context is passed as is.
    if (unw_init_local2_ptr(&cursor, (unw_context_t *)context, signal_frame ? UNW_INIT_SIGNAL_FRAME : 0) < 0) {
        thread->frames[0] = (uintptr_t)context->uc_mcontext.gregs[REG_RIP];
        thread->frame_count = 1;
        return;
    }
    unw_word_t previous_sp = 0;
    for (;;) {
        unw_word_t pc = 0;
        unw_word_t sp = 0;
        if (unw_get_reg_ptr(&cursor, UNW_REG_IP, &pc) < 0 || pc == 0) break;
        unw_get_reg_ptr(&cursor, UNW_REG_SP, &sp);
        // A frame whose stack pointer moved backwards means a corrupt stack: stop rather than loop.
        if (thread->frame_count > 0 && sp < previous_sp) break;
        previous_sp = sp;
        if (thread->frame_count == CLY_MAX_FRAMES) {
            thread->truncated = true;
            break;
        }
        thread->frames[thread->frame_count++] = (uintptr_t)pc;
        if (unw_step_ptr(&cursor) <= 0) break;
    }
}
