// The label of the dispatch queue a thread is running work of, read by that thread itself at crash time.
//
// libdispatch on Linux names its worker threads after their root queue, which the kernel cuts to the last 15
// characters ("oot.default-qos" for "com.apple.root.default-qos"): the queue whose work the thread runs is not in
// its name. libdispatch keeps it in its thread-specific data, a thread-local struct whose first member is the
// thread's id and one of whose slots is the current queue; a queue keeps a pointer to its label.
//
// At install (normal code), cly_dispatch_prepare, when libdispatch is loaded:
//   1. finds libdispatch's TLS block for the installing thread (dl_iterate_phdr's dlpi_tls_data of the object that
//      holds dispatch_queue_create) and keeps its offset from the thread pointer: an object loaded with the program
//      has its block at that one offset from every thread's thread pointer (static TLS). A block farther than
//      MAX_TLS_OFFSET from it is dynamic TLS (a libdispatch opened by dlopen), whose place differs per thread:
//      then nothing is read at crash time;
//   2. runs one function on a serial queue of its own (dispatch_sync_f runs it on the calling thread) that finds,
//      in the block, the word holding that queue and, before it, the thread's id; then, in the queue object, the
//      word holding the pointer dispatch_queue_get_label answers. The slot must no longer hold the queue once the
//      function returned. Any miss leaves the feature off.
// At crash time, cly_dispatch_queue_label (the crashed thread in the crash handler, each other thread in its dump
// handler, each for itself) reads through cly_read_memory (process_vm_readv or a pipe: a bad address is an error,
// never a fault): the id member, which must be the calling thread's (libdispatch set its data up on this thread),
// the current queue (none, or the main queue: no label), its label pointer, and the label, 16 bytes at a time up to its NUL or
// `size - 1` bytes. Nothing in libdispatch is called at crash time; every read is bounded.
#include "cly_internal.h"

#include <link.h>
#include <string.h>

#define MAX_TLS_OFFSET (1l << 20)
#define MAX_TLS_SCAN 4096
#define MAX_QUEUE_SCAN 64

extern void *dispatch_queue_create(const char *label, void *attributes) __attribute__((weak));
extern void dispatch_sync_f(void *queue, void *context, void (*work)(void *)) __attribute__((weak));
extern const char *dispatch_queue_get_label(void *queue) __attribute__((weak));
extern void dispatch_release(void *object) __attribute__((weak));
extern char _dispatch_main_q[] __attribute__((weak));  // the main queue (dispatch_get_main_queue())

static bool ready;
static intptr_t tls_offset;    // libdispatch's TLS block minus the thread pointer
static size_t tid_member;      // in the block: the thread id (pid_t)
static size_t queue_member;    // in the block: the current queue
static size_t label_member;    // in a queue: its label

static uintptr_t thread_pointer(void) {
#if defined(__x86_64__)
    uintptr_t pointer;
    __asm__("mov %%fs:0, %0" : "=r"(pointer));  // the TCB's self pointer: the thread pointer (x86-64 ABI)
    return pointer;
#elif defined(__aarch64__)
    uintptr_t pointer;
    __asm__("mrs %0, tpidr_el0" : "=r"(pointer));
    return pointer;
#else
    return 0;
#endif
}

typedef struct {
    const void *inside;  // an address in libdispatch
    uintptr_t block;     // its TLS block for this thread
    size_t size;         // the block's size (PT_TLS memsz)
} tls_search;

static int find_tls(struct dl_phdr_info *info, size_t size, void *context) {
    (void)size;
    tls_search *search = context;
    bool holds = false;
    size_t tls_size = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        uintptr_t start = info->dlpi_addr + header->p_vaddr;
        if (header->p_type == PT_LOAD && (uintptr_t)search->inside - start < header->p_memsz) holds = true;
        if (header->p_type == PT_TLS) tls_size = header->p_memsz;
    }
    if (!holds) return 0;
    search->block = (uintptr_t)info->dlpi_tls_data;
    search->size = tls_size;
    return 1;
}

