import CohorlyCrash
import Foundation
import Testing

@Suite("CrashReportStore: salvage, quarantine, pruning, typed errors")
struct CrashReportStoreTests {
    /// A real report, written by a crashing CrashDemo (threads, context and modules included).
    static func realReport() async throws -> Data {
        let run = try await runCrashDemo(
            ["crash", "fatal-error", "--threads", "2"], label: "store-source")
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        return try Data(contentsOf: try #require(run.reportFiles.first))
    }

    static let name = "0001796000000000-2147483646-0b8e4a9c-6f0e-4f43-9d5e-2a1c3b4d5e6f"

    @Test func tornFilesAreSalvagedAsIncompleteOrKeptAsLostNeverACrash() async throws {
        let full = try await Self.realReport()
        let original = try CrashReport.decode(full)
        let directory = try makeTemporaryDirectory("salvage")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = CrashReportStore(directory: directory)
        var salvaged = 0
        // Every cut point in the header, then every 97th byte to the end.
        let cuts = Array(0..<min(400, full.count)) + Array(stride(from: 400, to: full.count, by: 97))
        for cut in cuts {
            let tmp = directory.appendingPathComponent(Self.name + ".tmp")
            try full.prefix(cut).write(to: tmp)
            let files = store.pendingReports()
            // Salvaged, or kept as a lost report (CohorlyCrash sends an event for it, then removes it).
            #expect(FileManager.default.fileExists(atPath: tmp.path) == files.isEmpty, "cut \(cut)")
            try? FileManager.default.removeItem(at: tmp)
            if let file = files.first {
                let report = try store.load(file)
                #expect(!report.complete)
                #expect(report.insertId == original.insertId)
                #expect(report.timestampMs == original.timestampMs)
                salvaged += 1
                try store.delete(file)
            }
            #expect(store.pendingReports().isEmpty)
        }
        // Once the header (through the pid) is there, a report is always salvaged.
        let headerEnd = try #require(String(decoding: full, as: UTF8.self).range(of: "\"executable\""))
        let headerLength = String(decoding: full, as: UTF8.self).utf8.distance(
            from: String(decoding: full, as: UTF8.self).startIndex, to: headerEnd.lowerBound)
        #expect(salvaged >= cuts.filter { $0 > headerLength }.count)
    }

    @Test func aReportCutAfterTheCrashedThreadKeepsItsFrames() async throws {
        let full = try await Self.realReport()
        let text = String(decoding: full, as: UTF8.self)
        let contextStart = try #require(text.range(of: ",\"context\""))
        let cut = text.utf8.distance(from: text.startIndex, to: contextStart.lowerBound) + 20
        let directory = try makeTemporaryDirectory("salvage-thread")
        defer { try? FileManager.default.removeItem(at: directory) }
        try full.prefix(cut).write(to: directory.appendingPathComponent(Self.name + ".tmp"))
        let store = CrashReportStore(directory: directory)
        let report = try store.load(try #require(store.pendingReports().first))
        let original = try CrashReport.decode(full)
        #expect(report.crashedThread == original.crashedThread)
        #expect(report.message == original.message)
        #expect(report.modules.isEmpty)
    }

    @Test func aFreshTmpOfALiveProcessIsLeftAloneItMayStillBeBeingWritten() throws {
        // A crashing process's own delivery thread may list the directory while the handler writes.
        let directory = try makeTemporaryDirectory("live-tmp")
        defer { try? FileManager.default.removeItem(at: directory) }
        let tmp = directory.appendingPathComponent(
            "0001796000000000-\(getpid())-0b8e4a9c-6f0e-4f43-9d5e-2a1c3b4d5e6f.tmp")
        try Data("{\"format\":\"cohorly-crash/1\",\"insert_id\":\"x\",\"timestamp_ms\":1,\"pid\":1,".utf8).write(
            to: tmp)
        #expect(CrashReportStore(directory: directory).pendingReports().isEmpty)
        #expect(FileManager.default.fileExists(atPath: tmp.path))
    }

    @Test func recrashMarkerIsKept() throws {
        let directory = try makeTemporaryDirectory("recrash")
        defer { try? FileManager.default.removeItem(at: directory) }
        let torn = """
            {"format":"cohorly-crash/1","insert_id":"0b8e4a9c-6f0e-4f43-9d5e-2a1c3b4d5e6f","timestamp_ms":1796000000000,\
            "pid":4242,"executable":"/x","mechanism":"signal","signal":{"number":11,"name":"SIGSEGV","code":1,"address":"0x0"},\
            "stack_overflow":false,"crashed_thread":{"tid":4242,"name":"x","crashed":true,"frames":["0x1","0x2
            #cohorly-recrash signal=11

            """
        try torn.write(
            to: directory.appendingPathComponent(Self.name + ".tmp"), atomically: true, encoding: .utf8)
        let store = CrashReportStore(directory: directory)
        let report = try store.load(try #require(store.pendingReports().first))
        #expect(report.recrashSignal == 11)
        #expect(report.crashedThread?.frames == [Frame(1, kind: .pc)])
        #expect(!report.complete)
    }

    @Test func aReportWhoseDecodingKeepsKillingTheProcessIsQuarantinedOnlyAfterThreeAttempts() async throws {
        let full = try await Self.realReport()
        let directory = try makeTemporaryDirectory("quarantine")
        defer { try? FileManager.default.removeItem(at: directory) }
        let report = directory.appendingPathComponent(Self.name + ".json")
        try full.write(to: report)
        let attempts = directory.appendingPathComponent(Self.name + ".json.attempts")
        let store = CrashReportStore(directory: directory)
        // What launches that died while decoding leave behind: one interrupted attempt is not enough…
        try Data("1".utf8).write(to: attempts)
        let file = try #require(store.pendingReports().first)
        // …and the count goes on while decoding, and is cleared once decoding returns.
        _ = try store.load(file)
        #expect(!FileManager.default.fileExists(atPath: attempts.path))
        // Three interrupted attempts: quarantined, never listed again.
        try Data("3".utf8).write(to: attempts)
        #expect(store.pendingReports().isEmpty)
        #expect(store.quarantinedReports().map(\.lastPathComponent) == [Self.name + ".json"])
        #expect(!FileManager.default.fileExists(atPath: attempts.path))
        #expect(store.pendingReports().isEmpty)
    }

    @Test func corruptAndForeignFilesGiveTypedErrorsNamingTheFile() throws {
        let directory = try makeTemporaryDirectory("corrupt")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases: [(String, String)] = [
            ("0001796000000001-1-a.json", "not json at all"),
            ("0001796000000002-1-b.json", "{\"format\":\"cohorly-crash/1\"}"),
            (
                "0001796000000003-1-c.json",
                "{\"format\":\"other/9\",\"insert_id\":\"x\",\"timestamp_ms\":1,\"pid\":1}"
            ),
            ("0001796000000004-1-d.json", "[1,2,3]"),
            ("0001796000000005-1-e.json", ""),
        ]
        for (name, text) in cases {
            try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let store = CrashReportStore(directory: directory)
        let files = store.pendingReports()
        #expect(files.count == cases.count)
        for file in files {
            #expect(throws: CrashReportStore.ReportError.self) { try store.load(file) }
            do {
                _ = try store.load(file)
            } catch {
                #expect("\(error)".contains(file.url.path))
            }
            // The file stays, and no interrupted attempt is left counted.
            #expect(FileManager.default.fileExists(atPath: file.url.path))
            #expect(!FileManager.default.fileExists(atPath: file.url.path + ".attempts"))
        }
        let foreign = files.first { $0.name.hasPrefix("0001796000000003") }
        #expect(
            throws: CrashReportStore.ReportError.unsupportedFormat(
                file: foreign?.url.path ?? "", format: "other/9")
        ) {
            try store.load(try #require(foreign))
        }
    }

    @Test func pruningKeepsTheNewestTen() throws {
        let directory = try makeTemporaryDirectory("prune")
        defer { try? FileManager.default.removeItem(at: directory) }
        for index in 0..<14 {
            let name = String(format: "%016d-1-x.json", 1_796_000_000_000 + index)
            try "{}".write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let files = CrashReportStore(directory: directory).pendingReports()
        #expect(files.count == 10)
        #expect(files.first?.name == String(format: "%016d-1-x.json", 1_796_000_000_004))
    }

    @Test func checkedInFixtureDecodes() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/reports/null-write.json")
        let report = try CrashReport.decode(Data(contentsOf: url))
        #expect(report.complete && report.signal.name == "SIGSEGV" && !report.modules.isEmpty)
        #expect(report.crashedThread?.registers?["rip"] == report.crashedThread?.frames.first?.address)
    }
}
