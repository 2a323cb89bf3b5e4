import Cohorly
import Foundation
import Synchronization

extension CohorlyCrash {
    /// Demo and test hook: receives one line per hang the watchdog reports
    /// (`hang subject=<name> kind=<kind> duration_ms=<ms> frames=<n> ongoing=<bool>`), before its event is made.
    package static let hangObserver = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Starts the hang watchdog when `options` ask for it (stops a running one otherwise).
    static func startHangWatchdog(for cohorly: Cohorly, options: Options, reportDirectory: URL) {
        guard let threshold = options.hangThreshold, threshold > .zero else {
            HangWatchdog.stop()
            return
        }
        var configuration = HangWatchdog.Configuration(threshold: threshold, reportDirectory: reportDirectory)
        configuration.ongoingReportAfter = options.hangOngoingReportAfter
        let events = options.events
        HangWatchdog.start(configuration) { [weak cohorly] hang in
            // The event first: its ticket is reserved now, so a flush made after this hang includes it.
            if let cohorly { _ = NonFatalExceptionReporter.shared.send(hang.exception, to: cohorly, options: events) }
            hangObserver.withLock { $0 }?(hang.summary)
        }
    }

    /// Sends the hang reports left by launches that died hung (`leftovers`, from ``HangReportFile/leftovers(in:)``)
    /// as fatal `$exception` events, and deletes each once its event is durably queued (one still there: another
    /// process may have queued it meanwhile, which the queue tells by its insert id). A launch that also left a
    /// crash report (it crashed while hung) is reported by that crash alone: its hang report is dropped.
    static func deliverHangReports(
        _ leftovers: [(file: CrashReportStore.ReportFile, report: CrashReport)], from store: CrashReportStore,
        crashReports: [CrashReportStore.ReportFile], to cohorly: Cohorly, options: ExceptionEventOptions
    ) -> DeliverySummary {
        let crashedLaunches = Set(crashReports.map { String($0.name.dropLast(".json".count).suffix(36)) })
        var summary = DeliverySummary()
        for (file, report) in leftovers where FileManager.default.fileExists(atPath: file.url.path) {
            defer { SymbolicationGuard.finished(file.url) }
            if crashedLaunches.contains(report.insertId) {
                try? store.delete(file)
                continue
            }
            queue(report, of: file, from: store, to: cohorly, options: options, counting: &summary)
        }
        return summary
    }
}

extension CohorlyCrash.DeliverySummary {
    /// Adds the counts of `other`.
    mutating func add(_ other: Self) {
        queued += other.queued
        discarded += other.discarded
        unreadable += other.unreadable
        kept += other.kept
    }
}

extension HangWatchdog.Hang {
    /// The hang as its report records it.
    var record: CrashReport.Hang {
        CrashReport.Hang(
            subject: subject, kind: kind.rawValue, durationMs: HangWatchdog.nanoseconds(duration) / 1_000_000,
            thresholdMs: HangWatchdog.nanoseconds(threshold) / 1_000_000)
    }

    /// The hang as a ``NonFatalException`` (built like a crash's `$exception`, by ``ExceptionBuilder``): level
    /// `error`, mechanism `hang` (handled), the hung thread as the subject and the others, the stacks captured at
    /// detection (each frame with its kind: frame 0 of each is the exact interrupted PC).
    var exception: NonFatalException {
        let record = self.record
        var description = ExceptionBuilder.describeHang(record, diedHung: false)
        var properties = ExceptionBuilder.hangProperties(record)
        if ongoing {
            properties["$exception_hang_ongoing"] = true
            description.value += " (still blocked)"
        }
        let threads = capture?.threads ?? [CrashReport.Thread(tid: tid, name: subject, crashed: true, frames: [])]
        return NonFatalException(
            type: description.type, value: description.value, level: "error",
            mechanism: .init(type: "hang", handled: true, meta: ExceptionBuilder.hangMeta(record)),
            issueName: description.issueName, threads: threads,
            modules: capture?.modules ?? [], properties: properties)
    }

    /// One line for ``CohorlyCrash/hangObserver``.
    var summary: String {
        let milliseconds = HangWatchdog.nanoseconds(duration) / 1_000_000
        return
            "hang subject=\(subject.replacingOccurrences(of: " ", with: "_")) kind=\(kind.rawValue) duration_ms=\(milliseconds) frames=\(capture?.threads.first?.frames.count ?? 0) ongoing=\(ongoing)"
    }
}
