import Foundation

/// Configuration problems the client finds — a host that is not a URL it can send to, a server that answers the
/// ingestion path with 404 or refuses the key — are said once, with or without `debug`: to the log handler when
/// there is one, else to stderr (`[Cohorly] …`). Events stay queued (bounded by `maxQueueSize`) and `flush()`
/// returns false until the configuration is fixed.
package enum ConfigurationWarnings {
    static func write(_ message: String, _ options: CohorlyOptions) {
        if let handler = options.logHandler {
            handler(message)
        } else {
            FileHandle.standardError.write(Data("[Cohorly] \(message)\n".utf8))
        }
    }

    /// What a server said in an error answer: its JSON `error`, `message` or `detail`, else its text (printable,
    /// at most 200 characters); nil when it said nothing readable.
    static func serverText(_ body: [UInt8]) -> String? {
        if let object = CohorlyValue(bytes: body)?.objectValue {
            for key in ["error", "message", "detail"] {
                if let text = object[key]?.stringValue, !text.isEmpty { return String(text.prefix(200)) }
            }
        }
        let text = String(decoding: body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty, text.unicodeScalars.allSatisfy({ $0.value >= 0x20 || $0 == "\n" || $0 == "\t" }) else {
            return nil
        }
        return text.replacingOccurrences(of: "\n", with: " ")
    }

    /// ` (the server said: "…")`, or nothing.
    package static func saying(_ body: [UInt8]) -> String {
        serverText(body).map { " (the server said: \"\($0)\")" } ?? ""
    }
}
