import Cohorly
import CohorlyFiles
import Foundation
import CohorlyLaunch

extension CrashEventSender {
    static let reportsVariable = "COHORLY_CRASH_SENDER_REPORTS"
    static let reportDirectoryVariable = "COHORLY_CRASH_SENDER_REPORT_DIR"
    static let eventOptionsVariable = "COHORLY_CRASH_SENDER_EVENT_OPTIONS"

    /// The app's side of handing reports over to the detached sender.
    ///
    /// Turning a report into an event (symbolication included) takes long enough that an app in a crash loop
    /// can die first. So the app starts the sender with the names of the reports first, then holds
    /// `crash-delivery.lock` (in the queue's directory) while it does that work. The sender waits for the lock:
    /// when the app finished, the reports are gone and it only sends the queue; when the app died (the kernel
    /// releases its lock), the sender turns the reports left over into events itself. The sender is started
    /// before the app waits for the lock, because the lock may be held by an earlier sender taking over the
    /// reports of the launch before, and the app may die while it waits. Whoever holds the lock first does the
    /// work; the other finds the reports gone. Either way each report is queued once (one record per
    /// `$insert_id`).
    final class Handover {
        private let lock: LockFile

        /// Opens the delivery lock of `cohorly`'s queue; nil when the client has no queue directory or the lock
        /// cannot be opened.
        init?(for cohorly: Cohorly) {
            guard let storage = cohorly.storageDirectoryPath else { return nil }
            lock = LockFile(.crashDelivery, in: storage)
            guard lock.open() else { return nil }
        }

        /// Takes the lock, waiting while another process (a sender taking over earlier reports) holds it.
        func acquire() {
            _ = lock.lockWaiting()
        }

        /// Starts the sender, naming the reports it takes over if this process dies. Returns whether it started.
        func startSender(
            for cohorly: Cohorly, reports: [CrashReportStore.ReportFile], directory: URL,
            options: CohorlyCrash.Options
        ) -> Bool {
            var extra = [
                CrashEventSender.reportsVariable: reports.map(\.name).joined(separator: ":"),
                CrashEventSender.reportDirectoryVariable: directory.path,
            ]
            if let json = try? JSONEncoder().encode(options.events) {
                extra[CrashEventSender.eventOptionsVariable] = String(decoding: json, as: UTF8.self)
            }
            // The sender reads the queue's settings (its destination, the identity) from disk: they must be
            // committed before it starts, or a sender of an app that died at once would send the wrong way.
            cohorly.waitUntilPersisted()
            return CrashEventSender.spawn(for: cohorly, timeout: options.senderTimeout, extraEnvironment: extra)
        }

        /// Releases the lock: the reports are handled.
        func release() { lock.close() }
    }

    /// The sender's side: once the app's delivery lock is free (the app finished or died), the reports named
    /// in the environment that are still there, and the hang reports launches that died hung left in that
    /// directory, become events in the queue, as the app would have made them, through `client` (the sender's
    /// client of that queue, for the destination the queue was written for).
    static func takeOverReports(storage: String, into client: Cohorly, deadline: ContinuousClock.Instant) {
        let environment = ProcessInfo.processInfo.environment
        guard let names = environment[reportsVariable], let directory = environment[reportDirectoryVariable] else {
            return
        }
        let lock = LockFile(.crashDelivery, in: storage)
        guard lock.lock(until: deadline) else { return }
        defer { lock.close() }
        let named = names.split(separator: ":").map { name in
            CrashReportStore.ReportFile(url: URL(fileURLWithPath: directory).appendingPathComponent(String(name)))
        }
        let files = named.filter { FileManager.default.fileExists(atPath: $0.url.path) }
        let store = CrashReportStore(directory: URL(fileURLWithPath: directory))
        let hangReports = HangReportFile.leftovers(in: store.directory)
        guard !files.isEmpty || !hangReports.isEmpty else { return }
        let options =
            environment[eventOptionsVariable].flatMap {
                try? JSONDecoder().decode(ExceptionEventOptions.self, from: Data($0.utf8))
            } ?? .default
        _ = CohorlyCrash.deliver(files, from: store, to: client, options: options)
        _ = CohorlyCrash.deliverHangReports(
            hangReports, from: store, crashReports: named, to: client, options: options)
    }
}
