import CohorlyCollector
import Foundation
import TestWaiting
import Testing

import Cohorly
@testable import CohorlyClient

/// kill -9 mid-flush, 10,000 events through faults, prepared (crash) events.
@Suite struct DurabilityTests {
    /// The helper app built next to the test bundle.
    static var testApp: URL {
        let bundleDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent()
        return bundleDirectory.appendingPathComponent("CohorlyTestApp")
    }

    /// Starts the helper app; its stdout lines arrive through `lines`.
    static func launch(_ arguments: [String]) throws -> (Process, LineReader) {
        let process = Process()
        process.executableURL = testApp
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        return (process, LineReader(pipe.fileHandleForReading))
    }

    @Test func killMinus9MidFlushThenRestartStoresEveryEventOnce() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        let host = collector.baseURL.absoluteString
        // Batch 1 goes through; batch 2 is stored but its acknowledgement never comes: the app is killed waiting.
        collector.injectFault(Fault(path: "/track"))
        collector.injectFault(Fault(delay: 60, afterInsert: true, path: "/track"))
        let (app, output) = try Self.launch([
            "track", "--host", host, "--dir", directory.path, "--count", "500", "--batch", "50",
        ])
        #expect(await output.next() == "persisted 500")
        // The second request is stored and its answer held back: the app now waits mid-flush.
        #expect(await eventually { collector.appliedFaultCount == 2 && collector.delayedRequestCount == 1 })
        kill(app.processIdentifier, SIGKILL)
        await waitForExit(app)
        #expect(app.terminationReason == .uncaughtSignal)

