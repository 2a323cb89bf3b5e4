import Cohorly
import Foundation

/// The content of a ``HangReportFile``: a `cohorly-crash/1` report of mechanism `hang` — a ``CrashReport``
/// encoded as the salvager writes one, read back at the next launch by ``CrashReport/decode(_:)`` like any report.
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

    /// A report with its header only: no signal, no threads, not complete (the caller fills in what it has).
    init(insertId: String, timestampMs: UInt64, pid: Int32, executable: String, mechanism: Mechanism) {
        format = Self.formatTag
        self.insertId = insertId
        self.timestampMs = timestampMs
        self.pid = pid
        self.executable = executable
        self.mechanism = mechanism
        signal = Signal(number: 0, name: "", code: 0, address: Address(0))
        stackOverflow = false
        context = [:]
        threads = []
        modules = []
        complete = false
    }

    /// The report as JSON (keys sorted), as the salvager writes a repaired one; empty if it cannot be encoded.
    var fileBytes: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { [UInt8]($0) } ?? []
    }
}
