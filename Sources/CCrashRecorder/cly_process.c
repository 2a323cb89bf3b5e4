// This process's shared crash state, at the bottom of the recorder's files: every other file may use it, it
// uses none of them (so install, the handler, the report writer and the live capture do not depend on each
// other through it).
//   - cly_crash_started: set once by the thread that writes the report; module refreshes, context updates,
//     breadcrumbs and live captures stop when they see it; cly_crash_signal: that crash's signal;
//   - cly_report_directory / cly_executable_path: set by install (normal code), read by the handler;
//   - this process's `$insert_id` (made at install, renewed in a forked child);
//   - cly_die_of: how every handler ends the process with a given signal.
#include <string.h>
#include <sys/random.h>

#include "cly_internal.h"
#include "cly_recorder.h"

atomic_int cly_crash_started;
atomic_int cly_crash_signal;
char cly_report_directory[CLY_MAX_PATH];
char cly_executable_path[CLY_MAX_PATH];

static char insert_id[37];
static pid_t insert_id_pid;

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

void cly_insert_id_renew(void) {
    make_insert_id(insert_id);
    insert_id_pid = getpid();
}

const char *cly_insert_id_for_crash(void) {
    if (insert_id_pid != getpid()) cly_insert_id_renew();  // forked without our atfork handler (raw clone)
    return insert_id;
}

void cly_current_insert_id(char out[37]) { memcpy(out, cly_insert_id_for_crash(), 37); }

void cly_die_of(int signal_number) {
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    sigaction(signal_number, &default_action, NULL);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, signal_number);
    sigprocmask(SIG_UNBLOCK, &unblock, NULL);
    cly_tgkill(getpid(), cly_gettid(), signal_number);
}
