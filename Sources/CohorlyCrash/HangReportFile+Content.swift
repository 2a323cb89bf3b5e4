import Cohorly
import Foundation

/// The content of a ``HangReportFile``: a `cohorly-crash/1` report of mechanism `hang`, read back at the next
/// launch by ``CrashReport/decode(_:)`` like any report.
struct HangReportContent: Encodable {
    let format = CrashReport.formatTag
    let insertId: String
    let timestampMs: UInt64
    let pid: Int32
    let executable: String
    let mechanism = CrashReport.Mechanism.hang
    let stackOverflow = false
    let crashedThread: CrashReport.Thread
    let context: [String: CohorlyValue]
    let threads: [CrashReport.Thread]
    let modules: [CrashReport.Module]
    let threadsRequested: Int
    let threadsAnswered: Int
    let complete = true
    let hang: CrashReport.Hang
    /// The breadcrumbs of the moment the hang was detected (or last reported).
    let breadcrumbs: [Breadcrumb]

    enum CodingKeys: String, CodingKey {
        case format, pid, executable, mechanism, context, threads, modules, complete, hang, breadcrumbs
        case insertId = "insert_id"
        case timestampMs = "timestamp_ms"
        case stackOverflow = "stack_overflow"
        case crashedThread = "crashed_thread"
        case threadsRequested = "threads_requested"
        case threadsAnswered = "threads_answered"
    }

    /// The report of `subject`'s hang, blocked `blockedMs` so far, with the launch's `$insert_id` and the
    /// crash-time context of this moment.
    init(subject: HangSubject, capture: HangCapture?, blockedMs: UInt64, thresholdMs: UInt64) {
        insertId = CrashRecorder.pendingInsertId
        timestampMs = HangWatchdog.wallClockMilliseconds()
        pid = getpid()
        executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        crashedThread =
            capture?.threads.first
            ?? CrashReport.Thread(
                tid: subject.tid.load(ordering: .sequentiallyConsistent), name: subject.name, crashed: true,
                frames: [])
        context = CohorlyValue(json: CrashRecorder.context.serializedForCrash())?.objectValue ?? [:]
        threads = Array(capture?.threads.dropFirst() ?? [])
        modules = capture?.modules ?? []
        threadsRequested = capture?.requested ?? 0
        threadsAnswered = capture?.answered ?? 0
        breadcrumbs = BreadcrumbRecorder.current()
        hang = CrashReport.Hang(
            subject: subject.name, kind: subject.kind.rawValue, durationMs: blockedMs, thresholdMs: thresholdMs)
    }

    /// The JSON bytes.
    var bytes: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { [UInt8]($0) } ?? []
    }
}
