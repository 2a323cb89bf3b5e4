// The crash path. Read this file first: it is the whole of what runs when the process crashes.
//
// What runs in the handler (the crashed thread, on its alternate stack), in call order:
//   crash_signal_handler
//     - escape hatches: a fault inside our own unwinding (crash capture or live capture) jumps back (siglongjmp)
//       to where that unwind began;
//       a fault while this thread writes the report marks the file once and dies (never a hang);
//     - cly_handle_crash: one thread wins a compare-and-swap and writes; any other crashing thread waits on
//       a futex (at most CLY_CONCURRENT_CRASH_WAIT_MS) and then dies of its own signal;
//         . cly_dispatch_queue_label (fault-free bounded reads of libdispatch's thread-local data) - the
//           label of the queue whose work the crashed thread ran (each other thread reads its own in its dump
//           handler);
//         . cly_unwind_from_ucontext (libunwind, local: signal-safe) - the crashed thread, frame 0 exact;
//         . cly_threads_capture (tgkill + SIGSYS self-unwinds, bounded wait) - up to 19 other threads;
//         . cly_async_walk (fault-free reads, bounded) - each thread's async callers, the others still parked;
//         . cly_context_copy_for_crash (seqlock copy of the app's context);
//         . cly_report_write (open/write/rename, no allocation) - the committed report;
//         . cly_launch_marker_clear_for_crash (unlink) - this launch ended in a reported crash;
//         . cly_symbolication_marker_remove_for_crash (unlink) - a report symbolicated on another thread is
//           symbolicated again by its sender, not sent raw;
//         . cly_crash_time_sender_start (clone + execve, cly_crash_time_sender.c) - the sender, started now;
//         . after_report: what the dying process does once the report is committed, in order —
//           cly_crash_line_write (one line on stderr: the reason and the crashing function);
//       the other threads stay parked (cly_threads.c): no app code runs again;
//     - chain: restore the previous actions (or the default ones), call the previous handler, then make sure
//       the process dies of the original signal: a hardware fault returns and faults again under SIG_DFL; a
//       sent signal (abort, raise, SIGTRAP) is raised again with tgkill. The Swift runtime's backtracer (on by
//       default, installed before us) is called only when SWIFT_BACKTRACE asks for it explicitly
//       (`enable=yes`): it symbolicates in the dying process, which kept a crashed server down for seconds;
//       our report is symbolicated later, off the crash path.
// What runs later, in normal code: the Swift side lists, salvages and sends the reports (CohorlyCrash).
// Every function called here is on POSIX's async-signal-safe list (sigaction, sigprocmask, open, read,
// write, close, rename, unlink, clock_gettime, getpid, the string functions of POSIX.1-2016), a raw
// syscall (gettid, tgkill, futex, getdents64, getrandom, pread), `_dl_find_object` (documented
// async-signal-safe), or our own code that only touches static memory.
// No malloc, no locks, no stdio, no Swift.
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cly_internal.h"
#include "cly_recorder.h"

static atomic_int winner_tid;            // the thread that writes the report
static atomic_int report_done;           // the report is committed (or given up)
static atomic_int recrash_marked;
static atomic_int recording_disabled;    // cly_set_enabled(false): the user opted out
static atomic_int crashed_unwinding_tid; // the crashed thread while it unwinds itself
static sigjmp_buf crashed_unwind_jump;

static cly_thread crashed_thread;
static cly_thread other_threads[CLY_MAX_THREADS - 1];
static char context_copy[CLY_MAX_CONTEXT];

static const int handled_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT};
#define HANDLED_COUNT ((int)(sizeof handled_signals / sizeof handled_signals[0]))
static struct sigaction previous_actions[HANDLED_COUNT];
static bool previous_is_swift_backtracer[HANDLED_COUNT];
static bool chain_to_previous = true;
static bool swift_backtracer_requested;  // SWIFT_BACKTRACE asks for the runtime's backtracer explicitly

