import Cohorly
import Foundation

/// The content of a ``HangReportFile``: a report (format ``CrashReportFormat/current``) of mechanism `hang` — a
/// ``CrashReport`` written as the salvager writes one, read back at the next launch by ``CrashReport/decode(_:)``
/// like any report.
extension CrashReport {
    /// The report of `subject`'s hang, blocked `blockedMs` so far, with the launch's `$insert_id` and the
    /// crash-time context and breadcrumbs of this moment.
    static func hang(subject: HangSubject, capture: HangCapture?, blockedMs: UInt64, thresholdMs: UInt64)
        -> CrashReport
    {
        var report = CrashReport(
            insertId: CrashRecorder.pendingInsertId, timestampMs: HangWatchdog.wallClockMilliseconds(),
            pid: getpid(),
            executable: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "",
            mechanism: .hang)
        report.crashedThread =
            capture?.threads.first
            ?? CrashReport.Thread(
                tid: subject.tid.load(ordering: .sequentiallyConsistent), name: subject.name, crashed: true,
                frames: [])
        report.context = CohorlyValue(json: CrashRecorder.context.serializedForCrash())?.objectValue ?? [:]
        report.threads = Array(capture?.threads.dropFirst() ?? [])
        report.modules = capture?.modules ?? []
        report.threadsRequested = capture?.requested ?? 0
        report.threadsAnswered = capture?.answered ?? 0
        report.breadcrumbs = BreadcrumbRecorder.current()
        report.hang = CrashReport.Hang(
            subject: subject.name, kind: subject.kind.rawValue, durationMs: blockedMs, thresholdMs: thresholdMs)
        report.complete = true
        return report
    }
}
