import CohorlyClient
import Foundation

extension Cohorly {
    /// Configures a client that sends to PostHog (capture V1), makes it `Cohorly.shared` and returns it. The
    /// queue, identity, super properties, opt-out, flush and crash delivery work as with the Cohorly API; what
    /// differs is on the wire (see `PostHogConfiguration` and docs/posthog.md).
    /// - Parameters:
    ///   - posthog: the host, project API key and capture options.
    ///   - storageDirectory, flushInterval, flushAt, maxQueueSize, debug, options: as in
    ///     `initialize(apiHost:token:…)`; each left nil keeps the value in `options`.
    @discardableResult
    public static func initialize(
        posthog: PostHogConfiguration, storageDirectory: URL? = nil, flushInterval: Double? = nil, flushAt: Int? = nil,
        maxQueueSize: Int? = nil, debug: Bool? = nil, options: CohorlyOptions = .default
    ) -> Cohorly {
        let options = merged(
            options, storageDirectory: storageDirectory, flushInterval: flushInterval, flushAt: flushAt,
            maxQueueSize: maxQueueSize, debug: debug)
        return makeShared(Cohorly(posthog: posthog, options: options))
    }

    /// A client that sends to PostHog and is not registered as `shared`.
    public convenience init(posthog: PostHogConfiguration, options: CohorlyOptions = .default) {
        self.init(
            apiHost: posthog.host, token: posthog.apiKey, options: options,
            destination: PostHogDestination(configuration: posthog))
    }
}
