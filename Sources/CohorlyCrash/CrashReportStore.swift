import Foundation

/// The crash reports on disk: lists, decodes and deletes them, and keeps the directory healthy.
///
/// ``pendingReports()`` first tidies the directory: a report whose decoding was interrupted
/// ``maximumLoadAttempts`` times (the process died while decoding it, each time — a parser crash loop) is
/// moved to `quarantine/` and never retried; a torn `*.tmp` is salvaged into a
/// report with `complete: false` (or removed when nothing usable is left); only the newest
/// ``maximumReports`` reports are kept.
public struct CrashReportStore: Sendable {
    /// Reports kept on disk (the recorder's CLY_MAX_REPORTS).
    public static let maximumReports = 10
    /// Interrupted decodes of one report before it is quarantined. More than one, because the app may die
    /// of an unrelated crash while its sender happens to be decoding (a crash loop at startup).
    public static let maximumLoadAttempts = 3
    /// Quarantined reports kept for inspection.
    public static let maximumQuarantined = 10

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

    private var quarantineDirectory: URL { directory.appendingPathComponent("quarantine") }

    /// The committed reports, oldest first, after tidying the directory (see the type's documentation).
    public func pendingReports() -> [ReportFile] {
        withDirectoryLock {
            quarantineInterruptedLoads()
            salvageTornFiles()
            var reports = reportFiles()
            while reports.count > Self.maximumReports {
                try? FileManager.default.removeItem(at: reports.removeFirst().url)
            }
            return reports.map { ReportFile(url: $0.url) }
        }
    }

    /// Decodes a report. Before decoding, the attempt is counted in `<file>.attempts` (removed once decoding
    /// returns): if decoding keeps killing the process, a later launch quarantines the report instead of
    /// crashing again.
    /// - Throws: ``ReportError`` naming the file.
    public func load(_ file: ReportFile) throws -> CrashReport {
        let attempts = Self.attemptsFile(for: file.url)
        let previous = Self.attemptCount(attempts)
        try? Data(String(previous + 1).utf8).write(to: attempts)
        defer { try? FileManager.default.removeItem(at: attempts) }
        let data: Data
        do {
            data = try Data(contentsOf: file.url)
        } catch {
            throw ReportError.unreadable(file: file.url.path, reason: "\(error)")
        }
        do {
            return try CrashReport.decode(data)
        } catch let error as ReportError {
            throw error.naming(file.url.path)
        }
    }

    static func attemptsFile(for report: URL) -> URL { URL(fileURLWithPath: report.path + ".attempts") }

    static func attemptCount(_ attempts: URL) -> Int {
        (try? String(contentsOf: attempts, encoding: .utf8)).flatMap { Int($0) } ?? 0
    }

    /// Removes a report (after its event is durably queued).
    public func delete(_ file: ReportFile) throws {
        try FileManager.default.removeItem(at: file.url)
    }

    /// The quarantined files, oldest first.
    public func quarantinedReports() -> [URL] {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: quarantineDirectory.path)) ?? []
        return names.sorted().map { quarantineDirectory.appendingPathComponent($0) }
    }

    // MARK: - Tidying

    private func reportFiles() -> [(name: String, url: URL)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") && Self.looksLikeReport($0) }.sorted()
            .map { ($0, directory.appendingPathComponent($0)) }
    }

    static func looksLikeReport(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return bytes.count > 17 && bytes[16] == UInt8(ascii: "-")
            && bytes[..<16].allSatisfy { $0 >= 48 && $0 <= 57 }
    }

    private func quarantineInterruptedLoads() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasSuffix(".json.attempts") {
            let attempts = directory.appendingPathComponent(name)
            let report = directory.appendingPathComponent(String(name.dropLast(".attempts".count)))
            guard FileManager.default.fileExists(atPath: report.path) else {
                try? FileManager.default.removeItem(at: attempts)
                continue
            }
            guard Self.attemptCount(attempts) >= Self.maximumLoadAttempts else { continue }
            try? FileManager.default.createDirectory(
                at: quarantineDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            _ = rename(report.path, quarantineDirectory.appendingPathComponent(report.lastPathComponent).path)
            try? FileManager.default.removeItem(at: attempts)
        }
        let kept = quarantinedReports()
        for url in kept.dropLast(Self.maximumQuarantined) { try? FileManager.default.removeItem(at: url) }
    }

    private func salvageTornFiles() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasSuffix(".tmp") && Self.looksLikeReport(name) {
            let url = directory.appendingPathComponent(name)
            if isBeingWritten(name: name, url: url) { continue }
            defer { try? FileManager.default.removeItem(at: url) }
            guard let data = try? Data(contentsOf: url), let repaired = CrashReportSalvager.repair(data),
                var report = try? CrashReport.decode(repaired.json)
            else { continue }
            report.complete = false
            report.recrashSignal = repaired.recrashSignal ?? report.recrashSignal
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            guard let encoded = try? encoder.encode(report) else { continue }
            let target = directory.appendingPathComponent(String(name.dropLast(4)) + ".json")
            let staging = directory.appendingPathComponent(".salvage-\(name)")
            if (try? encoded.write(to: staging)) != nil { _ = rename(staging.path, target.path) }
        }
    }

    /// A `.tmp` of a process that is still alive — this one included: a thread of a crashing process may still
    /// run while the handler writes — and was written in the last seconds is left alone.
    private func isBeingWritten(name: String, url: URL) -> Bool {
        let parts = name.split(separator: "-")
        guard parts.count > 2, let pid = Int32(parts[1]), kill(pid, 0) == 0 else { return false }
        let modified = (try? FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate]) as? Date
        return (modified ?? .distantPast).timeIntervalSinceNow > -10
    }

    /// Serializes tidying between processes sharing the directory (flock on `.lock`).
    private func withDirectoryLock<T>(_ body: () -> T) -> T {
        let fd = open(
            directory.appendingPathComponent(".lock").path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return body() }
        defer { close(fd) }
        flock(fd, LOCK_EX)
        defer { flock(fd, LOCK_UN) }
        return body()
    }
}
