import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// A long read (a page of 100,000 rows, reasons looked up row by row) does not hold what ingestion needs.
@Suite struct ReadWhileWritingTests {
    @Test func anInsertCompletesWhileAReadIsInTheMiddleOfItsRows() throws {
        let store = try CollectorStore(directory: temporaryDirectory())
        let first = CollectorStore.NewEvent(
            token: "t", event: "e", distinctId: "u", time: 1, insertId: "a", propertiesJSON: "{}")
        #expect(try store.insert(events: [first], receivedAt: 1) == 1)
        let entered = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        let readerDone = Flag()
        let reader = Thread {
            try? store.forEachEvent(matching: EventQuery()) { _ in
                entered.signal()
                // Held in the middle of the read until the insert returns (at most 5 s).
                _ = released.wait(timeout: .now() + 5)
                return true
            }
            readerDone.set()
        }
        reader.start()
        entered.wait()
        var second = first
        second.insertId = "b"
        #expect(try store.insert(events: [second], receivedAt: 2) == 1)
        // The insert did not wait for the read to end.
        #expect(!readerDone.value)
        released.signal()
        #expect(try store.eventCount() == 2)
    }

    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var raised = false
        var value: Bool { lock.withLock { raised } }
        func set() { lock.withLock { raised = true } }
    }
}
