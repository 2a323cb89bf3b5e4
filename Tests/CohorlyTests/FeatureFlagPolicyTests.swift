import Foundation
import Testing

import Cohorly
@testable import CohorlyClient

extension FlagClientSuites {
    /// Every row of the seed's `flagPersistence` table, the TTL / max-stale edges on an injected clock and the
    /// legacy-cache rule.
    @Suite(.serialized) struct FeatureFlagPolicyTests {
        static let failing = TransportResponse.failure("connection refused")
        static let hour: TimeInterval = 3600

        // .networkOnly

        @Test func networkOnlyNeverReadsTheCacheAndAFailureServesTheFallback() async throws {
            let directory = temporaryDirectory()
            let clock = TestClock()
            try seedFlagCache(directory, storedAt: clock.now)
            let transport = FlagsTransport([Self.failing])
            let client = makeFlagsClient(transport, directory: directory, clock: clock, policy: .networkOnly)
            defer { client.shutdown() }
            #expect(client.getFeatureFlagDetails("checkout", fallback: "control").source == .fallback)
            await client.reloadFeatureFlags()
            #expect(client.getFeatureFlag("checkout", fallback: "control") == "control")
            #expect(await client.flush() && transport.exposures.isEmpty)
        }

        @Test func networkOnlyServesThisSessionsAnswerAndNeverWritesTheCache() async throws {
            let directory = temporaryDirectory()
            let clock = TestClock()
            try seedFlagCache(directory, storedAt: clock.now)
            let transport = FlagsTransport([FlagsTransport.answer(networkAnswer)])
            let client = makeFlagsClient(transport, directory: directory, clock: clock, policy: .networkOnly)
            defer { client.shutdown() }
            let before = client.store.meta(FeatureFlagStore.metaKey)
            await client.reloadFeatureFlags()
            #expect(client.getFeatureFlagDetails("checkout").source == .network)
            #expect(client.getFeatureFlag("checkout") == "test")
            #expect(client.store.meta(FeatureFlagStore.metaKey) == before)
            // Identity changes still remove the cache (hygiene, not serving).
            client.identify("user-2")
            flagsSettled(client)
            #expect(persistedFlagCache(client) == nil)
        }

        // .networkFirst

        @Test func networkFirstServesAValidCacheThenDropsItPastTheTTL() async throws {
            let directory = temporaryDirectory()
            let clock = TestClock()
            try seedFlagCache(directory, storedAt: clock.now)
            clock.advance(23 * Self.hour)
            let transport = FlagsTransport([Self.failing])
            let client = makeFlagsClient(transport, directory: directory, clock: clock, policy: .networkFirst)
            defer { client.shutdown() }
            let details = client.getFeatureFlagDetails("checkout")
            #expect(details.source == .persistence && details.value == "cached")
            #expect(details.persistedAt == Date(timeIntervalSince1970: 1_800_000_000) && details.ttlMs == 86_400_000)
            // A failed evaluation keeps a valid cache serving.
            await client.reloadFeatureFlags()
            #expect(client.getFeatureFlag("checkout") == "cached")
            // Exactly at the TTL it still serves; a millisecond past it, never.
            clock.advance(Self.hour)
            #expect(client.getFeatureFlag("checkout") == "cached")
            clock.advance(0.001)
            #expect(client.getFeatureFlagDetails("checkout", fallback: "control").source == .fallback)
            #expect(client.getFeatureFlag("checkout", fallback: "control") == "control")
        }

        @Test func networkFirstDropsAnExpiredCacheAtStart() throws {
            let directory = temporaryDirectory()
            let clock = TestClock()
            try seedFlagCache(directory, storedAt: clock.now)
            clock.advance(25 * Self.hour)
            let client = makeFlagsClient(
                FlagsTransport([Self.failing]), directory: directory, clock: clock, policy: .networkFirst)
            defer { client.shutdown() }
            #expect(client.getFeatureFlag("checkout") == nil)
            #expect(persistedFlagCache(client) == nil)
        }

        @Test func networkFirstTakesTheNetworkAnswerAndPersistsIt() async throws {
            let directory = temporaryDirectory()
            let clock = TestClock()
            try seedFlagCache(directory, storedAt: clock.now)
            clock.advance(Self.hour)
            let transport = FlagsTransport([FlagsTransport.answer(networkAnswer)])
            let client = makeFlagsClient(transport, directory: directory, clock: clock, policy: .networkFirst)
            defer { client.shutdown() }
            #expect(client.getFeatureFlag("checkout") == "cached")
            await client.reloadFeatureFlags()
            #expect(client.getFeatureFlagDetails("checkout").source == .network)
            #expect(client.getFeatureFlag("checkout") == "test")
            let cache = try #require(persistedFlagCache(client))
            #expect(cache["stored_at"] == .int(Int(clock.now.timeIntervalSince1970 * 1000)))
            #expect(cache["distinct_id"] == "user-1")
            #expect(cache["flags"]?.objectValue?["checkout"]?.objectValue?["variant"] == "test")
        }

        // .persistenceUntilNetworkSuccess

