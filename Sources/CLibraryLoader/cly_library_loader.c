#include "cly_library_loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

int cly_library_load(const char *soname, const char *const *names, void **slots, size_t count, char *error,
                     size_t error_size) {
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
