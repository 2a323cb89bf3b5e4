#include "cly_debuginfod.h"

#include "cly_library_loader.h"

enum { BEGIN, END, FIND_DEBUGINFO, FIND_EXECUTABLE, SYMBOL_COUNT };
static const char *const names[SYMBOL_COUNT] = {
    "debuginfod_begin", "debuginfod_end", "debuginfod_find_debuginfo", "debuginfod_find_executable"};
static void *slots[SYMBOL_COUNT];
static struct cly_library debuginfod = {"libdebuginfod.so.1", names, slots, SYMBOL_COUNT, NULL};

static int ready(void) { return cly_library_ready(&debuginfod); }

const char *cly_debuginfod_load_error(void) { return ready() ? NULL : debuginfod.error; }

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
