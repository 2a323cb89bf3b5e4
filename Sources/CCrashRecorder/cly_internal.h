// Internal interface between the recorder's C files. Every function marked "signal-safe" may run inside
// the crash handler; the others run only in normal code (install, refresh, context updates).
//
// Every symbol one file defines and another uses is declared here, once (no file declares another's symbols
// by hand), and every .c file includes this header first among ours: the pragma below then makes a function
// defined without a declaration in sight an error, in every build of this target. (A pragma, not a flag:
// SwiftPM allows `-W` flags only as unsafeFlags, which a package depended on by URL may not use.)
// Dependencies between the files go one way (a file uses only those listed below it):
//   install -> handler (signals) -> report, threads, live threads, unwind, async walk, context, breadcrumbs
//   -> modules, writer, directory listing -> process (crash state, shared configuration, insert id, die).
#ifndef CLY_INTERNAL_H
#define CLY_INTERNAL_H

#pragma GCC diagnostic error "-Wmissing-prototypes"

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "cly_async.h"
#include "cly_limits.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---- raw system calls (all on the async-signal-safe list or plain syscalls with no userspace state) ----

static inline pid_t cly_gettid(void) { return (pid_t)syscall(SYS_gettid); }
static inline int cly_tgkill(pid_t pid, pid_t tid, int sig) { return (int)syscall(SYS_tgkill, pid, tid, sig); }

/// Monotonic nanoseconds (clock_gettime is async-signal-safe).
static inline uint64_t cly_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/// Calls `visit` with the name of every entry of a directory (cly_dir.c) and whether it is a regular file (a
/// symlink is not: it is not followed). Signal-safe. Returns 0, or -1 when the directory cannot be opened.
typedef void (*cly_directory_visitor)(const char *name, bool regular_file, void *context);
int cly_list_directory(const char *path, cly_directory_visitor visit, void *context);

/// Sleeps on a futex word while it still holds `expected`, at most `timeout_ns` (signal-safe: one syscall).
void cly_futex_wait(atomic_int *word, int expected, uint64_t timeout_ns);
/// Wakes every waiter of a futex word (signal-safe).
void cly_futex_wake(atomic_int *word);

// ---- one thread's captured stack ----

typedef struct {
    pid_t tid;
    int frame_count;
    bool truncated;  // more frames than CLY_MAX_FRAMES
    bool answered;   // the thread recorded its own stack in time (always true for the crashed thread)
    uint8_t first_frame_kind;  // cly_frame_kind of frames[0]: pc when interrupted, else return_address
    uintptr_t frames[CLY_MAX_FRAMES];
    // Per frame, for the async walk: the async context register and the frame pointer as restored there.
    uintptr_t async_registers[CLY_MAX_FRAMES];
    uintptr_t frame_pointers[CLY_MAX_FRAMES];
    cly_async_chain async;  // the thread's async callers (cly_async_walk); count 0 when none
    char name[32];   // from /proc/self/task/<tid>/comm
    char queue[CLY_MAX_QUEUE_LABEL];  // the dispatch queue whose work it ran (cly_dispatch_queue.c); "" when none
} cly_thread;

// ---- unwinding (cly_unwind.c) ----

/// Loads libunwind privately and warms its caches. Normal code. Returns 0 or an errno value.
int cly_unwind_load(char *error, size_t error_size);
/// Unwinds from a signal's ucontext (frame 0 = the exact interrupted PC) into `thread`, with what the async
/// walk needs per frame; clears its chain. Signal-safe.
void cly_unwind_from_ucontext(ucontext_t *context, bool signal_frame, cly_thread *thread);
/// The function (with unwind info) containing `address`: [start, end). False when none. Signal-safe.
bool cly_unwind_function_range(uintptr_t address, uintptr_t *start, uintptr_t *end);

// ---- async callers (cly_async.c) ----

/// Resolves what the walk needs (swift_job_run's range, the concurrency runtime's module) and chooses how it
/// reads memory (process_vm_readv, else a pipe opened here). After cly_unwind_load. Normal code.
void cly_async_prepare(void);
/// Walks the async context chain of an unwound thread into `thread->async` (count 0: none). Signal-safe.
void cly_async_walk(cly_thread *thread);

/// Reads `size` bytes at `address` of this process without faulting (process_vm_readv, else the pipe chosen by
/// cly_async_prepare); false when any of them is unreadable. Signal-safe.
bool cly_read_memory(uintptr_t address, void *out, size_t size);

// ---- dispatch queue labels (cly_dispatch_queue.c) ----

/// Finds where libdispatch keeps a thread's current queue and a queue's label, when libdispatch is loaded (its
/// functions are referenced weakly). Normal code; after cly_async_prepare.
void cly_dispatch_prepare(void);
/// The label of the dispatch queue whose work the calling thread runs, into `out` (at most `size - 1` bytes and a
/// NUL); false, and "" in `out`, when it runs none or it cannot be read. Signal-safe: fault-free bounded reads.
bool cly_dispatch_queue_label(char *out, size_t size);

