import Cohorly
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// Issue 43, items 3–5, over loopback: an issue's tag breakdowns (API, page, `cohorly issues show`), an
/// occurrence's stored JSON as a download and its page by insert id, previous / next occurrence, the culprit in the
/// stack's short form, and breadcrumbs with their data.
@Suite struct IssueTrackerPageTests {
    static let secret = "tracker-secret"

    static func collector() throws -> Collector {
        try startCollector { $0.adminToken = secret }
    }

    /// An `$exception` in `function` (a frame without a linkage name, as another SDK sends it).
    static func exception(
        _ insertId: String, time: Int64, function: String = "App.startService(Swift.String) async -> Swift.String",
        user: String = "u1", release: String? = "1.0.0", extra: [String: CohorlyValue] = [:]
    ) -> CohorlyValue {
        var properties: [String: CohorlyValue] = [
            "distinct_id": .string(user), "$insert_id": .string(insertId), "time": .int(Int(time)),
            "$exception_level": "fatal",
            "$exception_list": [
                [
                    "type": "Fatal error", "value": "boom", "mechanism": ["type": "swift_fatal", "handled": false],
                    "stacktrace": [
                        "type": "raw",
                        "frames": [
                            [
                                "platform": "native", "instruction_addr": "0x5555000012a0",
                                "image_addr": "0x555500000000", "module": "App", "in_app": true,
                                "function": .string(function), "instruction_addr_kind": "pc",
                            ]
                        ],
                    ],
                ]
            ],
        ]
        if let release { properties["release"] = .string(release) }
        properties.merge(extra) { $1 }
        return ["event": "$exception", "properties": .object(properties)]
    }

