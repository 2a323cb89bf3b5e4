#include "cly_debuginfod.h"

#include <stdlib.h>
#include <time.h>

#include "cly_library_loader.h"

enum {
    BEGIN,
    END,
    FIND_DEBUGINFO,
    FIND_EXECUTABLE,
    SET_PROGRESSFN,
    SET_USER_DATA,
    GET_USER_DATA,
    SYMBOL_COUNT
};
static const char *const names[SYMBOL_COUNT] = {
    "debuginfod_begin",          "debuginfod_end",           "debuginfod_find_debuginfo",
    "debuginfod_find_executable", "debuginfod_set_progressfn", "debuginfod_set_user_data",
    "debuginfod_get_user_data"};
static void *slots[SYMBOL_COUNT];
static struct cly_library debuginfod = {"libdebuginfod.so.1", names, slots, SYMBOL_COUNT, NULL};

static int ready(void) { return cly_library_ready(&debuginfod); }

const char *cly_debuginfod_load_error(void) { return ready() ? NULL : debuginfod.error; }

debuginfod_client *cly_debuginfod_begin(void) {
    return ready() ? ((debuginfod_client * (*)(void)) slots[BEGIN])() : NULL;
}

// A client exists only once the library is loaded: the functions taking one call straight through.
void cly_debuginfod_end(debuginfod_client *client) {
    free(((void *(*)(debuginfod_client *))slots[GET_USER_DATA])(client));
    ((void (*)(debuginfod_client *))slots[END])(client);
}

static long long monotonic_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

// Called by libdebuginfod on each turn of its transfer loop (about once a second, data or not): a non-zero
// answer abandons the transfer.
static int past_deadline(debuginfod_client *client, long done, long total) {
    (void)done;
    (void)total;
    const long long *deadline = ((void *(*)(debuginfod_client *))slots[GET_USER_DATA])(client);
    return deadline != NULL && monotonic_ms() >= *deadline;
}

int cly_debuginfod_set_deadline(debuginfod_client *client, long long milliseconds) {
    long long *deadline = ((void *(*)(debuginfod_client *))slots[GET_USER_DATA])(client);
    if (deadline == NULL) {
        deadline = malloc(sizeof *deadline);
        if (deadline == NULL) return 0;
        ((void (*)(debuginfod_client *, void *))slots[SET_USER_DATA])(client, deadline);
        ((void (*)(debuginfod_client *, debuginfod_progressfn_t))slots[SET_PROGRESSFN])(client, past_deadline);
    }
    *deadline = monotonic_ms() + milliseconds;
    return 1;
}

typedef int (*find_function)(debuginfod_client *, const unsigned char *, int, char **);

int cly_debuginfod_find_debuginfo(debuginfod_client *client, const unsigned char *build_id, int build_id_length,
                                  char **path) {
    return ((find_function)slots[FIND_DEBUGINFO])(client, build_id, build_id_length, path);
}

int cly_debuginfod_find_executable(debuginfod_client *client, const unsigned char *build_id, int build_id_length,
                                   char **path) {
    return ((find_function)slots[FIND_EXECUTABLE])(client, build_id, build_id_length, path);
}
