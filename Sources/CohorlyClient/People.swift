import Foundation

/// Profile updates for the current distinct id, queued and sent under the destination's rules (Cohorly: `/engage`;
/// PostHog: `$set` events, see docs/posthog.md for what has no PostHog equivalent).
public struct People: Sendable {
    let client: Cohorly

    /// Sets profile properties (`$set`).
    public func set(_ properties: Properties) { send("$set", .object(properties)) }

    /// Sets profile properties only where they are not set yet (`$set_once`).
    public func setOnce(_ properties: Properties) { send("$set_once", .object(properties)) }

    /// Adds to numeric profile properties (`$add`).
    public func increment(_ properties: [String: Double]) {
        send(
            "$add",
            .object(
                properties.mapValues { $0.rounded() == $0 && abs($0) < 9e15 ? .int(Int($0)) : .double($0) })
        )
    }

    /// Adds `by` (default 1) to one numeric profile property (`$add`).
    public func increment(_ property: String, by amount: Double = 1) { increment([property: amount]) }

    /// Removes profile properties (`$unset`; the server may require an admin credential for it).
    public func unset(_ names: [String]) { send("$unset", .array(names.map(CohorlyValue.string))) }

    /// Deletes the profile (`$delete`; the server may require an admin credential for it).
    public func deleteUser() { send("$delete", .bool(true)) }

    private func send(_ operation: String, _ value: CohorlyValue) {
        let time = Int64(Date().timeIntervalSince1970 * 1000)
        client.state.enqueue { state in
            guard !state.optedOut else { return nil }
            return .profile(.people(operation: operation, value: value, distinctId: state.distinctId, time: time))
        }
    }
}
