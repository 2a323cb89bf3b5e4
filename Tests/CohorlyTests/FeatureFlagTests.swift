import Foundation
import TestWaiting
import Testing

import Cohorly
@testable import CohorlyClient

extension FlagClientSuites {
    /// The flag API: reads, exposure dedupe, listeners, identity changes and the Cohorly `/flags/evaluate` wire
    /// against a scripted transport.
    @Suite(.serialized) struct FeatureFlagTests {
        @Test func networkAnswerServesValuesPayloadsAndOneExposurePerKeyValue() async throws {
            let transport = FlagsTransport([FlagsTransport.answer(networkAnswer)])
            let client = makeFlagsClient(transport)
            defer { client.shutdown() }
            #expect(client.getFeatureFlag("checkout", fallback: "control") == "control")
            await client.reloadFeatureFlags()
            #expect(client.getFeatureFlag("checkout", fallback: "control") == .variant("test"))
            #expect(client.getFeatureFlag("checkout") == .variant("test"))
            #expect(client.isFeatureEnabled("beta"))
            #expect(client.getFeatureFlag("beta") == .bool(true))
            #expect(client.getFeatureFlag("old", fallback: true) == .bool(false))
            #expect(!client.isFeatureEnabled("old", fallback: true))
            let details = client.getFeatureFlagDetails("checkout")
            #expect(details.source == .network && details.enabled && details.payload == ["color": "blue"])
            #expect(details.persistedAt == nil && details.ttlMs == nil)
            #expect(client.getFeatureFlagDetails("beta").payload == nil)  // `null` is no payload
            // Unknown key: the fallback, no exposure.
            let unknown = client.getFeatureFlagDetails("nope", fallback: "on")
            #expect(unknown.source == .fallback && unknown.value == "on" && unknown.enabled && unknown.payload == nil)
            #expect(!client.getFeatureFlagDetails("nope", fallback: false).enabled)
            #expect(client.getFeatureFlagDetails("nope").value == nil)
            #expect(!client.isFeatureEnabled("nope"))
            #expect(await client.flush())
            let exposures = transport.exposures
            #expect(exposures.count == 3)
            let byKey = Dictionary(uniqueKeysWithValues: exposures.map { ($0["$feature_flag"]?.stringValue ?? "", $0) })
            #expect(byKey["checkout"]?["$feature_flag_response"] == "test")
            #expect(byKey["beta"]?["$feature_flag_response"] == true)
            #expect(byKey["old"]?["$feature_flag_response"] == false)
            #expect(exposures.allSatisfy { $0["$feature_flag_source"] == "network" })
            #expect(exposures.allSatisfy { $0["$feature_flag_persisted_at"] == nil && $0["distinct_id"] != nil })
            // The request: the current identity, the token in its header.
            let request = try #require(transport.flagsRequests.first)
            #expect(request["distinct_id"]?.stringValue == client.currentDistinctId && request["flag_keys"] == nil)
            #expect(transport.flagsHeaders.first?.contains { $0 == ("X-Cohorly-Token", "test-token") } == true)
        }

        @Test func initializeEvaluatesUnlessOptedOut() throws {
            let loading = FlagsTransport([FlagsTransport.answer(networkAnswer)])
            let client = makeFlagsClient(loading, load: true)
            defer { client.shutdown() }
            flagsSettled(client)
            #expect(loading.flagsRequests.count == 1)
            #expect(client.getFeatureFlag("checkout") == "test")

            let quiet = FlagsTransport([FlagsTransport.answer(networkAnswer)])
            let other = makeFlagsClient(quiet, load: false)
            defer { other.shutdown() }
            flagsSettled(other)
            #expect(quiet.flagsRequests.isEmpty && other.getFeatureFlag("checkout") == nil)

            let shared = Cohorly.initialize(
                apiHost: URL(string: "http://127.0.0.1:9")!, storageDirectory: temporaryDirectory(), debug: false,
                loadFeatureFlags: false,
                options: {
                    var options = testOptions(temporaryDirectory()); options.transport = quiet; return options
                }())
            defer { shared.shutdown() }
            #expect(!shared.options.loadFeatureFlags)
            #expect(Cohorly.defaultFlagCacheTTL == 86_400 && Cohorly.flagCacheMaxStale == 604_800)
            #expect(CohorlyOptions().flagCacheTTL == 86_400)
            #expect(
                CohorlyOptions().flagPersistence == .persistenceUntilNetworkSuccess && CohorlyOptions().loadFeatureFlags
            )
        }

