#include "cly_library_loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/auxv.h>

/// Thread-specific keys in the first block of a thread's slots (glibc's PTHREAD_KEY_2NDLEVEL_SIZE): slots past it
/// live in blocks each C library allocates and frees with its own malloc.
#define CLY_FIRST_KEY_BLOCK 32
/// How many of those slots the second C library gets (OpenSSL under libcurl takes 2 to 4).
#define CLY_KEYS_FOR_SECOND_LIBC 12

/// In a statically linked executable (no dynamic loader: AT_BASE is 0, as in a `-static-executable` Swift build),
/// dlopen loads a second C library for the library and its dependencies, with a key table of its own but the same
/// thread slots. Its first keys then had the numbers of this C library's first keys: OpenSSL (under libcurl) stored
/// -1 in the slot of libdispatch's key, and the main thread, ending in `dispatch_main`, died in
/// `_libdispatch_tsd_cleanup` on that -1 (most clean launches of such a build crashed at exit). So before the first
/// dlopen the first block's slots are shared out: this C library takes some for the other one (keys without a
/// destructor, so its thread-exit pass leaves their values alone), and the other C library's table gets every other
/// slot of the block taken, leaving it only those. Its keys' destructors do not run at thread exit (this C library
/// ends threads); a few bytes of OpenSSL's per-thread state leak per thread that used it.
static void cly_share_thread_slots(void) {
    if (getauxval(AT_BASE) != 0) return;
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_LOCAL);
    if (libc == NULL) return;
    int (*create)(pthread_key_t *, void (*)(void *)) = (int (*)(pthread_key_t *, void (*)(void *)))dlsym(
        libc, "pthread_key_create");
    int (*delete)(pthread_key_t) = (int (*)(pthread_key_t))dlsym(libc, "pthread_key_delete");
    if (create == NULL || delete == NULL) return;
    bool for_second[CLY_FIRST_KEY_BLOCK] = {false};
    for (int index = 0; index < CLY_KEYS_FOR_SECOND_LIBC; index++) {
        pthread_key_t key;
        if (pthread_key_create(&key, NULL) != 0) break;
        if (key >= CLY_FIRST_KEY_BLOCK) {
            pthread_key_delete(key);
            break;
        }
        for_second[key] = true;
    }
    pthread_key_t taken[CLY_FIRST_KEY_BLOCK];
    int count = 0;
    while (count < CLY_FIRST_KEY_BLOCK) {
        pthread_key_t key;
        if (create(&key, NULL) != 0) break;
        if (key >= CLY_FIRST_KEY_BLOCK) {
            delete(key);
            break;
        }
        taken[count++] = key;
    }
    for (int index = 0; index < count; index++)
        if (for_second[taken[index]]) delete(taken[index]);
}

static pthread_once_t share_thread_slots_once = PTHREAD_ONCE_INIT;

int cly_library_load(const char *soname, const char *const *names, void **slots, size_t count, char *error,
                     size_t error_size) {
    pthread_once(&share_thread_slots_once, cly_share_thread_slots);
    void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(error, error_size, "%s could not be loaded: %s", soname, reason ? reason : "unknown error");
        return 0;
    }
    for (size_t index = 0; index < count; index++) {
        slots[index] = dlsym(handle, names[index]);
        if (slots[index] == NULL) {
            snprintf(error, error_size, "%s has no %s", soname, names[index]);
            for (size_t other = 0; other < count; other++) slots[other] = NULL;
            dlclose(handle);
            return 0;
        }
    }
    return 1;  // the handle stays open for the life of the process
}

/// One lock for every library: taken only while a library is loaded for the first time.
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

int cly_library_ready(struct cly_library *library) {
    int state = atomic_load_explicit(&library->state, memory_order_acquire);
    if (state == 0) {
        pthread_mutex_lock(&load_lock);
        state = atomic_load_explicit(&library->state, memory_order_relaxed);
        if (state == 0) {
            int usable = cly_library_load(library->soname, library->names, library->slots, library->count,
                                          library->error, sizeof library->error);
            if (usable && library->initialize != NULL) usable = library->initialize(library);
            state = usable ? 1 : 2;
            atomic_store_explicit(&library->state, state, memory_order_release);
        }
        pthread_mutex_unlock(&load_lock);
    }
    return state == 1;
}
