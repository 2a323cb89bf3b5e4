import Foundation
import Testing

import Cohorly
@testable import CohorlyClient
@testable import CohorlySentry

/// Events in Sentry's envelopes, framed and authenticated as the protocol says, in Sentry's native schema, and
/// accepted by Sentry's own normalizer.
@Suite struct SentryWireTests {
    @Test func aCrashIsOneEnvelopeWithItsEventInSentrysNativeSchema() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let client = try makeSentryClient(mock) { $0.sessions = false }
        defer { client.shutdown() }
        let record = SentryRecords.crash()
        #expect(try client.enqueuePrepared(record) == .queued)
        #expect(await client.flush())
        let envelope = try #require(mock.envelopes.first)
        #expect(envelope.framingError == nil)
        #expect(envelope.header("Content-Type") == "application/x-sentry-envelope")
        let auth = try #require(envelope.header("X-Sentry-Auth"))
        #expect(
            auth
                == "Sentry sentry_version=7, sentry_client=cohorly.swift.linux/\(AutomaticProperties.libraryVersion), sentry_key=\(mock.publicKey)"
        )
        #expect(envelope.header["event_id"] == "5c8e3a023f7a4d579d7e6f7f0a1b2c3d")
        #expect(envelope.header["dsn"]?.stringValue == mock.dsn())
        #expect(envelope.header["sent_at"]?.stringValue.flatMap(RFC3339.milliseconds) != nil)
        #expect(envelope.items.map { $0.header["type"] } == ["event"])
        let event = try #require(envelope.events.first)
        #expect(event["event_id"] == "5c8e3a023f7a4d579d7e6f7f0a1b2c3d")
        #expect(event["level"] == "fatal")
        #expect(event["platform"] == "native")
        #expect(event["timestamp"]?.doubleValue == 1_796_032_800)
        #expect(event["release"] == "App@1.2.0")
        #expect(event["environment"] == "production")
        #expect(event["user"] == ["id": "user-1"])
        #expect(event["contexts"]?["os"] == ["name": "Linux", "version": "12", "kernel_version": "6.1.0"])
        #expect(event["contexts"]?["device"] == ["arch": "x86_64"])
        #expect(event["contexts"]?["runtime"] == ["name": "Swift"])
        let exception = try #require(event["exception"]?["values"]?.arrayValue?.first)
        #expect(exception["type"] == "Swift runtime failure: Index out of range")
        #expect(exception["thread_id"] == 100)
        #expect(exception["mechanism"]?["type"] == "swift_fatal")
        #expect(exception["mechanism"]?["handled"] == false)
        #expect(exception["mechanism"]?["meta"] == ["signal": ["number": 5, "code": 128, "name": "SIGTRAP"]])
        let frames = try #require(exception["stacktrace"]?["frames"]?.arrayValue)
        #expect(frames.map { $0["function"]?.stringValue ?? "" } == SentryRecords.functions)
        #expect(
            frames[2] == [
                "instruction_addr": "0x401234", "image_addr": "0x400000", "package": "/opt/app/bin/App",
                "function": "App.crash() -> ()", "filename": "/src/App/Crash.swift", "abs_path": "/src/App/Crash.swift",
                "lineno": 3, "colno": 9, "in_app": true, CapturedException.frameKindKey: "pc",
                "symbol": "$s3App5crashyyF",
            ])
        #expect(frames[0]["in_app"] == false)
        let threads = try #require(event["threads"]?["values"]?.arrayValue)
        #expect(threads[0] == ["id": 100, "name": "main", "crashed": true, "current": true])
        #expect(threads[1]["id"] == 101)
        #expect(threads[1]["crashed"] == false)
        #expect(threads[1]["stacktrace"]?["frames"]?.arrayValue?.count == 2)
        let images = try #require(event["debug_meta"]?["images"]?.arrayValue)
        #expect(
            images[1] == [
                "type": "elf", "code_file": "/opt/app/bin/App", "code_id": "68220ae2c65d65c1b6aaa12fa6765a6ec2f5f434",
                "debug_id": "e20a2268-5dc6-c165-b6aa-a12fa6765a6e", "image_addr": "0x400000", "image_size": 65_536,
                "arch": "x86_64",
            ])
        #expect(event["breadcrumbs"]?["values"]?.arrayValue?.first?["message"] == "Checkout")
        #expect(event["tags"] == ["plan": "pro", "seats": "3"])
        #expect(event["extra"]?["cart"] == ["items": 2])
        #expect(event["extra"]?["$exception_pid"] == 4242)
        let refused = try await relayErrors([event])
        #expect(refused == [], "\(refused)")
    }

    @Test func everyKindOfEventPassesSentrysNormalizer() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let client = try makeSentryClient(mock) { $0.sessions = false }
        defer { client.shutdown() }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let records = [
            SentryRecords.crash(), SentryRecords.signal(), SentryRecords.handled(), SentryRecords.message(),
            SentryRecords.hang(), SentryRecords.abnormalExit(at: now),
        ]
        for record in records { _ = try client.enqueuePrepared(record) }
        #expect(await client.flush())
        // Several envelopes are in flight at once, so they may arrive in any order: each is found by its event id.
        let received = Dictionary(
            mock.events.compactMap { event in event["event_id"]?.stringValue.map { ($0, event) } },
            uniquingKeysWith: { first, _ in first })
        #expect(mock.events.count == 6)
        let events = try records.map { record in
            try #require(received[record.insertId.replacingOccurrences(of: "-", with: "")])
        }
        let refused = try await relayErrors(events)
        #expect(refused == [], "\(refused)")
        let signal = try #require(events[1]["exception"]?["values"]?.arrayValue?.first?["mechanism"])
        #expect(signal["type"] == "signalhandler")
        #expect(signal["synthetic"] == true)
        #expect(signal["data"]?["fault_address"] == "0x0")
        let handled = try #require(events[2]["exception"]?["values"]?.arrayValue?.first)
        #expect(events[2]["level"] == "error")
        #expect(handled["mechanism"]?["type"] == "generic")
        #expect(handled["mechanism"]?["handled"] == true)
        #expect(events[3]["logentry"] == ["formatted": "Payment retried\nthree times"])
        #expect(events[3]["exception"] == nil)
        #expect(events[3]["threads"]?["values"]?.arrayValue?.first?["stacktrace"]?["frames"]?.arrayValue?.count == 3)
        let hang = try #require(events[4]["exception"]?["values"]?.arrayValue?.first?["mechanism"])
        #expect(hang["type"] == "AppHang")
        #expect(hang["data"] == ["duration_ms": 3020, "subject": "main thread"])
        let abnormal = try #require(events[5]["exception"]?["values"]?.arrayValue?.first)
        #expect(events[5]["level"] == "fatal")
        #expect(abnormal["stacktrace"] == nil)
        #expect(abnormal["mechanism"]?["type"] == "abnormal_exit")
    }

    @Test func aDSNWithAPathPrefixAndGzip() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let client = try makeSentryClient(mock, prefix: "/sentry/relay") {
            $0.sessions = false
            $0.compression = true
        }
        defer { client.shutdown() }
        _ = try client.enqueuePrepared(SentryRecords.handled())
        #expect(await client.flush())
        let envelope = try #require(mock.envelopes.first)
        #expect(envelope.path == "/sentry/relay/api/42/envelope/")
        #expect(envelope.header("Content-Encoding") == "gzip")
        #expect(envelope.framingError == nil)
        #expect(envelope.events.count == 1)
    }

    @Test func aResentEventKeepsItsIdSoTheServerKeepsItOnce() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let recorder = Recorder()
        let client = try makeSentryClient(mock, recorder: recorder) { $0.sessions = false }
        defer { client.shutdown() }
        let record = SentryRecords.crash()
        mock.then(.dropConnection)
        _ = try client.enqueuePrepared(record)
        #expect(await client.flush() == false)
        #expect(try client.enqueuePrepared(record) == .alreadyQueued)
        #expect(await client.flush())
        #expect(mock.envelopes.count == 2)
        #expect(Set(mock.envelopes.map { $0.header["event_id"] }).count == 1)
        #expect(mock.storedEvents.count == 1)
        #expect(client.queuedCount == 0)
    }

    @Test func trackedEventsAndProfileCallsAreNotQueued() async throws {
        let mock = try MockSentry()
        defer { mock.stop() }
        let recorder = Recorder()
        let client = try makeSentryClient(mock, recorder: recorder) { $0.sessions = false }
        defer { client.shutdown() }
        client.track("Screen Viewed")
        client.identify("user-9", set: ["plan": "pro"])
        client.people.set(["seats": 3])
        client.alias("alias-1")
        client.waitUntilPersisted()
        #expect(client.queuedCount == 0)
        #expect(await client.flush())
        #expect(mock.envelopes.isEmpty)
        #expect(recorder.lines.contains { $0.contains("\"Screen Viewed\"") && $0.contains("no analytics events") })
        #expect(recorder.lines.contains { $0.contains("dropped people operation: Sentry has no profiles") })
        // identify sets the user of later events.
        _ = try client.enqueuePrepared(
            {
                var record = SentryRecords.handled()
                record.properties["distinct_id"] = nil
                return record
            }())
        #expect(await client.flush())
        #expect(mock.events.first?["user"] == ["id": "user-9"])
        #expect(!recorder.lines.joined().contains(mock.publicKey))
    }
}
