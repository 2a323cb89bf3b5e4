import CohorlyCollector
import Foundation
import Testing

import Cohorly
@testable import CohorlyClient

/// Property values from variables (`CohorlyPropertyValue`): what each Swift type becomes on the wire.
struct PropertyValueTests {
    @Test func variablesOfEveryKindArriveAsTheirJSONValues() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector)
        defer { client.shutdown() }
        let plan = "pro"
        let seats = 3
        let tags = ["a", "b"]
        let optionalString: String? = nil
        let at = Date(timeIntervalSince1970: 1_764_498_899.327)
        let id = UUID(uuidString: "7C4E0B1A-2F3D-4E5F-8A9B-0C1D2E3F4A5B") ?? UUID()
        let limits: [String: Int?] = ["max": 10, "min": nil]
        client.register(["tier": plan, "build": UInt16(7)])
        client.track(
            "Checkout",
            properties: [
                "plan": plan, "seats": seats, "at": at, "tags": tags, "extra": optionalString, "ratio": 0.25,
                "float": Float(0.1), "beta": true, "small": Int8(-3), "big": UInt64.max,
                "url": URL(string: "https://x.y/z?q=1"),
                "id": id, "limits": limits, "nested": [["k": [1, 2]]], "value": CohorlyValue.int(4),
                "mixed": CohorlyValue(object: ["plan": plan, "seats": seats]),
                "list": CohorlyValue(array: [plan, seats]),
                "bad": Double.nan,
            ])
        client.identify("user-9", set: ["plan": plan], setOnce: ["since": at])
        client.people.set(["plan": plan, "seats": seats])
        client.people.setOnce(["first": at])
        #expect(await client.flush())

        let properties = try #require(try storedProperties(collector, event: "Checkout").first)
        #expect(properties["plan"] == "pro")
        #expect(properties["seats"] == 3)
        #expect(properties["at"] == "2025-11-30T10:34:59.327Z")
        #expect(properties["tags"] == ["a", "b"])
        #expect(properties["extra"] == .null)
        #expect(properties["ratio"] == 0.25)
        #expect(properties["float"] == 0.1)
        #expect(properties["beta"] == true)
        #expect(properties["small"] == -3)
        #expect(properties["big"]?.doubleValue == 18_446_744_073_709_551_615.0)
        #expect(properties["url"] == "https://x.y/z?q=1")
        #expect(properties["id"] == "7c4e0b1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b")
        #expect(properties["limits"] == ["max": 10, "min": nil])
        #expect(properties["nested"] == [["k": [1, 2]]])
        #expect(properties["value"] == 4)
        #expect(properties["mixed"] == ["plan": "pro", "seats": 3])
        #expect(properties["list"] == ["pro", 3])
        #expect(properties["bad"] == .null)
        #expect(properties["tier"] == "pro")  // super properties from variables
        #expect(properties["build"] == 7)
        let operations = try collector.store.records(kind: "engage").compactMap { CohorlyValue(json: $0.json) }
        #expect(operations.compactMap { $0["$set"] } == [["plan": "pro"], ["plan": "pro", "seats": 3]])
        #expect(
            operations.compactMap { $0["$set_once"] } == [
                ["since": "2025-11-30T10:34:59.327Z"], ["first": "2025-11-30T10:34:59.327Z"],
            ])
    }

    @Test func literalsStillBuildCohorlyValues() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector)
        defer { client.shutdown() }
        let existing: Properties = ["a": 1]
        client.track(
            "Literal", properties: ["none": nil, "mixed": [1, "x"], "object": ["a": 1, "b": "c"], "n": .int(2)])
        client.track("Variable", properties: existing)
        #expect(await client.flush())
        let literal = try #require(try storedProperties(collector, event: "Literal").first)
        #expect(literal["none"] == .null)
        #expect(literal["mixed"] == [1, "x"])
        #expect(literal["object"] == ["a": 1, "b": "c"])
        #expect(literal["n"] == 2)
        #expect(try storedProperties(collector, event: "Variable").first?["a"] == 1)
    }

    @Test func conversionsNeverTrapAndStayJSON() {
        #expect(UInt64.max.cohorlyValue == .double(18_446_744_073_709_551_615.0))
        #expect(UInt64(Int64.max).cohorlyValue == .int(Int.max))
        #expect(UInt(Int.max).cohorlyValue == .int(Int.max))
        #expect(Int64.min.cohorlyValue == .int(Int.min))
        #expect(UInt8.max.cohorlyValue == 255)
        #expect(Double.infinity.cohorlyValue == .null)
        #expect((-Double.infinity).cohorlyValue == .null)
        #expect(Float.nan.cohorlyValue == .null)
        #expect(Float(0.1).cohorlyValue == 0.1)
        #expect(Float(3).cohorlyValue == 3.0)
        #expect(Date(timeIntervalSince1970: 0).cohorlyValue == "1970-01-01T00:00:00.000Z")
        #expect(Date(timeIntervalSince1970: -0.5).cohorlyValue == "1969-12-31T23:59:59.500Z")
        #expect(Date(timeIntervalSince1970: 1_764_498_899.9996).cohorlyValue == "2025-11-30T10:35:00.000Z")
        #expect(Date(timeIntervalSince1970: .infinity).cohorlyValue == .null)
        #expect(Date(timeIntervalSince1970: 1e300).cohorlyValue == .null)
        #expect(Date.distantFuture.cohorlyValue.stringValue?.hasPrefix("4001-01-01T00:00:00.000") == true)
        #expect(("ab".dropFirst()).cohorlyValue == "b")
        let nested: [String: [Int?]] = ["x": [1, nil]]
        #expect(nested.cohorlyValue == ["x": [1, nil]])
        #expect(
            CohorlyValue.object(["u": UInt64.max.cohorlyValue, "d": Double.nan.cohorlyValue]).jsonString
                .contains("\"d\":null"))
    }
}