// ---- Swift resume points without unwind info (cly_resume_points.c) ----

/// Asks for the loaded objects' resume funclets that no FDE starts at to be (re)scanned, on a thread of its own
/// (started here when none runs). Normal code; returns at once.
void cly_resume_points_refresh(void);
/// Whether `address` is the entry of a Swift resume funclet (by its module's symbol table) that no FDE starts
/// at, in a module scanned so far. Signal-safe (static memory only, bounded).
bool cly_resume_points_contains(uintptr_t address);

// ---- other threads (cly_threads.c) ----

/// Stops up to CLY_MAX_THREADS - 1 other threads, has each record its own stack into `threads`, and waits at
/// most CLY_THREAD_WAIT_MS; then stops every other thread too. Stopped threads stay parked until the process
/// dies. Returns how many entries of `threads` are filled (answered or not). Signal-safe.
int cly_threads_capture(pid_t crashed_tid, cly_thread *threads, int capacity, int *requested, int *answered);
/// Gives the parked threads (which never run again) `limit_ms` more before one of them ends the process itself,
/// of the crash's signal — for a chained handler that takes long (the Swift runtime's backtracer). Signal-safe.
void cly_threads_extend_park(uint32_t limit_ms);
/// Whether `tid` is a thread currently recording its own stack for us; if so, jumps back out of its unwind
/// (used when that unwind faults). Signal-safe. Returns only when `tid` is not such a thread.
void cly_threads_escape_if_dumping(pid_t tid);
/// Reads /proc/self/task/<tid>/comm into `name` (signal-safe: open/read/close).
void cly_thread_read_name(pid_t tid, char *name, size_t size);
/// Whether thread `tid` blocks `signal_number` (the "SigBlk:" line of its /proc status). Signal-safe.
bool cly_thread_blocks_signal(pid_t tid, int signal_number);

// ---- live capture of other threads (cly_live_threads.c) ----

/// Whether `tid` is a thread unwinding itself for a live capture; if so, jumps back out of that unwind (used
/// when it faults). Signal-safe. Returns only when `tid` is not such a thread.
void cly_live_escape_if_unwinding(pid_t tid);

// ---- modules (cly_modules.c) ----

typedef struct {
    uintptr_t base;       // address of the first PT_LOAD segment's page
    uintptr_t size;       // extent of the PT_LOAD segments
    uint32_t path_offset; // into the table's path pool
    uint8_t build_id_length;
    uint8_t build_id[32];
} cly_module;

typedef struct {
    int count;
    cly_module modules[CLY_MAX_MODULES];
    uint32_t pool_used;
    char pool[CLY_MODULE_PATH_POOL];
} cly_module_table;

/// Builds the first module table. Normal code.
void cly_modules_build(void);
/// The current table (never freed, never written while published). Signal-safe.
const cly_module_table *cly_modules_current(void);
/// Copies the current table into `out` under the refresh lock (no rebuild runs meanwhile). False when none was
/// built yet. Normal code.
bool cly_modules_copy(cly_module_table *out);
/// Finds the module of `pc` that is not in `table` with `_dl_find_object` (documented async-signal-safe)
/// and describes it into `out` with its path in `path`. Returns true when found. Signal-safe.
bool cly_modules_find_extra(uintptr_t pc, cly_module *out, char *path, size_t path_size);
/// Reads the GNU build id from a mapped object's program headers. Signal-safe (reads mapped memory only).
int cly_modules_read_build_id(uintptr_t load_bias, const void *phdrs, int phdr_count, uint8_t *out, int capacity);
/// Base (first PT_LOAD page) and size (extent of the PT_LOAD segments) of a loaded object. Signal-safe.
void cly_modules_extent(uintptr_t load_bias, const void *phdrs, int phdr_count, uintptr_t *base, uintptr_t *size);

// ---- crash-time context (cly_context.c) ----

/// Copies the active context into `out`; returns its length. Stops later updates. Signal-safe.
size_t cly_context_copy_for_crash(char *out, size_t capacity);

// ---- breadcrumbs (cly_breadcrumbs.c) ----

/// Copies the breadcrumbs ring for the report (slots being written are skipped) and chooses the newest that fit
/// in CLY_MAX_BREADCRUMB_REPORT_BYTES. Returns the bytes cly_breadcrumbs_write will produce (0: no ring, nothing
/// to write). Call after cly_crash_started is set. Signal-safe.
size_t cly_breadcrumbs_prepare_for_crash(void);

// ---- tasks (cly_tasks.c) ----

