import Foundation

/// Sliding-window request counting per client address. A limit outside `RateLimit`'s ranges (built in code, not
/// parsed) is clamped into them.
///
/// Memory is bounded by the requests of the last window: once per window the addresses whose requests have all
/// expired are forgotten (the table is rebuilt, so its storage shrinks too). Without that, every address that
/// ever sent a request kept an entry for the collector's lifetime (~84 bytes each, `scripts/bench-serve-memory`).
package final class RateLimiter: @unchecked Sendable {
    private let requests: Int
    private let window: Double
    private let lock = NSLock()
    private var recent: [String: [Double]] = [:]
    /// When expired addresses were last forgotten.
    private var lastSweep = -Double.infinity

    init(_ limit: CollectorConfiguration.RateLimit) {
        let ranges = CollectorConfiguration.RateLimit.self
        requests = min(max(limit.requests, ranges.requestRange.lowerBound), ranges.requestRange.upperBound)
        window =
            limit.window.isFinite
            ? min(max(limit.window, ranges.windowRange.lowerBound), ranges.windowRange.upperBound)
            : ranges.windowRange.upperBound
    }

    /// Counts a request from `address` now; nil when allowed, else the seconds until one is allowed again.
    package func admit(_ address: String, now: Double = Date().timeIntervalSince1970) -> Double? {
        lock.withLock {
            if now - lastSweep >= window {
                recent = recent.filter { $0.value.last.map { $0 > now - window } ?? false }
                lastSweep = now
            }
            var times = recent[address, default: []].filter { $0 > now - window }
            defer { recent[address] = times.isEmpty ? nil : times }
            guard times.count >= requests, let oldest = times.first else {
                times.append(now)
                return nil
            }
            return max(0, oldest + window - now)
        }
    }

    /// How many client addresses it holds request times for.
    var trackedAddresses: Int { lock.withLock { recent.count } }
}
