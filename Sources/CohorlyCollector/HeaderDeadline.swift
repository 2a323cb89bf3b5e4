import Foundation

/// The deadline for a connection's request headers: a connection that has not sent complete headers within
/// `seconds` of opening (or of its previous answer, on a kept-alive connection) has its socket shut down, which
/// ends its libmicrohttpd thread. So slow clients (one header byte now and then, as "slowloris" does) cannot hold
/// the server's threads; together with the per-client connection cap, one client cannot lock out the others.
///
/// libmicrohttpd tells when connections open and close (`opened`, `closed`, on its threads) and the server when
/// headers arrived (`headersArrived`); one watchdog thread checks every 100 ms. The socket is shut down under the
/// same lock as `closed`, which libmicrohttpd calls before it closes the descriptor, so a reused descriptor is
/// never touched.
final class HeaderDeadline: @unchecked Sendable {
    private let seconds: Double
    private let condition = NSCondition()
    private var waiting: [UnsafeMutableRawPointer: (fd: Int32, since: Double)] = [:]
    private var stopped = false
    private var running = false

    init(seconds: Double) { self.seconds = seconds }

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

    /// A connection opened (or finished a request and may send another): its headers are now due.
    func expectHeaders(_ connection: UnsafeMutableRawPointer, fd: Int32) {
        guard fd >= 0 else { return }
        condition.lock()
        waiting[connection] = (fd, Self.now())
        condition.unlock()
    }

    /// The connection's headers arrived.
    func headersArrived(_ connection: UnsafeMutableRawPointer) {
        condition.lock()
        waiting[connection] = nil
        condition.unlock()
    }

    /// The connection is closing (its descriptor is still open).
    func closed(_ connection: UnsafeMutableRawPointer) { headersArrived(connection) }

    private func watch() {
        condition.lock()
        while !stopped {
            let now = Self.now()
            for (connection, entry) in waiting where now - entry.since > seconds {
                shutdown(entry.fd, Int32(SHUT_RDWR))
                waiting[connection] = nil
            }
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.1))
        }
        running = false
        condition.broadcast()
        condition.unlock()
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
