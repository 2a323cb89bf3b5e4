import CCrashRecorder
import CohorlyFiles
import Foundation

/// The crash reports on disk: lists, decodes and deletes them, and keeps the directory healthy.
///
/// ``pendingReports()`` first tidies the directory: a report whose decoding was interrupted
/// ``maximumLoadAttempts`` times (the process died while decoding it, each time — a parser crash loop) or that
/// is larger than ``maximumReportBytes`` is moved to `quarantine/` and never retried; a torn `*.tmp` is
/// salvaged into a report with `complete: false` (when nothing usable is left — an empty file, the disk was full
/// — it stays for CohorlyCrash, which sends a "crash report lost" event for it, then removes it); only the newest
/// ``maximumReports`` reports are kept.
///
/// Every access goes through the directory's descriptor and never follows a symlink: only regular files of
/// this user named like reports are read, moved or removed; a directory, symlink, FIFO or another user's file
/// planted in the directory is left alone. A directory that is group- or world-writable or belongs to another
/// user is not used at all (it lists no reports).
public struct CrashReportStore: Sendable {
    /// Reports kept on disk (the recorder's CLY_MAX_REPORTS).
    public static let maximumReports = Int(CLY_MAX_REPORTS)
    /// Interrupted decodes of one report before it is quarantined. More than one, because the app may die
    /// of an unrelated crash while its sender happens to be decoding (a crash loop at startup).
    public static let maximumLoadAttempts = 3
    /// Quarantined reports kept for inspection.
    public static let maximumQuarantined = 10
    /// The largest report file read: twice the recorder's own cap (CLY_MAX_REPORT_BYTES, 512 KiB), room for
    /// a salvaged report re-encoded. A larger file is quarantined without being read.
    public static let maximumReportBytes = 2 * Int(CLY_MAX_REPORT_BYTES)

    /// The report directory.
    public let directory: URL

    /// A store over `directory` (the recorder's ``CrashRecorder/Options/reportDirectory``).
    public init(directory: URL) { self.directory = directory }

    /// A report file in the store.
    public struct ReportFile: Sendable, Hashable, CustomStringConvertible {
        /// Its location.
        public let url: URL
        /// The file name (`<timestamp>-<pid>-<insert_id>.json`).
        public var name: String { url.lastPathComponent }
        /// The file name.
        public var description: String { name }
    }

    /// Why a report could not be read.
    public enum ReportError: Error, Equatable, CustomStringConvertible {
        /// The file could not be read.
        case unreadable(file: String, reason: String)
        /// The file is not a valid report.
        case corrupt(file: String, reason: String)
        /// The file is a report of another format version.
        case unsupportedFormat(file: String, format: String)

        /// `<file>: <problem>`.
        public var description: String {
            switch self {
            case .unreadable(let file, let reason): "\(file): cannot read: \(reason)"
            case .corrupt(let file, let reason): "\(file): not a valid crash report: \(reason)"
            case .unsupportedFormat(let file, let format):
                "\(file): unsupported report format \"\(format)\""
            }
        }

        func naming(_ file: String) -> ReportError {
            switch self {
            case .unreadable(_, let reason): .unreadable(file: file, reason: reason)
            case .corrupt(_, let reason): .corrupt(file: file, reason: reason)
            case .unsupportedFormat(_, let format): .unsupportedFormat(file: file, format: format)
            }
        }
    }

    private static let quarantineName = "quarantine"
    private var quarantineDirectory: URL { directory.appendingPathComponent(Self.quarantineName) }

    /// The committed reports, oldest first, after tidying the directory (see the type's documentation).
    public func pendingReports() -> [ReportFile] {
        guard let folder = ReportDirectory(path: directory.path) else { return [] }
        return folder.withLock {
            quarantineBadReports(folder)
            salvageTornFiles(folder)
            var reports = Self.reportNames(folder, suffix: ".json")
            while reports.count > Self.maximumReports { folder.remove(reports.removeFirst()) }
            return reports.map { ReportFile(url: directory.appendingPathComponent($0)) }
        }
    }

    /// Decodes a report. Before decoding, the attempt is counted in `<file>.attempts` (removed once decoding
    /// returns): if decoding keeps killing the process, a later launch quarantines the report instead of
    /// crashing again. A file larger than ``maximumReportBytes`` is quarantined at once, without being read.
    /// - Throws: ``ReportError`` naming the file.
    public func load(_ file: ReportFile) throws -> CrashReport {
        guard let folder = ReportDirectory(path: directory.path) else {
            throw ReportError.unreadable(file: file.url.path, reason: "the report directory is missing or not private")
        }
        let attempts = file.name + ".attempts"
        folder.write(attempts, Array(String(Self.attemptCount(folder, attempts) + 1).utf8), exclusive: false)
        defer { folder.remove(attempts) }
        let data: [UInt8]
        switch folder.read(file.name, limit: Self.maximumReportBytes) {
        case .success(let bytes): data = bytes
        case .failure(.tooLarge):
            quarantine(file.name, in: folder)
            throw ReportError.unreadable(
                file: file.url.path, reason: "larger than \(Self.maximumReportBytes) bytes (quarantined)")
        case .failure(.unreadable(let reason)): throw ReportError.unreadable(file: file.url.path, reason: reason)
        }
        do {
            return try CrashReport.decode(Data(data))
        } catch {
            throw error.naming(file.url.path)
        }
    }