        @Test func identityChangesClearFirstNotifyEmptyThenTheNewFlags() async throws {
            let directory = temporaryDirectory()
            try seedFlagCache(directory, storedAt: TestClock().now)
            let transport = FlagsTransport([FlagsTransport.answer(networkAnswer)])
            let client = makeFlagsClient(transport, directory: directory)
            defer { client.shutdown() }
            #expect(client.getFeatureFlag("checkout") == "cached")
            let heard = Heard()
            client.onFeatureFlags { heard.add($0) }
            flagsSettled(client)
            #expect(heard.maps == [["checkout": "cached"]])
            // The first request is held so the clear is observed before the new identity's flags land.
            let gate = DispatchSemaphore(value: 0)
            transport.gate = gate
            client.identify("user-2")
            // Served nothing of the previous identity, at once.
            #expect(client.getFeatureFlag("checkout", fallback: "control") == "control")
            transport.arrived.wait()
            #expect(persistedFlagCache(client) == nil)
            #expect(heard.maps.last == [:])
            gate.signal()
            flagsSettled(client)
            #expect(heard.maps.count == 3 && heard.maps.last?["checkout"] == "test")
            #expect(transport.flagsRequests.last?["distinct_id"] == "user-2")
            #expect(persistedFlagCache(client)?["distinct_id"] == "user-2")
            // reset: the same again for a new anonymous id.
            let resetGate = DispatchSemaphore(value: 0)
            transport.gate = resetGate
            client.reset()
            #expect(client.getFeatureFlag("checkout") == nil)
            transport.arrived.wait()
            resetGate.signal()
            flagsSettled(client)
            #expect(heard.maps.suffix(2) == [[:], ["checkout": "test", "beta": true, "old": false]])
            #expect(transport.flagsRequests.last?["distinct_id"]?.stringValue == client.currentDistinctId)
        }

