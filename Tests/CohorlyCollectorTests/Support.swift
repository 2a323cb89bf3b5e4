import Cohorly
import CohorlyCollector
import Foundation

/// This run's directory for temporary files: `$TMPDIR/cohorly-client-tests/<pid>`. Creating it removes the
/// directories of earlier runs whose process is gone, so test files never pile up.
let testRoot: URL = {
    let base = FileManager.default.temporaryDirectory.appendingPathComponent("cohorly-client-tests")
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: base.path)) ?? []
    for entry in entries {
        guard let pid = Int32(entry), pid != getpid(), kill(pid, 0) != 0, errno == ESRCH else { continue }
        try? FileManager.default.removeItem(at: base.appendingPathComponent(entry))
    }
    let root = base.appendingPathComponent(String(getpid()))
    try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    return root
}()

/// A fresh directory under this run's `testRoot`.
func temporaryDirectory() -> URL {
    let url = testRoot.appendingPathComponent(UUID().uuidString)
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A loopback collector with in-memory storage accepting `t1` and `t2`.
func startCollector(_ configure: (inout CollectorConfiguration) -> Void = { _ in }) throws -> Collector {
    var configuration = CollectorConfiguration()
    configuration.tokens = ["t1", "t2"]
    configure(&configuration)
    let collector = try Collector(configuration: configuration)
    try collector.start()
    return collector
}

/// One raw HTTP exchange through libcurl.
struct Reply {
    var status: Int
    var retryAfter: Double?
    var body: CohorlyValue?
    var text: String
}

func send(
    _ collector: Collector, _ path: String, body: String = "",
    headers: [(String, String)] = [("Content-Type", "application/json"), ("X-Cohorly-Token", "t1")]
) -> Reply {
    send(collector, "POST", path, body: body, headers: headers)
}

func send(
    _ collector: Collector, _ method: String, _ path: String, body: String = "",
    headers: [(String, String)] = [("Content-Type", "application/json"), ("X-Cohorly-Token", "t1")]
) -> Reply {
    sendBytes(collector, path, method: method, body: Array(body.utf8), headers: headers)
}

func sendBytes(
    _ collector: Collector, _ path: String, method: String = "POST", body: [UInt8], headers: [(String, String)]
) -> Reply {
    let url = URL(string: collector.baseURL.absoluteString + path) ?? collector.baseURL
    let request = TransportRequest(
        url: url, method: method, headers: headers, body: body, timeout: 60, connectTimeout: 5)
    switch CurlTransport().send(request) {
    case .http(let status, let retryAfter, let bytes):
        let text = String(decoding: bytes, as: UTF8.self)
        return Reply(status: status, retryAfter: retryAfter, body: CohorlyValue(json: text), text: text)
    case .failure(let message):
        return Reply(status: 0, retryAfter: nil, body: nil, text: message)
    }
}

/// `{"event":name,"properties":{"distinct_id":"u", …extra}}` as JSON text.
func event(_ name: String = "e", insertId: String? = nil, _ extra: [String: CohorlyValue] = [:]) -> String {
    var properties: [String: CohorlyValue] = ["distinct_id": "u"]
    if let insertId { properties["$insert_id"] = .string(insertId) }
    properties.merge(extra) { _, new in new }
    return CohorlyValue.object(["event": .string(name), "properties": .object(properties)]).jsonString
}
