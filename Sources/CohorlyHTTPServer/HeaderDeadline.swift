import Foundation

/// The deadline for a connection's request headers, and the pace of its request body: a connection that has not
/// sent complete headers within `seconds` of opening (or of its previous answer, on a kept-alive connection) has
/// its socket shut down, which ends its libmicrohttpd thread; so does one whose body, once the headers arrived,
/// averages under `minimumBodyRate` bytes per second after its first `seconds`. So slow clients (one header byte
/// now and then, as "slowloris" does, or a body trickled a byte at a time, which libmicrohttpd's idle timeout
/// alone would let run for ever) cannot hold the server's threads; together with the per-client connection cap,
/// one client cannot lock out the others.
///
/// libmicrohttpd tells when connections open and close (`opened`, `closed`, on its threads) and the server when
/// headers arrived (`headersArrived`), when a body is due (`bodyExpected`), how it progresses (`bodyReceived`) and
/// when it is complete (`bodyComplete`, before the request is handled: a slow handler is never cut); one watchdog
/// thread checks every 100 ms. The socket is shut down under the same lock as `closed`, which libmicrohttpd calls
/// before it closes the descriptor, so a reused descriptor is never touched.
///
/// It also admits connections at the caps, in all and per client address (HeaderDeadline+Admission.swift): it
/// knows every open connection's client address (`opened`).
package final class HeaderDeadline: @unchecked Sendable {
    private let seconds: Double
    private let minimumBodyRate: Double
    /// Open connections it admits at most (0: no cap).
    let maxConnections: Int
    /// Open connections it admits at most from one client address (0: no cap).
    let perClient: Int
    let condition = NSCondition()
    /// What each watched connection owes: its headers (`body` false) or its body (`body` true, `bytes` so far).
    var waiting: [UnsafeMutableRawPointer: (fd: Int32, since: Double, body: Bool, bytes: Int)] = [:]
    /// Every open connection's client address.
    var addresses: [UnsafeMutableRawPointer: String] = [:]
    /// Connections shut down to make room, not closed yet.
    var evicted: Set<UnsafeMutableRawPointer> = []
    private var stopped = false
    private var running = false

    /// Headers are due within `seconds` (0: no deadline); a body (after the same grace) at `minimumBodyRate` bytes
    /// per second on average (0: bodies are not watched); at most `maxConnections` open at once and `perClient`
    /// from one address (0: no cap).
    init(seconds: Double, minimumBodyRate: Double = 0, maxConnections: Int = 0, perClient: Int = 0) {
        self.seconds = seconds
        self.minimumBodyRate = minimumBodyRate
        self.maxConnections = maxConnections
        self.perClient = perClient
    }

    /// Starts the watchdog thread.
    func start() {
        condition.lock()
        defer { condition.unlock() }
        guard !running else { return }
        running = true
        Thread.detachNewThread { [self] in watch() }
    }

    /// Stops the watchdog thread and waits for it.
    func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    /// A connection from `address` opened: its headers are now due.
    func opened(_ connection: UnsafeMutableRawPointer, fd: Int32, address: String) {
        condition.lock()
        addresses[connection] = address
        condition.unlock()
        expectHeaders(connection, fd: fd)
    }

    /// A connection finished a request and may send another: its headers are now due.
    func expectHeaders(_ connection: UnsafeMutableRawPointer, fd: Int32) {
        guard fd >= 0 else { return }
        condition.lock()
        waiting[connection] = (fd, Self.now(), false, 0)
        condition.unlock()
    }

    /// The connection's headers arrived.
    func headersArrived(_ connection: UnsafeMutableRawPointer) {
        condition.lock()
        waiting[connection] = nil
        condition.unlock()
    }

    /// The connection's request body is due from now (its pace is watched until `bodyComplete`).
    func bodyExpected(_ connection: UnsafeMutableRawPointer, fd: Int32) {
        guard fd >= 0, minimumBodyRate > 0 else { return }
        condition.lock()
        waiting[connection] = (fd, Self.now(), true, 0)
        condition.unlock()
    }

    /// `count` more bytes of the connection's body arrived.
    func bodyReceived(_ connection: UnsafeMutableRawPointer, _ count: Int) {
        condition.lock()
        if var entry = waiting[connection], entry.body {
            entry.bytes &+= count
            waiting[connection] = entry
        }
        condition.unlock()
    }

    /// The connection's body is complete (or will not be read).
    func bodyComplete(_ connection: UnsafeMutableRawPointer) { headersArrived(connection) }

    /// The connection is closing (its descriptor is still open).
    func closed(_ connection: UnsafeMutableRawPointer) {
        condition.lock()
        waiting[connection] = nil
        addresses[connection] = nil
        evicted.remove(connection)
        condition.unlock()
    }

    private func watch() {
        condition.lock()
        while !stopped {
            let now = Self.now()
            for (connection, entry) in waiting where overdue(entry, now: now) {
                shutdown(entry.fd, Int32(SHUT_RDWR))
                waiting[connection] = nil
            }
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.1))
        }
        running = false
        condition.broadcast()
        condition.unlock()
    }

    /// Headers later than `seconds`, or a body that after `seconds` averages under the minimum rate.
    private func overdue(_ entry: (fd: Int32, since: Double, body: Bool, bytes: Int), now: Double) -> Bool {
        let elapsed = now - entry.since
        guard seconds > 0, elapsed > seconds else { return false }
        return !entry.body || Double(entry.bytes) < minimumBodyRate * elapsed
    }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
