import Foundation

extension HTTPRequest {
    /// A request written as text, the way the ingestion fuzz target and its seeds (`fixtures/fuzz/ingestion/
    /// request-*`) spell whole requests: `METHOD /path?query HTTP/1.1`, header lines, an empty line, the body
    /// (line ends `\r\n` or `\n`; query values are not percent-decoded). Nil when the bytes do not start with a
    /// request line.
    package init?(raw bytes: [UInt8]) {
        let newline = UInt8(ascii: "\n")
        var lines: [String] = []
        var start = 0
        var bodyStart: Int?
        for index in bytes.indices where bytes[index] == newline {
            var line = String(decoding: bytes[start..<index], as: UTF8.self)
            if line.hasSuffix("\r") { line.removeLast() }
            start = index + 1
            if line.isEmpty, !lines.isEmpty {
                bodyStart = start
                break
            }
            lines.append(line)
        }
        let requestLine = (lines.first ?? "").split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/"), requestLine[1].hasPrefix("/") else {
            return nil
        }
        let target = requestLine[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [String: String] = [:]
        if target.count == 2 {
            for pair in target[1].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                query[String(parts[0])] = parts.count == 2 ? String(parts[1]) : ""
            }
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        self.init(
            method: String(requestLine[0]), path: String(target[0]), query: query, headers: headers,
            body: bodyStart.map { Array(bytes[$0...]) } ?? [], clientAddress: "127.0.0.1")
    }
}
