import CohorlyClient

/// The attempt loop both PostHog capture wires share (capture V1 and the legacy `/batch`): at most
/// `maxRetries` + 1 attempts, the configured wait before each retry (cancelled when the client stops), and the
/// batch kept for the next flush when the last attempt still asked for a retry. Each wire's `exchange` sends one
/// attempt and says what its answer means.
extension PostHogDestination {
    /// What one attempt's answer means for the batch.
    enum AttemptStep {
        /// The batch is settled (delivered, dropped, halved, kept as a configuration problem): stop here.
        case done(BatchOutcome)
        /// Try again (408, 5xx, a transport error, `retry` results), waiting at least `retryAfter` seconds.
        case retry(reason: String, retryAfter: Double?)
    }

    /// Runs the attempts of one batch on `path`. `removable` says which records are finished so far and `kept`
    /// what stays queued (both read when the loop ends without a `done`).
    func attempting(
        path: String, context: DeliveryContext, removable: () -> [Int64], kept: () -> String,
        _ exchange: (_ attempt: Int) -> AttemptStep
    ) -> BatchOutcome {
        let attempts = max(0, configuration.maxRetries) + 1
        var lastReason = ""
        for attempt in 1...attempts {
            switch exchange(attempt) {
            case .done(let outcome):
                return outcome
            case .retry(let reason, let retryAfter):
                lastReason = reason
                if attempt < attempts {
                    let delay = configuration.delay(afterAttempt: attempt, retryAfter: retryAfter)
                    guard context.wait(delay) else { return .cancelled(removable: removable()) }
                }
            }
        }
        return .keep(
            removable: removable(), delay: configuration.maxRetryDelay,
            reason: "/\(path): \(lastReason) after \(attempts) attempt(s); \(kept())")
    }
}
