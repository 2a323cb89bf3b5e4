// Swift tasks as context: which task runs on a thread, and the task-scoped context a crash in it carries.
//
// The task: `swift_task_getCurrent()` (libswift_Concurrency) reads the thread-local slot where the runtime keeps
// the task it is running on this thread, and `swift_task_getJobTaskId()` reads the task's id out of it (the
// runtime's 64-bit counter: unique in the process, never reused). Both are a TLS access and field loads — no
// allocation, no lock; libswift_Concurrency is a startup dependency of every Swift program that uses tasks, so
// its thread-local block is the static one and `__tls_get_addr` finds it without allocating. That makes them
// safe in the crash handler on the crashed thread (cly_report.c), and cheap for every breadcrumb.
//
// The context: `CohorlyCrash.withContext(_:)` binds a `TaskLocal` whose value is a class instance holding, as its
// first stored property, a `cly_task_context *` made here — the tags already serialized, so nothing is made at
// crash time. A task local is inherited by child tasks (`async let`, task groups) and copied by `Task {}`. At a
// crash, `swift_task_localValueGet(key)` walks the crashed thread's task's bound values (a linked list the task
// owns; no allocation, no lock) and returns the address of the value; from there two pointer loads and the
// header check are made with `process_vm_readv` (fault-free: a bad pointer is an error, not a fault). Limits: a
// crash inside the runtime's own push or pop of a task-local value may see the list mid-change; where
// `process_vm_readv` is refused (seccomp) the context is left out.
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cly_internal.h"
#include "cly_tasks.h"

#define CONTEXT_MAGIC 0x78746374796c6f63ull  // "coly tctx"

struct cly_task_context {
    uint64_t magic;
    uint32_t length;
    char json[CLY_MAX_TASK_CONTEXT];
};

// Weak: a program without the concurrency runtime leaves them NULL (no task, no context). swiftcall: the
// runtime's own calling convention for these entry points.
extern __attribute__((weak, swiftcall)) void *swift_task_getCurrent(void);
extern __attribute__((weak, swiftcall)) uint64_t swift_task_getJobTaskId(void *job);
extern __attribute__((weak, swiftcall)) void *swift_task_localValueGet(const void *key);

static _Atomic(const void *) context_key;

uint64_t cly_task_current_id(void) {
    if (swift_task_getCurrent == NULL || swift_task_getJobTaskId == NULL) return 0;
    void *task = swift_task_getCurrent();
    return task == NULL ? 0 : swift_task_getJobTaskId(task);
}

cly_task_context *cly_task_context_make(const char *json, size_t length) {
    if (json == NULL || length < 2 || length > CLY_MAX_TASK_CONTEXT || json[0] != '{' || json[length - 1] != '}')
        return NULL;
    cly_task_context *context = malloc(sizeof *context);
    if (context == NULL) return NULL;
    context->magic = CONTEXT_MAGIC;
    context->length = (uint32_t)length;
    memcpy(context->json, json, length);
    return context;
}

void cly_task_context_free(cly_task_context *context) {
    if (context == NULL) return;
    context->magic = 0;
    free(context);
}

void cly_task_context_set_key(const void *key) { atomic_store(&context_key, key); }

/// Copies `size` bytes at `address` of this process into `out`; false when they cannot be read. Signal-safe
/// (a system call; an unmapped address fails with EFAULT instead of faulting).
static bool read_memory(uintptr_t address, void *out, size_t size) {
    struct iovec local = {out, size};
    struct iovec remote = {(void *)address, size};
    return syscall(SYS_process_vm_readv, getpid(), &local, 1, &remote, 1, 0) == (long)size;
}

size_t cly_task_context_copy_for_crash(char *out, size_t capacity) {
    const void *key = atomic_load(&context_key);
    if (key == NULL || swift_task_localValueGet == NULL) return 0;
    const void *value = swift_task_localValueGet(key);
    uintptr_t object = 0;
    uintptr_t context = 0;
    if (value == NULL || !read_memory((uintptr_t)value, &object, sizeof object) || object == 0) return 0;
    // The instance: its header (metadata, reference counts), then its first stored property.
    if (!read_memory(object + 2 * sizeof(void *), &context, sizeof context) || context == 0) return 0;
    struct {
        uint64_t magic;
        uint32_t length;
    } header;
    if (!read_memory(context, &header, sizeof header) || header.magic != CONTEXT_MAGIC) return 0;
    if (header.length < 2 || header.length > CLY_MAX_TASK_CONTEXT || header.length > capacity) return 0;
    if (!read_memory(context + offsetof(cly_task_context, json), out, header.length)) return 0;
    if (out[0] != '{' || out[header.length - 1] != '}') return 0;
    return header.length;
}