        let (restarted, restartedOutput) = try Self.launch([
            "flush", "--host", host, "--dir", directory.path, "--batch", "50",
        ])
        #expect(await restartedOutput.next() == "flushed")
        await waitForExit(restarted)
        #expect(restarted.terminationStatus == 0)
        let seqs = try storedProperties(collector).compactMap { $0["seq"]?.intValue }
        #expect(seqs.count == 500)
        #expect(Set(0..<500).subtracting(seqs).isEmpty)
    }

    @Test func repeatedKillMinus9AtArbitraryMomentsLosesNothingConfirmedAndDuplicatesNothing() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        let host = collector.baseURL.absoluteString
        var generator = SystemRandomNumberGenerator()
        var confirmed = Set<Int>()
        for run in 0..<6 {
            // Some exchanges are slow or lose their acknowledgement, so kills also land mid-request.
            collector.injectFault(Fault(delay: 0.05, afterInsert: true), count: 3)
            collector.injectFault(Fault(dropConnection: true, afterInsert: true), count: 2)
            let start = run * 1_000
            let (app, output) = try Self.launch([
                "track-chunks", "--host", host, "--dir", directory.path, "--start", String(start), "--count", "1000",
                "--chunk", "50", "--batch", "40",
            ])
            let linesBeforeKill = Int.random(in: 1...19, using: &generator)
            var persistedThrough = start
            for _ in 0..<linesBeforeKill {
                guard let line = await output.next(), let value = Int(line.dropFirst("persisted ".count)) else { break }
                persistedThrough = value
            }
            kill(app.processIdentifier, SIGKILL)
            await waitForExit(app)
            confirmed.formUnion(start..<persistedThrough)
        }
        collector.clearFaults()
        let (last, lastOutput) = try Self.launch(["flush", "--host", host, "--dir", directory.path, "--batch", "40"])
        #expect(await lastOutput.next() == "flushed")
        await waitForExit(last)
        let seqs = try storedProperties(collector).compactMap { $0["seq"]?.intValue }
        #expect(seqs.count == Set(seqs).count)  // nothing stored twice
        #expect(confirmed.subtracting(seqs).isEmpty)  // nothing confirmed lost
        #expect(confirmed.count >= 6 * 50)
    }

    @Test func eventsTrackedJustBeforeExitAreCommittedAndSentByTheNextLaunch() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        let dead = "http://127.0.0.1:1"
        let (app, _) = try Self.launch(["track-and-exit", "--host", dead, "--dir", directory.path, "--count", "3000"])
        await waitForExit(app)
        #expect(app.terminationStatus == 0)
        let host = collector.baseURL.absoluteString
        let (next, output) = try Self.launch(["flush", "--host", host, "--dir", directory.path, "--batch", "500"])
        #expect(await output.next() == "flushed")
        await waitForExit(next)
        let seqs = try storedProperties(collector).compactMap { $0["seq"]?.intValue }
        #expect(seqs.count == 3_000)
        #expect(Set(0..<3_000).subtracting(seqs).isEmpty)
    }

    @Test func tenThousandEventsThroughRecurringFaultsLoseAndDuplicateNothing() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector) { options in
            options.flushAt = 100
            options.maxBatchSize = 100
            options.retry.requestTimeout = 0.3
        }
        defer { client.shutdown() }
        let cycle: [Fault] = [
            Fault(status: 503), Fault(), Fault(), Fault(dropConnection: true), Fault(),
            Fault(status: 429, retryAfter: "0"), Fault(), Fault(dropConnection: true, afterInsert: true), Fault(),
            Fault(delay: 0.6, afterInsert: true), Fault(), Fault(status: 500, afterInsert: true),
        ]
        for _ in 0..<12 { for fault in cycle { collector.injectFault(fault) } }
        let total = 10_000
        DispatchQueue.concurrentPerform(iterations: 4) { part in
            for seq in stride(from: part, to: total, by: 4) { client.track("bulk", properties: ["seq": .int(seq)]) }
        }
        var attempts = 0
        while await !client.flush(), attempts < 1_000 { attempts += 1 }
        #expect(client.queuedCount == 0)
        #expect(collector.appliedFaultCount > 60)
        let seqs = try storedProperties(collector).compactMap { $0["seq"]?.intValue }
        #expect(seqs.count == total)
        #expect(Set(0..<total).subtracting(seqs).isEmpty)
    }

    @Test func preparedEventsKeepTheirTimeAndInsertIdAndAreDurableOnReturn() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        // This client's server is gone: nothing it queues can leave.
        let dead = try startCollector()
        dead.stop()
        let first = makeClient(dead, directory: directory)
        defer { first.shutdown() }
        first.identify("crashed-user")
        let crash = PreparedEvent(
            name: "$exception",
            properties: ["time": 1_700_000_000_123, "$insert_id": "crash-1", "$exception_level": "fatal"])
        #expect(try first.enqueuePrepared(crash) == .queued)
        #expect(try first.enqueuePrepared(crash) == .alreadyQueued)
        // Committed on return: another connection (a later launch) sees it at once.
        let second = makeClient(collector, directory: directory)
        defer { second.shutdown() }
        #expect(second.queuedCount >= 1)
        second.reset()  // reset keeps prepared events
        #expect(await second.flush())
        let stored = try collector.store.events(matching: EventQuery(event: "$exception"))
        #expect(stored.count == 1)
        #expect(stored.first?.time == 1_700_000_000_123)
        #expect(stored.first?.insertId == "crash-1")
        let properties = try #require(stored.first.flatMap { CohorlyValue(json: $0.propertiesJSON) })
        #expect(properties["distinct_id"] == "crashed-user")
        #expect(properties["$lib"] == nil)  // nothing from the sending launch is added
        #expect(properties["$exception_level"] == "fatal")
    }

    @Test func aFullQueueDropsOrdinaryEventsBeforePreparedOnes() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector) { $0.maxQueueSize = 5 }
        defer { client.shutdown() }
        #expect(
            try client.enqueuePrepared(PreparedEvent(name: "$exception", properties: ["time": 1, "$insert_id": "c"]))
                == .queued)
        for index in 0..<20 { client.track("e", properties: ["n": .int(index)]) }
        client.waitUntilPersisted()
        #expect(client.queuedCount == 5)
        #expect(await client.flush())
        #expect(try collector.store.events(matching: EventQuery(event: "$exception")).count == 1)
        #expect(try storedProperties(collector, event: "e").compactMap { $0["n"]?.intValue }.sorted() == Array(16..<20))
    }

    @Test func twoClientsOnOneQueueNeverSendARecordTwice() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        let first = makeClient(collector, directory: directory) { $0.maxBatchSize = 5 }
        defer { first.shutdown() }
        // Profile operations carry no $insert_id: the server cannot dedupe them, so a double send would show.
        for index in 0..<200 { first.people.set(["n": .int(index)]) }
        first.waitUntilPersisted()
        let second = makeClient(collector, directory: directory) { $0.maxBatchSize = 5 }
        defer { second.shutdown() }
        var rounds = 0
        while rounds < 1_000 {
            async let a = first.flush()
            async let b = second.flush()
            let (doneA, doneB) = await (a, b)
            if doneA && doneB { break }
            rounds += 1
        }
        let values = try collector.store.records(kind: "engage").compactMap {
            CohorlyValue(json: $0.json)?["$set"]?["n"]?.intValue
        }
        #expect(values.count == 200)
        #expect(Set(values) == Set(0..<200))
    }

    @Test func aDetachedSenderDeliversWhatACrashedLaunchLeftQueued() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        let dead = try startCollector()
        dead.stop()
        let crashed = makeClient(dead, directory: directory)
        #expect(
            try crashed.enqueuePrepared(PreparedEvent(name: "$exception", properties: ["time": 5, "$insert_id": "k"]))
                == .queued)
        crashed.track("before the crash")
        crashed.shutdown()
        let failing = Fault(status: 503)
        collector.injectFault(failing, count: 2)
        var options = testOptions(directory)
        options.retry.baseDelay = 0.01
        let delivered = await Cohorly.sendQueued(
            storageDirectory: directory, apiHost: collector.baseURL, token: "test-token", timeout: 120, options: options
        )
        #expect(delivered)
        #expect(collector.appliedFaultCount == 2)
        #expect(try collector.store.events().map(\.event).sorted() == ["$exception", "before the crash"])
        let gone = await Cohorly.sendQueued(
            storageDirectory: directory, apiHost: dead.baseURL, token: "test-token", timeout: 0.2, options: options)
        #expect(gone)  // nothing left to send
    }

    @Test func preparedEventsAreValidatedAndRespectOptOut() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector) { $0.maxRequestBytes = 2_000 }
        defer { client.shutdown() }
        #expect(throws: CohorlyError.missingProperty("$insert_id")) {
            try client.enqueuePrepared(PreparedEvent(name: "$exception", properties: ["time": 1]))
        }
        #expect(throws: CohorlyError.missingProperty("time")) {
            try client.enqueuePrepared(PreparedEvent(name: "$exception", properties: ["$insert_id": "x"]))
        }
        let huge = PreparedEvent(
            name: "$exception",
            properties: ["time": 1, "$insert_id": "y", "pad": .string(String(repeating: "p", count: 3_000))])
        #expect(throws: CohorlyError.self) { try client.enqueuePrepared(huge) }
        client.optOut()
        let event = PreparedEvent(name: "$exception", properties: ["time": 1, "$insert_id": "z"])
        #expect(try client.enqueuePrepared(event) == .discardedOptedOut)
        #expect(client.queuedCount == 0)
    }
}

/// Reads lines from a pipe.
final class LineReader: @unchecked Sendable {
    private let handle: FileHandle
    private var buffer: [UInt8] = []

    init(_ handle: FileHandle) { self.handle = handle }

    /// The next line, or nil at end of file; the blocking read runs off the cooperative pool.
    func next() async -> String? {
        (try? await offThePool { self.readLine() }) ?? nil
    }

    private func readLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let data = handle.availableData
            if data.isEmpty { return nil }
            buffer.append(contentsOf: data)
        }
    }
}
