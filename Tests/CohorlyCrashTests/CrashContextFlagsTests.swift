import Cohorly
import Foundation
import Testing

@testable import CohorlyCrash

/// The crash-time context carries the served feature flags, bounded.
@Suite(.serialized) struct CrashContextFlagsTests {
    @Test func servedFlagsBecomeActiveFlagsAndFeatureProperties() throws {
        var context = CrashContext(distinctId: "u")
        context.featureFlags = ["checkout": "test", "beta": true, "off": false, "empty": ""]
        let json = try #require(CohorlyValue(json: context.serializedForCrash()))
        #expect(json["$active_feature_flags"] == ["beta", "checkout"])
        #expect(json["$feature/checkout"] == "test" && json["$feature/beta"] == true && json["$feature/off"] == false)
        // Top-level context members become the $exception event's properties.
        let none = try #require(CohorlyValue(json: CrashContext(distinctId: "u").serializedForCrash()))
        #expect(none["$active_feature_flags"] == nil)
    }

    @Test func theExceptionEventCarriesThem() async throws {
        var report = try CrashReport.decode(try await CrashReportStoreTests.realReport())
        var context = CrashContext(distinctId: "u")
        context.featureFlags = ["checkout": "test", "beta": false]
        report.context = try #require(CohorlyValue(json: context.serializedForCrash())?.objectValue)
        let properties = ExceptionBuilder.contextProperties(report)
        #expect(properties["$active_feature_flags"] == ["checkout"])
        #expect(properties["$feature/checkout"] == "test" && properties["$feature/beta"] == false)
    }

    @Test func atMostFiftyFlagsAndTheContextStaysWithinItsLimit() throws {
        var context = CrashContext()
        for index in 0..<200 { context.featureFlags[String(format: "flag-%03d", index)] = true }
        let json = try #require(CohorlyValue(json: context.serializedForCrash()))
        #expect(json["$active_feature_flags"]?.arrayValue?.count == CrashContext.maxFeatureFlags)
        #expect(json["$feature/flag-049"] == true && json["$feature/flag-050"] == nil)
        // Huge variants: the flags are dropped rather than the context overflowing.
        for index in 0..<50 {
            context.featureFlags[String(format: "flag-%03d", index)] = .string(String(repeating: "v", count: 400))
        }
        let text = context.serializedForCrash()
        #expect(text.utf8.count <= 8192)
        #expect(CohorlyValue(json: text)?["$active_feature_flags"] == nil)
    }
}
