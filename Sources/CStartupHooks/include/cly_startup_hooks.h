#ifndef CLY_STARTUP_HOOKS_H
#define CLY_STARTUP_HOOKS_H

// The client's startup hooks: what the client (Cohorly) tells the parts linked with it at startup, without
// importing them. Today one: the crash recorder (CCrashRecorder), when it is linked into the process, takes the
// crash report's disk reserve before the client's queue makes its files, whatever order the app calls
// `Cohorly.initialize` and `CohorlyCrash.install` in (on a nearly full disk the queue would otherwise take the
// space the crash report needs).

/// Called by the client with the queue's directory (made already) right before it opens its SQLite files there.
/// Calls the crash recorder's `cly_reserve_before_queue_opens` when the recorder is linked (a weak reference:
/// nothing happens in a program without it). Normal code, any thread; safe to call more than once.
void cly_startup_before_queue_opens(const char *directory);

#endif