    static func attemptCount(_ folder: ReportDirectory, _ name: String) -> Int {
        guard case .success(let bytes) = folder.read(name, limit: 32) else { return 0 }
        return Int(String(decoding: bytes, as: UTF8.self)) ?? 0
    }

    /// Removes a report (after its event is durably queued). Only a regular file of this user is removed.
    public func delete(_ file: ReportFile) throws {
        guard let folder = ReportDirectory(path: directory.path), folder.remove(file.name) else {
            throw ReportError.unreadable(file: file.url.path, reason: "not a report file of this user")
        }
    }

    /// The quarantined files, oldest first.
    public func quarantinedReports() -> [URL] {
        guard let folder = ReportDirectory(path: directory.path),
            let quarantine = ReportDirectory(subdirectory: Self.quarantineName, of: folder, create: false)
        else { return [] }
        return quarantine.names().filter { quarantine.ownedRegularFile($0) != nil }
            .map { quarantineDirectory.appendingPathComponent($0) }
    }

    // MARK: - Tidying

    /// Regular files of this user named `<16 digits>-…<suffix>`, sorted (oldest first).
    private static func reportNames(_ folder: ReportDirectory, suffix: String) -> [String] {
        folder.names().filter { $0.hasSuffix(suffix) && looksLikeReport($0) && folder.ownedRegularFile($0) != nil }
    }

    static func looksLikeReport(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return bytes.count > 17 && bytes[16] == UInt8(ascii: "-")
            && bytes[..<16].allSatisfy { $0 >= 48 && $0 <= 57 }
    }

    /// Moves `name` to `quarantine/` (removing it when the quarantine is unusable — a report that crashes
    /// its reader must not stay listed) and keeps the newest ``maximumQuarantined`` there.
    private func quarantine(_ name: String, in folder: ReportDirectory) {
        guard let quarantine = ReportDirectory(subdirectory: Self.quarantineName, of: folder, create: true),
            folder.move(name, to: quarantine, as: name)
        else {
            folder.remove(name)
            return
        }
        let kept = quarantine.names().filter { quarantine.ownedRegularFile($0) != nil }
        for old in kept.dropLast(Self.maximumQuarantined) { quarantine.remove(old) }
    }

    /// Reports whose decoding was interrupted too often, and reports too large to read.
    private func quarantineBadReports(_ folder: ReportDirectory) {
        for name in folder.names() where name.hasSuffix(".json.attempts") {
            let report = String(name.dropLast(".attempts".count))
            if folder.ownedRegularFile(report) == nil {
                folder.remove(name)
            } else if Self.attemptCount(folder, name) >= Self.maximumLoadAttempts {
                quarantine(report, in: folder)
                folder.remove(name)
            }
        }
        for name in Self.reportNames(folder, suffix: ".json") {
            if let info = folder.ownedRegularFile(name), info.st_size > Self.maximumReportBytes {
                quarantine(name, in: folder)
            }
        }
    }

    private func salvageTornFiles(_ folder: ReportDirectory) {
        for name in Self.reportNames(folder, suffix: ".tmp") {
            if Self.isBeingWritten(name, in: folder) { continue }
            let data: [UInt8]
            switch folder.read(name, limit: Self.maximumReportBytes) {
            case .success(let bytes): data = bytes
            case .failure(.tooLarge):
                quarantine(name, in: folder)  // a recorder never writes that much
                continue
            case .failure(.unreadable): continue  // a lost report (LostCrashReports)
            }
            // Nothing usable (an empty file: the disk was full): kept for LostCrashReports, whose event says
            // the crash happened, and which removes it then.
            guard let repaired = CrashReportSalvager.repair(Data(data)),
                var report = try? CrashReport.decode(repaired.json)
            else { continue }
            report.complete = false
            report.recrashSignal = repaired.recrashSignal ?? report.recrashSignal
            let encoded = report.fileBytes
            guard !encoded.isEmpty else { continue }
            let target = String(name.dropLast(4)) + ".json"
            let staging = ".salvage-\(name)"
            folder.remove(staging)
            if folder.write(staging, encoded, exclusive: true), folder.move(staging, to: folder, as: target) {
                folder.remove(name)
            }
        }
    }

    /// A `.tmp` of a process that is still alive — this one included: a thread of a crashing process may still
    /// run while the handler writes — and was written in the last seconds is left alone.
    static func isBeingWritten(_ name: String, in folder: ReportDirectory) -> Bool {
        let parts = name.split(separator: "-")
        guard parts.count > 2, let pid = Int32(parts[1]), kill(pid, 0) == 0,
            let info = folder.ownedRegularFile(name)
        else { return false }
        return time(nil) - info.st_mtim.tv_sec < 10
    }
}
