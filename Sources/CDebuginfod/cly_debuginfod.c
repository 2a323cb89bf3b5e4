#include "cly_debuginfod.h"

#include <pthread.h>

#include "cly_library_loader.h"

enum { BEGIN, END, FIND_DEBUGINFO, FIND_EXECUTABLE, SYMBOL_COUNT };
static const char *const names[SYMBOL_COUNT] = {
    "debuginfod_begin", "debuginfod_end", "debuginfod_find_debuginfo", "debuginfod_find_executable"};
static void *slots[SYMBOL_COUNT];
static char load_error[512];
static int loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    loaded = cly_library_load("libdebuginfod.so.1", names, slots, SYMBOL_COUNT, load_error, sizeof load_error);
}

/// Loads libdebuginfod once (any thread; pthread_once makes the others wait) and says whether it is usable.
static int ready(void) {
    pthread_once(&once, load);
    return loaded;
}

const char *cly_debuginfod_load_error(void) { return ready() ? NULL : load_error; }

debuginfod_client *cly_debuginfod_begin(void) {
    return ready() ? ((debuginfod_client * (*)(void)) slots[BEGIN])() : NULL;
}

// A client exists only once the library is loaded: the functions taking one call straight through.
void cly_debuginfod_end(debuginfod_client *client) { ((void (*)(debuginfod_client *))slots[END])(client); }

typedef int (*find_function)(debuginfod_client *, const unsigned char *, int, char **);

int cly_debuginfod_find_debuginfo(debuginfod_client *client, const unsigned char *build_id, int build_id_length,
                                  char **path) {
    return ((find_function)slots[FIND_DEBUGINFO])(client, build_id, build_id_length, path);
}

int cly_debuginfod_find_executable(debuginfod_client *client, const unsigned char *build_id, int build_id_length,
                                   char **path) {
    return ((find_function)slots[FIND_EXECUTABLE])(client, build_id, build_id_length, path);
}
