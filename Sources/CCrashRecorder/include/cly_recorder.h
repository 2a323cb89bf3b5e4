// The crash recorder's C interface, the only header Swift sees.
//
// Everything here is called from normal code (never from a signal handler). The functions that the crash
// path itself runs are internal (cly_internal.h).
#ifndef CLY_RECORDER_H
#define CLY_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cly_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Installs the signal handlers and the C++ terminate hook, prepares every buffer the crash path needs,
/// loads libunwind privately and gives the calling thread an alternate signal stack.
/// `report_directory` must exist and be writable (the caller creates it). `chain` selects what happens after
/// the report is committed: true calls the previous handlers (the Swift backtracer), false restores the
/// default action; the process dies of the original signal either way.
/// Returns 0, or an errno value with a message in `error` (NUL-terminated, at most `error_size` bytes).
/// A second call updates the directory and `chain` and returns 0. Not async-signal-safe.
int cly_install(const char *report_directory, bool chain, char *error, size_t error_size);

/// Whether the handlers are installed.
bool cly_is_installed(void);

/// Replaces the crash-time context: `json_object` must be one JSON object of at most CLY_MAX_CONTEXT bytes.
/// Safe to call from any thread at any time; a crash sees either the old or the new context, never a mix.
/// Returns 0, or EINVAL / E2BIG.
int cly_set_context(const char *json_object, size_t length);

/// Gives the calling thread an alternate signal stack (CLY_ALTSTACK_BYTES, freed at thread exit) so that a
/// stack overflow on it is caught. Keeps an existing alternate stack that is at least as large.
/// Returns 0 or an errno value.
int cly_prepare_current_thread(void);

/// Turns report writing on or off (default on). Off — the user opted out of analytics — a crash writes
/// nothing and only chains to the previous handlers. Safe from any thread.
void cly_set_enabled(bool enabled);

/// Starts `path` as a detached process (own session, stdio on /dev/null, no other inherited descriptors,
/// default signal dispositions). Returns its pid, or a negative errno value. Not async-signal-safe.
int cly_spawn_detached(const char *path, char *const argv[], char *const envp[]);

/// A Swift symbol's readable context, `Module.Type.name`, from its mangled name (`$s…`), into `out` (at most
/// `size` bytes with the NUL): the names of the declaration and the types around it, without signature,
/// generic arguments or specialization. Returns the length, 0 when `symbol` is not a Swift symbol it can read.
/// What the crash's stderr line prints (cly_symbol_name.c); signal-safe, no allocation.
size_t cly_swift_readable_name(const char *symbol, char *out, size_t size);

/// Rebuilds the module table when libraries were loaded or unloaded since the last build (cheap otherwise).
void cly_refresh_modules(void);

/// Copies the `$insert_id` the next report of this process will carry (36 characters + NUL) into `out`.
void cly_current_insert_id(char out[37]);

/// Facts about this device and launch for the crash-time context (cly_device.c). Empty strings when unknown.
typedef struct {
    char os_version[64];        // os-release VERSION_ID, else BUILD_ID
    char os_distribution[128];  // os-release NAME
    bool has_uname;             // the three uname fields below were read
    char kernel_version[65];    // uname release
    char arch[65];              // uname machine
    char hostname[65];          // uname nodename
    char app_name[256];         // argv[0] after its last '/'
    uint64_t start_ms;          // when the process started, unix ms (0 when unknown)
} cly_device_facts;

/// Reads the device facts; `os_release_path` is normally "/etc/os-release" (at most 64 KiB of it is read).
/// Normal code, not async-signal-safe.
void cly_device_facts_read(const char *os_release_path, cly_device_facts *out);

/// The facts as the members of a JSON object, keys sorted, without the braces (`"$app_name":"…",…`), with
/// `lib` and `lib_version` as `$lib` / `$lib_version`: written into `out` (NUL-terminated). Returns the length,
/// or 0 when `capacity` is too small (CLY_MAX_CONTEXT is always enough). Strings escaped and repaired to valid
/// UTF-8 as in a report. Normal code.
size_t cly_device_facts_json(const cly_device_facts *facts, const char *lib, const char *lib_version, char *out,
                             size_t capacity);

/// Test hook: makes the next crash report's writer fault right after the header (a crash inside the crash
/// handler), to prove that such a fault marks the file once and the process still dies, without hanging.
void cly_test_fault_in_writer(bool enabled);

/// Test hook: lowers the report size cap (0 restores CLY_MAX_REPORT_BYTES), to show what the cap keeps.
void cly_test_set_report_limit(size_t bytes);

/// Test hook: how many modules the prepared table holds.
int cly_module_count(void);

/// Test hook: unwinds `ucontext` (a signal handler's third argument) exactly as the crash path does — frame
/// 0 the interrupted PC — into `frames`; returns how many were written (at most `capacity`). Signal-safe.
int cly_test_unwind_context(void *ucontext, uintptr_t *frames, int capacity);

/// Benchmark hook: from now on, install records resident memory (Rss and Anonymous of
/// /proc/self/smaps_rollup, in KiB) at each of its steps; with a `smaps_directory` it also copies
/// /proc/self/smaps there at each step (`NN-step.smaps`). Normal code, not thread-safe.
void cly_test_probe_enable(const char *smaps_directory);
/// Records the resident memory after `step` (a string that outlives the probe) when the probe is on.
void cly_test_probe_mark(const char *step);
/// How many steps were recorded.
int cly_test_probe_count(void);
/// The name of recorded step `index` with its Rss and Anonymous KiB, or NULL when out of range.
const char *cly_test_probe_step(int index, uint64_t *rss_kib, uint64_t *anonymous_kib);

#ifdef __cplusplus
}
#endif

#endif
