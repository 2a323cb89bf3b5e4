import CohorlyClient
import Foundation

/// Sentry's rate limits per data category (docs/sentry.md "Answers"): from
/// `X-Sentry-Rate-Limits: <seconds>:<categories ;-separated>:<scope>[:reason], …` (on any answer, a 200 too), or
/// `Retry-After` on a 429 (all categories), or 60 s on everything for a 429 with neither. A limited category is
/// not sent until its time passes; the longer limit wins. Times are on the monotonic clock.
struct SentryRateLimits {
    /// Until when each category is limited (`""`: every category).
    private(set) var until: [String: Double] = [:]

    /// Takes the limits an answer carries (`headers` with lowercased names), at monotonic time `now`.
    mutating func update(status: Int?, headers: [String: String], retryAfter: Double?, now: Double) {
        if let header = headers["x-sentry-rate-limits"], !header.isEmpty {
            for limit in header.split(separator: ",") {
                let parts = limit.trimmingCharacters(in: .whitespaces).split(
                    separator: ":", omittingEmptySubsequences: false)
                guard let seconds = parts.first.flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }),
                    seconds.isFinite, seconds >= 0
                else { continue }
                let categories = parts.count > 1 ? parts[1].split(separator: ";").map(String.init) : []
                for category in categories.isEmpty ? [""] : categories { limitCategory(category, until: now + seconds) }
            }
        } else if status == 429 {
            limitCategory("", until: now + (retryAfter.flatMap { $0.isFinite ? max(0, $0) : nil } ?? 60))
        }
    }

    private mutating func limitCategory(_ category: String, until time: Double) {
        until[category] = max(until[category] ?? 0, time)
    }

    /// Seconds left on `category`'s limit at `now` (0: it may be sent).
    func remaining(_ category: String, now: Double) -> Double {
        max(0, max(until[category] ?? 0, until[""] ?? 0) - now)
    }
}