    /// One GET with the secret (unless `authorized` is false), read to the end: status, headers (lowercased
    /// names), body.
    static func get(_ collector: Collector, _ path: String, authorized: Bool = true) throws -> (
        status: Int, headers: [String: String], body: String
    ) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = collector.port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        #expect(connected == 0)
        let request =
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(collector.port)\r\nConnection: close\r\n"
            + (authorized ? "Authorization: Bearer \(secret)\r\n" : "") + "\r\n"
        _ = Array(request.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[..<count]
        }
        let text = String(decoding: received, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let head = parts.first?.components(separatedBy: "\r\n") ?? []
        let status = head.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return (status, headers, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    static func post(_ collector: Collector, _ events: [CohorlyValue]) {
        #expect(send(collector, "/track", body: CohorlyValue.array(events).jsonString).status == 200)
    }

    /// Row ids of the stored `$exception`s by insert id.
    static func rowIds(_ collector: Collector) throws -> [String: Int64] {
        var ids: [String: Int64] = [:]
        for event in try collector.store.events(matching: EventQuery(event: "$exception")) {
            if let insertId = event.insertId { ids[insertId] = event.id }
        }
        return ids
    }

    @Test func theStoredEventDownloadsAsJSONAndAnInsertIdOpensItsPage() throws {
        let collector = try Self.collector()
        defer { collector.stop() }
        let insertId = "5b1c0f2e-8d3a-4c47-9a41-0f6f2b7d9e10"
        Self.post(collector, [Self.exception(insertId, time: 1_800_000_000_000, extra: ["note": "kept \u{1F600}"])])
        let row = try #require(try Self.rowIds(collector)[insertId])
        let stored = try #require(try collector.store.events(matching: EventQuery(insertId: insertId)).first)

        let download = try Self.get(collector, "/events/\(row).json")
        #expect(download.status == 200)
        #expect(download.headers["content-type"] == "application/json")
        #expect(download.headers["content-disposition"] == "attachment; filename=\"occurrence-\(row).json\"")
        #expect(download.headers["x-content-type-options"] == "nosniff")
        #expect(download.headers["cache-control"] == "no-store")
        let json = try #require(CohorlyValue(json: download.body))
        #expect(json["id"] == .int(Int(row)) && json["insert_id"] == .string(insertId))
        #expect(json["event"] == "$exception" && json["distinct_id"] == "u1" && json["time"] == 1_800_000_000_000)
        // The properties byte for byte as stored.
        #expect(download.body.contains("\"properties\":" + stored.propertiesJSON + "}"))
        #expect(json["properties"]?["note"] == .string("kept \u{1F600}"))
        // Same rule as the page: no session, no secret, no event.
        let refused = try Self.get(collector, "/events/\(row).json", authorized: false)
        #expect(refused.status == 401 && !refused.body.contains(insertId))
        #expect(try Self.get(collector, "/events/\(row + 1).json").status == 404)

        // `/events/<insert id>` (and a unique prefix of it, as `crashes show` takes) is the row's page.
        let page = try Self.get(collector, "/events/\(row)")
        #expect(page.status == 200)
        for reference in [insertId, String(insertId.prefix(8))] {
            let byInsertId = try Self.get(collector, "/events/\(reference)")
            #expect(byInsertId.status == 200, "\(reference)")
            #expect(byInsertId.body == page.body, "\(reference)")
        }
        #expect(try Self.get(collector, "/events/\(insertId).json").body == download.body)
        #expect(try Self.get(collector, "/events/no-such-insert-id").status == 404)
        #expect(try Self.get(collector, "/events/\(insertId)", authorized: false).status == 401)
    }

    @Test func anOccurrencePageLinksToThePreviousAndNextOccurrenceOfItsIssue() throws {
        let collector = try Self.collector()
        defer { collector.stop() }
        // Arrival order differs from crash-time order; "other" is another issue in between.
        Self.post(
            collector,
            [
                Self.exception("late", time: 1_800_000_300_000), Self.exception("early", time: 1_800_000_100_000),
                Self.exception("other", time: 1_800_000_200_000, function: "App.other() -> ()"),
                Self.exception("middle", time: 1_800_000_200_000),
            ])
        let ids = try Self.rowIds(collector)
        func links(_ insertId: String) throws -> (previous: String?, next: String?) {
            let body = try Self.get(collector, "/events/\(ids[insertId] ?? 0)").body
            func href(_ rel: String) -> String? {
                guard let range = body.range(of: "rel=\"\(rel)\" href=\"") else { return nil }
                return String(body[range.upperBound...].prefix { $0 != "\"" })
            }
            return (href("prev"), href("next"))
        }
        let early = try links("early")
        #expect(early.previous == nil && early.next == "/events/\(ids["middle"] ?? 0)")
        let middle = try links("middle")
        #expect(middle.previous == "/events/\(ids["early"] ?? 0)" && middle.next == "/events/\(ids["late"] ?? 0)")
        let late = try links("late")
        #expect(late.previous == "/events/\(ids["middle"] ?? 0)" && late.next == nil)
        let page = try Self.get(collector, "/events/\(ids["middle"] ?? 0)").body
        #expect(page.contains("href=\"/events/\(ids["middle"] ?? 0).json\" download"))
    }

    @Test func anIssueIsBrokenDownByReleaseEnvironmentOSHostUserAndThread() async throws {
        let collector = try Self.collector()
        defer { collector.stop() }
        func tags(_ environment: String, _ os: String, _ host: String, _ thread: String) -> [String: CohorlyValue] {
            [
                "$environment": .string(environment), "$os": "Linux", "$os_distribution": .string(os),
                "$os_version": "24.04", "$hostname": .string(host), "$exception_thread_name": .string(thread),
            ]
        }
        var events: [CohorlyValue] = []
        for n in 0..<3 {
            events.append(
                Self.exception(
                    "a\(n)", time: 1_800_000_000_000 + Int64(n), user: "alice", release: "1.1.0",
                    extra: tags("production", "Ubuntu", "web-1", "main")))
        }
        events.append(
            Self.exception(
                "b", time: 1_800_000_010_000, user: "bob", release: "1.0.0",
                extra: tags("staging", "Debian", "web-2", "oot.default-qos")))
        events.append(Self.exception("c", time: 1_800_000_020_000, user: "carol", release: nil))
        Self.post(collector, events)
        let issues = try #require(CohorlyValue(json: try Self.get(collector, "/api/issues").body)?["issues"])
        #expect(issues.arrayValue?.count == 1)
        let id = try #require(issues.arrayValue?.first?["id"]?.intValue)

        let answer = try #require(CohorlyValue(json: try Self.get(collector, "/api/issues/\(id)").body))
        let tags = try #require(answer["tags"]?.arrayValue)
        #expect(
            tags.compactMap { $0["tag"]?.stringValue } == ["release", "environment", "os", "host", "user", "thread"])
        func values(_ tag: String) -> [String] {
            let breakdown = tags.first { $0["tag"]?.stringValue == tag }
            return (breakdown?["values"]?.arrayValue ?? []).map {
                "\($0["value"]?.stringValue ?? "-")=\($0["count"]?.intValue ?? 0)@\($0["percent"].map(\.jsonString) ?? "?")"
            }
        }
        #expect(values("release") == ["1.1.0=3@60.0", "1.0.0=1@20.0", "-=1@20.0"], "\(values("release"))")
        #expect(values("environment") == ["production=3@60.0", "staging=1@20.0", "-=1@20.0"])
        #expect(values("os") == ["Ubuntu 24.04=3@60.0", "Debian 24.04=1@20.0", "-=1@20.0"])
        #expect(values("host") == ["web-1=3@60.0", "web-2=1@20.0", "-=1@20.0"])
        #expect(values("user") == ["alice=3@60.0", "bob=1@20.0", "carol=1@20.0"])
        #expect(values("thread") == ["main=3@60.0", "oot.default-qos=1@20.0", "-=1@20.0"])
        #expect(tags.allSatisfy { $0["total"] == 5 })

        let page = try Self.get(collector, "/issues/\(id)").body
        #expect(page.contains("<h2>Tags</h2>"))
        for text in ["Ubuntu 24.04", "web-2", "staging", "60 %", "20 %"] { #expect(page.contains(text), "\(text)") }

        let shown = try await CLITests.run(
            ["issues", "show", String(id), "--host", collector.baseURL.absoluteString],
            environment: ["COHORLY_AUTH_TOKEN": Self.secret])
        #expect(shown.status == 0, "\(shown.error)")
        #expect(
            shown.output.contains("\n  release      1.1.0 3 (60 %), 1.0.0 1 (20 %), (none) 1 (20 %)\n"),
            "\(shown.output)")
        #expect(shown.output.contains("\n  user         alice 3 (60 %), bob 1 (20 %), carol 1 (20 %)\n"))
        #expect(shown.output.contains("\n  thread       main 3 (60 %), oot.default-qos 1 (20 %), (none) 1 (20 %)\n"))
    }

    @Test func tagsOfEventsStoredBeforeTheTableAreFilledWhenTheDatabaseOpens() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let event = Self.exception("old", time: 1_800_000_000_000, extra: ["$hostname": "build-7"])
        let properties = try #require(event["properties"])
        do {
            let store = try CollectorStore(directory: directory)
            let new = CollectorStore.NewEvent(
                token: "t1", event: "$exception", distinctId: "u1", time: 1_800_000_000_000, insertId: "old",
                propertiesJSON: properties.jsonString)
            _ = try store.insert(events: [new], receivedAt: 1_800_000_000_000)
            #expect(
                try IssueQueries(store: store).breakdowns(id: 1).first { $0.tag == "host" }?.values.first?.value
                    == "build-7")
            // As a collector before the table left it.
            try store.lock.withLock {
                try store.db.execute(
                    "DELETE FROM occurrence_tags; DELETE FROM issue_meta WHERE name = 'occurrence_tags'")
            }
            #expect(
                try IssueQueries(store: store).breakdowns(id: 1).first { $0.tag == "host" }?.values.first?.value == nil)
        }
        let reopened = try CollectorStore(directory: directory)
        let host = try IssueQueries(store: reopened).breakdowns(id: 1).first { $0.tag == "host" }
        #expect(host?.values.first?.value == "build-7" && host?.values.first?.count == 1)
    }

    @Test func theCulpritReadsAsTheStackPrintsItAndBreadcrumbsShowTheirData() async throws {
        let collector = try Self.collector()
        defer { collector.stop() }
        let crumbs: CohorlyValue = [
            [
                "timestamp": "2026-12-01T02:22:45.123Z", "category": "track", "message": "Purchase",
                "data": ["sku": "sku-404", "$task": 7, "$crashing_task": true],
            ]
        ]
        Self.post(collector, [Self.exception("e", time: 1_800_000_000_000, extra: ["$exception_breadcrumbs": crumbs])])
        let issue = try #require(
            CohorlyValue(json: try Self.get(collector, "/api/issues").body)?["issues"]?.arrayValue?.first)
        #expect(issue["culprit"] == "App.startService(Swift.String) async -> Swift.String")  // as keyed
        #expect(issue["culprit_display"] == "startService(_:)")
        let id = try #require(issue["id"]?.intValue)
        let shortId = try #require(issue["short_id"]?.stringValue)
        let single = try #require(CohorlyValue(json: try Self.get(collector, "/api/issues/\(id)").body)?["issue"])
        #expect(single["culprit_display"] == "startService(_:)")
        // The list and the issue's facts (the stack shows each frame as the event named it).
        let list = try Self.get(collector, "/").body
        #expect(list.contains("in <code><bdi>startService(_:)</bdi></code>"), "\(list)")
        #expect(!list.contains("async -&gt; Swift.String"))
        let page = try Self.get(collector, "/issues/\(id)").body
        #expect(page.contains("<dt>Culprit</dt><dd><bdi>startService(_:)</bdi></dd>"))
        #expect(page.contains("<dt>Short id</dt><dd><bdi>\(shortId)</bdi></dd>"), "\(page)")
        let host = collector.baseURL.absoluteString
        let environment = ["COHORLY_AUTH_TOKEN": Self.secret]
        let listed = try await CLITests.run(["issues", "list", "--host", host], environment: environment)
        #expect(listed.output.contains("Fatal error: boom (in startService(_:))"), "\(listed.output)")
        let shown = try await CLITests.run(["issues", "show", String(id), "--host", host], environment: environment)
        #expect(
            shown.output.hasPrefix("Issue \(id) (\(shortId)): Fatal error: boom (in startService(_:))\n"),
            "\(shown.output)")
        // The breadcrumb's data, without the recorder's task marks, on the page as in the CLI.
        let row = try #require(try Self.rowIds(collector)["e"])
        let occurrence = try Self.get(collector, "/events/\(row)").body
        #expect(occurrence.contains("{&quot;sku&quot;:&quot;sku-404&quot;}"), "no breadcrumb data")
        #expect(!occurrence.contains("crashing_task&quot;"))
        #expect(shown.output.contains("{\"sku\":\"sku-404\"}"))
    }
}
