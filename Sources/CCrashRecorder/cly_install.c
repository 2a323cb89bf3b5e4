// Install: everything the crash path needs is prepared here, in normal code, so the handler only reads.
//
// Order: check the report directory -> load libunwind privately and warm it -> find the Swift fatal-message
// buffer -> make this process's $insert_id -> build the module table -> give this thread an alternate stack
// -> install the signal handlers -> install the C++ terminate hook. Every step that can fail comes before
// the first handler is installed, so a failed install leaves the process as it was.
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>

#include "cly_internal.h"
#include "cly_recorder.h"

int cly_signals_install(bool chain_enabled);
void cly_signals_set_chain(bool chain_enabled);
void cly_fatal_message_install(void);

char cly_report_directory[CLY_MAX_PATH];
char cly_executable_path[CLY_MAX_PATH];

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static bool installed;
static char insert_id[37];
static pid_t insert_id_pid;
static pthread_key_t altstack_key;

static void set_error(char *error, size_t size, const char *a, const char *b, const char *c) {
    if (size == 0) return;
    size_t n = 0;
    const char *parts[3] = {a, b, c};
    for (int p = 0; p < 3; p++)
        for (const char *s = parts[p]; s && *s && n + 1 < size; s++) error[n++] = *s;
    error[n] = 0;
}

/// A UUIDv4 from getrandom (a syscall: signal-safe). GRND_NONBLOCK so it never waits for entropy at boot;
/// then the clock and pid are mixed in instead.
static void make_insert_id(char out[37]) {
    static const char digits[] = "0123456789abcdef";
    uint8_t bytes[16] = {0};
    if (syscall(SYS_getrandom, bytes, sizeof bytes, GRND_NONBLOCK) != (long)sizeof bytes) {
        uint64_t mix = cly_monotonic_ns() ^ ((uint64_t)getpid() << 32);
        for (int i = 0; i < 16; i++) {
            mix = mix * 6364136223846793005ull + 1442695040888963407ull;
            bytes[i] ^= (uint8_t)(mix >> 56);
        }
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;  // version 4
    bytes[8] = (bytes[8] & 0x3f) | 0x80;  // RFC 4122 variant
    size_t n = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[n++] = '-';
        out[n++] = digits[bytes[i] >> 4];
        out[n++] = digits[bytes[i] & 0xf];
    }
    out[n] = 0;
}

static void renew_insert_id(void) {
    make_insert_id(insert_id);
    insert_id_pid = getpid();
}

const char *cly_insert_id_for_crash(void) {
    if (insert_id_pid != getpid()) renew_insert_id();  // forked without our atfork handler (raw clone)
    return insert_id;
}

void cly_current_insert_id(char out[37]) { memcpy(out, cly_insert_id_for_crash(), 37); }

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
    cly_fatal_message_install();
    renew_insert_id();
    pthread_atfork(NULL, NULL, renew_insert_id);
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
    installed = true;
    pthread_mutex_unlock(&install_lock);
    return 0;
}
