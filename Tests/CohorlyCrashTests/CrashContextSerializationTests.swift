import Cohorly
import Foundation
import Testing

@testable import CohorlyCrash

/// The context handed to the recorder: device facts, the app's fields, and the order in which collections
/// give way when it would pass CLY_MAX_CONTEXT.
@Suite struct CrashContextSerializationTests {
    @Test func carriesTheDeviceFactsAndTheAppsFields() throws {
        var context = CrashContext(release: "App@1.0 \"beta\"", dist: "7", distinctId: "u\n1")
        context.properties = ["plan": "pro"]
        context.superProperties = ["seats": 3]
        let text = context.serializedForCrash()
        let json = try #require(CohorlyValue(json: text), "\(text)")
        #expect(json["release"] == "App@1.0 \"beta\"" && json["dist"] == "7" && json["distinct_id"] == "u\n1")
        #expect(json["properties"] == ["plan": "pro"] && json["super_properties"] == ["seats": 3])
        #expect(json["$os"] == "Linux" && json["$lib"] == .string(AutomaticProperties.libraryName))
        #expect(json["$hostname"]?.stringValue?.isEmpty == false && json["$app_start_ms"]?.intValue != nil)
        // Without the optional fields: no member, empty collections.
        let bare = try #require(CohorlyValue(json: CrashContext().serializedForCrash()))
        #expect(bare["release"] == nil && bare["distinct_id"] == nil)
        #expect(bare["properties"] == [:] && bare["super_properties"] == [:])
    }

    @Test func propertiesGiveWayFirstThenSuperPropertiesAndFlags() throws {
        let big = String(repeating: "x", count: 9000)
        var context = CrashContext(release: "App@1", distinctId: "u", properties: ["big": big])
        context.superProperties = ["small": "kept"]
        context.featureFlags = ["beta": true]
        var json = try #require(CohorlyValue(json: context.serializedForCrash()))
        #expect(json["properties"] == [:] && json["super_properties"] == ["small": "kept"])
        #expect(json["$feature/beta"] == true && json["release"] == "App@1")

        context.superProperties = ["big": .string(big)]
        let text = context.serializedForCrash()
        #expect(text.utf8.count <= 8192)
        json = try #require(CohorlyValue(json: text))
        #expect(json["properties"] == [:] && json["super_properties"] == [:] && json["$feature/beta"] == nil)
        #expect(json["release"] == "App@1" && json["distinct_id"] == "u" && json["$os"] == "Linux")
    }
}