static void copy_registers(const ucontext_t *context, uintptr_t *out) {
    static const int order[18] = {REG_RIP, REG_RSP, REG_RBP, REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI,
                                  REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_EFL};
    for (int i = 0; i < 18; i++) out[i] = (uintptr_t)context->uc_mcontext.gregs[order[i]];
}

void cly_set_enabled(bool enabled) { atomic_store(&recording_disabled, enabled ? 0 : 1); }

/// Whether the previous action of `signal_number` is the Swift runtime's backtracer that is skipped (it is there,
/// the chain is on, and SWIFT_BACKTRACE did not ask for it).
static bool skips_swift_backtracer(int index) {
    return index >= 0 && chain_to_previous && previous_is_swift_backtracer[index] && !swift_backtracer_requested;
}

static int signal_index(int signal_number) {
    for (int i = 0; i < HANDLED_COUNT; i++)
        if (handled_signals[i] == signal_number) return i;
    return -1;
}

/// What the dying process does once the crash is recorded (`report_state`: the report committed, or not written),
/// in order. Every step is signal-safe and bounded. `crashed` is NULL when nothing was unwound.
static void after_report(const cly_crash *crash, const cly_thread *crashed, const char *report_state) {
    cly_crash_line_write(crash, crashed, report_state, skips_swift_backtracer(signal_index(crash->signal_number)));
}

bool cly_handle_crash(const cly_crash *crash) {
    if (atomic_load(&report_done) != 0) return true;  // written already (C++ terminate, then SIGABRT)
    if (atomic_load(&recording_disabled) != 0) {  // opted out: no report, only the chain
        cly_launch_marker_clear_for_crash();          // …and no abnormal-exit event for this crash either
        after_report(crash, NULL, "no report: crash reporting is off for this user");
        return false;
    }
    pid_t tid = cly_gettid();
    int expected = 0;
    if (!atomic_compare_exchange_strong(&winner_tid, &expected, tid)) {
        // Another thread is writing the one report: wait for it (bounded), then die normally.
        uint64_t deadline = cly_monotonic_ns() + (uint64_t)CLY_CONCURRENT_CRASH_WAIT_MS * 1000000ull;
        while (atomic_load(&report_done) == 0 && cly_monotonic_ns() < deadline)
            cly_futex_wait(&report_done, 0, 50000000ull);
        return false;
    }
    atomic_store(&cly_crash_started, 1);
    atomic_store(&cly_crash_signal, crash->signal_number);
    cly_report_input input;
    memset(&input, 0, sizeof input);
    input.crash = crash;
    input.start_ns = cly_monotonic_ns();
    input.pid = getpid();

    crashed_thread.tid = tid;
    crashed_thread.answered = true;
    crashed_thread.frame_count = 0;
    cly_thread_read_name(tid, crashed_thread.name, sizeof crashed_thread.name);
    cly_dispatch_queue_label(crashed_thread.queue, sizeof crashed_thread.queue);
    atomic_store(&crashed_unwinding_tid, tid);
    // sigsetjmp saves registers and the signal mask (one rt_sigprocmask syscall); if the unwind of a corrupt
    // stack faults, crash_signal_handler siglongjmps back here (POSIX allows leaving a handler that way).
    if (sigsetjmp(crashed_unwind_jump, 1) == 0) {
        if (crash->context != NULL) {
            cly_unwind_from_ucontext(crash->context, true, &crashed_thread);
        } else {
            // Not from a signal (C++ terminate, normal code): unwind from this very function. getcontext only
            // stores registers and calls rt_sigprocmask.
            ucontext_t here;
            getcontext(&here);
            cly_unwind_from_ucontext(&here, false, &crashed_thread);
        }
    } else {
        crashed_thread.truncated = true;  // the stack is corrupt beyond what we have
    }
    atomic_store(&crashed_unwinding_tid, 0);
    if (crash->context != NULL) {
        copy_registers(crash->context, input.registers);
        input.has_registers = true;
    }
    input.crashed = &crashed_thread;

    input.others = other_threads;
    input.other_count = cly_threads_capture(tid, other_threads, CLY_MAX_THREADS - 1, &input.threads_requested,
                                            &input.threads_answered);
    cly_async_walk(&crashed_thread);
    for (int i = 0; i < input.other_count; i++)
        if (other_threads[i].answered) cly_async_walk(&other_threads[i]);
    input.context = context_copy;
    input.context_length = cly_context_copy_for_crash(context_copy, sizeof context_copy);
    bool committed = cly_report_write(&input);
    if (committed) {
        cly_launch_marker_clear_for_crash();  // the report is this launch's event
        cly_symbolication_marker_remove_for_crash(tid);
        cly_crash_time_sender_start(cly_report_committed_name());  // sent now, with no later launch
    }
    after_report(crash, &crashed_thread, committed ? "report written" : "no report: it could not be written");
    atomic_store(&report_done, 1);
    cly_futex_wake(&report_done);
    return true;
}

