import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// The rate limiter's memory: only addresses with requests inside the window are kept.
@Suite struct RateLimiterTests {
    @Test func addressesWhoseRequestsAllExpiredAreForgotten() {
        let limiter = RateLimiter(.init(requests: 2, window: 10))
        for index in 0..<10_000 {
            #expect(limiter.admit("10.0.\(index / 256).\(index % 256)", now: 1_000) == nil)
        }
        #expect(limiter.trackedAddresses == 10_000)
        #expect(limiter.admit("127.0.0.1", now: 1_011) == nil)
        #expect(limiter.trackedAddresses == 1)
    }

    @Test func forgettingKeepsEveryAddressStillInsideItsWindow() {
        let limiter = RateLimiter(.init(requests: 2, window: 10))
        #expect(limiter.admit("old", now: 1_000) == nil)
        #expect(limiter.admit("busy", now: 1_005) == nil)
        #expect(limiter.admit("busy", now: 1_006) == nil)
        // At 1,011 the sweep runs: "old" expired, "busy" is still at its limit until 1,015.
        #expect(limiter.admit("other", now: 1_011) == nil)
        #expect(limiter.trackedAddresses == 2)
        #expect(limiter.admit("busy", now: 1_011) == 4)
        #expect(limiter.admit("busy", now: 1_016) == nil)
    }
}