typedef struct {
    void *queue;
    uintptr_t block;
    size_t size;
    bool found;
} calibration;

/// Runs on the calibration queue: where the block holds the queue and the thread id.
static void calibrate(void *context) {
    calibration *c = context;
    pid_t tid = cly_gettid();
    for (size_t offset = 8; offset + sizeof(void *) <= c->size; offset += sizeof(void *)) {
        void *word;
        memcpy(&word, (const void *)(c->block + offset), sizeof word);
        if (word != c->queue) continue;
        for (size_t back = offset < 16 ? offset : 16; back >= sizeof(pid_t); back -= sizeof(pid_t)) {
            pid_t value;
            memcpy(&value, (const void *)(c->block + offset - back), sizeof value);
            if (value == tid) {
                tid_member = offset - back;
                queue_member = offset;
                c->found = true;
                return;
            }
        }
    }
}

void cly_dispatch_prepare(void) {
    if (ready || dispatch_queue_create == NULL || dispatch_sync_f == NULL || dispatch_queue_get_label == NULL ||
        dispatch_release == NULL)
        return;
    tls_search search = {(const void *)dispatch_queue_create, 0, 0};
    dl_iterate_phdr(find_tls, &search);
    uintptr_t pointer = thread_pointer();
    if (search.block == 0 || search.size == 0 || pointer == 0) return;
    intptr_t offset = (intptr_t)(search.block - pointer);
    if (offset > MAX_TLS_OFFSET || offset < -MAX_TLS_OFFSET) return;  // dynamic TLS: differs per thread
    static const char label[] = "cohorly.crash.queue-calibration";
    void *queue = dispatch_queue_create(label, NULL);
    if (queue == NULL) return;
    calibration c = {queue, search.block, search.size < MAX_TLS_SCAN ? search.size : MAX_TLS_SCAN, false};
    dispatch_sync_f(queue, &c, calibrate);
    const char *kept = dispatch_queue_get_label(queue);
    bool label_found = false;
    for (size_t member = 0; kept != NULL && member < MAX_QUEUE_SCAN * sizeof(void *); member += sizeof(void *)) {
        const char *word;
        memcpy(&word, (const char *)queue + member, sizeof word);
        if (word == kept) {
            label_member = member;
            label_found = true;
            break;
        }
    }
    void *after;
    memcpy(&after, (const void *)(search.block + queue_member), sizeof after);
    dispatch_release(queue);
    if (!c.found || !label_found || after == queue) return;
    tls_offset = offset;
    ready = true;
}

bool cly_dispatch_queue_label(char *out, size_t size) {
    if (size == 0) return false;
    out[0] = 0;
    uintptr_t pointer = thread_pointer();
    if (!ready || pointer == 0) return false;
    uintptr_t block = pointer + (uintptr_t)tls_offset;
    pid_t tid = 0;
    uintptr_t queue = 0;
    uintptr_t label = 0;
    if (!cly_read_memory(block + tid_member, &tid, sizeof tid) || tid != cly_gettid()) return false;
    if (!cly_read_memory(block + queue_member, &queue, sizeof queue) || queue == 0) return false;
    // libdispatch makes the main queue the main thread's current queue from its start: the main thread keeps the
    // name it has (its program's), which libdispatch did not give it.
    if (queue == (uintptr_t)_dispatch_main_q) return false;
    if (!cly_read_memory(queue + label_member, &label, sizeof label) || label == 0) return false;
    size_t length = 0;
    while (length + 1 < size) {
        char chunk[16];
        size_t want = size - 1 - length < sizeof chunk ? size - 1 - length : sizeof chunk;
        // A chunk that would cross into an unreadable page is read a byte at a time.
        if (!cly_read_memory(label + length, chunk, want)) {
            if (!cly_read_memory(label + length, chunk, 1)) break;
            want = 1;
        }
        size_t i = 0;
        while (i < want && chunk[i] != 0) out[length++] = chunk[i++];
        if (i < want) break;
    }
    out[length] = 0;
    return length > 0;
}
