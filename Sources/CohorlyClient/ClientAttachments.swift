import Synchronization

/// State another module keeps per client (CohorlyCrash's breadcrumb observer, its handled-error settings): it
/// lives and dies with the client. A table keyed by the client's address would hand a released client's state to
/// a new client made at the same address.
package final class ClientAttachments: Sendable {
    private let values = Mutex<[ObjectIdentifier: any Sendable]>([:])

    package init() {}

    /// The value attached under `type`, made by `make` (under the lock) the first time; `made` says whether this
    /// call made it.
    package func value<T: Sendable>(_ type: T.Type, make: () -> T) -> (value: T, made: Bool) {
        values.withLock { values in
            if let existing = values[ObjectIdentifier(type)] as? T { return (existing, false) }
            let made = make()
            values[ObjectIdentifier(type)] = made
            return (made, true)
        }
    }
}