/// Copies the crashed thread's task context (a JSON object) into `out`; returns its length (0: none). Call on
/// the crashed thread. Signal-safe.
size_t cly_task_context_copy_for_crash(char *out, size_t capacity);
struct cly_writer;
/// Writes the `breadcrumbs` member (oldest first) and `breadcrumbs_dropped` chosen by the last
/// cly_breadcrumbs_prepare_for_crash (nothing when it returned 0). Signal-safe.
void cly_breadcrumbs_write(struct cly_writer *w);

// ---- monitors ----

/// The Swift runtime's last fatal-error message, or NULL (cly_fatal_message.c). Signal-safe.
const char *cly_swift_fatal_message(void);
/// Installs the C++ terminate hook (cly_terminate.cpp). Normal code, safe to call twice.
void cly_terminate_install(void);
/// Finds the Swift runtime's fatal-message buffer (cly_fatal_message.c). Normal code, at install.
void cly_fatal_message_install(void);

// ---- the crash itself (cly_handler.c) ----

typedef enum { CLY_MECHANISM_SIGNAL, CLY_MECHANISM_SWIFT_FATAL, CLY_MECHANISM_CXX_TERMINATE } cly_mechanism;

/// What a monitor hands to the one writer.
typedef struct {
    int signal_number;
    int signal_code;
    uintptr_t fault_address;
    ucontext_t *context;      // NULL when the crash did not come from a signal (C++ terminate)
    cly_mechanism mechanism;
    const char *message;      // Swift fatal-error text or NULL
    const char *cxx_type;     // C++ exception type (demangled) or NULL
    const char *cxx_what;     // C++ what() or NULL
} cly_crash;

// ---- the crash's line on stderr (cly_crash_line.c, cly_symbol_name.c) ----

/// Writes one line on stderr (once per process): the crash's reason and the crashing function (the innermost
/// frame of `crashed` in the executable; `crashed` NULL: the context's PC), `report_state` ("report written"…),
/// and, when `backtracer_skipped`, the setting that brings the Swift runtime's backtrace back. Signal-safe.
void cly_crash_line_write(const cly_crash *crash, const cly_thread *crashed, const char *report_state,
                          bool backtracer_skipped);
/// Whether `address` lies in the main executable (`_dl_find_object`). Signal-safe.
bool cly_symbol_in_executable(uintptr_t address);
/// When reading symbols stops: CLOCK_MONOTONIC and this thread's CPU clock, in nanoseconds.
typedef struct {
    uint64_t wall_ns;
    uint64_t cpu_ns;
} cly_symbol_budget;
/// This thread's CPU time in nanoseconds (clock_gettime: async-signal-safe).
static inline uint64_t cly_thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
/// Names `address` into `out`: its function from the object's symbol table (a Swift name as Module.Type.name),
/// read until `budget` runs out, else `<object file>+0x<offset>`. Returns the length (0: not in any loaded
/// object). Signal-safe (open, pread, close; static buffers: one caller at a time).
size_t cly_symbol_describe(uintptr_t address, const cly_symbol_budget *budget, char *out, size_t size);

/// Writes the one report of this process for `crash` unless another thread is already writing it. Returns
/// true when this call wrote it (or it had been written before). Signal-safe.
bool cly_handle_crash(const cly_crash *crash);
/// Installs the crash signal handlers (keeping the previous actions to chain to). Normal code. Returns 0 or
/// an errno value.
int cly_signals_install(bool chain_enabled);
/// Changes whether the previous handlers are called after the report (a second install).
void cly_signals_set_chain(bool chain_enabled);

// ---- the report (cly_report.c) ----

typedef struct {
    const cly_crash *crash;
    pid_t pid;
    uint64_t start_ns;           // monotonic, at handler entry
    cly_thread *crashed;
    uintptr_t registers[18];     // x86_64 general registers (rip, rsp, rbp, rax, …) when there is a context
    bool has_registers;
    cly_thread *others;
    int other_count;
    int threads_requested;
    int threads_answered;
    char *context;               // JSON object
    size_t context_length;
} cly_report_input;

struct cly_writer;
/// Writes one thread object (`key` NULL inside an array): frames as format `format` has them (1: bare
/// addresses; 2: objects with their kind, and the `async` chain), registers when not NULL (18). Frames stop,
/// and `truncated` is set, when fewer than `reserve` bytes would be left (cly_report_thread.c). Signal-safe.
void cly_report_write_thread(struct cly_writer *w, const char *key, const cly_thread *thread, bool crashed,
                             const uintptr_t *registers, size_t reserve, int format);
/// The report format cly_report_write produces: 2, or 1 when install was told so (COHORLY_TEST_REPORT_FORMAT=1).
extern int cly_report_format;

