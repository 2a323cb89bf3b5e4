import Cohorly
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Crash reports the handler could not write: a `.tmp` left by a launch that died (its pid gone) that is empty —
/// the disk was full at the crash, so not one byte of the report fit — or that cannot be read or salvaged into a
/// report (``CrashReportSalvager``). Its name still says when, which process and which launch
/// (`<ms>-<pid>-<insert id>.tmp`, cly_report.c): the crash becomes one fatal `$exception` ("Crash report lost"),
/// never a silent delete. The launch's marker, when it made one, gives the crash-time context (release, identity).
/// Run before ``AbnormalExits/report(directory:to:)``: the file and the marker are removed once the event is
/// durably queued, so the marker is not reported a second time as an abnormal exit.
enum LostCrashReports {
    /// The `$exception_abnormal_exit_cause` of such an event.
    static let cause = "crash_report_lost"

    /// Queues one event per lost report in `directory` to `cohorly`; returns how many were queued.
    @discardableResult
    static func report(directory: String, to cohorly: Cohorly) -> Int {
        guard let folder = ReportDirectory(path: directory) else { return 0 }
        return folder.withLock {
            var queued = 0
            for name in folder.names() where name.hasSuffix(".tmp") && CrashReportStore.looksLikeReport(name) {
                guard let info = folder.ownedRegularFile(name), !CrashReportStore.isBeingWritten(name, in: folder),
                    let reason = lostReason(name, size: Int(info.st_size), in: folder),
                    let event = event(name: name, reason: reason, in: folder)
                else { continue }
                switch try? cohorly.enqueuePrepared(event) {
                case .queued, .alreadyQueued:
                    queued += 1
                    // Else kept: the next launch sends it again (the same `$insert_id`: deduplicated).
                    guard cohorly.queueIsPersisted else { continue }
                    folder.remove(name)
                    folder.remove(LaunchRecord.fileName(insertId: event.insertId))
                case .discardedOptedOut:
                    folder.remove(name)
                case nil: continue  // the queue could not be written: try again next launch
                }
            }
            return queued
        }
    }

    /// Why the `.tmp` named `name` (of `size` bytes) holds no report, or nil when it can be salvaged (the store
    /// does that) or is too large to be a report (the store quarantines it).
    static func lostReason(_ name: String, size: Int, in folder: ReportDirectory) -> String? {
        if size == 0 { return "disk full (the crash handler could not write a byte of its report)" }
        switch folder.read(name, limit: CrashReportStore.maximumReportBytes) {
        case .failure(.tooLarge): return nil
        case .failure(.unreadable(let reason)): return "its file cannot be read (\(reason))"
        case .success(let bytes):
            if let repaired = CrashReportSalvager.repair(Data(bytes)), (try? CrashReport.decode(repaired.json)) != nil {
                return nil
            }
            return "disk full or the handler died (the \(bytes.count) bytes written hold no report)"
        }
    }

    /// The event of the lost report `name`: its time, pid and launch (insert id) from the name.
    static func event(name: String, reason: String, in folder: ReportDirectory) -> QueuedException? {
        let parts = name.dropLast(".tmp".count).split(separator: "-", maxSplits: 2)
        guard parts.count == 3, let milliseconds = Int64(parts[0]), let pid = Int32(parts[1]) else { return nil }
        let insertId = String(parts[2])
        let record = launchRecord(insertId: insertId, in: folder)
        var properties = record.map { ExceptionBuilder.contextProperties($0.context) } ?? [:]
        let description = CrashDescription(
            type: ExceptionBuilder.abnormalExitType,
            value: "Crashed, but its crash report was lost: \(reason). No stack trace.",
            mechanism: "abnormal_exit", issueName: "Crash (report lost)")
        var exception = CapturedException(
            description: description, facts: CrashReason.Facts(given: description), level: "fatal", handled: false)
        exception.hasStack = false
        exception.timestampMs = milliseconds
        exception.insertId = insertId
        if let record { exception.executable = record.executable }
        properties["$exception_abnormal_exit_cause"] = .string(cause)
        properties["$exception_pid"] = .int(Int(pid))
        exception.properties = properties
        return ExceptionBuilder.record(exception)
    }

    /// The marker of the launch `insertId`, when it made one (a full disk may have stopped that too).
    private static func launchRecord(insertId: String, in folder: ReportDirectory) -> LaunchRecord? {
        let fd = openat(
            folder.descriptor, LaunchRecord.fileName(insertId: insertId), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC
        )
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return LaunchRecord.read(fd: fd)
    }
}
