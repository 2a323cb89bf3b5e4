import Foundation
import Testing

@testable import CohorlyCrash

/// The `report` fuzz target's corpus (`fixtures/fuzz/report`: seeds and every `crash-*` reproducer the fuzzer
/// found) through the same entry points and checks as `Fuzz/report/main.swift`.
@Suite struct ReportFuzzRegressionTests {
    private static func corpus(_ target: String) throws -> [(name: String, data: Data)] {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/fuzz/\(target)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        return try names.map { ($0, try Data(contentsOf: directory.appendingPathComponent($0))) }
    }

    /// UTF-8 JSON (JSONSerialization alone would also take UTF-16/32, guessed from NUL bytes).
    private static func isJSON(_ data: Data) -> Bool {
        !data.contains(0) && String(validating: Array(data), as: UTF8.self) != nil
            && (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil
    }

    @Test func reportCorpusDecodesAndSalvagesCleanly() throws {
        let inputs = try Self.corpus("report")
        #expect(inputs.count >= 10)
        for (name, data) in inputs {
            if var report = try? CrashReport.decode(data) {
                let encoded = Data(report.fileBytes)
                // Written as the current format whatever format it was read from.
                report.format = CrashReportFormat.current
                #expect(try CrashReport.decode(encoded) == report, "\(name): encode → decode changed the report")
            }
            if let repaired = CrashReportSalvager.repair(data) {
                _ = try? CrashReport.decode(repaired.json)
            }
            guard data.count > 1, Self.isJSON(data) else { continue }
            // Every prefix of a JSON document (a report cut short) repairs to JSON or to nothing (up to 400
            // prefixes per input, spread over it).
            for cut in stride(from: 1, to: data.count, by: max(1, data.count / 400)) {
                guard let repaired = CrashReportSalvager.repair(data.prefix(cut)) else { continue }
                #expect(
                    Self.isJSON(repaired.json),
                    "\(name): the first \(cut) bytes repaired to \(String(decoding: repaired.json, as: UTF8.self))")
            }
        }
    }

    /// The torn seeds are the salvager's real job: each repairs to JSON, and one cut after the header comes
    /// back as a report with its recorded recrash.
    @Test func tornSeedsAreSalvaged() throws {
        let inputs = try Self.corpus("report")
        for (name, data) in inputs where name.hasSuffix(".tmp") {
            let repaired = try #require(CrashReportSalvager.repair(data), "\(name)")
            #expect(Self.isJSON(repaired.json), "\(name)")
        }
        let recrash = try #require(inputs.first { $0.name == "seed-recrash.tmp" })
        let repaired = try #require(CrashReportSalvager.repair(recrash.data))
        #expect(repaired.recrashSignal == 11)
        #expect((try? CrashReport.decode(repaired.json))?.crashedThread != nil)
    }
}
