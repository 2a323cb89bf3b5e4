import Foundation

/// Admission at the connection cap: libmicrohttpd runs a thread per connection, so open connections are capped
/// below what the process can hold (`CollectorConfiguration.maxConnections`). At the cap a new connection is not
/// refused while some connection is only waiting for its request headers (a slow client, or an idle kept-alive
/// one): the one from the address holding the most connections (the oldest among them) is shut down to make room.
/// So clients trickling headers from many addresses cannot fill the server, and a client that sends whole
/// requests keeps being answered: its connection waits for headers only for the moment its request is in flight.
/// Connections reading a body or being answered are never evicted; with none to evict, the new one is refused.
extension HeaderDeadline {
    /// Whether a connection from `address` may open now (libmicrohttpd's accept policy, on its listening thread).
    func admit(_ address: String) -> Bool {
        guard maxConnections > 0 else { return true }
        condition.lock()
        defer { condition.unlock() }
        guard addresses.count - evicted.count >= maxConnections else { return true }
        var held: [String: Int] = [:]
        for (connection, owner) in addresses where !evicted.contains(connection) { held[owner, default: 0] += 1 }
        var victim: (connection: UnsafeMutableRawPointer, fd: Int32, held: Int, since: Double)?
        for (connection, entry) in waiting where !entry.body && !evicted.contains(connection) {
            let count = addresses[connection].flatMap { held[$0] } ?? 0
            if let best = victim, best.held > count || (best.held == count && best.since <= entry.since) { continue }
            victim = (connection, entry.fd, count, entry.since)
        }
        guard let victim else { return false }
        shutdown(victim.fd, Int32(SHUT_RDWR))
        waiting[victim.connection] = nil
        evicted.insert(victim.connection)
        return true
    }

    /// Open connections not being evicted (tests).
    package var openConnections: Int { condition.withLock { addresses.count - evicted.count } }
}
