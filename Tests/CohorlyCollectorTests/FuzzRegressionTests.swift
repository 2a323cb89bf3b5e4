import Foundation
import Testing

@testable import CohorlyCollector

/// The `json` and `ingestion` fuzz targets' corpora (`fixtures/fuzz/<target>`: seeds and every `crash-*`
/// reproducer the fuzzer found) through the same entry points and checks as `Fuzz/<target>/main.swift`.
@Suite struct RequestFuzzRegressionTests {
    private static func corpus(_ target: String) throws -> [(name: String, bytes: [UInt8])] {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/fuzz/\(target)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        return try names.map { ($0, [UInt8](try Data(contentsOf: directory.appendingPathComponent($0)))) }
    }

    @Test func jsonCorpusRoundTrips() throws {
        let inputs = try Self.corpus("json")
        #expect(inputs.count >= 5)
        for (name, bytes) in inputs {
            let parsed = [JSONValue(bytes: bytes), JSONValue(json: String(decoding: bytes, as: UTF8.self))]
            for value in parsed.compactMap({ $0 }) {
                let text = value.jsonString
                let again = JSONValue(json: text)
                #expect(again == value, "\(name): write → parse changed the value: \(text)")
                #expect(again?.jsonString == text, "\(name): writing is not stable: \(text)")
            }
        }
    }

    @Test func ingestionCorpusGetsClearAnswers() throws {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["fuzz-token"]
        let ingestion = Ingestion(store: try CollectorStore(directory: nil), configuration: configuration)
        let inputs = try Self.corpus("ingestion")
        #expect(inputs.count >= 5)
        var accepted = 0
        for (name, body) in inputs {
            for (kind, path) in [(Ingestion.Kind.track, "/track"), (.engage, "/engage"), (.alias, "/alias")] {
                let request = HTTPRequest(
                    method: "POST", path: path,
                    headers: ["content-type": "application/json", "x-cohorly-token": "fuzz-token"], body: body)
                let response = ingestion.handle(kind, request)
                #expect(response.status < 500, "\(name) \(path): \(String(decoding: response.body, as: UTF8.self))")
                #expect(JSONValue(bytes: response.body) != nil, "\(name) \(path): non-JSON answer")
                if response.status == 200 { accepted += 1 }
                if kind == .track, response.status == 200, let document = JSONValue(bytes: body) {
                    for record in document.arrayValue ?? [document] {
                        if let properties = record["properties"] { _ = CrashQueries.input(from: properties) }
                    }
                }
            }
        }
        #expect(accepted >= 3)
    }
}
