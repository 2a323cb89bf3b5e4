import Foundation

/// The request log: one line per request (or per refused one), `<status> <METHOD> <path> from <address>: <reason>`.
/// Only the method, the path (never the query), the client address and the refusal's message are written, with
/// control characters escaped: never a header, so never a credential.
package struct RequestLog: Sendable {
    let level: RequestLogLevel
    let handler: (@Sendable (String) -> Void)?

    /// A log at `level`, writing each line to `handler` (nil: standard error).
    package init(level: RequestLogLevel, handler: (@Sendable (String) -> Void)?) {
        self.level = level
        self.handler = handler
    }

    /// Logs `request` answered with `answer` (nil: dropped without an answer) when the level asks for it.
    func record(_ request: HTTPRequest, _ answer: HTTPResponse?) {
        let refused = answer.map { $0.status >= 400 } ?? true
        switch level {
        case .none: return
        case .refused where !refused: return
        default: break
        }
        var line = "cohorly: \(answer.map { String($0.status) } ?? "dropped") \(Self.clean(request.method, 16)) "
        line += "\(Self.clean(request.path, 200)) from \(Self.clean(request.clientAddress, 64))"
        if let reason = answer?.reason { line += ": \(Self.clean(reason, 200))" }
        if let handler {
            handler(line)
        } else {
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

    /// `text` cut at `limit` characters, control characters as `\u{…}`.
    package static func clean(_ text: String, _ limit: Int) -> String {
        var result = ""
        for scalar in text.unicodeScalars.prefix(limit) {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return text.unicodeScalars.count > limit ? result + "…" : result
    }
}

/// Which requests a server logs.
public enum RequestLogLevel: Sendable {
    /// None.
    case none
    /// Those answered with status 400 or more, or dropped without an answer.
    case refused
    /// Every request.
    case all
}
