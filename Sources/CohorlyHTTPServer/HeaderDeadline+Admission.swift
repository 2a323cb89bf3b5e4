import Foundation

/// Admission at the connection caps. libmicrohttpd runs a thread per connection, so open connections are capped
/// below what the process can hold (`CollectorConfiguration.maxConnections`), and each client address may hold at
/// most `perClient` of them (`CollectorConfiguration.connectionsPerClient`). At either cap a new connection is not
/// refused while some connection it competes with is only waiting for its request headers (a slow client, or an
/// idle kept-alive one): that one is shut down to make room. At the per-client cap it is the address's own oldest
/// such connection — every local client is 127.0.0.1, so one local program holding slots (trickling headers or
/// keeping connections idle) cannot lock out another that sends whole requests; at the global cap it is the oldest
/// from the address holding the most connections, so clients trickling headers from many addresses cannot fill
/// the server. A client that sends whole requests keeps being answered: its connection waits for headers only for
/// the moment its request is in flight, and is the newest of those waiting. Connections reading a body or being
/// answered are never evicted; with none to evict, the new one is refused.
extension HeaderDeadline {
    /// Whether a connection from `address` may open now (libmicrohttpd's accept policy, on its listening thread).
    func admit(_ address: String) -> Bool {
        guard maxConnections > 0 || perClient > 0 else { return true }
        condition.lock()
        defer { condition.unlock() }
        if perClient > 0 {
            let own = addresses.reduce(0) { count, open in
                open.value == address && !evicted.contains(open.key) ? count + 1 : count
            }
            // One of its own gives way: the total open stays as it was, so the global cap holds too.
            if own >= perClient { return evictOldestWaiting(from: address) }
        }
        guard maxConnections > 0, addresses.count - evicted.count >= maxConnections else { return true }
        var held: [String: Int] = [:]
        for (connection, owner) in addresses where !evicted.contains(connection) { held[owner, default: 0] += 1 }
        var victim: (connection: UnsafeMutableRawPointer, fd: Int32, held: Int, since: Double)?
        for (connection, entry) in waiting where !entry.body && !evicted.contains(connection) {
            let count = addresses[connection].flatMap { held[$0] } ?? 0
            if let best = victim, best.held > count || (best.held == count && best.since <= entry.since) { continue }
            victim = (connection, entry.fd, count, entry.since)
        }
        guard let victim else { return false }
        evict(victim.connection, fd: victim.fd)
        return true
    }

    /// Shuts down the oldest connection from `address` waiting for headers; false when there is none.
    private func evictOldestWaiting(from address: String) -> Bool {
        var victim: (connection: UnsafeMutableRawPointer, fd: Int32, since: Double)?
        for (connection, entry) in waiting where !entry.body && !evicted.contains(connection) {
            guard addresses[connection] == address else { continue }
            if let oldest = victim, oldest.since <= entry.since { continue }
            victim = (connection, entry.fd, entry.since)
        }
        guard let victim else { return false }
        evict(victim.connection, fd: victim.fd)
        return true
    }

    /// Shuts the connection's socket down (its thread then ends and `closed` follows); it no longer counts.
    private func evict(_ connection: UnsafeMutableRawPointer, fd: Int32) {
        shutdown(fd, Int32(SHUT_RDWR))
        waiting[connection] = nil
        evicted.insert(connection)
    }

    /// Open connections waiting for request headers, not being evicted (tests).
    package var waitingForHeaders: Int {
        condition.withLock { waiting.filter { !$0.value.body && !evicted.contains($0.key) }.count }
    }

    /// Open connections not being evicted (tests).
    package var openConnections: Int { condition.withLock { addresses.count - evicted.count } }
}
