import Cohorly
import CohorlyCollector
import Foundation
import Testing

/// `/track`, `/engage`, `/alias` as the public docs describe them.
@Suite struct IngestionTests {
    @Test func acceptsASingleObjectOrAnArray() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let single = send(collector, "/track", body: event("one"))
        #expect(single.status == 200)
        #expect(single.body == ["status": 1, "inserted": 1])
        let array = send(collector, "/track", body: "[\(event("two")),\(event("three"))]")
        #expect(array.body == ["status": 1, "inserted": 2])
        #expect(try collector.store.events().map(\.event) == ["one", "two", "three"])
    }

    @Test func deduplicatesByInsertIdPerProject() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        #expect(send(collector, "/track", body: event(insertId: "a")).body == ["status": 1, "inserted": 1])
        #expect(
            send(collector, "/track", body: "[\(event(insertId: "a")),\(event(insertId: "b"))]").body == [
                "status": 1, "inserted": 1,
            ])
        let otherProject = [("Content-Type", "application/json"), ("X-Cohorly-Token", "t2")]
        #expect(
            send(collector, "/track", body: event(insertId: "a"), headers: otherProject).body == [
                "status": 1, "inserted": 1,
            ])
        #expect(try collector.store.eventCount() == 3)
        // Events without $insert_id are never deduplicated.
        _ = send(collector, "/track", body: "[\(event()),\(event())]")
        #expect(try collector.store.eventCount() == 5)
    }

    @Test func tokensComeFromTheHeaderOrTheRecordWhichWinsAndIsStripped() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let invalid: CohorlyValue = ["status": 0, "error": "invalid token"]
        let noToken = [("Content-Type", "application/json")]
        let wrongHeader = [("Content-Type", "application/json"), ("X-Cohorly-Token", "nope")]
        #expect(send(collector, "/track", body: event(), headers: noToken).status == 401)
        let wrong = send(collector, "/track", body: event(), headers: wrongHeader)
        #expect(wrong.status == 401)
        #expect(wrong.body == invalid)
        #expect(send(collector, "/track", body: event("own", ["token": "t1"]), headers: wrongHeader).status == 200)
        #expect(send(collector, "/track", body: event("bad", ["token": "nope"])).status == 401)
        #expect(
            send(collector, "/engage", body: #"{"distinct_id":"u","$set":{"a":1},"token":"t2"}"#, headers: noToken)
                .status == 200)
        #expect(send(collector, "/alias", body: #"{"alias":"x","distinct_id":"u","token":"nope"}"#).status == 401)
        let stored = try collector.store.events()
        #expect(stored.map(\.event) == ["own"])
        #expect(stored.first?.propertiesJSON.contains("token") == false)
        #expect(try collector.store.records(kind: "engage").map(\.json) == [#"{"$set":{"a":1},"distinct_id":"u"}"#])
    }

    @Test func limitsOn500RecordsAndOneMegabyte() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let five100 = Array(repeating: event(), count: 500).joined(separator: ",")
        #expect(send(collector, "/track", body: "[\(five100)]").body == ["status": 1, "inserted": 500])
        let tooMany = send(collector, "/track", body: "[\(five100),\(event())]")
        #expect(tooMany.status == 400)
        #expect(tooMany.body?["error"]?.stringValue?.contains("batch too large") == true)
        let big = event("big", ["pad": .string(String(repeating: "x", count: 1 << 20))])
        let tooLarge = send(collector, "/track", body: big)
        #expect(tooLarge.status == 413)
        #expect(try collector.store.eventCount() == 500)
    }

    @Test func aRejectedBatchIsNeverPartlyInserted() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let missingDistinctId = #"{"event":"x","properties":{}}"#
        #expect(send(collector, "/track", body: "[\(event("ok")),\(missingDistinctId)]").status == 400)
        #expect(send(collector, "/track", body: "[\(event("ok")),\(event("bad", ["token": "nope"]))]").status == 401)
        #expect(send(collector, "/track", body: "[\(event("ok")), 42]").status == 400)
        #expect(
            send(collector, "/alias", body: #"[{"alias":"a","distinct_id":"u"},{"distinct_id":"u"}]"#).status == 400)
        #expect(try collector.store.eventCount() == 0)
        #expect(try collector.store.records(kind: "alias").isEmpty)
    }

    @Test func storesAliasAndEngageRecords() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        #expect(
            send(collector, "/alias", body: #"{"alias":"anon","distinct_id":"user"}"#).body == [
                "status": 1, "inserted": 1,
            ])
        #expect(
            send(
                collector, "/engage", body: #"[{"distinct_id":"u","$set":{"a":1}},{"distinct_id":"u","$add":{"n":2}}]"#
            ).status == 200)
        #expect(try collector.store.records(kind: "alias").map(\.json) == [#"{"alias":"anon","distinct_id":"user"}"#])
        #expect(try collector.store.records(kind: "engage").count == 2)
        let listed = send(collector, "GET", "/api/aliases", headers: [])
        #expect(listed.body?["count"] == 1)
    }

    @Test func storageSurvivesARestart() throws {
        let directory = temporaryDirectory()
        let first = try startCollector { $0.dataDirectory = directory }
        #expect(send(first, "/track", body: event(insertId: "kept")).status == 200)
        first.stop()
        let second = try startCollector { $0.dataDirectory = directory }
        defer { second.stop() }
        #expect(try second.store.events().map(\.insertId) == ["kept"])
        #expect(send(second, "/track", body: event(insertId: "kept")).body == ["status": 1, "inserted": 0])
    }

    /// A copy of the data-directory lock's descriptor — what a child forked by another thread at that moment
    /// holds until it execs — does not keep the directory locked once the collector stopped.
    @Test func aCopyOfTheLockDescriptorDoesNotOutliveStop() throws {
        let directory = temporaryDirectory()
        let first = try startCollector { $0.dataDirectory = directory }
        let lockPath = directory.appendingPathComponent("collector.lock").resolvingSymlinksInPath().path
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        let lock = try #require(
            descriptors.compactMap(Int32.init).first {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == lockPath
            })
        let copy = dup(lock)
        #expect(copy >= 0)
        defer { close(copy) }
        first.stop()
        let second = try startCollector { $0.dataDirectory = directory }
        second.stop()
    }

    @Test func concurrentRequestsAreAllStored() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for index in 0..<25 {
                _ = send(collector, "/track", body: event(insertId: "\(worker)-\(index)"))
            }
        }
        #expect(try collector.store.eventCount() == 200)
    }
}
