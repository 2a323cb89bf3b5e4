extension CrashReport {
    /// The hang a process died in (a report of ``Mechanism/hang``, left by the hang watchdog).
    public struct Hang: Codable, Sendable, Equatable {
        /// What was blocked: `main thread`, or the name of a heartbeat or watched executor.
        public var subject: String
        /// `main_thread`, `thread` (a heartbeat) or `executor`.
        public var kind: String
        /// How long it had been blocked when the process was last seen alive, in milliseconds.
        public var durationMs: UInt64
        /// The threshold in force, in milliseconds.
        public var thresholdMs: UInt64

        /// A hang description.
        public init(subject: String, kind: String, durationMs: UInt64, thresholdMs: UInt64) {
            self.subject = subject
            self.kind = kind
            self.durationMs = durationMs
            self.thresholdMs = thresholdMs
        }

        enum CodingKeys: String, CodingKey {
            case subject, kind
            case durationMs = "duration_ms"
            case thresholdMs = "threshold_ms"
        }
    }
}
