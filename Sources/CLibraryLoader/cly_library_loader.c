#include "cly_library_loader.h"

#include <dlfcn.h>
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
