import Foundation

/// Sliding-window request counting per client address. A limit outside `RateLimit`'s ranges (built in code, not
/// parsed) is clamped into them.
final class RateLimiter: @unchecked Sendable {
    private let requests: Int
    private let window: Double
    private let lock = NSLock()
    private var recent: [String: [Double]] = [:]

    init(_ limit: CollectorConfiguration.RateLimit) {
        let ranges = CollectorConfiguration.RateLimit.self
        requests = min(max(limit.requests, ranges.requestRange.lowerBound), ranges.requestRange.upperBound)
        window =
            limit.window.isFinite
            ? min(max(limit.window, ranges.windowRange.lowerBound), ranges.windowRange.upperBound)
            : ranges.windowRange.upperBound
    }

    /// Counts a request from `address` now; nil when allowed, else the seconds until one is allowed again.
    func admit(_ address: String, now: Double = Date().timeIntervalSince1970) -> Double? {
        lock.withLock {
            var times = recent[address, default: []].filter { $0 > now - window }
            defer { recent[address] = times.isEmpty ? nil : times }
            guard times.count >= requests, let oldest = times.first else {
                times.append(now)
                return nil
            }
            return max(0, oldest + window - now)
        }
    }
}
