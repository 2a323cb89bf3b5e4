import Cohorly
import CohorlyCrash
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// `$exception` events of real CrashDemo crashes (debug build), made on the device as a next launch makes them:
/// `index-out-of-range` twice (two launches), `null-write` once, and the first index crash again without the
/// device's symbols (every frame raw, as from a device without the binary), and an uncaught C++ exception.
actor CrashEvents {
    struct Events: Sendable {
        var index1: [String: CohorlyValue]
        var index2: [String: CohorlyValue]
        var null: [String: CohorlyValue]
        var rawIndex: [String: CohorlyValue]
        var cxx: [String: CohorlyValue]
        /// The crashed executable: its path and build id.
        var executable: (path: String, buildId: String)?
    }

    private var made: Task<Events, any Error>?

    func events() async throws -> Events {
        if let made { return try await made.value }
        let task = Task { try await Self.make() }
        made = task
        return try await task.value
    }

    private static func make() async throws -> Events {
        // The first index crash before the second: their crash times order the issue's first and last release.
        let first = try await crash(["crash", "index-out-of-range"], "issues-index-1")
        async let index2 = crash(["crash", "index-out-of-range"], "issues-index-2")
        async let null = crash(["crash", "null-write"], "issues-null")
        async let cxx = crash(["crash", "cxx-exception"], "issues-cxx")
        let module = first.report.modules.first { $0.path == first.report.executable }
        return Events(
            index1: first.symbolicated, index2: try await index2.symbolicated, null: try await null.symbolicated,
            rawIndex: first.raw, cxx: try await cxx.symbolicated,
            executable: module.map { ($0.path, $0.buildId) })
    }

    private static func crash(_ arguments: [String], _ label: String) async throws
        -> (report: CrashReport, symbolicated: [String: CohorlyValue], raw: [String: CohorlyValue])
    {
        let run = try await runCrashDemo(arguments, label: label)
        defer { try? FileManager.default.removeItem(at: run.reportDirectory) }
        let report = try #require(try run.reports().first, "\(label): no report\n\(run.stderr)")
        let symbolicated = ExceptionBuilder.make(from: report, symbols: ExceptionBuilder.symbolicate(report)).properties
        return (report, symbolicated, ExceptionBuilder.make(from: report).properties)
    }
}

/// A loopback collector (token `t`) and the requests the issue tests make.
struct IssueCollector {
    let collector: Collector

    init() throws {
        var configuration = CollectorConfiguration()
        configuration.tokens = ["t"]
        collector = try Collector(configuration: configuration)
        try collector.start()
    }

    /// POSTs `properties` to `/track` as a `$exception` with these fields replaced; the status.
    func track(
        _ properties: [String: CohorlyValue], insertId: String, distinctId: String = "u", release: String? = nil
    ) -> Int {
        var properties = properties
        properties["$insert_id"] = .string(insertId)
        properties["distinct_id"] = .string(distinctId)
        if let release { properties["release"] = .string(release) }
        let body = CohorlyValue.object(["event": "$exception", "properties": .object(properties)]).jsonString
        return sendTo(collector, "POST", "/track", body: Array(body.utf8), headers: [("X-Cohorly-Token", "t")]).status
    }

    /// POSTs `body` (JSON) to `path`; the status.
    func post(_ path: String, _ body: [String: CohorlyValue]) -> Int {
        sendTo(collector, "POST", path, body: Array(CohorlyValue.object(body).jsonString.utf8)).status
    }

    /// GETs `path`: the JSON answer of a 200, else nil.
    func get(_ path: String) -> CohorlyValue? {
        let reply = sendTo(collector, "GET", path, body: [])
        return reply.status == 200 ? CohorlyValue(json: reply.text) : nil
    }

    /// `GET /api/issues`'s issues.
    func list(_ query: String = "") throws -> [CohorlyValue] {
        try #require(get("/api/issues" + query)?["issues"]?.arrayValue, "GET /api/issues\(query) failed")
    }

    /// `GET /api/issues/<id>`'s issue.
    func issue(_ id: Int) throws -> CohorlyValue {
        try #require(get("/api/issues/\(id)")?["issue"], "GET /api/issues/\(id) failed")
    }
}

/// One HTTP exchange with `collector` through libcurl: the status (0: no answer) and the body as text.
func sendTo(
    _ collector: Collector, _ method: String, _ path: String, body: [UInt8],
    headers: [(String, String)] = [("Content-Type", "application/json")]
) -> (status: Int, text: String) {
    let url = URL(string: collector.baseURL.absoluteString + path) ?? collector.baseURL
    let headers =
        headers.contains { $0.0 == "Content-Type" } ? headers : headers + [("Content-Type", "application/json")]
    let request = TransportRequest(
        url: url, method: method, headers: method == "PUT" ? [] : headers, body: body, timeout: 60, connectTimeout: 5)
    switch CurlTransport().send(request) {
    case .http(let status, _, let bytes): return (status, String(decoding: bytes, as: UTF8.self))
    case .failure(let message): return (0, message)
    }
}
