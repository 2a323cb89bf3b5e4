import Cohorly
import CohorlyCrashModel
import CohorlySQLite
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// What the collector answers about Sentry crashes, held against the answers it gave before Sentry events were
/// decoded straight into the crash model (fixtures/collector/sentry-answers): the Sentry fixtures the tests send
/// (the Sentry destination's crash, its typed breadcrumbs, another SDK's chained crash with every member a frame,
/// a mechanism and a breadcrumb may have) posted as envelopes, then `GET /api/events`, `GET /api/crashes`, each
/// `GET /api/crashes/<id>`, `GET /api/issues`, each `GET /api/issues/<id>` and `cohorly crashes show <id>` compared
/// byte for byte but for what depends on when the test runs (``timeless(_:)``). `COHORLY_RECORD_ANSWERS=1` writes them
/// instead (only when a difference is meant: say which in the commit).
@Suite struct SentryAnswerGoldenTests {
    typealias E = SentryEnvelopes
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures/collector/sentry-answers")
    static let recording = ProcessInfo.processInfo.environment["COHORLY_RECORD_ANSWERS"] == "1"

    /// The events posted, by event id (hex, as Sentry sends it).
    static var events: [(id: String, event: CohorlyValue)] {
        var typed = E.crashEvent(eventId: "c0000000000040008000000000000002").objectValue ?? [:]
        typed["breadcrumbs"] = E.typedBreadcrumbs
        return [
            ("c0000000000040008000000000000001", E.crashEvent(eventId: "c0000000000040008000000000000001")),
            ("c0000000000040008000000000000002", .object(typed)),
            ("c0000000000040008000000000000003", E.chainedCrashEvent(eventId: "c0000000000040008000000000000003")),
        ]
    }

    /// `8-4-4-4-12` of a hex event id.
    static func dashed(_ hex: String) -> String {
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }

    /// `answer` without what depends on when it was given: `received_at` as 0, `per_day` (counts back from today)
    /// empty, the text's `Received:` line as `-`.
    static func timeless(_ answer: String) -> String {
        answer.replacing(/"received_at":[0-9]+/, with: "\"received_at\":0")
            .replacing(/"per_day":\[[0-9,]*\]/, with: "\"per_day\":[]")
            .replacing(/\nReceived: [^\n]*/, with: "\nReceived: -")
    }

    @Test func theCollectorAnswersAboutSentryCrashesAsBefore() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        for (id, event) in Self.events {
            let envelope = E.envelope(["event_id": .string(id)], [("event", E.json(event))])
            let reply = sendBytes(collector, E.path, body: envelope, headers: E.headers())
            #expect(reply.status == 200, "\(reply.text)")
        }
        var answers: [(name: String, text: String)] = []
        func answer(_ name: String, _ path: String) {
            let reply = send(collector, "GET", path, headers: [])
            #expect(reply.status == 200, "\(path): \(reply.text)")
            answers.append((name, Self.timeless(reply.text)))
        }
        answer("events.json", "/api/events?limit=1000")
        answer("crashes.json", "/api/crashes?limit=1000")
        for (id, _) in Self.events { answer("crash-\(Self.dashed(id)).json", "/api/crashes/\(Self.dashed(id))") }
        answer("issues.json", "/api/issues?limit=1000")
        let issues = send(collector, "GET", "/api/issues?limit=1000", headers: []).body?["issues"]?.arrayValue ?? []
        #expect(issues.count == 2)
        for issue in issues {
            let id = issue["id"]?.intValue ?? 0
            answer("issue-\(id).json", "/api/issues/\(id)")
        }
        for (id, _) in Self.events {
            let shown = try await CLITests.run(
                ["crashes", "show", Self.dashed(id), "--host", collector.baseURL.absoluteString],
                environment: ["NO_COLOR": "1"])
            #expect(shown.status == 0, "\(shown.error)")
            answers.append(("crashes-show-\(Self.dashed(id)).txt", Self.timeless(shown.output)))
        }
        if Self.recording {
            try FileManager.default.createDirectory(at: Self.fixture, withIntermediateDirectories: true)
            for (name, text) in answers {
                try Data(text.utf8).write(to: Self.fixture.appendingPathComponent(name))
            }
            return
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.fixture.path).sorted()
        #expect(files == answers.map(\.name).sorted())
        for (name, text) in answers {
            let want = try String(contentsOf: Self.fixture.appendingPathComponent(name), encoding: .utf8)
            #expect(text == want, "\(name)")
        }
    }
}

/// A Sentry crash is stored as its model: the `properties` column, read over SQLite, holds no copy of the
/// exception list, the threads or the breadcrumbs (the model renders them back as they arrived).
@Suite struct SentryStoredModelTests {
    @Test func aSentryCrashsPropertiesColumnHoldsNoCopyOfWhatTheModelSays() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let collector = try startCollector { $0.dataDirectory = directory }
        defer { collector.stop() }
        for (id, event) in SentryAnswerGoldenTests.events {
            let envelope = SentryEnvelopes.envelope(["event_id": .string(id)], [("event", SentryEnvelopes.json(event))])
            #expect(
                sendBytes(collector, SentryEnvelopes.path, body: envelope, headers: SentryEnvelopes.headers()).status
                    == 200)
        }
        let database = try SQLiteDatabase(path: directory.appendingPathComponent("collector.sqlite").path)
        var rows = 0
        try database.prepare("SELECT properties FROM events WHERE event = '$exception'").rows { row in
            rows += 1
            let properties = JSONValue(json: row.text(0) ?? "")?.objectValue ?? [:]
            for member in [
                CapturedException.exceptionListProperty, CapturedException.threadsProperty,
                CapturedException.breadcrumbsProperty,
            ] {
                #expect(properties[member] == nil, "\(member): \(row.text(0) ?? "")")
            }
            return true
        }
        #expect(rows == SentryAnswerGoldenTests.events.count)
    }

    /// A `crash` column as the collector wrote it before the model held the list, threads and breadcrumbs whole
    /// (the earlier reader's model: entries of `type`, `value` and `mechanism.type` only, breadcrumbs without
    /// `type` or `level` left among its properties; the list and threads kept verbatim in `properties`) reads as
    /// it was written: the same properties, member for member, and the same list.
    @Test func aColumnWrittenBeforeTheModelHeldTheListWholeReadsAsWritten() throws {
        let answers = try String(
            contentsOf: SentryAnswerGoldenTests.fixture.appendingPathComponent("events.json"), encoding: .utf8)
        let events = JSONValue(json: answers)?["events"]?.arrayValue ?? []
        #expect(events.count == 3)
        for event in events {
            let properties = try #require(event["properties"])
            var earlier = CapturedException(exceptionEvent: properties)
            if earlier.breadcrumbDifferences != nil {
                earlier.properties[CapturedException.breadcrumbsProperty] =
                    properties[CapturedException.breadcrumbsProperty]
                earlier.breadcrumbs = []
                earlier.breadcrumbDifferences = nil
            }
            #expect(earlier.listedThreads == nil)
            let columns = StoredCrash.columns(earlier, properties: properties)
            let besides = JSONValue(json: columns.properties)?.objectValue ?? [:]
            #expect(besides[CapturedException.exceptionListProperty] != nil)
            #expect(StoredCrash.properties(crash: columns.crash, properties: columns.properties) == properties)
            let read = StoredCrash.crash(columns.crash, propertiesJSON: columns.properties)
            #expect(read?.exceptionList == earlier.exceptionList)
        }
    }
}
