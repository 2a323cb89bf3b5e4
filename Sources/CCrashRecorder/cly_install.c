// Install: everything the crash path needs is prepared here, in normal code, so the handler only reads.
//
// Order: check the report directory -> load libunwind privately and warm it -> find the Swift fatal-message
// buffer -> make this process's $insert_id -> build the module table -> give this thread an alternate stack
// -> install the signal handlers -> install the C++ terminate hook -> reserve the report's disk space (which
// cannot fail the install: without it the writer sizes the report to the free space). Every step that can fail
// comes before the first handler is installed, so a failed install leaves the process as it was.
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cly_internal.h"
#include "cly_recorder.h"

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static bool installed;
static pthread_key_t altstack_key;

static void set_error(char *error, size_t size, const char *a, const char *b, const char *c) {
    if (size == 0) return;
    size_t n = 0;
    const char *parts[3] = {a, b, c};
    for (int p = 0; p < 3; p++)
        for (const char *s = parts[p]; s && *s && n + 1 < size; s++) error[n++] = *s;
    error[n] = 0;
}

static void free_altstack(void *mapping) {
    stack_t disable = {.ss_flags = SS_DISABLE};
    sigaltstack(&disable, NULL);
    munmap(mapping, CLY_ALTSTACK_BYTES + (size_t)getpagesize());
}

int cly_prepare_current_thread(void) {
    stack_t current;
    if (sigaltstack(NULL, &current) == 0 && (current.ss_flags & SS_DISABLE) == 0 &&
        current.ss_size >= CLY_ALTSTACK_BYTES)
        return 0;
    size_t guard = (size_t)getpagesize();
    void *mapping = mmap(NULL, CLY_ALTSTACK_BYTES + guard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapping == MAP_FAILED) return errno;
    mprotect(mapping, guard, PROT_NONE);  // a handler that overflows the alternate stack faults, not corrupts
    stack_t stack = {.ss_sp = (char *)mapping + guard, .ss_size = CLY_ALTSTACK_BYTES, .ss_flags = 0};
    if (sigaltstack(&stack, NULL) != 0) {
        int error = errno;
        munmap(mapping, CLY_ALTSTACK_BYTES + guard);
        return error;
    }
    if (getpid() != cly_gettid()) pthread_setspecific(altstack_key, mapping);  // freed when the thread ends
    return 0;
}

bool cly_is_installed(void) {
    pthread_mutex_lock(&install_lock);
    bool result = installed;
    pthread_mutex_unlock(&install_lock);
    return result;
}

int cly_install(const char *report_directory, bool chain, char *error, size_t error_size) {
    if (error_size > 0) error[0] = 0;
    size_t length = report_directory ? strlen(report_directory) : 0;
    if (length == 0 || length + 80 >= CLY_MAX_PATH) {
        set_error(error, error_size, "report directory path is empty or too long", NULL, NULL);
        return ENAMETOOLONG;
    }
    if (access(report_directory, W_OK | X_OK) != 0) {
        int code = errno;
        set_error(error, error_size, "report directory ", report_directory, ": not writable");
        return code;
    }
    pthread_mutex_lock(&install_lock);
    if (installed) {
        memcpy(cly_report_directory, report_directory, length + 1);
        cly_signals_set_chain(chain);
        pthread_mutex_unlock(&install_lock);
        return 0;
    }
    ssize_t n = readlink("/proc/self/exe", cly_executable_path, sizeof cly_executable_path - 1);
    cly_executable_path[n > 0 ? n : 0] = 0;
    int result = cly_unwind_load(error, error_size);
    if (result != 0) {
        pthread_mutex_unlock(&install_lock);
        return result;
    }
    cly_async_prepare();
    cly_dispatch_prepare();
    cly_test_probe_mark("c: async walk, dispatch queues");
    const char *format = getenv("COHORLY_TEST_REPORT_FORMAT");  // test hook: "1" writes v1 (the reader keeps it)
    if (format != NULL && format[0] == '1') cly_report_format = 1;
    cly_fatal_message_install();
    cly_insert_id_renew();
    pthread_atfork(NULL, NULL, cly_insert_id_renew);
    pthread_key_create(&altstack_key, free_altstack);
    cly_test_probe_mark("c: insert id, hooks");
    cly_modules_build();
    cly_test_probe_mark("c: module table");
    memcpy(cly_report_directory, report_directory, length + 1);
    result = cly_prepare_current_thread();
    if (result == 0) result = cly_signals_install(chain);
    if (result != 0) {
        set_error(error, error_size, "cannot install the signal handlers: ", strerror(result), NULL);
        pthread_mutex_unlock(&install_lock);
        return result;
    }
    cly_test_probe_mark("c: altstack, handlers");
    cly_terminate_install();
    cly_test_probe_mark("c: C++ terminate hook");
    // The report's disk space, before CohorlyCrash makes the launch marker: on a nearly full disk the crash wins.
    cly_reserve_make(cly_report_directory);
    installed = true;
    pthread_mutex_unlock(&install_lock);
    return 0;
}
