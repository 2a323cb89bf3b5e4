import CohorlyCrashModel
import CohorlySQLite
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// A database written by the collector of the time before crashes were stored as their model
/// (fixtures/collector/exception-properties, made by `cohorly serve` of that time with make.py there: `$exception`s
/// of every wire and shape, the device's own, a C++ crash, other SDKs', capture V1, the legacy wire, a Sentry
/// envelope) is stored again as models when opened, and every crash reads as that collector read it: the events,
/// the crash list, each crash and the issues answer byte for byte as expected/ (that collector's answers) says.
@Suite struct CrashStorageUpgradeTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures/collector/exception-properties")

    @Test func aDatabaseOfExceptionPropertiesIsStoredAsModelsAndReadAsBefore() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(
            at: Self.fixture.appendingPathComponent("collector.sqlite"),
            to: directory.appendingPathComponent("collector.sqlite"))
        let collector = try startCollector {
            $0.tokens = ["t"]
            $0.dataDirectory = directory
        }
        defer { collector.stop() }
        // Stored as models: every crash has its model.
        let database = try SQLiteDatabase(path: directory.appendingPathComponent("collector.sqlite").path)
        var crashes = 0
        try database.prepare("SELECT crash FROM events WHERE event = '$exception'").rows { row in
            crashes += 1
            #expect(row.text(0).flatMap(StoredCrash.crash) != nil, "\(row.text(0) ?? "no model")")
            return true
        }
        #expect(crashes == 9)
        let expected = Self.fixture.appendingPathComponent("expected")
        let answers = try FileManager.default.contentsOfDirectory(atPath: expected.path).sorted()
        #expect(answers.count == 12, "\(answers)")
        for answer in answers {
            let name = String(answer.dropLast(".json".count))
            let path =
                switch name {
                case "events": "/api/events?limit=1000"
                case "crashes": "/api/crashes?limit=1000"
                case "issues": "/api/issues?limit=1000"
                default: "/api/crashes/" + name.dropFirst("crash-".count)
                }
            let reply = send(collector, "GET", path, headers: [])
            let want = try String(contentsOf: expected.appendingPathComponent(answer), encoding: .utf8)
            #expect(reply.status == 200 && reply.text == want, "\(path)")
        }
        // Opened again, nothing is left to convert.
        #expect(try CollectorStore.storeCrashesAsModels(database) == 0)
    }

    /// A crash as the device renders it (CapturedException.eventProperties) is stored as its model: its stack,
    /// threads and images are not kept beside it as PostHog's members, and it reads back as it arrived.
    @Test func aDeviceCrashIsStoredAsItsModel() throws {
        var crash = CapturedException(
            description: CrashDescription(
                type: "Fatal error", value: "Index out of range", mechanism: "swift_fatal",
                issueName: "Fatal error: Index out of range", source: "message"),
            facts: CrashReason.Facts(message: "Fatal error: Index out of range"), level: "fatal", handled: false)
        let symbol = FrameSymbol(
            function: "Shop.PricingService.total() -> Swift.Int", rawFunction: "$s4Shop14PricingServiceV5totalSiyF",
            file: "Pricing.swift", line: 12, column: 7, inlined: false, shortFunction: "PricingService.total()")
        crash.threads = [
            CapturedException.Thread(
                tid: 1, name: "main", crashed: true,
                frames: [
                    CapturedException.StackFrame(
                        Frame(Address(0x55d0_0000_1400), kind: .pc), inApp: true, symbols: [symbol]),
                    CapturedException.StackFrame(Frame(Address(0x7f00_0000_1000), kind: .returnAddress)),
                ]),
            CapturedException.Thread(
                tid: 2, name: "worker", crashed: false,
                frames: [CapturedException.StackFrame(Frame(Address(0x7f00_0000_1180), kind: .pc))]),
        ]
        crash.images = [
            CapturedException.Image(
                path: "/opt/shop/Shop", base: 0x55d0_0000_0000, size: 1 << 20,
                buildId: "0102030405060708090a0b0c0d0e0f1011121314"),
            CapturedException.Image(
                path: "/usr/lib/libc.so.6", base: 0x7f00_0000_0000, size: 1 << 21,
                buildId: "a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4"),
        ]
        crash.arch = "x86_64"
        crash.insertId = "d1"
        crash.timestampMs = 1_764_990_000_000
        crash.properties = ["distinct_id": "alice", "release": "shop@1"]
        let properties = JSONValue.object(crash.eventProperties)
        let collector = try startCollector()
        defer { collector.stop() }
        let body = JSONValue.object(["event": "$exception", "properties": properties]).jsonString
        #expect(send(collector, "/track", body: body).status == 200)
        let stored = try #require(try collector.store.events(matching: EventQuery(insertId: "d1")).first)
        #expect(JSONValue(json: stored.propertiesJSON) == properties)
        let columns = StoredCrash.columns(crash, properties: properties)
        for member in ["$exception_list", "$exception_threads", "$debug_images", "$exception_type", "time"] {
            #expect(!columns.properties.contains("\"\(member)\""), "\(member): \(columns.properties)")
        }
        #expect(StoredCrash.crash(columns.crash)?.threads == crash.threads)
    }
}
