import CCrashRecorder
import Cohorly
import Foundation

extension CrashEventSender {
    /// The sender the crash handler starts the moment a report is committed (cly_crash_time_sender.c), so a crash
    /// reaches its destination within seconds with no later launch — a CLI tool, a cron or Kubernetes job that
    /// crashes is never launched again.
    ///
    /// Everything it needs is prepared here, at install: this executable in sender mode, with the queue's settings
    /// and the report directory in its environment, as ``Handover`` starts it; the handler adds the name of the
    /// report it committed (``reportsVariable``). The sender then does what a handover sender does for the reports
    /// it was handed: it waits for its turn (`crash-sender.lock`) and for `crash-delivery.lock` (held by a launch
    /// that is turning reports into events — this one until it dies, or the next), turns the report into an event
    /// (symbolicated: it has the binary and the time) unless someone else already queued it and deleted the file,
    /// then delivers the queue. Where the process cannot be started (no exec permission, seccomp), the report stays
    /// and the next launch sends it.
    enum CrashTime {
        /// Prepares the crash-time start for `cohorly`'s queue and the reports in `reportDirectory`, or turns it off
        /// when `options` say so (or the client has no queue directory). Returns whether a crash will start it.
        @discardableResult
        static func prepare(for cohorly: Cohorly, reportDirectory: URL, options: CohorlyCrash.Options) -> Bool {
            guard options.detachedSender && options.startSenderAtCrash else {
                cly_crash_time_sender_disarm()
                return false
            }
            var extra = [reportDirectoryVariable: reportDirectory.path]
            if let json = try? JSONEncoder().encode(options.events) {
                extra[eventOptionsVariable] = String(decoding: json, as: UTF8.self)
            }
            guard let envp = environment(for: cohorly, timeout: options.senderTimeout, extra: extra) else {
                cly_crash_time_sender_disarm()
                return false
            }
            // A container's only process (pid 1) takes every process of its namespace with it: its handler waits
            // for the sender, as long as the sender may run (senderTimeout) and a little more.
            let waitMilliseconds = min(options.senderTimeout.inSeconds * 1000 + 5000, Double(UInt32.max))
            let result = withCStrings(arguments) { cArgv in
                withCStrings(envp) { cEnvp in
                    cly_crash_time_sender_prepare(
                        options.senderExecutable, cArgv, cEnvp, reportsVariable, UInt32(waitMilliseconds))
                }
            }
            return result == 0
        }
    }
}
