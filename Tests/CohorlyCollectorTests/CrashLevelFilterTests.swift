import Cohorly
import CohorlyCollector
import Foundation
import Testing

/// `cohorly crashes list` tells crashes from handled errors and hangs (LEVEL and MECHANISM columns) and
/// `--level` / `GET /api/crashes?level=` keeps one kind.
@Suite struct CrashLevelFilterTests {
    static func event(_ id: String, level: String?, mechanism: String, handled: Bool, time: Int) -> String {
        var properties: [String: CohorlyValue] = [
            "distinct_id": "user", "$insert_id": .string(id), "time": .int(time), "release": "app@1.0",
            "$exception_list": [
                [
                    "type": "Failure", "value": .string(id),
                    "mechanism": ["type": .string(mechanism), "handled": .bool(handled)],
                    "stacktrace": ["frames": [["instruction_addr": "0x1000"]]],
                ]
            ],
        ]
        if let level { properties["$exception_level"] = .string(level) }
        return CohorlyValue.object(["event": "$exception", "properties": .object(properties)]).jsonString
    }

    @Test func crashesAreToldFromHandledErrorsAndFilteredByLevel() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let host = collector.baseURL.absoluteString
        let batch = [
            Self.event("e-crash", level: "fatal", mechanism: "signal", handled: false, time: 1_700_000_000_000),
            Self.event("e-error", level: "error", mechanism: "generic", handled: true, time: 1_700_000_001_000),
            Self.event("e-hang", level: "error", mechanism: "hang", handled: true, time: 1_700_000_002_000),
            Self.event("e-exit", level: "fatal", mechanism: "abnormal_exit", handled: false, time: 1_700_000_003_000),
            Self.event("e-old", level: nil, mechanism: "signal", handled: false, time: 1_700_000_004_000),
        ]
        #expect(send(collector, "/track", body: "[" + batch.joined(separator: ",") + "]").status == 200)
        func ids(_ arguments: [String]) async throws -> [String] {
            let result = try await CLITests.run(["crashes", "list", "--host", host, "--json"] + arguments)
            #expect(result.status == 0, "\(result.error)")
            return CohorlyValue(json: result.output)?["crashes"]?.arrayValue?.compactMap {
                $0["insert_id"]?.stringValue
            } ?? []
        }
        #expect(try await ids([]) == ["e-old", "e-exit", "e-hang", "e-error", "e-crash"])
        #expect(try await ids(["--level", "fatal"]) == ["e-exit", "e-crash"])
        #expect(try await ids(["--level", "error"]) == ["e-hang", "e-error"])
        #expect(send(collector, "GET", "/api/crashes?level=warning").body?["crashes"]?.arrayValue?.isEmpty == true)
        // The limit counts matching events.
        let limited = send(collector, "GET", "/api/crashes?level=error&limit=1")
        #expect(limited.body?["crashes"]?.arrayValue?.map { $0["insert_id"] } == ["e-hang"])
        #expect(limited.body?["crashes"]?.arrayValue?.first?["level"] == "error")
        #expect(limited.body?["crashes"]?.arrayValue?.first?["mechanism"] == "hang")

        let text = try await CLITests.run(["crashes", "list", "--host", host])
        let rows = text.output.split(separator: "\n").map(String.init)
        let header = try #require(rows.first)
        #expect(header.hasPrefix("TIME (UTC)               LEVEL MECHANISM     RELEASE"))
        let hang = try #require(rows.first { $0.contains("e-hang") })
        #expect(hang.hasPrefix("2023-11-14T22:13:22.000Z error hang          app@1.0"))
        let old = try #require(rows.first { $0.contains("e-old") })
        #expect(old.hasPrefix("2023-11-14T22:13:24.000Z -     signal        app@1.0"))
        let empty = try await CLITests.run(["crashes", "list", "--host", host, "--level", ""])
        #expect(empty.status == 2)
        #expect(empty.error.contains("invalid --level '' (expected one of: fatal, error)"))
    }
}
