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
        HangWatchdog.start(configuration) { hang in
            hangObserver.withLock { $0 }?(hang.summary)
        }
    }

    /// Sends the hang reports left by launches that died hung (``HangReportFile``) as fatal `$exception`
    /// events, and deletes each once its event is durably queued. A launch that also left a crash report (it
    /// crashed while hung) is reported by that crash alone: its hang report is dropped.
    static func deliverHangReports(
        from store: CrashReportStore, crashReports: [CrashReportStore.ReportFile], to cohorly: Cohorly,
        options: ExceptionEventOptions
    ) -> DeliverySummary {
        let crashedLaunches = Set(crashReports.map { String($0.name.dropLast(".json".count).suffix(36)) })
        var summary = DeliverySummary()
        for (file, report) in HangReportFile.leftovers(in: store.directory) {
            defer { SymbolicationGuard.finished(file.url) }
            if crashedLaunches.contains(report.insertId) {
                try? store.delete(file)
                continue
            }
            do {
                var options = options
                if cohorly.isOptedOut { options.symbolicate = false }
                switch try cohorly.enqueuePrepared(event(for: report, file: file, options: options)) {
                case .queued, .alreadyQueued: summary.queued += 1
                case .discardedOptedOut: summary.discarded += 1
                }
                try? store.delete(file)
            } catch CohorlyError.eventTooLarge {
                summary.unreadable += 1
                try? store.delete(file)
            } catch {
                summary.kept += 1
            }
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
    /// One line for ``CohorlyCrash/hangObserver``.
    var summary: String {
        let milliseconds = HangWatchdog.nanoseconds(duration) / 1_000_000
        return
            "hang subject=\(subject.replacingOccurrences(of: " ", with: "_")) kind=\(kind.rawValue) duration_ms=\(milliseconds) frames=\(capture?.threads.first?.frames.count ?? 0) ongoing=\(ongoing)"
    }
}
