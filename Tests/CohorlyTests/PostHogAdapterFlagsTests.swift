import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlyPostHog

extension FlagClientSuites {
    /// The compliance adapter's `/get_feature_flag` over the real client and a mock PostHog.
    @Suite(.serialized) struct PostHogAdapterFlagsTests {
        @Test func getFeatureFlagEvaluatesRemotelyAndCaptureNeverAsksForFlags() async throws {
            let mock = try MockPostHog()
            defer { mock.stop() }
            let adapter = try await PostHogAdapterTests.RunningAdapter()
            defer { adapter.stop() }
            #expect(
                await adapter.call(
                    "init", ["api_key": "phc_adapter", "host": .string(mock.url.absoluteString), "flush_at": 10]
                ).0
                    == 200)
            // A capture alone never causes a flags request.
            _ = await adapter.call("capture", ["distinct_id": "u1", "event": "one"])
            _ = await adapter.call("flush")
            #expect(mock.flagsRequests.isEmpty)

            mock.thenFlags(FlagClientSuites.PostHogFlagsTests.v2, FlagClientSuites.PostHogFlagsTests.v2)
            let ask: CohorlyValue = [
                "key": "checkout", "distinct_id": "u2", "person_properties": ["plan": "pro"],
                "groups": ["company": "c1"],
                "group_properties": ["company": ["size": 5]], "disable_geoip": true, "force_remote": true,
            ]
            let (status, answer) = await adapter.call("get_feature_flag", ask)
            #expect(status == 200 && answer == ["success": true, "value": "test"])
            let request = try #require(mock.flagsRequests.first)
            #expect(request.body?["distinct_id"] == "u2" && request.body?["token"] == "phc_adapter")
            #expect(
                request.body?["person_properties"]?["plan"] == "pro"
                    && request.body?["person_properties"]?["$device_id"] != nil)
            #expect(
                request.body?["groups"] == ["company": "c1"]
                    && request.body?["group_properties"] == ["company": ["size": 5]])
            #expect(request.body?["geoip_disable"] == true && request.body?["flag_keys_to_evaluate"] == ["checkout"])
            #expect(request.header("Authorization") == nil)
            // force_remote asks again every time; without it the answer is reused.
            _ = await adapter.call("get_feature_flag", ask)
            var reuse = ask.objectValue ?? [:]
            reuse["force_remote"] = false
            #expect(await adapter.call("get_feature_flag", .object(reuse)).1?["value"] == "test")
            #expect(mock.flagsRequests.count == 2)
            // An unknown flag is null.
            var unknown = ask.objectValue ?? [:]
            unknown["key"] = "nope"
            #expect(await adapter.call("get_feature_flag", .object(unknown)).1 == ["success": true, "value": nil])
            // The exposure went out once for (u2, checkout, test), with PostHog's properties.
            _ = await adapter.call("flush")
            let exposures = mock.requests.flatMap(\.batch).filter { $0["event"] == "$feature_flag_called" }
            #expect(exposures.count == 1)
            #expect(exposures.first?["distinct_id"] == "u2")
            #expect(exposures.first?["properties"]?["$feature_flag_response"] == "test")
            #expect(exposures.first?["properties"]?["$feature_flag_id"] == 42)
            #expect(exposures.first?["properties"]?["$feature_flag_request_id"] == "req-1")
            #expect(await adapter.call("get_feature_flag", ["distinct_id": "u"]).0 == 400)
        }
    }
}
