import Foundation

extension Cohorly {
    /// The flag's value for the current identity — its variant, else whether it is enabled — or `fallback` when
    /// the flag is unknown or its cache may not serve under `flagPersistence`. A flag known to be off for this
    /// identity gives `.bool(false)`, not `fallback` (as `isFeatureEnabled` says false, and as PostHog's SDKs do):
    /// to treat "off" like "unknown", read `getFeatureFlag(key)?.variantName ?? "control"`. Never touches the
    /// network or the disk. The first read of each (key, value) per identity tracks `$feature_flag_called`; a fallback read
    /// tracks nothing.
    public func getFeatureFlag(_ key: String, fallback: FeatureFlagValue? = nil) -> FeatureFlagValue? {
        flags.read(key)?.flag.value ?? fallback
    }

    /// Whether the flag is enabled for the current identity, or `fallback` when it is unknown (exposure as
    /// `getFeatureFlag(_:fallback:)`).
    public func isFeatureEnabled(_ key: String, fallback: Bool = false) -> Bool {
        flags.read(key)?.flag.enabled ?? fallback
    }

    /// The flag's value with where it came from (`network`, `persistence`, `fallback`), its payload and, for a
    /// persistence read, the cache's `persistedAt` and `ttlMs`. A fallback result reports `enabled` = the
    /// fallback's truthiness and no payload (exposure as `getFeatureFlag(_:fallback:)`).
    public func getFeatureFlagDetails(_ key: String, fallback: FeatureFlagValue? = nil) -> FeatureFlagDetails {
        guard let entry = flags.read(key) else {
            return FeatureFlagDetails(
                key: key, value: fallback, source: .fallback, enabled: fallback?.isTruthy ?? false, payload: nil)
        }
        return flags.details(key, entry)
    }

    /// Evaluates the current identity's flags again; returns once the answer is served (or the attempt failed,
    /// which keeps what was served and is logged).
    public func reloadFeatureFlags() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            flags.reload { continuation.resume() }
        }
    }

    /// Calls `listener` with every flag's value (key → value) each time the served flags change: after each
    /// successful evaluation, and with an empty map when an identity change clears the previous identity's flags.
    /// It also hears the flags served when it is added, if any. Called in order on a background queue; it may
    /// read flags but should return quickly.
    public func onFeatureFlags(_ listener: @escaping @Sendable ([String: FeatureFlagValue]) -> Void) {
        flags.addListener(listener)
    }

    /// Evaluates `key` for `distinctId` over the network now, whatever the client's identity and served flags,
    /// with the given person and group properties (PostHog) — what a server-side caller (the compliance
    /// adapter) needs. Blocks until the answer; nil for an unknown key or a failed evaluation. The first answer
    /// per (distinct id, key, value) tracks `$feature_flag_called` for that distinct id.
    package func evaluateFeatureFlagRemotely(
        _ key: String, distinctId: String, personProperties: Properties = [:], groups: Properties = [:],
        groupProperties: Properties = [:], disableGeoIP: Bool? = nil
    ) -> FeatureFlagDetails? {
        let request = FlagsRequest(
            distinctId: distinctId, anonymousId: state.withLock { $0.anonymousId }, personProperties: personProperties,
            groups: groups, groupProperties: groupProperties, disableGeoIP: disableGeoIP)
        guard let flag = flags.evaluateRemotely(key, request) else { return nil }
        return FeatureFlagDetails(
            key: key, value: flag.value, source: .network, enabled: flag.enabled, payload: flag.payload)
    }

    /// Makes the client's flag store and follows identity changes (`identify`, `reset`).
    static func makeFlags(
        store: any QueueStore, destination: any Destination, transport: any Transport, options: CohorlyOptions,
        state: ClientStateBox, client: WeakClient
    ) -> FeatureFlagStore {
        let flags = FeatureFlagStore(
            distinctId: state.withLock { $0.distinctId }, store: store,
            destination: destination as? any FlagsDestination, transport: transport, options: options,
            log: state.log, anonymousId: { state.withLock { $0.anonymousId } },
            track: { name, properties in client.value?.track(name, properties: properties) })
        // Weakly: the store reads the state (anonymous id), so a strong capture would keep both, and with them
        // the queue's database and the transport's connections, alive after the client is gone.
        state.addIdentityObserver { [weak flags] distinctId, _ in flags?.identityChanged(to: distinctId) }
        return flags
    }
}

/// The client, held weakly by what it owns (its flag store tracks exposure events through it).
final class WeakClient: @unchecked Sendable {
    private let lock = NSLock()
    private weak var client: Cohorly?
    var value: Cohorly? {
        get { lock.withLock { client } }
        set { lock.withLock { client = newValue } }
    }
}