static void restore_actions(void) {
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    for (int i = 0; i < HANDLED_COUNT; i++)
        sigaction(handled_signals[i], chain_to_previous ? &previous_actions[i] : &default_action, NULL);
}

static void chain(int signal_number, siginfo_t *info, void *context) {
    restore_actions();
    int index = signal_index(signal_number);
    if (chain_to_previous && index >= 0 && !skips_swift_backtracer(index)) {
        const struct sigaction *previous = &previous_actions[index];
        // The runtime's backtracer may take a minute on a large binary: the parked threads wait for it.
        if (previous_is_swift_backtracer[index]) cly_threads_extend_park(CLY_PARKED_THREAD_LIMIT_WITH_BACKTRACER_MS);
        if ((previous->sa_flags & SA_SIGINFO) != 0 && previous->sa_sigaction != NULL)
            previous->sa_sigaction(signal_number, info, context);
        else if ((previous->sa_flags & SA_SIGINFO) == 0 && previous->sa_handler != SIG_DFL &&
                 previous->sa_handler != SIG_IGN)
            previous->sa_handler(signal_number);
    }
    // Still alive: make sure the process dies of the original signal, whatever the previous handler did.
    bool faults_again = info != NULL && info->si_code > 0 && signal_number != SIGTRAP && signal_number != SIGABRT;
    struct sigaction default_action;
    memset(&default_action, 0, sizeof default_action);
    default_action.sa_handler = SIG_DFL;
    sigaction(signal_number, &default_action, NULL);
    if (!faults_again) cly_die_of(signal_number);
    // A hardware fault returns: the instruction runs again and faults under SIG_DFL.
}

static void crash_signal_handler(int signal_number, siginfo_t *info, void *context) {
    int saved_errno = errno;
    pid_t tid = cly_gettid();
    // Our own unwinding faulted (a corrupt stack): go back to where it started, keep what we have.
    cly_threads_escape_if_dumping(tid);
    cly_live_escape_if_unwinding(tid);  // the same for a live capture's unwind (cly_live_threads.c)
    if (atomic_load(&crashed_unwinding_tid) == tid) siglongjmp(crashed_unwind_jump, 1);
    // A fault while this very thread writes the report: mark the file once and die of the original
    // signal, never hang (the torn file is salvaged at the next launch).
    if (atomic_load(&report_done) == 0 && atomic_load(&winner_tid) == tid) {
        if (atomic_exchange(&recrash_marked, 1) == 0) cly_report_mark_recrash(signal_number);
        chain_to_previous = false;
        restore_actions();
        int original = atomic_load(&cly_crash_signal);
        cly_die_of(original != 0 ? original : signal_number);
        cly_die_of(signal_number);  // the original signal was blocked or ignored: the fault itself ends it
        return;
    }
    cly_crash crash;
    memset(&crash, 0, sizeof crash);
    crash.signal_number = signal_number;
    crash.signal_code = info ? info->si_code : 0;
    crash.fault_address = info ? (uintptr_t)info->si_addr : 0;
    crash.context = (ucontext_t *)context;
    crash.mechanism = CLY_MECHANISM_SIGNAL;
    // Swift traps (SIGILL, SIGTRAP on arm64) and runtime aborts (SIGABRT) leave their text in the buffer.
    if (signal_number == SIGILL || signal_number == SIGTRAP || signal_number == SIGABRT) {
        crash.message = cly_swift_fatal_message();
        if (crash.message != NULL) crash.mechanism = CLY_MECHANISM_SWIFT_FATAL;
    }
    cly_handle_crash(&crash);
    chain(signal_number, info, context);
    errno = saved_errno;
}