        @Test func persistenceUntilNetworkSuccessServesAnExpiredCacheInsideMaxStale() async throws {
            let directory = temporaryDirectory()
            let clock = TestClock()
            try seedFlagCache(directory, storedAt: clock.now)
            clock.advance(3 * 24 * Self.hour)  // past the TTL, inside 7 days
            let transport = FlagsTransport([Self.failing])
            let client = makeFlagsClient(transport, directory: directory, clock: clock)
            defer { client.shutdown() }
            #expect(client.getFeatureFlagDetails("checkout").source == .persistence)
            // A failed evaluation keeps the cache serving.
            await client.reloadFeatureFlags()
            #expect(client.getFeatureFlag("checkout") == "cached")
            // Exactly at seven days it serves; past it, never.
            clock.advance(4 * 24 * Self.hour)
            #expect(client.getFeatureFlag("checkout") == "cached")
            clock.advance(0.001)
            #expect(client.getFeatureFlag("checkout", fallback: "control") == "control")
        }

        @Test func persistenceUntilNetworkSuccessDropsACacheBeyondMaxStaleAtStart() throws {
            let directory = temporaryDirectory()
            let clock = TestClock()
            try seedFlagCache(directory, storedAt: clock.now)
            clock.advance(8 * 24 * Self.hour)
            let client = makeFlagsClient(FlagsTransport([Self.failing]), directory: directory, clock: clock)
            defer { client.shutdown() }
            #expect(client.getFeatureFlag("checkout") == nil && persistedFlagCache(client) == nil)
        }

        @Test func persistenceUntilNetworkSuccessIsTakenOverByTheFirstNetworkSuccess() async throws {
            let directory = temporaryDirectory()
            let clock = TestClock()
            try seedFlagCache(directory, storedAt: clock.now)
            clock.advance(30 * Self.hour)
            let transport = FlagsTransport([FlagsTransport.answer(networkAnswer), Self.failing])
            let client = makeFlagsClient(transport, directory: directory, clock: clock)
            defer { client.shutdown() }
            #expect(client.getFeatureFlag("checkout") == "cached")
            await client.reloadFeatureFlags()
            #expect(client.getFeatureFlagDetails("checkout").source == .network)
            #expect(persistedFlagCache(client)?["stored_at"] == .int(Int(clock.now.timeIntervalSince1970 * 1000)))
            // A later failure keeps the network answer serving.
            await client.reloadFeatureFlags()
            #expect(client.getFeatureFlag("checkout") == "test")
            // The next launch serves the re-persisted cache.
            client.shutdown()
            let next = makeFlagsClient(FlagsTransport([Self.failing]), directory: directory, clock: clock)
            defer { next.shutdown() }
            #expect(next.getFeatureFlagDetails("checkout").source == .persistence)
            #expect(next.getFeatureFlag("beta") == true)
        }

        // The TTL is configurable.

        @Test func flagCacheTTLIsHonoured() throws {
            let directory = temporaryDirectory()
            let clock = TestClock()
            try seedFlagCache(directory, storedAt: clock.now)
            clock.advance(120)
            var options = testOptions(directory)
            options.transport = FlagsTransport([Self.failing])
            options.flagPersistence = .networkFirst
            options.flagCacheTTL = 60
            options.loadFeatureFlags = false
            options.flagClock = { clock.now }
            let client = Cohorly(apiHost: URL(string: "http://127.0.0.1:9")!, options: options)
            defer { client.shutdown() }
            #expect(client.getFeatureFlag("checkout") == nil)
        }

        // The legacy cache: no timestamp, served until a successful reload rewrites it.

        @Test(arguments: [FlagPersistence.networkFirst, .persistenceUntilNetworkSuccess])
        func aLegacyCacheServesUntilASuccessfulReloadRewritesIt(policy: FlagPersistence) async throws {
            let directory = temporaryDirectory()
            let clock = TestClock()
            try seedFlagCache(directory, storedAt: nil)
            clock.advance(365 * 24 * Self.hour)
            let transport = FlagsTransport([Self.failing, FlagsTransport.answer(networkAnswer)])
            let client = makeFlagsClient(transport, directory: directory, clock: clock, policy: policy)
            defer { client.shutdown() }
            let details = client.getFeatureFlagDetails("checkout")
            #expect(details.source == .persistence && details.value == "cached" && details.persistedAt == nil)
            await client.reloadFeatureFlags()
            #expect(client.getFeatureFlag("checkout") == "cached")
            #expect(persistedFlagCache(client)?["stored_at"] == nil)
            await client.reloadFeatureFlags()
            #expect(client.getFeatureFlag("checkout") == "test")
            #expect(persistedFlagCache(client)?["stored_at"] == .int(Int(clock.now.timeIntervalSince1970 * 1000)))
        }

        @Test func anotherIdentitysCacheIsNeverServed() throws {
            let directory = temporaryDirectory()
            try seedFlagCache(directory, distinctId: "user-1", storedAt: TestClock().now)
            // The identity moved on (another process) after the cache was written.
            let store = try SQLiteQueueStore(path: directory.appendingPathComponent("queue.sqlite").path)
            _ = try store.apply([.setMeta(MetaKey.distinctId, "user-7")], limit: 100)
            let client = makeFlagsClient(FlagsTransport([Self.failing]), directory: directory)
            defer { client.shutdown() }
            #expect(client.getFeatureFlag("checkout") == nil && persistedFlagCache(client) == nil)
        }
    }
}
