import Cohorly
import CohorlyCollector
import Foundation
import Testing

/// `cohorly crashes list --flag KEY[=VALUE]` and `GET /api/crashes?flag=` over crashes carrying the flags their
/// launch was served.
@Suite(.serialized) struct CrashFlagFilterTests {
    static func crash(_ id: String, _ flags: [String: CohorlyValue]) -> String {
        var event =
            CohorlyValue(
                json: CrashReadingCLITests.exception(insertId: id, time: 1_700_000_000_000, threadName: nil, value: id))?
            .objectValue ?? [:]
        var properties = event["properties"]?.objectValue ?? [:]
        for (key, value) in flags { properties["$feature/" + key] = value }
        properties["$active_feature_flags"] = .array(
            flags.filter { $0.value != false }.keys.sorted().map { .string($0) })
        event["properties"] = .object(properties)
        return CohorlyValue.object(event).jsonString
    }

    @Test func crashesAreFilteredByFlagAndVariant() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let batch = [
            Self.crash("c-test", ["checkout": "test", "beta": true]),
            Self.crash("c-control", ["checkout": "control", "beta": false]),
            Self.crash("c-none", [:]),
        ]
        #expect(send(collector, "/track", body: "[" + batch.joined(separator: ",") + "]").status == 200)
        func ids(_ flag: String) async throws -> [String] {
            let result = try await CLITests.run([
                "crashes", "list", "--host", collector.baseURL.absoluteString, "--flag", flag, "--json",
            ])
            #expect(result.status == 0, "\(result.error)")
            return CohorlyValue(json: result.output)?["crashes"]?.arrayValue?.compactMap {
                $0["insert_id"]?.stringValue
            } ?? []
        }
        #expect(try await ids("checkout") == ["c-control", "c-test"])
        #expect(try await ids("checkout=test") == ["c-test"])
        #expect(try await ids("beta") == ["c-test"])
        #expect(try await ids("beta=false") == ["c-control"])
        #expect(try await ids("nope").isEmpty)
        let text = try await CLITests.run([
            "crashes", "list", "--host", collector.baseURL.absoluteString, "--flag", "checkout=control",
        ])
        #expect(text.output.contains("c-control") && !text.output.contains("c-test"))
        #expect(
            try await CLITests.run(["crashes", "list", "--host", collector.baseURL.absoluteString, "--flag", "=x"])
                .status
                == 2)
        // The limit counts matching crashes.
        let limited = send(collector, "GET", "/api/crashes?flag=checkout&limit=1")
        #expect(limited.body?["crashes"]?.arrayValue?.count == 1)
    }
}