/// Whether SWIFT_BACKTRACE (comma-separated `key=value` settings, as the runtime reads them) turns the runtime's
/// backtracer on explicitly: `enable=` with a value other than no, n, false, f, off or 0.
static bool swift_backtrace_requested(const char *settings) {
    static const char *const off[] = {"no", "n", "false", "f", "off", "0"};
    for (const char *item = settings; item != NULL && *item != 0;) {
        while (*item == ' ' || *item == ',') item++;
        const char *end = strchr(item, ',');
        size_t length = end != NULL ? (size_t)(end - item) : strlen(item);
        if (length > 7 && strncmp(item, "enable=", 7) == 0) {
            const char *value = item + 7;
            size_t value_length = length - 7;
            for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
                if (strlen(off[i]) == value_length && strncasecmp(value, off[i], value_length) == 0) return false;
            return true;
        }
        item = end != NULL ? end + 1 : NULL;
    }
    return false;
}

/// Whether `action` is the Swift runtime's backtracer: a SA_SIGINFO handler in the object that holds the Swift
/// runtime, which is also SIGQUIT's handler (the runtime installs one handler for QUIT, ABRT, BUS, FPE, ILL, SEGV
/// and TRAP; the SIGQUIT check tells it from an app's handler when the runtime is linked into the executable).
static bool is_swift_backtracer(const struct sigaction *action) {
    if ((action->sa_flags & SA_SIGINFO) == 0 || action->sa_sigaction == NULL) return false;
    if (swift_getFatalErrorMessageBuffer == NULL) return false;
    struct sigaction quit;
    if (sigaction(SIGQUIT, NULL, &quit) != 0 || (quit.sa_flags & SA_SIGINFO) == 0 ||
        quit.sa_sigaction != action->sa_sigaction)
        return false;
    struct dl_find_object handler_object, runtime_object;
    if (_dl_find_object((void *)action->sa_sigaction, &handler_object) != 0 ||
        _dl_find_object((void *)swift_getFatalErrorMessageBuffer, &runtime_object) != 0)
        return false;
    return handler_object.dlfo_map_start == runtime_object.dlfo_map_start;
}

int cly_signals_install(bool chain_enabled) {
    chain_to_previous = chain_enabled;
    swift_backtracer_requested = swift_backtrace_requested(getenv("SWIFT_BACKTRACE"));
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = crash_signal_handler;
    // SA_NODEFER: a fault inside the handler reaches it again (recrash path) instead of killing silently.
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    struct sigaction saved[HANDLED_COUNT];
    for (int i = 0; i < HANDLED_COUNT; i++) {
        if (sigaction(handled_signals[i], &action, &saved[i]) != 0) {
            int error = errno;
            for (int j = 0; j < i; j++) sigaction(handled_signals[j], &saved[j], NULL);
            return error;
        }
    }
    memcpy(previous_actions, saved, sizeof saved);
    for (int i = 0; i < HANDLED_COUNT; i++) previous_is_swift_backtracer[i] = is_swift_backtracer(&saved[i]);
    return 0;
}

void cly_signals_set_chain(bool chain_enabled) { chain_to_previous = chain_enabled; }
