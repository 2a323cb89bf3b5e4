#include "cly_curl.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cly_library_loader.h"

enum {
    GLOBAL_INIT,
    EASY_INIT,
    EASY_CLEANUP,
    EASY_RESET,
    EASY_PERFORM,
    EASY_STRERROR,
    SLIST_APPEND,
    SLIST_FREE_ALL,
    EASY_SETOPT,
    EASY_GETINFO,
    SYMBOL_COUNT
};
static const char *const names[SYMBOL_COUNT] = {
    "curl_global_init", "curl_easy_init",    "curl_easy_cleanup",    "curl_easy_reset",  "curl_easy_perform",
    "curl_easy_strerror", "curl_slist_append", "curl_slist_free_all", "curl_easy_setopt", "curl_easy_getinfo",
};
static void *slots[SYMBOL_COUNT];

// Exit. curl_global_init makes the TLS library register its own clean-up with atexit; at exit() that clean-up
// frees locks a transfer on another thread (the client's delivery thread) may still be using, and the process
// crashes on its way out. So once libcurl is initialised we register `quiesce_at_exit` — atexit handlers run
// in reverse order, so it runs before the TLS clean-up: it stops new transfers, aborts running ones through
// the progress callback, and waits (at most 2 s) for them to return. Perform, reset and cleanup (the calls
// that use connections) are bracketed by enter/leave; setting and reading options touch only the handle.
static atomic_int exiting;
static atomic_int calls_in_flight;

static int enter(void) {
    atomic_fetch_add(&calls_in_flight, 1);
    if (atomic_load(&exiting)) {
        atomic_fetch_sub(&calls_in_flight, 1);
        return 0;
    }
    return 1;
}

static void leave(void) { atomic_fetch_sub(&calls_in_flight, 1); }

static void quiesce_at_exit(void) {
    atomic_store(&exiting, 1);
    for (int waited_ms = 0; waited_ms < 2000 && atomic_load(&calls_in_flight) > 0; waited_ms++) {
        struct timespec millisecond = {0, 1000000};
        nanosleep(&millisecond, NULL);
    }
}

/// libcurl's progress callback, installed on every transfer: a non-zero answer aborts it.
static int abort_when_exiting(void *context, curl_off_t total_down, curl_off_t now_down, curl_off_t total_up,
                              curl_off_t now_up) {
    (void)context, (void)total_down, (void)now_down, (void)total_up, (void)now_up;
    return atomic_load(&exiting);
}

static int initialize(struct cly_library *library) {
    CURLcode code = ((CURLcode(*)(long))slots[GLOBAL_INIT])(CURL_GLOBAL_ALL);
    if (code != CURLE_OK) {
        snprintf(library->error, sizeof library->error, "curl_global_init failed (%d)", (int)code);
        return 0;
    }
    atexit(quiesce_at_exit);
    return 1;
}

static struct cly_library curl = {"libcurl.so.4", names, slots, SYMBOL_COUNT, initialize};

static int ready(void) { return cly_library_ready(&curl); }

const char *cly_curl_load_error(void) { return ready() ? NULL : curl.error; }

CURL *cly_curl_easy_init(void) { return ready() ? ((CURL * (*)(void)) slots[EASY_INIT])() : NULL; }

// The functions below take a handle or a list, which exist only once libcurl is loaded; NULL is passed on
// only where libcurl itself accepts it (cleanup, free_all) and is then a no-op here too.
// (At exit, a handle is left as it is: it is about to vanish with the process.)
void cly_curl_easy_cleanup(CURL *handle) {
    if (handle == NULL || !ready() || !enter()) return;
    ((void (*)(CURL *))slots[EASY_CLEANUP])(handle);
    leave();
}

void cly_curl_easy_reset(CURL *handle) {
    if (handle == NULL || !ready() || !enter()) return;
    ((void (*)(CURL *))slots[EASY_RESET])(handle);
    leave();
}

typedef CURLcode (*setopt_function)(CURL *, CURLoption, ...);
typedef CURLcode (*getinfo_function)(CURL *, CURLINFO, ...);

CURLcode cly_curl_easy_perform(CURL *handle) {
    if (!ready()) return CURLE_FAILED_INIT;
    if (!enter()) return CURLE_ABORTED_BY_CALLBACK;
    setopt_function setopt = (setopt_function)slots[EASY_SETOPT];
    setopt(handle, CURLOPT_XFERINFOFUNCTION, abort_when_exiting);
    setopt(handle, CURLOPT_NOPROGRESS, 0L);
    CURLcode code = ((CURLcode(*)(CURL *))slots[EASY_PERFORM])(handle);
    leave();
    return code;
}

const char *cly_curl_easy_strerror(CURLcode code) {
    return ready() ? ((const char *(*)(CURLcode))slots[EASY_STRERROR])(code) : curl.error;
}

struct curl_slist *cly_curl_slist_append(struct curl_slist *list, const char *text) {
    return ready() ? ((struct curl_slist * (*)(struct curl_slist *, const char *)) slots[SLIST_APPEND])(list, text)
                   : NULL;
}

void cly_curl_slist_free_all(struct curl_slist *list) {
    if (list != NULL && ready()) ((void (*)(struct curl_slist *))slots[SLIST_FREE_ALL])(list);
}

// curl_easy_setopt and curl_easy_getinfo are variadic: they are called through a variadic pointer type, so
// the argument is passed exactly as a direct call would pass it.
#define CLY_SETOPT(handle, option, value) \
    (ready() ? ((setopt_function)slots[EASY_SETOPT])(handle, option, value) : CURLE_FAILED_INIT)

CURLcode cly_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return CLY_SETOPT(handle, option, value);
}
CURLcode cly_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return CLY_SETOPT(handle, option, value);
}
CURLcode cly_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return CLY_SETOPT(handle, option, value);
}
CURLcode cly_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return CLY_SETOPT(handle, option, value);
}
CURLcode cly_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return CLY_SETOPT(handle, option, value);
}
CURLcode cly_curl_setopt_data_callback(CURL *handle, CURLoption option, cly_curl_data_callback value) {
    return CLY_SETOPT(handle, option, value);
}

CURLcode cly_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return ready() ? ((getinfo_function)slots[EASY_GETINFO])(handle, info, value) : CURLE_FAILED_INIT;
}
CURLcode cly_curl_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return ready() ? ((getinfo_function)slots[EASY_GETINFO])(handle, info, value) : CURLE_FAILED_INIT;
}
