import CohorlyCrash
import Foundation
import Testing

/// The report store and the recorder's pruning in a directory where someone planted directories, symlinks,
/// huge files, or that others can write to: nothing outside is read, written or removed; nothing that is not
/// a regular report file is deleted; nothing large is read whole.
@Suite("Report directory: symlinks, directories, huge files, unsafe modes")
struct ReportDirectorySafetyTests {
    static func name(_ index: Int) -> String {
        "000179600000\(String(format: "%04d", index))-4242-0b8e4a9c-6f0e-4f43-9d5e-2a1c3b4d5e6f.json"
    }

    static let report = Data(
        """
        {"format":"cohorly-crash/1","insert_id":"0b8e4a9c-6f0e-4f43-9d5e-2a1c3b4d5e6f","timestamp_ms":1796000000000,\
        "pid":4242,"executable":"/x","mechanism":"signal","signal":{"number":11,"name":"SIGSEGV","code":1,\
        "address":"0x0"},"stack_overflow":false,"crashed_thread":{"tid":4242,"name":"x","crashed":true,\
        "frames":["0x1"]},"context":{},"threads":[],"modules":[],"complete":true}
        """.utf8)

    static func privateDirectory(_ label: String) throws -> URL {
        let directory = try makeTemporaryDirectory(label)
        chmod(directory.path, 0o700)
        return directory
    }

    @Test func aDirectoryNamedLikeAReportIsNeverListedNorDeleted() throws {
        let directory = try Self.privateDirectory("store-dir-named-json")
        defer { try? FileManager.default.removeItem(at: directory) }
        let planted = directory.appendingPathComponent(Self.name(0))
        try FileManager.default.createDirectory(at: planted, withIntermediateDirectories: false)
        try Data("precious".utf8).write(to: planted.appendingPathComponent("keep.txt"))
        for index in 1...(CrashReportStore.maximumReports + 1) {
            try Self.report.write(to: directory.appendingPathComponent(Self.name(index)))
        }
        let store = CrashReportStore(directory: directory)
        let reports = store.pendingReports()
        #expect(reports.map(\.name) == (2...(CrashReportStore.maximumReports + 1)).map(Self.name))
        for file in reports { try store.delete(file) }
        #expect(FileManager.default.fileExists(atPath: planted.appendingPathComponent("keep.txt").path))
    }

