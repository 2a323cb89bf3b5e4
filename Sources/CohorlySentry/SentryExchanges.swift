import CohorlyClient
import Foundation

/// Envelope exchanges that run at the same time, for one batch: Sentry takes one event per envelope, so sending
/// them one after another would wait a round trip per event. `start` hands a request to a helper thread (one is
/// made when none is free, at most `width`); `answer` waits for one request's answer. `close` lets the helpers end
/// once nothing is waiting (they end by themselves; a batch with one envelope in flight at a time uses one).
/// The caller keeps every decision (what to send, what an answer means) on its own thread.
final class SentryExchanges: @unchecked Sendable {
    typealias Answer = (response: TransportResponse, headers: [String: String])
    /// What a helper hands back: the request it made and sent, and its answer.
    typealias Sent = (request: TransportRequest, answer: Answer)

    private let width: Int
    private let exchange: @Sendable (TransportRequest) -> Answer
    private let lock = ConditionLock()
    // Under `lock`.
    private var waiting: [(index: Int, make: @Sendable () -> TransportRequest)] = []
    private var answers: [Int: Sent] = [:]
    private var helpers = 0
    private var idle = 0
    private var closed = false

    init(width: Int, exchange: @escaping @Sendable (TransportRequest) -> Answer) {
        self.width = max(1, width)
        self.exchange = exchange
    }

    /// Makes the request (the envelope's encoding runs on the helper too) and sends it, known as `index`, on a
    /// helper thread.
    func start(_ index: Int, _ make: @escaping @Sendable () -> TransportRequest) {
        let spawn = lock.withLock {
            waiting.append((index, make))
            guard waiting.count > idle, helpers < width else { return false }
            helpers += 1
            return true
        }
        if spawn {
            let thread = Thread { [self] in
                ThreadName.setCurrent("cohorly-sentry")
                work()
            }
            thread.name = "cohorly-sentry"
            thread.start()
        }
        lock.broadcast()
    }

    /// The request started as `index` and its answer (waits for it).
    func answer(_ index: Int) -> Sent? {
        lock.withLock {
            while answers[index] == nil { lock.wait(until: nil) }
            return answers.removeValue(forKey: index)
        }
    }

    /// No more requests: each helper ends once nothing waits.
    func close() {
        lock.withLock { closed = true }
        lock.broadcast()
    }

    private func work() {
        lock.lock()
        while true {
            while waiting.isEmpty && !closed {
                idle += 1
                lock.wait(until: nil)
                idle -= 1
            }
            guard !waiting.isEmpty else { break }
            let (index, make) = waiting.removeFirst()
            lock.unlock()
            let request = make()
            let answer = exchange(request)
            lock.lock()
            answers[index] = (request, answer)
            lock.broadcast()
        }
        helpers -= 1
        lock.unlock()
    }
}
