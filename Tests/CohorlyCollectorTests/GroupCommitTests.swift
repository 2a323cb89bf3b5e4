import Foundation
import TestWaiting
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// Group commit (CollectorStore+GroupCommit.swift): requests that arrive while another commits share the next
/// transaction, and each returns once its rows are committed.
@Suite struct GroupCommitTests {
    @Test func requestsWaitingForACommitShareTheNextTransaction() async throws {
        let store = try CollectorStore(directory: temporaryDirectory())
        let finished = DispatchGroup()
        let counts = Counts()
        func request(_ index: Int) {
            finished.enter()
            Thread {
                let event = CollectorStore.NewEvent(
                    token: "t", event: "e", distinctId: "u", time: 1, insertId: "id-\(index)", propertiesJSON: "{}")
                let rows = CollectorStore.Rows(
                    events: [event], records: [("t", #"{"sid":"\#(index)"}"#)], recordKind: "session",
                    receivedAt: 1)
                if let inserted = try? store.insert(together: rows) { counts.add(inserted) }
                finished.leave()
            }.start()
        }
        // The first request commits alone and is held in its commit (a thread holds the store's lock) while four
        // more arrive: they wait, and the next of them commits all four at once.
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        Thread {
            store.lock.lock()
            held.signal()
            _ = release.wait(timeout: .now() + 20)
            store.lock.unlock()
        }.start()
        held.wait()
        request(0)
        #expect(await eventually { store.groupCommit.waitingCount == 0 && store.groupCommit.isCommitting })
        for index in 1...4 { request(index) }
        #expect(await eventually { store.groupCommit.waitingCount == 4 })
        #expect(try store.eventCount() == 0)  // nothing committed yet…
        #expect(counts.total == 0)  // …and no request answered before its commit
        release.signal()
        #expect(finished.wait(timeout: .now() + 20) == .success)
        #expect(store.groupCommit.transactions == 2)
        #expect(counts.total == 5)
        #expect(try store.eventCount() == 5)
        #expect(try store.records(kind: "session").count == 5)
        // A resent event in a shared transaction is stored once, as alone.
        let again = CollectorStore.NewEvent(
            token: "t", event: "e", distinctId: "u", time: 1, insertId: "id-0", propertiesJSON: "{}")
        #expect(try store.insert(together: CollectorStore.Rows(events: [again], receivedAt: 2)) == 0)
        #expect(try store.eventCount() == 5)
    }

    final class Counts: @unchecked Sendable {
        private let lock = NSLock()
        private var sum = 0
        var total: Int { lock.withLock { sum } }
        func add(_ count: Int) { lock.withLock { sum += count } }
    }
}
