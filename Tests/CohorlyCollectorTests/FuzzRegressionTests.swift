import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// The `json` and `ingestion` fuzz targets' corpora (`fixtures/fuzz/<target>`: seeds and every `crash-*`
/// reproducer the fuzzer found) through the same entry points and checks as `Fuzz/<target>/main.swift`.
@Suite struct RequestFuzzRegressionTests {
    private static func corpus(_ target: String) throws -> [(name: String, bytes: [UInt8])] {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("fixtures/fuzz/\(target)")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        return try names.map { ($0, [UInt8](try Data(contentsOf: directory.appendingPathComponent($0)))) }
    }

    /// Equal, with numbers compared by value (`.int(1)` and `.double(1.0)` agree).
    private static func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.int(let x), .double(let y)), (.double(let y), .int(let x)):
            // Foundation reads a number with a fraction as Int when a Double cannot hold the fraction (|value| ≥
            // 2^53); the same rule as Fuzz/json's oracle.
            return Double(x) == y || (abs(y) >= 0x1p53 && abs(Double(x) - y) <= y.ulp)
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.object(let x), .object(let y)):
            return x.count == y.count && x.allSatisfy { key, value in y[key].map { same(value, $0) } ?? false }
        default: return a == b
        }
    }

    @Test func jsonCorpusRoundTripsAndAgreesWithFoundation() throws {
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
            // Apart from surrogate escapes, the corpus has none of the fuzz target's intended differences
            // (lone surrogates, invalid UTF-8, duplicate keys): what we accept, Foundation reads the same.
            let text = String(decoding: bytes, as: UTF8.self).lowercased()
            let surrogates = ["\\ud8", "\\ud9", "\\uda", "\\udb", "\\udc", "\\udd", "\\ude", "\\udf"]
            guard let ours = JSONValue(bytes: bytes), !surrogates.contains(where: text.contains) else { continue }
            let theirs = try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
            #expect(theirs.map { Self.same(ours, $0) } == true, "\(name): \(ours.jsonString)")
        }
    }

    /// What the `json` target found (fixtures/fuzz/json/crash-*): trailing bytes after a document parsed as
    /// `null`; a high surrogate swallowed the `\u` escape after it; non-RFC 8259 numbers were accepted.
    @Test func jsonFuzzFindingsStayFixed() {
        for invalid in [
            "1f", "[1]x", "{} trailing", "\"a\" b", "+1", "01", "-01", "1.", ".5", "-", "1e", "1e+", "[-]",
            #""\ud800\uZZZZ""#,
        ] {
            #expect(JSONValue(json: invalid) == nil, "\(invalid)")
            #expect(JSONValue(bytes: Array(invalid.utf8)) == nil, "\(invalid)")
        }
        #expect(JSONValue(json: #"["\ud83d\u0041"]"#) == ["\u{FFFD}A"])
        #expect(JSONValue(json: #""\ud83d\ude00\ud800""#) == "\u{1F600}\u{FFFD}")
        #expect(JSONValue(json: "[0, -0, 10, -1.5e3, 2E-2, 0.25]") == [0, 0, 10, -1500.0, 0.02, 0.25])
        #expect(JSONValue(json: " null ") == .null)
    }

    /// A `/track` body with bytes after the JSON is invalid JSON, not a `null` record.
    @Test func trailingBytesAreInvalidJSON() throws {
        let ingestion = Ingestion(store: try CollectorStore(directory: nil), configuration: CollectorConfiguration())
        let request = HTTPRequest(
            method: "POST", path: "/track", headers: ["content-type": "application/json", "x-cohorly-token": "t"],
            body: Array(#"{"event":"a","properties":{"distinct_id":"u"}} trailing"#.utf8))
        let response = ingestion.handle(.track, request)
        #expect(response.status == 400)
        #expect(String(decoding: response.body, as: UTF8.self).contains("invalid json"))
    }

    @Test func ingestionCorpusGetsClearAnswers() throws {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["fuzz-token"]
        let ingestion = Ingestion(store: try CollectorStore(directory: nil), configuration: configuration)
        let inputs = try Self.corpus("ingestion")
        #expect(inputs.count >= 5)
        var accepted = 0
        let store = try CollectorStore(directory: nil)
        var guarded = configuration
        guarded.adminToken = "fuzz-secret"
        let router = Router(
            ingestion: Ingestion(store: store, configuration: guarded), store: store,
            debugFiles: try DebugFileStore(directory: nil), faults: FaultInjector(), configuration: guarded,
            rateLimiter: nil, wires: CollectorWires.all)
        var requests = 0
        for (name, body) in inputs {
            // A whole request (the attack seeds `request-*`): refused with a 4xx, except the one good request.
            if let request = HTTPRequest(raw: body) {
                requests += 1
                let response = router.answer(request, port: 4000)
                router.faults.clear()
                let status = response?.status ?? 0
                #expect(status < 500, "\(name): \(String(decoding: response?.body ?? [], as: UTF8.self))")
                #expect(
                    response.map { JSONValue(bytes: $0.body) != nil || Router.isWebPath(request.path) } ?? true,
                    "\(name): non-JSON answer")
                #expect(name.hasSuffix("-ok") ? status == 200 : (400..<500).contains(status), "\(name): \(status)")
                continue
            }
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
        #expect(requests >= 10)
    }
}