/// Writes `<dir>/<ts>-<pid>-<insert_id>.tmp`, renames it to `.json`, drops the oldest reports beyond
/// CLY_MAX_REPORTS. Returns true when the report was committed. Signal-safe.
bool cly_report_write(const cly_report_input *input);
/// The file name (no directory) of the report cly_report_write last committed in this process; "" before. Signal-safe.
const char *cly_report_committed_name(void);
/// Appends a one-line recrash marker to the report being written (a fault inside the writer). Signal-safe.
void cly_report_mark_recrash(int signal_number);

// ---- the report's reserved space (cly_reserve.c) ----

/// Removes the reserves of ended launches in `directory`, then makes this launch's `reserve-<insert id>.space`
/// with up to CLY_MAX_REPORT_BYTES allocated (halved until it fits, at least CLY_MIN_REPORT_RESERVE), or moves
/// there the one cly_reserve_before_queue_opens made. Returns the bytes reserved (0: none). Normal code (install).
size_t cly_reserve_make(const char *directory);
/// The client's hook (CStartupHooks calls it through a weak reference): makes this launch's reserve in the queue's
/// `directory` before the queue's files are made (at most half of what is free there), unless this process has
/// one. Normal code.
void cly_reserve_before_queue_opens(const char *directory);
/// Renames this process's reserve to `path` and returns its descriptor (read-write, at offset 0, size 0) with the
/// bytes allocated in `capacity`; -1 when there is none (not made, already taken, a forked child). Signal-safe.
int cly_reserve_take(const char *path, size_t *capacity);

// ---- the launch marker (cly_launch_marker.c) ----

/// Removes this launch's marker file (the crash is reported, or deliberately not: opted out), so the next
/// launch does not take the crash for an abnormal exit. Only in the process that set it. Signal-safe (unlink).
void cly_launch_marker_clear_for_crash(void);

/// How far a termination signal got (cly_termination.c): the process dies of it now (`ended`), the app's handler
/// runs (`handling`), or that handler returned and the launch goes on (`handled`).
typedef enum { CLY_TERMINATION_ENDED, CLY_TERMINATION_HANDLING, CLY_TERMINATION_HANDLED } cly_termination_state;
/// Writes the termination record (signal, state, sender, time) into this launch's marker, in the region
/// CLY_LAUNCH_MARKER_ENDING_OFFSET names. Only in the process that set the marker. Signal-safe (open, pwrite, close).
void cly_launch_marker_record_termination(int signal_number, const siginfo_t *info, cly_termination_state state);
/// Unlinks this process's symbolication marker (cly_symbolication_marker.c): the launch ends now, not of a death
/// inside symbolication. Only in the process that set it. Signal-safe (unlink).
void cly_symbolication_marker_remove_at_end(void);
/// The crash ended this launch on thread `crashed_tid`: unlinks this process's symbolication marker unless that
/// very thread set it (a death inside symbolication keeps it), so the report being symbolicated is symbolicated
/// again by whoever sends it. Signal-safe (unlink).
void cly_symbolication_marker_remove_for_crash(pid_t crashed_tid);

// ---- the crash-time sender (cly_crash_time_sender.c) ----

/// Starts the prepared sender for the committed report `report_name` (a file name in the report directory), if
/// one was prepared. Signal-safe (clone + execve; see the file).
void cly_crash_time_sender_start(const char *report_name);

// ---- this process's crash state and shared configuration (cly_process.c) ----

/// Non-zero once a crash began (set by the thread that writes the report).
extern atomic_int cly_crash_started;
/// The signal of the crash being handled (0 before a crash, or for a crash that did not come from a signal).
extern atomic_int cly_crash_signal;
/// Set by install, read by the handler.
extern char cly_report_directory[CLY_MAX_PATH];
extern char cly_executable_path[CLY_MAX_PATH];
/// Makes a new `$insert_id` (install, and the pthread_atfork child handler).
void cly_insert_id_renew(void);
/// The `$insert_id` of this process (refreshed after fork). Signal-safe accessor: regenerates it with
/// getrandom when the pid changed without a fork handler having run.
const char *cly_insert_id_for_crash(void);
/// Dies of `signal_number` now: default action, unblocked, sent to this thread. Async-signal-safe.
void cly_die_of(int signal_number);

// ---- symbols of other libraries, referenced weakly (NULL when absent) ----

/// libswift_Concurrency: runs one job (the executor's frame below every async function); only its address
/// is used.
extern void swift_job_run(void) __attribute__((weak));

/// libswiftCore (Swift >= 6.0 on Linux): the address of the runtime's fatal-message pointer.
extern _Atomic(const char *) *swift_getFatalErrorMessageBuffer(void) __attribute__((weak));
/// CohorlyCrash's Swift sender entry point (`@_cdecl`), present when the Swift part is linked.
extern void cohorly_crash_sender_main(void) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#endif
