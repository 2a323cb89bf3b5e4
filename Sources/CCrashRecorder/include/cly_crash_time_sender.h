// The crash-time sender (cly_crash_time_sender.c): the crash handler starts the crash-event sender the moment a
// report is committed, so a process that is never launched again (a CLI tool, a cron or Kubernetes job) still
// reports. Everything the start needs — the executable, its argv and environment — is prepared here, in normal
// code, at install; the crash path only fills in the report's name and starts the process.
#ifndef CLY_CRASH_TIME_SENDER_H
#define CLY_CRASH_TIME_SENDER_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Prepares (or replaces) what the crash handler starts once a report is committed: `path` with `argv` and
/// `envp` (NULL-terminated, copied now into memory that is never freed), plus one more environment entry
/// `<report_variable>=<the committed report's file name>`, whose value the handler writes at crash time. When this
/// process is pid 1 (a container's init: the sender would die with it), the handler waits for the sender to end,
/// at most `init_wait_ms`. Until this is called, or after cly_crash_time_sender_disarm, a crash starts nothing.
/// Returns 0, EINVAL (a NULL argument) or ENOMEM. Normal code, not async-signal-safe; not thread-safe with itself.
int cly_crash_time_sender_prepare(const char *path, char *const argv[], char *const envp[],
                                  const char *report_variable, uint32_t init_wait_ms);

/// A crash starts nothing from now on (the prepared memory stays: a crash in progress may read it). Safe from any
/// thread.
void cly_crash_time_sender_disarm(void);

/// Benchmark hook: starts the prepared process exactly as the crash handler does, naming `report_name` (with a
/// child stack of its own, mapped now), and returns the pid (> 0) or a negative errno value (nothing prepared:
/// -ENOENT; a failed exec is not seen here: the child exits 127). `*blocked_ns` (when not NULL) receives how long
/// the caller was held: the time the crash path adds before the process dies. Normal code.
int cly_crash_time_sender_start_for_test(const char *report_name, uint64_t *blocked_ns);

#ifdef __cplusplus
}
#endif

#endif
