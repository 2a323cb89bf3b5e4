// Every limit of the crash recorder, named once (docs/crash-reporting.md "Limits" documents them for users).
#ifndef CLY_LIMITS_H
#define CLY_LIMITS_H

/// Threads in one report, the crashed thread included.
#define CLY_MAX_THREADS 20
/// Frames per thread (innermost first).
#define CLY_MAX_FRAMES 100
/// Async callers per thread (the async context chain), beside the CLY_MAX_FRAMES physical frames.
#define CLY_MAX_ASYNC_FRAMES 64
/// Committed reports kept on disk; the oldest is dropped when a crash would make one more.
#define CLY_MAX_REPORTS 10
/// Bytes of the Swift fatal-error message and of a C++ `what()` kept in a report.
#define CLY_MAX_MESSAGE 4096
/// Bytes of the C++ exception type name.
#define CLY_MAX_TYPE_NAME 512
/// Hard size cap of one report file. Frames and modules are dropped first; the JSON is always closed.
#define CLY_MAX_REPORT_BYTES (512 * 1024)
/// The smallest report space reserved at install when the disk cannot give CLY_MAX_REPORT_BYTES (enough for the
/// header and the crashed thread's first frames).
#define CLY_MIN_REPORT_RESERVE (4 * 1024)
/// Modules in the prepared module table (plus CLY_MAX_EXTRA_MODULES found at crash time).
#define CLY_MAX_MODULES 512
/// Modules found at crash time by `_dl_find_object` (loaded after the last table refresh).
#define CLY_MAX_EXTRA_MODULES 32
/// Swift resume funclets without unwind info that the async walk can recognise by their symbols, all modules
/// together (the toolchain's libraries hold about a hundred; swiftc gives an app's own funclets FDEs).
#define CLY_MAX_RESUME_POINTS 8192
/// Modules scanned for them (a module loaded again after an unload takes a new one).
#define CLY_MAX_RESUME_SEGMENTS 1024
/// Bytes of module paths in one module table.
#define CLY_MODULE_PATH_POOL (64 * 1024)
/// Bytes of the crash-time context (a JSON object).
#define CLY_MAX_CONTEXT 8192
/// Bytes of the report directory path.
#define CLY_MAX_PATH 1024
/// Bytes of a thread's dispatch queue label kept (cly_dispatch_queue.c), its NUL included.
#define CLY_MAX_QUEUE_LABEL 64
/// How long the crashed thread waits for the other threads to record their stacks.
#define CLY_THREAD_WAIT_MS 250
/// How long the threads stopped at a crash stay parked before one of them ends the process itself (of the crash's
/// signal): the crashed thread normally ends it within milliseconds. Counted from the capture's start, so it must
/// also outlast a report write that a machine under heavy load stretches to seconds: a last resort, never the
/// usual end.
#define CLY_PARKED_THREAD_LIMIT_MS 30000
/// The same while the Swift runtime's backtracer runs (chained on request): it symbolicates in the dying process
/// and has taken over a minute on large server binaries.
#define CLY_PARKED_THREAD_LIMIT_WITH_BACKTRACER_MS 300000
/// How long a thread that crashed while another one is writing the report waits before dying.
#define CLY_CONCURRENT_CRASH_WAIT_MS 5000
/// Breadcrumbs kept by default (the last N `track` calls, identity changes and app breadcrumbs).
#define CLY_DEFAULT_BREADCRUMBS 50
/// The most breadcrumbs the ring may be configured to keep.
#define CLY_MAX_BREADCRUMBS 1000
/// Bytes of one breadcrumb's category, message and data (a JSON object) kept in the ring; longer ones are cut.
#define CLY_BREADCRUMB_CATEGORY_BYTES 32
#define CLY_BREADCRUMB_MESSAGE_BYTES 256
#define CLY_BREADCRUMB_DATA_BYTES 512
/// Hard cap of the `breadcrumbs` member of one report (JSON bytes): the newest that fit are kept.
#define CLY_MAX_BREADCRUMB_REPORT_BYTES (16 * 1024)
/// How long the crash handler may read the executable's symbol table to name the crashing function in its stderr
/// line: CPU time of the crashed thread (a huge table), and wall time (a table not in the page cache). Past
/// either, the line names the object and offset instead. On an idle machine the read takes about a millisecond.
#define CLY_CRASH_LINE_SYMBOL_CPU_BUDGET_MS 20
#define CLY_CRASH_LINE_SYMBOL_WALL_BUDGET_MS 60
/// Bytes of the function name in the crash's stderr line.
#define CLY_CRASH_LINE_FUNCTION_BYTES 256
/// How often the termination monitor looks for an action installed over its own (a framework's dispatch signal
/// source for SIGTERM, an app's handler) and wraps it: a termination signal in that window is not recorded.
#define CLY_TERMINATION_RECHECK_MS 100
/// How many actions the termination monitor wraps per signal in one launch (an app that keeps replacing its
/// handler is left alone after that).
#define CLY_TERMINATION_GENERATIONS 8
/// Thrown errors whose throw site is kept at once (cly_throw_sites.c: a table keyed by the error's box, a newer
/// throw overwriting the older one that hashes to the same slot).
#define CLY_THROW_SITES 256
/// Return addresses kept per throw site, innermost first (the catch site's stack has the outer frames).
#define CLY_THROW_SITE_FRAMES 12
/// Bytes of a task's context (`CohorlyCrash.withContext`), as the JSON object a crash report carries.
#define CLY_MAX_TASK_CONTEXT 1024
/// Size of the alternate signal stack given to prepared threads.
#define CLY_ALTSTACK_BYTES (64 * 1024)

#endif
