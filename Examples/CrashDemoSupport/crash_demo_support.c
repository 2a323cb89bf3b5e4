#define _GNU_SOURCE
#include "crash_demo_support.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) void demo_null_write(void) {
    volatile int *pointer = NULL;
    *pointer = 42;
}

__attribute__((noinline)) void demo_abort(void) { abort(); }

__attribute__((noinline)) int demo_sigfpe(int divisor) {
    volatile int dividend = 42;
    volatile int result = dividend / divisor;
    return result;
}

__attribute__((noinline)) void demo_sigtrap(void) {
    raise(SIGTRAP);
    demo_opaque(NULL);
}

__attribute__((noinline)) void demo_sigbus(const char *directory) {
    char path[4096];
    snprintf(path, sizeof path, "%s/sigbus-XXXXXX", directory);
    int fd = mkstemp(path);
    if (fd < 0) return;
    unlink(path);
    if (ftruncate(fd, 0) != 0) return;
    volatile char *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (page == MAP_FAILED) return;
    page[4096] = 1;  // past the end of the (empty) file
    demo_opaque((void *)page);
}

int demo_crash_in_library(const char *path) {
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return -1;
    void (*crash)(void) = (void (*)(void))dlsym(library, "cly_fixture_crash");
    if (crash == NULL) return -1;
    crash();
    return 0;
}

void demo_set_thread_name(const char *name) {
    char truncated[16];
    strncpy(truncated, name, 15);
    truncated[15] = 0;
    pthread_setname_np(pthread_self(), truncated);
}

__attribute__((noinline)) void demo_opaque(void *pointer) { __asm__ volatile("" : : "r"(pointer) : "memory"); }

__attribute__((noinline)) long demo_identity(long value) {
    __asm__ volatile("" : "+r"(value));
    return value;
}

const char *demo_address_location(unsigned long address, unsigned long *offset) {
    Dl_info info;
    if (dladdr((void *)address, &info) == 0 || info.dli_fname == NULL) return NULL;
    *offset = address - (unsigned long)info.dli_fbase;
    return info.dli_fname;
}

// ---- a `_swift_willThrow` hook installed before the SDK's (ThrowSiteScenario) ----

typedef void (*demo_will_throw_fn)(void *box);
extern _Atomic(demo_will_throw_fn) _swift_willThrow __attribute__((weak));
static atomic_int counted_throws;

static void demo_counting_will_throw(void *box) {
    (void)box;
    atomic_fetch_add(&counted_throws, 1);
}

int demo_install_counting_throw_hook(void) {
    if (&_swift_willThrow == NULL) return -1;
    atomic_store(&_swift_willThrow, demo_counting_will_throw);
    return 0;
}

int demo_counting_throw_hook_calls(void) { return atomic_load(&counted_throws); }
