// The termination monitor (cly_termination.c): a launch ended by SIGTERM, SIGINT, SIGHUP (and SIGQUIT, SIGUSR1,
// SIGUSR2 where their action is the default one) is recorded in its launch marker as what it is, so the next
// launch does not take a `systemctl stop` for a crash or a kill.
#ifndef CLY_TERMINATION_H
#define CLY_TERMINATION_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Where the launch marker holds the termination record, and its size (a region of the marker the Swift side
/// pads with spaces when it makes the file, so that writing it needs no new disk block).
#define CLY_LAUNCH_MARKER_ENDING_OFFSET 4352
#define CLY_LAUNCH_MARKER_ENDING_BYTES 192

/// Installs the termination monitor: for SIGTERM, SIGINT and SIGHUP whose action is the default one or an app's
/// handler, and for SIGQUIT, SIGUSR1 and SIGUSR2 whose action is the default one, a handler that records the
/// signal in the launch marker and then does what the previous action did — dies of the signal (exit status
/// 128 + the signal, 143 for SIGTERM) or calls the app's handler with the same flags and mask, which decides.
/// Ignored signals stay ignored. An action installed later over ours (a dispatch signal source's, an app's
/// handler) is wrapped the same way within CLY_TERMINATION_RECHECK_MS, by a watcher thread started here.
/// Returns 0 or an errno value. Normal code; safe to call twice (signals already watched are left alone).
int cly_termination_install(void);

/// Removes the monitor: stops the watcher and restores the actions ours stands for, for the signals whose action
/// is still ours. Normal code; safe to call twice.
void cly_termination_uninstall(void);

/// Whether the action of `signal_number` is the monitor's handler now (a watched signal, not replaced since the
/// monitor last wrapped it) and, when it wrapped libdispatch's handler, libdispatch has registered the monitor's own
/// dispatch source for it (before that, a signal libdispatch's signalfd takes first is not seen). Normal code.
bool cly_termination_watches(int signal_number);

#ifdef __cplusplus
}
#endif

#endif
