import Cohorly
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// `cohorly crashes list|show` and `events list` against a loopback collector: outside text escaped for the
/// terminal (JSON exact), times out of range shown as invalid, insert id prefixes, newest events first.
@Suite struct CrashReadingCLITests {
    static let hostile = "a\u{1b}[31mred\u{7}\rback"
    static let escaped = #"a\x1b[31mred\x07\rback"#

    static func exception(insertId: String, time: Int, threadName: String?, value: String) -> String {
        var properties: [String: CohorlyValue] = [
            "distinct_id": "user", "$insert_id": .string(insertId), "time": .int(time), "release": .string(hostile),
            "$exception_list": [
                [
                    "type": "Fatal error", "value": .string(value),
                    "mechanism": ["type": "swift", "handled": false],
                    "stacktrace": ["frames": [["instruction_addr": "0x1000"]]],
                ]
            ],
        ]
        if let threadName { properties["$exception_thread_name"] = .string(threadName) }
        return CohorlyValue.object(["event": "$exception", "properties": .object(properties)]).jsonString
    }

    static func noRawControls(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0.value == 0x1b || $0.value == 0x07 || $0.value == 0x0d }
    }

    @Test func crashesAreListedAndShownSafely() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let host = collector.baseURL.absoluteString
        let batch = [
            Self.exception(
                insertId: "abc11111-0000-4000-8000-000000000001", time: 1_700_000_000_000, threadName: Self.hostile,
                value: "boom " + Self.hostile),
            Self.exception(
                insertId: "abc22222-0000-4000-8000-000000000002", time: Int.min, threadName: nil, value: "second"),
        ]
        #expect(send(collector, "/track", body: "[" + batch.joined(separator: ",") + "]").status == 200)

        let list = try await CLITests.run(["crashes", "list", "--host", host])
        #expect(list.status == 0, "\(list.error)")
        #expect(Self.noRawControls(list.output))
        let rows = list.output.split(separator: "\n").map(String.init)
        #expect(rows.first?.contains("THREAD") == true)
        let first = try #require(rows.first { $0.contains("abc11111") })
        #expect(first.hasPrefix("2023-11-14T22:13:20.000Z"))
        #expect(first.contains(Self.escaped))  // release and thread name
        #expect(first.hasSuffix("Fatal error: boom " + Self.escaped))
        let second = try #require(rows.first { $0.contains("abc22222") })
        #expect(second.hasPrefix("invalid (-9223372036854775808)"))
        #expect(second.hasSuffix("Fatal error: second"))

        // JSON stays exact.
        let json = try await CLITests.run(["crashes", "list", "--host", host, "--json"])
        let crashes = try #require(CohorlyValue(json: json.output)?["crashes"]?.arrayValue)
        let exact = try #require(crashes.first { $0["insert_id"] == "abc11111-0000-4000-8000-000000000001" })
        #expect(exact["thread_name"]?.stringValue == Self.hostile)
        #expect(exact["reason"]?.stringValue == "Fatal error: boom " + Self.hostile)

        // A unique prefix is enough; the text is escaped, the thread name shown.
        let shown = try await CLITests.run(["crashes", "show", "abc1", "--host", host])
        #expect(shown.status == 0, "\(shown.error)")
        #expect(Self.noRawControls(shown.output))
        #expect(shown.output.hasPrefix("Crash: Fatal error: boom " + Self.escaped + "\n"))
        #expect(shown.output.contains("Insert id: abc11111-0000-4000-8000-000000000001\n"))
        #expect(shown.output.contains("Release: " + Self.escaped + "\n"))
        #expect(shown.output.contains("Thread ? \"" + Self.escaped + "\" crashed:"))
        let invalid = try await CLITests.run(["crashes", "show", "abc2", "--host", host])
        #expect(invalid.output.contains("Time: invalid (-9223372036854775808)\n"))

        // An ambiguous prefix is a clear error, an unknown one a 404.
        let ambiguous = try await CLITests.run(["crashes", "show", "abc", "--host", host])
        #expect(ambiguous.status == 1)
        #expect(
            ambiguous.error
                == "cohorly: \(host) answered 409: insert id prefix 'abc' is ambiguous: it matches "
                + "abc11111-0000-4000-8000-000000000001, abc22222-0000-4000-8000-000000000002\n")
        let unknown = try await CLITests.run(["crashes", "show", "fff", "--host", host])
        #expect(unknown.status == 1)
        #expect(unknown.error == "cohorly: \(host) answered 404: no crash with insert_id fff\n")
    }

    /// Ingestion accepts a `release`, `dist` or `$os` of any JSON type; `crashes show` shows it as its JSON text
    /// rather than failing with "unexpected answer" (issue 41, item 6).
    @Test func crashesShowReadsFieldsOfAnyTypeThatIngestionAccepted() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let host = collector.baseURL.absoluteString
        var properties: [String: CohorlyValue] = [
            "distinct_id": "user", "$insert_id": "def33333-0000-4000-8000-000000000003", "time": 1_700_000_000_000,
            "release": 42, "dist": ["build": 7], "$os": .array([.bool(true)]),
            "$exception_list": [
                [
                    "type": "Fatal error", "value": "typed",
                    "mechanism": ["type": "swift", "handled": false],
                    "stacktrace": ["frames": [["instruction_addr": "0x1000"]]],
                ]
            ],
        ]
        properties["$os_version"] = 12
        let body = CohorlyValue.object(["event": "$exception", "properties": .object(properties)]).jsonString
        #expect(send(collector, "/track", body: body).status == 200)

        let shown = try await CLITests.run(["crashes", "show", "def3", "--host", host])
        #expect(shown.status == 0, "\(shown.error)")
        #expect(shown.output.contains("Release: 42 ({\"build\":7})\n"), "\(shown.output)")
        #expect(shown.output.contains("OS: [true] 12 "), "\(shown.output)")
        #expect(shown.output.hasPrefix("Crash: Fatal error: typed\n"))
        let list = try await CLITests.run(["crashes", "list", "--host", host])
        #expect(list.status == 0, "\(list.error)")
    }

    /// An answer whose crash is not a crash names the field it could not read.
    @Test func anUnreadableAnswerNamesTheField() async throws {
        let server = try StaticAnswerServer(body: #"{"time": 1, "distinct_id": "u", "crash": {"threads": 5}}"#)
        defer { server.stop() }
        let shown = try await CLITests.run(["crashes", "show", "abc", "--host", server.url])
        #expect(shown.status == 1)
        #expect(shown.error.contains("unexpected answer from"), "\(shown.error)")
        #expect(shown.error.contains("(the field `crash"), "\(shown.error)")
    }

    @Test func eventsListShowsTheNewestFirstAndEscapesNames() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let host = collector.baseURL.absoluteString
        let events = (1...3).map { index in
            event("e\(index)", insertId: "id-\(index)", ["time": .int(1_700_000_000_000 + index)])
        }
        #expect(send(collector, "/track", body: "[" + events.joined(separator: ",") + "]").status == 200)
        #expect(
            send(collector, "/track", body: event(Self.hostile, insertId: "id-4", ["time": .int(Int.min)])).status
                == 200)

        let limited = try await CLITests.run(["events", "list", "--host", host, "--limit", "2"])
        #expect(limited.status == 0, "\(limited.error)")
        let rows = limited.output.split(separator: "\n").dropFirst().map(String.init)
        #expect(rows.count == 3)  // two events and the "showing 2 of 4" line
        #expect(rows[0].hasPrefix("invalid (-9223372036854775808)"))
        #expect(rows[0].contains(Self.escaped))
        #expect(rows[1].hasSuffix("id-3"))
        #expect(rows[2] == "(showing 2 of 4 events; use --limit or --json)")
        #expect(Self.noRawControls(limited.output))

        let json = try await CLITests.run(["events", "list", "--host", host, "--json", "--limit", "1"])
        #expect(CohorlyValue(json: json.output)?["events"]?.arrayValue?.first?["event"]?.stringValue == Self.hostile)
    }
}

/// A loopback server answering every request with one JSON body (status 200): a collector whose answer the CLI
/// cannot read.
final class StaticAnswerServer: @unchecked Sendable {
    private let server: HTTPServer
    let url: String

    init(body: String) throws {
        server = HTTPServer(maxBodyBytes: 1 << 20) { _ in HTTPResponse(status: 200, body: Array(body.utf8)) }
        let port = try server.start(address: "127.0.0.1", port: 0, memoryLimit: 64 << 10, timeout: 10, perClient: 16)
        url = "http://127.0.0.1:\(port)"
    }

    func stop() { server.stop() }
}