        @Test func anAnswerForAPreviousIdentityIsDropped() async throws {
            let transport = FlagsTransport([
                FlagsTransport.answer(#"{"flags":{"checkout":{"enabled":true,"variant":"old-user"}}}"#),
                FlagsTransport.answer(networkAnswer),
            ])
            let gate = DispatchSemaphore(value: 0)
            transport.gate = gate
            let client = makeFlagsClient(transport)
            defer { client.shutdown() }
            client.flags.reload()
            transport.arrived.wait()
            client.identify("user-2")
            gate.signal()
            gate.signal()
            flagsSettled(client)
            #expect(client.getFeatureFlag("checkout") == "test")
            #expect(persistedFlagCache(client)?["distinct_id"] == "user-2")
        }

        @Test func exposureOncePerKeyValuePerIdentityAcrossSources() async throws {
            let directory = temporaryDirectory()
            let clock = TestClock()
            try seedFlagCache(
                directory, storedAt: clock.now,
                flags: #"{"checkout":{"enabled":true,"variant":"test"},"beta":{"enabled":true,"variant":"a"}}"#)
            let transport = FlagsTransport([FlagsTransport.answer(networkAnswer)])
            let client = makeFlagsClient(transport, directory: directory, clock: clock)
            defer { client.shutdown() }
            #expect(client.getFeatureFlag("checkout") == "test")
            #expect(client.getFeatureFlag("beta") == "a")
            await client.reloadFeatureFlags()
            // Same value from the network: not reported again; a new value is.
            #expect(client.getFeatureFlag("checkout") == "test")
            #expect(client.getFeatureFlag("beta") == true)
            #expect(await client.flush())
            var exposures = transport.exposures
            #expect(
                exposures.map {
                    "\($0["$feature_flag"]?.stringValue ?? "")=\($0["$feature_flag_source"]?.stringValue ?? "")"
                } == ["checkout=persistence", "beta=persistence", "beta=network"])
            let persisted = exposures[0]
            #expect(persisted["$feature_flag_persisted_at"] == .int(Int(clock.now.timeIntervalSince1970 * 1000)))
            #expect(persisted["$feature_flag_ttl_ms"] == .int(86_400_000))
            // A new identity reports again.
            client.identify("user-9")
            flagsSettled(client)
            #expect(client.getFeatureFlag("checkout") == "test")
            #expect(await client.flush())
            exposures = transport.exposures.filter { $0["distinct_id"] == "user-9" }
            #expect(exposures.map { $0["$feature_flag"]?.stringValue } == ["checkout"], "\(transport.exposures)")
        }

        @Test func aMalformedAnswerKeepsTheCacheServingAndLogsWhy() async throws {
            let directory = temporaryDirectory()
            try seedFlagCache(directory, storedAt: TestClock().now)
            for body in [
                "not json", #"{"flags":[]}"#, #"{"flags":{"checkout":{"variant":"x"}}}"#,
                #"{"flags":{"checkout":{"enabled":true,"variant":7}}}"#,
            ] {
                let recorder = Recorder()
                let transport = FlagsTransport([FlagsTransport.answer(body)])
                let client = makeFlagsClient(transport, directory: directory, recorder: recorder)
                await client.reloadFeatureFlags()
                #expect(client.getFeatureFlagDetails("checkout").source == .persistence, "\(body)")
                #expect(
                    recorder.lines.contains { $0.contains("malformed answer") && $0.contains("still serving 1") },
                    "\(body)"
                )
                client.shutdown()
            }
        }

        @Test func aShutDownClientAndItsFlagStoreAreReleased() async throws {
            weak var released: FeatureFlagStore?
            do {
                let transport = FlagsTransport([FlagsTransport.answer(networkAnswer)])
                let client = makeFlagsClient(transport)
                await client.reloadFeatureFlags()
                client.identify("someone")
                flagsSettled(client)
                released = client.flags
                client.shutdown()
            }
            // The store holds the queue's database and the transport: nothing may keep it once the client is gone.
            #expect(await eventually { released == nil })
        }

        @Test func aDestinationWithoutFlagsServesFallbacks() async throws {
            final class NoFlags: Destination, @unchecked Sendable {
                let inner = CohorlyDestination(apiHost: URL(string: "http://127.0.0.1:9")!, token: nil)
                var persistedDescription: String? { nil }
                func requestLength(of batch: QueueBatch) -> Int { inner.requestLength(of: batch) }
                func deliver(_ batch: QueueBatch, context: DeliveryContext) -> BatchOutcome {
                    inner.deliver(batch, context: context)
                }
            }
            let recorder = Recorder()
            let transport = FlagsTransport([FlagsTransport.answer(networkAnswer)])
            var options = testOptions(temporaryDirectory(), recorder: recorder)
            options.transport = transport
            let client = Cohorly(apiHost: URL(string: "http://127.0.0.1:9")!, token: nil, options: options) { _ in
                NoFlags()
            }
            defer { client.shutdown() }
            await client.reloadFeatureFlags()
            #expect(transport.flagsRequests.isEmpty && client.getFeatureFlag("checkout", fallback: "x") == "x")
            #expect(recorder.lines.contains { $0.contains("cannot evaluate flags") })
        }
    }
}

/// What a flags listener heard, in order.
final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [[String: FeatureFlagValue]] = []
    var maps: [[String: FeatureFlagValue]] { lock.withLock { list } }
    func add(_ map: [String: FeatureFlagValue]) { lock.withLock { list.append(map) } }
}