    @Test func symlinksAreNeverFollowedOutOfTheDirectory() throws {
        let directory = try Self.privateDirectory("store-symlinks")
        let outside = try makeTemporaryDirectory("store-outside")
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(at: outside)
        }
        // A report that is a symlink to a file outside: not listed, the link and its target stay.
        let target = outside.appendingPathComponent("elsewhere.json")
        try Self.report.write(to: target)
        let link = directory.appendingPathComponent(Self.name(1))
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        // An attempts counter that is a symlink to a file outside: never written through.
        let victim = outside.appendingPathComponent("victim")
        try Data("keep".utf8).write(to: victim)
        try Self.report.write(to: directory.appendingPathComponent(Self.name(2)))
        try FileManager.default.createSymbolicLink(
            at: directory.appendingPathComponent(Self.name(2) + ".attempts"), withDestinationURL: victim)
        // A quarantine that is a symlink to a directory outside: nothing is moved there.
        try Self.report.write(to: directory.appendingPathComponent(Self.name(3)))
        try Data("3".utf8).write(to: directory.appendingPathComponent(Self.name(3) + ".attempts"))
        let outsideQuarantine = outside.appendingPathComponent("quarantine")
        try FileManager.default.createDirectory(at: outsideQuarantine, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(
            at: directory.appendingPathComponent("quarantine"), withDestinationURL: outsideQuarantine)

        let store = CrashReportStore(directory: directory)
        let reports = store.pendingReports()
        #expect(reports.map(\.name) == [Self.name(2)])
        _ = try store.load(try #require(reports.first))
        #expect(try Data(contentsOf: victim) == Data("keep".utf8))
        #expect(try Data(contentsOf: target) == Self.report)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == target.path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: outsideQuarantine.path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(Self.name(3)).path))
    }

    /// A 2 GiB file (sparse) named like a report is quarantined from its size: never listed, never read.
    @Test func aHugeReportIsQuarantinedWithoutBeingRead() throws {
        let directory = try Self.privateDirectory("store-huge")
        defer { try? FileManager.default.removeItem(at: directory) }
        let huge = directory.appendingPathComponent(Self.name(1))
        try Data().write(to: huge)
        #expect(truncate(huge.path, 2 << 30) == 0)
        try Self.report.write(to: directory.appendingPathComponent(Self.name(2)))
        let store = CrashReportStore(directory: directory)
        let reports = store.pendingReports()
        #expect(reports.map(\.name) == [Self.name(2)])
        #expect(store.quarantinedReports().map(\.lastPathComponent) == [Self.name(1)])
        // A report that grows past the cap after it was listed: refused by load, and quarantined too.
        let file = try #require(reports.first)
        #expect(truncate(file.url.path, 2 << 30) == 0)
        #expect(throws: CrashReportStore.ReportError.self) { try store.load(file) }
        #expect(store.quarantinedReports().map(\.lastPathComponent) == [Self.name(1), Self.name(2)])
        #expect(store.pendingReports().isEmpty)
    }

    @Test func aDirectoryOthersCanWriteIsNotUsed() throws {
        let directory = try makeTemporaryDirectory("store-unsafe")
        defer { try? FileManager.default.removeItem(at: directory) }
        chmod(directory.path, 0o777)
        let file = directory.appendingPathComponent(Self.name(1))
        try Self.report.write(to: file)
        #expect(CrashReportStore(directory: directory).pendingReports().isEmpty)
        #expect(FileManager.default.fileExists(atPath: file.path))
    }

    @Test func theRecorderRefusesAReportDirectoryOthersCanWrite() async throws {
        let directory = try makeTemporaryDirectory("recorder-unsafe")
        defer { try? FileManager.default.removeItem(at: directory) }
        chmod(directory.path, 0o777)
        let run = try await runCrashDemo(["crash", "fatal-error"], reportDirectory: directory, label: "unsafe")
        #expect(run.exitStatus == 1)
        #expect(run.stderr.contains("\(directory.path): group- or world-writable (mode 777)"), "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    /// The crash handler prunes old reports: a directory or symlink named like the oldest report is neither
    /// counted nor removed, and the oldest real report goes.
    @Test func theCrashHandlerPrunesOnlyRegularReports() async throws {
        let directory = try Self.privateDirectory("recorder-prune")
        let outside = try makeTemporaryDirectory("recorder-prune-outside")
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(at: outside)
        }
        let plantedDirectory = directory.appendingPathComponent(Self.name(0))
        try FileManager.default.createDirectory(at: plantedDirectory, withIntermediateDirectories: false)
        try Data("precious".utf8).write(to: plantedDirectory.appendingPathComponent("keep.txt"))
        let target = outside.appendingPathComponent("target")
        try Data("precious".utf8).write(to: target)
        let plantedLink = directory.appendingPathComponent(Self.name(1))
        try FileManager.default.createSymbolicLink(at: plantedLink, withDestinationURL: target)
        for index in 2..<(2 + CrashReportStore.maximumReports) {
            try Self.report.write(to: directory.appendingPathComponent(Self.name(index)))
        }
        let run = try await runCrashDemo(["crash", "fatal-error"], reportDirectory: directory, label: "prune")
        #expect(run.signal != nil)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let regular = names.filter {
            $0.hasSuffix(".json") && $0 != Self.name(0) && $0 != Self.name(1)
        }
        #expect(regular.count == CrashReportStore.maximumReports)
        #expect(!regular.contains(Self.name(2)))  // the oldest real report was dropped
        #expect(FileManager.default.fileExists(atPath: plantedDirectory.appendingPathComponent("keep.txt").path))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: plantedLink.path) == target.path)
        #expect(try Data(contentsOf: target) == Data("precious".utf8))
    }
}
