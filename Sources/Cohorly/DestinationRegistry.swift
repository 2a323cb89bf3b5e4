import Foundation

/// The one place that knows every destination: which one a queue's `destination` setting (its
/// ``Destination/persistedDescription``) stands for, so the detached crash sender restores the destination the
/// queue was written for. A new destination adds one line here.
enum DestinationRegistry {
    /// The destination `persisted` describes, for `host` and `token` (the host and key the sender was given);
    /// the Cohorly API when it describes none.
    static func restore(_ persisted: String?, host: URL, token: String?) -> any Destination {
        let families: [(String?, URL, String?) -> (any Destination)?] = [
            PostHogConfiguration.restoredDestination,
            SentryConfiguration.restoredDestination,
        ]
        for family in families {
            if let destination = family(persisted, host, token) { return destination }
        }
        return Cohorly.cohorlyAPIDestination(apiHost: host, token: token)
    }
}
