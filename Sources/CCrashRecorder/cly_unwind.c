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
// Per frame the unwind also keeps what the async walk needs (cly_async.c): the async context register and the
// frame pointer as libunwind restores them for that frame. `unw_get_proc_info_by_ip` (documented signal-safe
// for the local address space) tells the walk whether an address starts a function with unwind info.
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
typedef int (*get_proc_info_by_ip_fn)(unw_addr_space_t, unw_word_t, unw_proc_info_t *, void *);

// The Swift async calling convention's context register, and the frame pointer.
#if defined(__x86_64__)
#define ASYNC_CONTEXT_REGISTER UNW_X86_64_R14
#define FRAME_POINTER_REGISTER UNW_X86_64_RBP
#elif defined(__aarch64__)
#define ASYNC_CONTEXT_REGISTER UNW_AARCH64_X22
#define FRAME_POINTER_REGISTER UNW_AARCH64_X29
#endif

static init_local2_fn unw_init_local2_ptr;
static step_fn unw_step_ptr;
static get_reg_fn unw_get_reg_ptr;
static get_proc_info_by_ip_fn unw_get_proc_info_by_ip_ptr;
static unw_addr_space_t *local_address_space;

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
    get_proc_info_by_ip_fn proc_info = (get_proc_info_by_ip_fn)dlsym(library, "_ULx86_64_get_proc_info_by_ip");
    unw_addr_space_t *address_space = (unw_addr_space_t *)dlsym(library, "_ULx86_64_local_addr_space");
    if (init == NULL || step == NULL || get_reg == NULL || proc_info == NULL || address_space == NULL) {
        set_error(error, error_size, "libunwind.so.8 lacks the local unwinding API: ", dlerror());
        return ENOSYS;
    }
    unw_init_local2_ptr = init;
    unw_get_reg_ptr = get_reg;
    unw_get_proc_info_by_ip_ptr = proc_info;
    local_address_space = address_space;
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

bool cly_unwind_function_range(uintptr_t address, uintptr_t *start, uintptr_t *end) {
    if (unw_get_proc_info_by_ip_ptr == NULL) return false;
    unw_proc_info_t info;
    memset(&info, 0, sizeof info);
    if (unw_get_proc_info_by_ip_ptr(*local_address_space, (unw_word_t)address, &info, NULL) < 0) return false;
    *start = (uintptr_t)info.start_ip;
    *end = (uintptr_t)info.end_ip;
    return info.start_ip < info.end_ip;
}

void cly_unwind_from_ucontext(ucontext_t *context, bool signal_frame, cly_thread *thread) {
    thread->frame_count = 0;
    thread->truncated = false;
    thread->first_frame_kind = signal_frame ? CLY_FRAME_PC : CLY_FRAME_RETURN_ADDRESS;
    thread->async.count = 0;
    if (unw_step_ptr == NULL || context == NULL) return;
    unw_cursor_t cursor;
    // On x86_64 unw_context_t is ucontext_t, so the signal's context is passed as is.
    if (unw_init_local2_ptr(&cursor, (unw_context_t *)context, signal_frame ? UNW_INIT_SIGNAL_FRAME : 0) < 0) {
        thread->frames[0] = (uintptr_t)context->uc_mcontext.gregs[REG_RIP];
        thread->async_registers[0] = (uintptr_t)context->uc_mcontext.gregs[REG_R14];
        thread->frame_pointers[0] = (uintptr_t)context->uc_mcontext.gregs[REG_RBP];
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
        unw_word_t async_context = 0;
        unw_word_t frame_pointer = 0;
        unw_get_reg_ptr(&cursor, ASYNC_CONTEXT_REGISTER, &async_context);
        unw_get_reg_ptr(&cursor, FRAME_POINTER_REGISTER, &frame_pointer);
        thread->async_registers[thread->frame_count] = (uintptr_t)async_context;
        thread->frame_pointers[thread->frame_count] = (uintptr_t)frame_pointer;
        thread->frames[thread->frame_count++] = (uintptr_t)pc;
        if (unw_step_ptr(&cursor) <= 0) break;
    }
}
