/// What to do with a batch after one exchange: the shared Cohorly retry contract, as a pure function.
package enum DeliveryOutcome: Equatable, Sendable {
    /// 2xx with the server's success answer: remove the batch, reset the failure count and the backoff.
    case delivered
    /// Remove the batch without delivering it (400, other 4xx, a single record still too large, a failed alias).
    case dropped(String)
    /// 413 with more than one record: halve the batch size and retry at once.
    case halveBatch
    /// 429, 5xx, timeouts, network errors, unfollowed redirects: keep the batch, wait `delay` seconds.
    case retry(delay: Double, reason: String)
    /// 401 (the token refused) or 404 (nothing at the configured ingestion path): not a verdict on the events but
    /// on the configuration. Keep the batch, wait `delay` (the longest backoff), and say so once per launch.
    case misconfigured(status: Int, delay: Double)
    /// A 2xx whose body is not the API's success answer (something other than the configured server answers at
    /// its address): not a delivery. Keep the batch, back off as after any failure (`delay`), and say so once.
    case unacknowledged(status: Int, delay: Double)
}

package enum RetryContract {
    /// The outcome of `response` for a batch of `count` records (`bestEffort`: an alias, sent once), after
    /// `failures` consecutive failures including this one (used only when the outcome is a retry). `acknowledges`
    /// says whether a 2xx body is the server's success answer.
    package static func outcome(
        for response: TransportResponse, count: Int, bestEffort: Bool, failures: Int,
        policy: RetryPolicy, acknowledges: (_ body: [UInt8]) -> Bool
    ) -> DeliveryOutcome {
        switch response {
        case .http(let status, let retryAfter, let body):
            if (200..<300).contains(status) {
                if acknowledges(body) { return .delivered }
                if bestEffort { return .dropped("alias answered \(status) without a success answer (best effort)") }
                return .unacknowledged(status: status, delay: policy.delay(afterFailures: failures))
            }
            if bestEffort {
                return .dropped("alias answered \(status) (best effort, not retried)")
            }
            switch status {
            case 413:
                return count > 1
                    ? .halveBatch : .dropped("a single record is larger than the server accepts (413)")
            case 401, 404:
                return .misconfigured(status: status, delay: policy.maxDelay)
            case 429, 500..<600:
                let delay =
                    retryAfter.map(policy.delay(retryAfter:)) ?? policy.delay(afterFailures: failures)
                return .retry(delay: delay, reason: "HTTP \(status)")
            case 400:
                return .dropped("rejected as a bad request (400)")
            case 402..<500:
                return .dropped("rejected (\(status))")
            default:
                let delay =
                    retryAfter.map(policy.delay(retryAfter:)) ?? policy.delay(afterFailures: failures)
                return .retry(delay: delay, reason: "unexpected HTTP \(status)")
            }
        case .failure(let message):
            if bestEffort {
                return .dropped("alias failed: \(message) (best effort, not retried)")
            }
            return .retry(delay: policy.delay(afterFailures: failures), reason: message)
        }
    }
}

/// One delivery attempt as the test hook sees it.
package struct DeliveryAttempt: Sendable {
    /// The request's path (`/track`, …).
    package var path: String
    package var count: Int
    package var bytes: Int
    package var outcome: DeliveryOutcome
    /// The HTTP status, when the server answered.
    package var status: Int? = nil

    package init(path: String, count: Int, bytes: Int, outcome: DeliveryOutcome, status: Int? = nil) {
        self.path = path
        self.count = count
        self.bytes = bytes
        self.outcome = outcome
        self.status = status
    }
}
