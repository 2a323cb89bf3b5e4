// C and C++ ways to crash, for CrashDemo (the Swift ways live in Swift).
#ifndef CRASH_DEMO_SUPPORT_H
#define CRASH_DEMO_SUPPORT_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Writes through a null pointer (SIGSEGV).
void demo_null_write(void);
/// Calls abort() (SIGABRT).
void demo_abort(void);
/// Integer division by zero in C (SIGFPE).
int demo_sigfpe(int divisor);
/// raise(SIGTRAP).
void demo_sigtrap(void);
/// Touches a mapped page past the end of a truncated file in `directory` (SIGBUS).
void demo_sigbus(const char *directory);
/// Throws a std::runtime_error with `what` through C frames; nobody catches it (std::terminate).
void demo_cxx_throw(const char *what);
/// Throws and catches a C++ exception; returns 1 when it was caught.
int demo_cxx_catch(void);
/// dlopens `path` and calls its `cly_fixture_crash` function; returns -1 when it cannot.
int demo_crash_in_library(const char *path);
/// Names the calling thread (raw bytes, up to 15).
void demo_set_thread_name(const char *name);
/// Returns `value` through an optimization barrier (values the optimizer cannot predict).
long demo_identity(long value);
/// The path of the loaded object holding `address` and the address's offset from the object's load base
/// (dladdr), or NULL when it is in none.
const char *demo_address_location(unsigned long address, unsigned long *offset);
/// Does nothing, opaquely (keeps the optimizer from removing a frame).
void demo_opaque(void *pointer);

/// What demo_unwind_threads_in_handlers saw.
typedef struct {
    bool guard_loaded;     // the allocation guard (fixtures/alloc-guard) is preloaded
    long self_test_calls;  // calls the guard counted for one deliberate malloc (1 when it works)
    int threads;           // threads listed in /proc/self/task and still there to be signalled
    int answered;          // threads whose handler unwound in time
    int fewest_frames;     // the shortest and longest stacks unwound
    int most_frames;
    int chains;            // threads whose async callers were found (the walk ran in every handler)
    long guard_calls;      // allocation calls made while the handlers unwound (-1 without the guard)
} demo_handler_unwinds;

/// Has every thread unwind its own interrupted context from a SIGSYS handler through the recorder's unwinder,
/// with the allocation guard armed around each unwind. Returns 0, or -1 when it could not set up.
int demo_unwind_threads_in_handlers(demo_handler_unwinds *result);
/// Puts a handler in front of the recorder's SIGSEGV handler that arms the allocation guard on the crashing
/// thread, so everything the recorder does for the crash on that thread runs armed. Returns 0 or -1.
int demo_arm_guard_for_crash(void);

/// Installs an app's SIGTERM handler (sigaction, SA_RESTART) that counts the signal and writes a line to stdout.
/// Returns 0 or -1.
int demo_install_sigterm_handler(void);
/// How many SIGTERMs that handler saw.
int demo_sigterm_count(void);
/// Unblocks every signal on the calling thread: a process started from a thread that blocks signals (a
/// libdispatch worker of the test runner) inherits its mask; a service manager starts one with none blocked.
void demo_unblock_all_signals(void);
/// Whether SIGTERM's action is SIG_IGN (1), not (0), or unreadable (-1).
int demo_sigterm_is_ignored(void);
/// Whether `number` is the system call `sleep()` waits in (clock_nanosleep or nanosleep): 1 or 0.
int demo_is_sleep_syscall(long number);

/// Installs a `_swift_willThrow` hook that counts throws, as another library (Swift Testing) would before the
/// SDK's install. Returns 0, or -1 when the runtime has no hook.
int demo_install_counting_throw_hook(void);
/// How many throws that hook saw.
int demo_counting_throw_hook_calls(void);

#ifdef __cplusplus
}
#endif

#endif
