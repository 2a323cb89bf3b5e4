import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlyPostHog

extension FlagClientSuites {
    /// PostHog's `POST /flags?v=2` (posthog.md part D) against a scripted transport.
    @Suite(.serialized) struct PostHogFlagsTests {
        static let v2 = #"""
            {"errorsWhileComputingFlags":false,"requestId":"req-1","evaluatedAt":1764500000000,
             "flags":{"checkout":{"key":"checkout","enabled":true,"variant":"test",
               "reason":{"code":"condition_match","condition_index":0,"description":"Matched condition set 1"},
               "metadata":{"id":42,"version":3,"payload":"{\"a\":1}"}},
              "off":{"key":"off","enabled":false,"variant":null,"reason":{"code":"no_condition_match"},
               "metadata":{"id":7,"version":1,"payload":null}}}}
            """#

        static func client(_ transport: FlagsTransport, geoip: Bool = false) throws -> Cohorly {
            var configuration = try PostHogConfiguration(host: "http://127.0.0.1:9/prefix", apiKey: "phc_key")
            configuration.disableGeoIP = geoip
            var options = testOptions(temporaryDirectory())
            options.transport = transport
            options.loadFeatureFlags = false
            return Cohorly(posthog: configuration, options: options)
        }

        @Test func theRequestCarriesPostHogsBodyAndNoAuthorization() async throws {
            let transport = FlagsTransport([FlagsTransport.answer(Self.v2)])
            let client = try Self.client(transport)
            defer { client.shutdown() }
            await client.reloadFeatureFlags()
            let sent = try #require(transport.flagsSent.first)
            #expect(sent.url.absoluteString == "http://127.0.0.1:9/prefix/flags?v=2")
            #expect(!sent.headers.contains { $0.0.lowercased() == "authorization" })
            let body = try #require(CohorlyValue(json: String(decoding: sent.body, as: UTF8.self))?.objectValue)
            #expect(body["token"] == "phc_key" && body["distinct_id"]?.stringValue == client.currentDistinctId)
            #expect(body["groups"] == [:] && body["group_properties"] == [:] && body["geoip_disable"] == false)
            let anonymous = client.state.withLock { $0.anonymousId }
            #expect(body["person_properties"] == ["$device_id": .string(anonymous)])
            #expect(body["flag_keys_to_evaluate"] == nil)
            // v2 parsed: variant, payload from metadata (JSON text), exposure properties.
            let details = client.getFeatureFlagDetails("checkout")
            #expect(details.value == "test" && details.payload == ["a": 1] && details.source == .network)
            #expect(client.getFeatureFlag("off") == false)
            let evaluated = try #require(
                {
                    if case .flags(let flags) = PostHogDestination.parseFlags(Array(Self.v2.utf8)) {
                        return flags
                    } else {
                        return nil
                    }
                }())
            #expect(
                evaluated["checkout"]?.exposureProperties == [
                    "$feature_flag_request_id": "req-1", "$feature_flag_evaluated_at": 1_764_500_000_000,
                    "$feature_flag_reason": "Matched condition set 1", "$feature_flag_id": 42,
                    "$feature_flag_version": 3,
                ])
        }

        @Test func geoipDisableFollowsTheConfiguration() async throws {
            let transport = FlagsTransport([FlagsTransport.answer(Self.v2)])
            let client = try Self.client(transport, geoip: true)
            defer { client.shutdown() }
            await client.reloadFeatureFlags()
            #expect(transport.flagsRequests.first?["geoip_disable"] == true)
        }

        @Test func theLegacyAnswerIsParsed() async throws {
            let legacy =
                #"{"featureFlags":{"checkout":"control","beta":true,"off":false},"featureFlagPayloads":{"beta":"{\"n\":2}","checkout":"plain"}}"#
            let transport = FlagsTransport([FlagsTransport.answer(legacy)])
            let client = try Self.client(transport)
            defer { client.shutdown() }
            await client.reloadFeatureFlags()
            #expect(client.getFeatureFlag("checkout") == "control")
            #expect(client.getFeatureFlagDetails("checkout").payload == "plain")
            #expect(client.isFeatureEnabled("beta") && client.getFeatureFlagDetails("beta").payload == ["n": 2])
            #expect(client.getFeatureFlag("off", fallback: true) == false)
        }

        @Test(arguments: [
            (TransportResponse.http(status: 502, retryAfter: nil, body: []), true),
            (.http(status: 504, retryAfter: nil, body: []), true),
            (.failure("Timeout was reached"), true),
            (.http(status: 500, retryAfter: nil, body: []), false),
            (.failure("Couldn't connect to server"), false),
        ])
        func oneRetryOn502504AndTimeouts(first: TransportResponse, retried: Bool) async throws {
            let transport = FlagsTransport([first, FlagsTransport.answer(Self.v2), FlagsTransport.answer(Self.v2)])
            let client = try Self.client(transport)
            defer { client.shutdown() }
            await client.reloadFeatureFlags()
            #expect(transport.flagsSent.count == (retried ? 2 : 1))
            #expect((client.getFeatureFlag("checkout") == "test") == retried)
            // Never more than one retry.
            transport.script([first])
            await client.reloadFeatureFlags()
            #expect(transport.flagsSent.count == (retried ? 4 : 2))
        }

        @Test func quotaLimitKeepsServingAndPartialAnswersMerge() async throws {
            let transport = FlagsTransport([
                FlagsTransport.answer(Self.v2),
                FlagsTransport.answer(#"{"flags":{},"quotaLimited":["feature_flags"]}"#),
                FlagsTransport.answer(
                    #"{"errorsWhileComputingFlags":true,"flags":{"new":{"key":"new","enabled":true}}}"#),
                FlagsTransport.answer(#"{"flags":{"only":{"key":"only","enabled":true}}}"#),
            ])
            let recorder = Recorder()
            var configuration = try PostHogConfiguration(host: "http://127.0.0.1:9", apiKey: "phc_key")
            configuration.disableGeoIP = false
            var options = testOptions(temporaryDirectory(), recorder: recorder)
            options.transport = transport
            options.loadFeatureFlags = false
            let client = Cohorly(posthog: configuration, options: options)
            defer { client.shutdown() }
            await client.reloadFeatureFlags()
            await client.reloadFeatureFlags()
            #expect(client.getFeatureFlag("checkout") == "test")
            #expect(recorder.lines.contains { $0.contains("quota limited") })
            await client.reloadFeatureFlags()
            #expect(client.getFeatureFlag("checkout") == "test" && client.isFeatureEnabled("new"))
            await client.reloadFeatureFlags()
            #expect(client.getFeatureFlag("checkout") == nil && client.isFeatureEnabled("only"))
        }

        @Test func malformedAnswersAreRefused() {
            for body in ["[]", "{}", #"{"flags":{"k":{"variant":"x"}}}"#, #"{"featureFlags":{"k":3}}"#, "\u{FF}"] {
                guard case .failure(let reason) = PostHogDestination.parseFlags(Array(body.utf8)) else {
                    Issue.record("accepted \(body)")
                    continue
                }
                #expect(reason.contains("malformed"))
            }
        }
    }
}
