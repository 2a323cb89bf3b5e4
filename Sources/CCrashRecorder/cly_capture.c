// Live capture: the calling thread's stack and the module list, for events sent while the process runs
// (handled errors; hangs reuse the module list). Normal code only — never called from a signal handler.
//
// Order of a capture: cly_capture_prepare (once: libunwind loaded privately, the same copy the crash path
// uses) -> cly_capture_current_stack on the caller's thread (getcontext, then cly_unwind_from_ucontext as
// for a crash, minus the signal frame) -> later, off the caller's thread, cly_capture_modules_generation /
// cly_capture_list_modules to describe the images the frames point into.
//
// The unwinder is the crash path's own: frames found here and in a crash report are found the same way, so
// an error and a crash at the same place group together.
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>

#include "cly_capture.h"
#include "cly_internal.h"

static pthread_mutex_t prepare_lock = PTHREAD_MUTEX_INITIALIZER;
static bool prepared;
static char executable_path[CLY_MAX_PATH];

int cly_capture_prepare(char *error, size_t error_size) {
    if (error_size > 0) error[0] = 0;
    pthread_mutex_lock(&prepare_lock);
    int result = 0;
    if (!prepared) {
        ssize_t n = readlink("/proc/self/exe", executable_path, sizeof executable_path - 1);
        executable_path[n > 0 ? n : 0] = 0;
        // A no-op when cly_install loaded it already. If both load it at once, both store the same dlsym
        // results, and each caller uses the unwinder only after its own load returned.
        result = cly_unwind_load(error, error_size);
        if (result == 0) cly_async_prepare();
        prepared = result == 0;
    }
    pthread_mutex_unlock(&prepare_lock);
    return result;
}

/// The capture, called by each public function (not inlined: it calls getcontext, which returns twice), so
/// frame 0 of the unwind is this function and frame 1 the public one.
__attribute__((noinline)) static int capture(uintptr_t *frames, int capacity, int skip, bool *truncated,
                                             cly_async_chain *async) {
    if (truncated) *truncated = false;
    if (async) async->count = 0;
    if (capacity <= 0 || skip < 0) return 0;
    ucontext_t context;
    cly_thread thread;
    if (getcontext(&context) != 0) return 0;
    cly_unwind_from_ucontext(&context, false, &thread);
    // Frame 0 is this function (getcontext returns into it), frame 1 the public one; then the caller's `skip`
    // wrapper frames.
    int first = 2 + skip;
    int count = 0;
    for (int i = first; i < thread.frame_count && count < capacity; i++) frames[count++] = thread.frames[i];
    if (truncated) *truncated = thread.truncated || first + count < thread.frame_count;
    if (async != NULL && count > 0) {
        cly_async_walk(&thread);
        *async = thread.async;
        // The anchor as an index of the frames returned (a dropped wrapper frame holding the context: the first).
        async->anchor = thread.async.anchor >= first ? thread.async.anchor - first : 0;
        if (async->anchor >= count) async->count = 0;
    }
    return count;
}

__attribute__((noinline)) int cly_capture_current_stack(uintptr_t *frames, int capacity, int skip, bool *truncated) {
    int count = capture(frames, capacity, skip, truncated, NULL);
    __asm__ volatile("" : "+r"(count));  // the call stays a call (no tail call): this frame is always there
    return count;
}

__attribute__((noinline)) int cly_capture_current_stack_async(uintptr_t *frames, int capacity, int skip,
                                                            bool *truncated, cly_async_chain *async) {
    int count = capture(frames, capacity, skip, truncated, async);
    __asm__ volatile("" : "+r"(count));  // as above
    return count;
}

int cly_capture_thread_id(void) { return (int)cly_gettid(); }

void cly_capture_thread_name(char out[16]) {
    if (prctl(PR_GET_NAME, out, 0, 0, 0) != 0) out[0] = 0;
    out[15] = 0;
}

typedef struct {
    cly_capture_module_visitor visit;
    void *context;
    bool first;
} list_state;

static int visit_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    list_state *state = data;
    cly_capture_module module;
    memset(&module, 0, sizeof module);
    cly_modules_extent(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, &module.base, &module.size);
    module.path = info->dlpi_name;
    if (module.path == NULL || module.path[0] == 0) module.path = state->first ? executable_path : "";
    state->first = false;
    module.build_id_length = cly_modules_read_build_id(
        info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, module.build_id, (int)sizeof module.build_id);
    state->visit(&module, state->context);
    return 0;
}

void cly_capture_list_modules(cly_capture_module_visitor visit, void *context) {
    if (visit == NULL) return;
    list_state state = {visit, context, true};
    // As libunwind does around the same call: with every signal blocked, a crash elsewhere cannot park this
    // thread while it holds the loader lock (the crashed thread's unwind may need that lock).
    sigset_t all;
    sigset_t saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    dl_iterate_phdr(visit_module, &state);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

static int read_generation(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    *(uint64_t *)data = (uint64_t)info->dlpi_adds + (uint64_t)info->dlpi_subs;
    return 1;  // the counters are the same in every entry: the first one is enough
}

uint64_t cly_capture_modules_generation(void) {
    uint64_t generation = 0;
    sigset_t all;
    sigset_t saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);  // see cly_capture_list_modules
    dl_iterate_phdr(read_generation, &generation);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    return generation;
}
