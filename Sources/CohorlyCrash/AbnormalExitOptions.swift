/// Abnormal-exit detection: a launch that ends without a normal exit or a reported crash (SIGKILL, the OOM
/// killer, a power loss) is reported by the next launch as a fatal `$exception` with mechanism `abnormal_exit`.
public struct AbnormalExitOptions: Sendable, Equatable {
    /// Whether launches are marked and markers left behind reported (default true).
    public var enabled: Bool
    /// How often this launch's resident memory is written into its marker, for the event's
    /// `$exception_last_rss_bytes` (default 10 s; at least 1 ms).
    public var memorySampleInterval: Duration

    /// Detection on, memory sampled every 10 s.
    public static let `default` = AbnormalExitOptions()

    /// Options with the defaults documented on each property.
    public init(enabled: Bool = true, memorySampleInterval: Duration = .seconds(10)) {
        self.enabled = enabled
        self.memorySampleInterval = memorySampleInterval
    }
}
