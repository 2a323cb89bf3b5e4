import CohorlyCollector
import Foundation
import TestWaiting
import Testing

import Cohorly
@testable import CohorlyClient

/// Identity, super properties, automatic properties, opt-out, persistence of settings, concurrency.
@Suite struct ClientTests {
    @Test func initializeConfiguresAndSharesTheClient() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        let client = Cohorly.initialize(
            apiHost: collector.baseURL, token: "test-token", storageDirectory: directory, flushInterval: 3600,
            flushAt: 3, maxQueueSize: 50, debug: false)
        defer { client.shutdown() }
        #expect(Cohorly.shared === client)
        #expect(Cohorly.defaultAPIHost.absoluteString == "https://cohorly-service.velloalabs.com")
        #expect(client.options.storageDirectory == directory)
        #expect(client.options.flushInterval == 3600 && client.options.flushAt == 3)
        #expect(client.options.maxQueueSize == 50 && !client.options.debug)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("queue.sqlite").path))
        for _ in 0..<3 { client.track("auto") }
        #expect(await eventually { (try? collector.store.eventCount()) == 3 })
    }

    @Test func everyEventCarriesTheAutomaticProperties() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector)
        defer { client.shutdown() }
        let before = Int(Date().timeIntervalSince1970 * 1000)
        client.track("Screen Viewed", properties: ["screen": "Home"])
        #expect(await client.flush())
        let after = Int(Date().timeIntervalSince1970 * 1000)
        let properties = try #require(try storedProperties(collector).first)
        #expect(properties["screen"] == "Home")
        #expect(properties["distinct_id"]?.stringValue == client.currentDistinctId)
        let time = try #require(properties["time"]?.intValue)
        #expect(time >= before && time <= after)
        let insertId = try #require(properties["$insert_id"]?.stringValue)
        #expect(
            insertId.range(
                of: "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", options: .regularExpression
            ) != nil)
        #expect(properties["$lib"] == "cohorly-swift-linux")
        #expect(properties["$lib_version"]?.stringValue?.isEmpty == false)
        #expect(properties["$os"] == "Linux")
        let release = AutomaticProperties.parseOSRelease(
            (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? "")
        #expect(properties["$os_version"]?.stringValue == release["VERSION_ID"])
        var names = utsname()
        uname(&names)
        let machine = withUnsafeBytes(of: &names.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        #expect(properties["$arch"]?.stringValue == machine)
        #expect(properties["$kernel_version"]?.stringValue?.isEmpty == false)
        #expect(properties["token"] == nil)
    }

    @Test func callerBeatsSuperBeatsAutomatic() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector)
        defer { client.shutdown() }
        client.register(["plan": "free", "$os": "CustomOS", "app": "shop"])
        client.track("a", properties: ["plan": "pro"])
        client.unregister("app")
        client.track("b")
        #expect(await client.flush())
        let a = try #require(try storedProperties(collector, event: "a").first)
        #expect(a["plan"] == "pro")
        #expect(a["$os"] == "CustomOS")
        #expect(a["app"] == "shop")
        let b = try #require(try storedProperties(collector, event: "b").first)
        #expect(b["plan"] == "free")
        #expect(b["app"] == nil)
    }

    @Test func identifyAliasesOnceThenResetStartsOver() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector)
        defer { client.shutdown() }
        let anonymous = client.currentDistinctId
        client.track("before")
        client.identify("user-1")
        client.identify("user-1")  // unchanged: no-op
        client.track("after")
        client.identify("user-2")  // already identified: no alias
        #expect(await client.flush())
        let aliases = try collector.store.records(kind: "alias").map { CohorlyValue(json: $0.json) }
        #expect(aliases == [["alias": .string(anonymous), "distinct_id": "user-1"]])
        #expect(try storedProperties(collector, event: "before").first?["distinct_id"]?.stringValue == anonymous)
        #expect(try storedProperties(collector, event: "after").first?["distinct_id"] == "user-1")
        #expect(client.currentDistinctId == "user-2")

        client.register(["plan": "pro"])
        client.track("discarded")
        client.reset()
        let fresh = client.currentDistinctId
        #expect(fresh != anonymous && fresh != "user-2")
        client.track("new")
        #expect(await client.flush())
        #expect(try storedProperties(collector, event: "discarded").isEmpty)
        let new = try #require(try storedProperties(collector, event: "new").first)
        #expect(new["distinct_id"]?.stringValue == fresh)
        #expect(new["plan"] == nil)
        client.identify("user-3")  // anonymous again: aliases again
        #expect(await client.flush())
        #expect(try collector.store.records(kind: "alias").count == 2)
    }

    @Test func peopleOperationsGoToEngage() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector)
        defer { client.shutdown() }
        client.identify("user-1")
        client.people.set(["plan": "pro"])
        client.people.setOnce(["first_seen": "today"])
        client.people.increment("logins", by: 2)
        client.people.unset(["old"])
        client.people.deleteUser()
        #expect(await client.flush())
        let operations = try collector.store.records(kind: "engage").compactMap { CohorlyValue(json: $0.json) }
        #expect(
            operations == [
                ["distinct_id": "user-1", "$set": ["plan": "pro"]],
                ["distinct_id": "user-1", "$set_once": ["first_seen": "today"]],
                ["distinct_id": "user-1", "$add": ["logins": 2]],
                ["distinct_id": "user-1", "$unset": ["old"]],
                ["distinct_id": "user-1", "$delete": true],
            ])
    }

    @Test func optOutQueuesAndSendsNothingAndPersists() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        let client = makeClient(collector, directory: directory)
        client.track("queued before opting out")
        client.optOut()
        client.track("while opted out")
        client.people.set(["a": 1])
        #expect(await client.flush())
        #expect(try collector.store.eventCount() == 0)
        #expect(try collector.store.records(kind: "engage").isEmpty)
        #expect(client.queuedCount == 0)
        client.shutdown()

        let restarted = makeClient(collector, directory: directory)
        defer { restarted.shutdown() }
        #expect(restarted.isOptedOut)
        restarted.track("still opted out")
        restarted.optIn()
        restarted.track("opted in")
        #expect(await restarted.flush())
        #expect(try collector.store.events().map(\.event) == ["opted in"])
    }

    @Test func identityAndSuperPropertiesSurviveARestart() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let directory = temporaryDirectory()
        let client = makeClient(collector, directory: directory)
        client.identify("user-9")
        client.register(["tier": "gold"])
        client.track("queued, not flushed")
        client.shutdown()

        let restarted = makeClient(collector, directory: directory)
        defer { restarted.shutdown() }
        #expect(restarted.currentDistinctId == "user-9")
        restarted.track("after restart")
        #expect(await restarted.flush())
        let events = try storedProperties(collector)
        #expect(events.count == 2)
        #expect(events.allSatisfy { $0["tier"] == "gold" && $0["distinct_id"] == "user-9" })
    }

    @Test func concurrentTrackFromManyThreads() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector) { $0.flushAt = 20 }
        defer { client.shutdown() }
        let threads = 16
        let perThread = 500
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread {
                client.track("concurrent", properties: ["thread": .int(thread), "n": .int(index)])
                if index % 100 == 0 { client.register(["last_thread": .int(thread)]) }
            }
        }
        #expect(await client.flush())
        let stored = try storedProperties(collector)
        #expect(stored.count == threads * perThread)
        let keys = Set(
            stored.compactMap { p in p["thread"]?.intValue.flatMap { t in p["n"]?.intValue.map { t * 10_000 + $0 } } })
        #expect(keys.count == threads * perThread)
        #expect(Set(stored.compactMap { $0["$insert_id"]?.stringValue }).count == threads * perThread)
    }

    @Test func theQueueIsBoundedDroppingTheOldest() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        let client = makeClient(collector, recorder: recorder) { $0.maxQueueSize = 10 }
        defer { client.shutdown() }
        for index in 0..<25 { client.track("e", properties: ["n": .int(index)]) }
        client.waitUntilPersisted()
        #expect(client.queuedCount == 10)
        #expect(client.droppedCount == 15)
        #expect(recorder.lines.contains { $0.contains("queue full") })
        #expect(await client.flush())
        #expect(try storedProperties(collector).compactMap { $0["n"]?.intValue }.sorted() == Array(15..<25))
    }

    @Test func timerAndSizeTriggerFlushesWithoutAnExplicitFlush() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let bySize = makeClient(collector) { $0.flushAt = 5 }
        defer { bySize.shutdown() }
        for _ in 0..<5 { bySize.track("size") }
        #expect(await eventually { (try? collector.store.events(matching: EventQuery(event: "size")).count) == 5 })
        let byTimer = makeClient(collector) { $0.flushInterval = 0.05 }
        defer { byTimer.shutdown() }
        byTimer.track("timer")
        #expect(await eventually { (try? collector.store.events(matching: EventQuery(event: "timer")).count) == 1 })
    }

    @Test func eventsTheServerWouldRefuseAreDroppedAloneNotWithTheirBatch() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        let client = makeClient(collector, recorder: recorder)
        defer { client.shutdown() }
        client.track("good")
        client.track("")
        client.track("bad id", properties: ["distinct_id": ""])
        client.track("also good", properties: ["distinct_id": 42])
        #expect(await client.flush())
        #expect(try collector.store.events().map(\.event) == ["good", "also good"])
        #expect(recorder.lines.filter { $0.hasPrefix("dropped event") }.count == 2)
    }

    @Test func retryAfterAsAnHTTPDate() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        let client = makeClient(collector, recorder: recorder) { $0.retry.maxDelay = 1_000 }
        defer { client.shutdown() }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        collector.injectFault(Fault(status: 503, retryAfter: formatter.string(from: Date(timeIntervalSinceNow: 300))))
        client.track("e")
        #expect(await client.flush() == false)
        let delay = try #require(recorder.retryDelays.first)
        #expect(delay > 250 && delay <= 300)
    }

    @Test func anUnwritableStorageDirectoryFallsBackToMemory() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let client = makeClient(collector, directory: URL(fileURLWithPath: "/proc/self/cohorly-cannot-be-here"))
        defer { client.shutdown() }
        client.track("still works")
        #expect(await client.flush())
        #expect(try collector.store.events().map(\.event) == ["still works"])
    }

    @Test func automaticFlushesWaitOutTheBackoffWindow() {
        // Size trigger: now, unless backing off.
        #expect(Delivery.automaticFlushDue(now: 10, count: 20, flushAt: 20, timer: 15, backoffUntil: 0) == 10)
        #expect(Delivery.automaticFlushDue(now: 10, count: 20, flushAt: 20, timer: 15, backoffUntil: 40) == 40)
        // Timer trigger: at the timer, unless backing off longer.
        #expect(Delivery.automaticFlushDue(now: 10, count: 3, flushAt: 20, timer: 15, backoffUntil: 0) == 15)
        #expect(Delivery.automaticFlushDue(now: 10, count: 3, flushAt: 20, timer: 15, backoffUntil: 40) == 40)
        #expect(Delivery.automaticFlushDue(now: 10, count: 3, flushAt: 20, timer: 15, backoffUntil: 12) == 15)
    }

    @Test func anExplicitFlushBypassesTheBackoffWindow() async throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let recorder = Recorder()
        let client = makeClient(collector, recorder: recorder) { $0.retry.maxDelay = 3_600 }
        defer { client.shutdown() }
        collector.injectFault(Fault(status: 503, retryAfter: "3600"))
        client.track("e")
        #expect(await client.flush() == false)
        #expect(recorder.retryDelays == [3_600])
        #expect(await client.flush())  // an hour of backoff left, and it still tries now
        #expect(try collector.store.eventCount() == 1)
    }

    @Test func jitterStaysWithinTwentyPercent() {
        var policy = RetryPolicy.default
        policy.random = { 0 }
        #expect(policy.delay(afterFailures: 1) == 1.6)
        policy.random = { 1 }
        #expect(abs(policy.delay(afterFailures: 1) - 2.4) < 1e-9)
        #expect(policy.delay(afterFailures: 20) == 600)  // capped after jitter
        policy.random = { 0.5 }
        #expect((1...9).map { policy.delay(afterFailures: $0) } == [2, 4, 8, 16, 32, 64, 128, 256, 512])
        #expect(policy.delay(afterFailures: 10) == 600)
        #expect(policy.delay(retryAfter: 5000) == 600)
    }

    @Test func debugLogNeverContainsTheToken() async throws {
        let collector = try startCollector { $0.tokens = ["secret-token-123"] }
        defer { collector.stop() }
        let recorder = Recorder()
        let client = makeClient(collector, token: "secret-token-123", recorder: recorder)
        defer { client.shutdown() }
        collector.injectFault(Fault(status: 503))
        client.track("e")
        #expect(await client.flush() == false)
        #expect(await client.flush())
        #expect(!recorder.lines.isEmpty)
        #expect(recorder.lines.allSatisfy { !$0.contains("secret-token-123") })
    }
}
