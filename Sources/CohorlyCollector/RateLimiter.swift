import Foundation

/// Sliding-window request counting per client address.
final class RateLimiter: @unchecked Sendable {
    private let limit: CollectorConfiguration.RateLimit
    private let lock = NSLock()
    private var recent: [String: [Double]] = [:]

    init(_ limit: CollectorConfiguration.RateLimit) { self.limit = limit }

    /// Counts a request from `address` now; nil when allowed, else the seconds until one is allowed again.
    func admit(_ address: String, now: Double = Date().timeIntervalSince1970) -> Double? {
        lock.withLock {
            var times = recent[address, default: []].filter { $0 > now - limit.window }
            defer { recent[address] = times }
            guard times.count >= limit.requests, let oldest = times.first else {
                times.append(now)
                return nil
            }
            return max(0, oldest + limit.window - now)
        }
    }
}
