import CohorlyCrashModel
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// The crash list's TYPE, VALUE and MECHANISM come from the stored model (`CapturedException.exceptionList`),
/// which says what the event's list said: a `cxx` mechanism stays `cxx`, a missing list or entry shows nothing;
/// a `crash` column written before the model kept the list takes it from the event's properties.
@Suite struct CrashListFromModelTests {
    static func event(_ id: String, _ list: JSONValue?) -> JSONValue {
        var properties: [String: JSONValue] = [
            "distinct_id": "user", "$insert_id": .string(id), "time": 1_700_000_000_000, "$exception_level": "fatal",
        ]
        properties[CapturedException.exceptionListProperty] = list
        return ["event": "$exception", "properties": .object(properties)]
    }

    static let chained: JSONValue = [
        ["type": "std::runtime_error", "value": "boom", "mechanism": ["type": "cxx"]],
        ["type": "Inner", "value": "cause", "mechanism": ["type": "chained"]],
    ]

    @Test func theListShowsWhatTheEventListed() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let batch: JSONValue = [
            Self.event("e-cxx", Self.chained), Self.event("e-missing", nil), Self.event("e-empty", []),
            Self.event("e-bare", [["value": 3]]),
        ]
        #expect(send(collector, "/track", body: batch.jsonString).status == 200)
        let rows = send(collector, "GET", "/api/crashes").body?["crashes"]?.arrayValue ?? []
        func row(_ id: String) -> JSONValue? { rows.first { $0["insert_id"]?.stringValue == id } }
        #expect(row("e-cxx")?["mechanism"] == "cxx")
        #expect(row("e-cxx")?["type"] == "std::runtime_error")
        #expect(row("e-cxx")?["value"] == "boom")
        for id in ["e-missing", "e-empty"] {
            #expect(row(id)?["type"] == .null && row(id)?["mechanism"] == .null && row(id)?["value"] == .null)
        }
        #expect(row("e-bare")?["type"] == .null && row("e-bare")?["mechanism"] == .null)
        #expect(row("e-bare")?["value"] == 3)
    }

    @Test func aColumnWrittenBeforeTheListWasKeptReadsItFromTheProperties() throws {
        for list in [Self.chained, [], nil] as [JSONValue?] {
            let properties = try #require(Self.event("e1", list)["properties"])
            let crash = CapturedException(exceptionEvent: properties)
            let columns = StoredCrash.columns(crash, properties: properties)
            // Today's column holds the list.
            #expect(StoredCrash.crash(columns.crash)?.exceptionList == crash.exceptionList)
            // The column as an earlier collector wrote it: the same model without the list.
            var value = try #require(JSONValue(json: columns.crash)?.objectValue)
            var model = try #require(value["exception"]?.objectValue)
            model["exception_list"] = nil
            model["exception_list_missing"] = nil
            value["exception"] = .object(model)
            let old = JSONValue.object(value).jsonString
            #expect(StoredCrash.crash(old)?.exceptionList == .rendered)
            let readBack = try #require(StoredCrash.properties(crash: old, properties: columns.properties))
            #expect(
                StoredCrash.crash(old, propertiesJSON: readBack.jsonString)?.exceptionList == crash.exceptionList,
                "\(String(describing: list))")
        }
    }

    /// The crash-time facts, breadcrumbs and fingerprint an event sent are the model's own properties: stored
    /// with the model, nothing of them beside it, and read back as they arrived.
    @Test func crashTimeFactsAndBreadcrumbsAreStoredInTheModel() throws {
        var properties = try #require(Self.event("e1", Self.chained)["properties"]?.objectValue)
        let kept: [String: JSONValue] = [
            "$exception_pid": 4242, "$exception_fingerprint": ["checkout", "pay"],
            "$exception_breadcrumbs": [
                [
                    "timestamp": "2026-12-01T10:00:00.500Z", "type": "http", "level": "warning", "category": "net",
                    "message": "GET /pay", "data": ["status": 500],
                ]
            ],
        ]
        properties.merge(kept) { _, new in new }
        let event = JSONValue.object(properties)
        let columns = StoredCrash.columns(CapturedException(exceptionEvent: event), properties: event)
        let besides = try #require(JSONValue(json: columns.properties)?.objectValue)
        for key in kept.keys { #expect(besides[key] == nil, "\(key) kept beside the model") }
        #expect(StoredCrash.properties(crash: columns.crash, properties: columns.properties) == event)
    }
}
