import Foundation

/// How the client batches, persists and delivers. `CohorlyOptions.default` holds the documented defaults.
public struct CohorlyOptions: Sendable {
    /// Where the persisted queue and identity live. Default: `$XDG_STATE_HOME/cohorly` (or `~/.local/state/cohorly`).
    public var storageDirectory: URL?
    /// Seconds between automatic flushes. Default 5.
    public var flushInterval: Double = 5
    /// Queued events that trigger a flush before the interval ends. Default 20.
    public var flushAt: Int = 20
    /// Most records kept in the persisted queue; beyond it the oldest are dropped (and counted). Default 10,000.
    public var maxQueueSize: Int = 10_000
    /// Most records per request (the server accepts at most 500). Default 500.
    public var maxBatchSize: Int = 500
    /// Most bytes per request body (the server accepts at most 1 MB). Default 1,000,000.
    public var maxRequestBytes: Int = 1_000_000
    /// Log what is sent and why records are dropped (never the token). Default false.
    public var debug: Bool = false
    /// Where debug lines go (called on the client's background threads). Default: standard error, prefixed with
    /// `[Cohorly]`.
    public var logHandler: (@Sendable (String) -> Void)?
    /// Backoff and timeouts. Default: `RetryPolicy.default` (2 s doubling to 600 s, ±20 %).
    public var retry: RetryPolicy = .default
    /// The HTTP transport. Default: libcurl (`nil` chooses it).
    public var transport: (any Transport)?
    /// Evaluate feature flags when the client starts (`identify` and `reset` always do). Default true.
    public var loadFeatureFlags: Bool = true
    /// How flag reads use the persisted cache. Default `.persistenceUntilNetworkSuccess`.
    public var flagPersistence: FlagPersistence = .persistenceUntilNetworkSuccess
    /// How long a persisted flag cache counts as fresh, in seconds. Default `Cohorly.defaultFlagCacheTTL` (24 h).
    public var flagCacheTTL: TimeInterval = Cohorly.defaultFlagCacheTTL

    /// Whether a missing storage directory (and its parents) is created. `sendQueued` does not create one: a queue
    /// that was removed (its app's data deleted) is not made again by a sender that started before.
    var createsStorageDirectory = true
    /// Test hook: called after every delivery attempt with what was sent and decided.
    package var attemptObserver: (@Sendable (DeliveryAttempt) -> Void)?
    /// Test hook: the clock flag cache ages are measured with.
    var flagClock: @Sendable () -> Date = { Date() }
    /// Test hook: how long the exit hook lets the exchange in flight end, in seconds (2: an exit must not hang on a
    /// slow server). A test app on a loaded machine waits longer, so that the answer it checks is taken whatever
    /// the load.
    package var exitExchangeWait: Double = 2

    /// The documented defaults.
    public static var `default`: CohorlyOptions { CohorlyOptions() }

    /// Options with the documented defaults.
    public init() {}
}

/// The shared Cohorly retry contract's timings, all injectable so tests run in seconds.
public struct RetryPolicy: Sendable {
    /// First backoff delay in seconds; it doubles with each consecutive failure. Default 2.
    public var baseDelay: Double = 2
    /// Longest backoff in seconds (also the 401 delay and the `Retry-After` cap). Default 600.
    public var maxDelay: Double = 600
    /// Relative jitter applied to computed delays (not to `Retry-After`). Default 0.2 (±20 %).
    public var jitter: Double = 0.2
    /// Whole-request timeout in seconds (sub-second values work). Default 30.
    public var requestTimeout: Double = 30
    /// Connection timeout in seconds. Default 10.
    public var connectTimeout: Double = 10
    /// Source of uniform numbers in [0, 1) for jitter. Default: the system generator.
    public var random: @Sendable () -> Double = { Double.random(in: 0..<1) }

    /// The contract's defaults.
    public static var `default`: RetryPolicy { RetryPolicy() }

    /// A policy with the contract's defaults.
    public init() {}

    /// The delay after `failures` consecutive failures: `min(base * 2^(n-1), max)` with ±jitter, capped at max.
    public func delay(afterFailures failures: Int) -> Double {
        let exponent = Double(max(0, min(failures - 1, 60)))
        let capped = min(baseDelay * pow(2, exponent), maxDelay)
        let jittered = capped * (1 + jitter * (2 * random() - 1))
        return max(0, min(jittered, maxDelay))
    }

    /// The delay a `Retry-After` answer asks for, capped at `maxDelay`, without jitter.
    public func delay(retryAfter seconds: Double) -> Double {
        max(0, min(seconds, maxDelay))
    }
}
