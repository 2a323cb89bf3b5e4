/// How handled errors (`cohorly.captureError`) are sent (``CohorlyCrash/Options/handledErrors``).
public struct HandledErrorOptions: Sendable, Equatable {
    /// Events sent per fingerprint (the error's type and the place it was captured) per ``window`` (default 10).
    /// Captures beyond it are dropped and counted; the next event of that fingerprint that is sent carries the
    /// count as `$exception_suppressed_count`. 0 sends none.
    public var maxPerFingerprint: Int
    /// The rate limit's window (default 60 s), starting at a fingerprint's first event sent in it.
    public var window: Duration
    /// How reports become events (symbolication on the device, in-app rules, size cap); nil (default) uses
    /// ``CohorlyCrash/Options/events``, or ``ExceptionEventOptions/default`` without `install`.
    public var events: ExceptionEventOptions?
    /// Whether every `throw` keeps its return addresses, so that a captured error's event shows where it was
    /// thrown (default true). Process-wide: the runtime's `_swift_willThrow` hook, installed by
    /// ``CohorlyCrash/install(cohorly:release:dist:version:options:)`` (or ``CohorlyCrash/recordThrowSites(_:)``)
    /// and chained to any hook installed before it; once installed, ``CohorlyCrash/setHandledErrorOptions(_:for:)``
    /// turns it off and on too (the last call decides). About 0.3 µs per throw (`scripts/bench-errors`); false costs nothing.
    public var throwSites: Bool

    /// Options with the documented defaults.
    public init(
        maxPerFingerprint: Int = 10, window: Duration = .seconds(60), events: ExceptionEventOptions? = nil,
        throwSites: Bool = true
    ) {
        self.maxPerFingerprint = maxPerFingerprint
        self.window = window
        self.events = events
        self.throwSites = throwSites
    }

    /// The defaults.
    public static let `default` = HandledErrorOptions()
}

/// Per fingerprint, at most `limit` events per window; counts what it turns away.
///
/// Fixed windows: a fingerprint's window opens at its first admitted event and lasts `window`; within it the
/// first `limit` captures are admitted and the rest counted; the first capture admitted afterwards carries that
/// count. At most ``capacity`` fingerprints are tracked: beyond it the one whose window opened first is
/// forgotten (its count with it). The clock is a parameter, so tests move time by hand.
struct HandledErrorRateLimiter {
    /// Fingerprints tracked at once.
    static let capacity = 1000

    /// What to do with one capture.
    enum Decision: Equatable {
        /// Send it, with the number of captures of its fingerprint suppressed since the last one sent.
        case send(suppressed: Int)
        /// Drop it (counted).
        case suppress
    }

    private struct Entry {
        var windowStart: ContinuousClock.Instant
        var sent: Int
        var suppressed: Int
    }

    var limit: Int
    var window: Duration
    private var entries: [String: Entry] = [:]

    init(limit: Int, window: Duration) {
        self.limit = limit
        self.window = window
    }

    /// Counts a capture of `fingerprint` at `now` and says whether to send it.
    mutating func admit(_ fingerprint: String, now: ContinuousClock.Instant) -> Decision {
        var entry = entries[fingerprint] ?? Entry(windowStart: now, sent: 0, suppressed: 0)
        if entries[fingerprint] == nil { makeRoom(now: now) }
        if now - entry.windowStart >= window {
            entry.windowStart = now
            entry.sent = 0
        }
        let decision: Decision
        if entry.sent < limit {
            if entry.sent == 0 { entry.windowStart = now }
            entry.sent += 1
            decision = .send(suppressed: entry.suppressed)
            entry.suppressed = 0
        } else {
            entry.suppressed += 1
            decision = .suppress
        }
        entries[fingerprint] = entry
        return decision
    }

    /// Before adding a fingerprint to a full table: forgets the ones whose window is over and that owe no count,
    /// then, if still full, the one whose window opened first.
    private mutating func makeRoom(now: ContinuousClock.Instant) {
        guard entries.count >= Self.capacity else { return }
        entries = entries.filter { now - $0.value.windowStart < window || $0.value.suppressed > 0 }
        if entries.count >= Self.capacity, let oldest = entries.min(by: { $0.value.windowStart < $1.value.windowStart })
        {
            entries[oldest.key] = nil
        }
    }
}
