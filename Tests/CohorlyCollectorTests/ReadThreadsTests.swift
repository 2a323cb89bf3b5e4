import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// The read API runs below ingestion's CPU priority (issue 26 item 4): on threads of its own whose nice value is
/// raised, handed each read by the connection's thread, which waits for it.
@Suite struct ReadThreadsTests {
    static func nice() -> Int32 {
        errno = 0
        return getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
    }

    @Test func aReadRunsOnAnotherThreadWithAHigherNiceValue() {
        let threads = ReadThreads(count: 1)
        defer { threads.stop() }
        let caller = pthread_self()
        let (nice, thread) = threads.run { (Self.nice(), pthread_self()) }
        #expect(pthread_equal(thread, caller) == 0)
        #expect(nice == min(19, Self.nice() + ReadThreads.niceIncrement))
        // The caller's own priority is untouched.
        #expect(Self.nice() < nice || nice == 19)
    }

    @Test func readsFromManyThreadsEachGetTheirOwnAnswer() {
        let threads = ReadThreads(count: 2)
        defer { threads.stop() }
        let answers = Answers()
        // Callers on dispatch's threads (not the test process's cooperative pool, which a blocked caller would hold).
        DispatchQueue.concurrentPerform(iterations: 20) { index in answers.set(index, threads.run { index * index }) }
        #expect(answers.all == (0..<20).map { $0 * $0 })
    }

    final class Answers: @unchecked Sendable {
        private let lock = NSLock()
        private var values = [Int](repeating: -1, count: 20)
        func set(_ index: Int, _ value: Int) { lock.withLock { values[index] = value } }
        var all: [Int] { lock.withLock { values } }
    }

    @Test func afterStopAReadRunsOnTheCaller() {
        let threads = ReadThreads(count: 1)
        threads.stop()
        let caller = pthread_self()
        #expect(pthread_equal(threads.run { pthread_self() }, caller) != 0)
    }

    @Test func onlyTheReadAPIIsServedThere() {
        #expect(ReadThreads.serves(HTTPRequest(method: "GET", path: "/api/events")))
        #expect(ReadThreads.serves(HTTPRequest(method: "GET", path: "/api/crashes/abc")))
        #expect(!ReadThreads.serves(HTTPRequest(method: "POST", path: "/track")))
        #expect(!ReadThreads.serves(HTTPRequest(method: "POST", path: "/api/debug-files/check")))
        #expect(!ReadThreads.serves(HTTPRequest(method: "GET", path: "/health")))
    }
}
