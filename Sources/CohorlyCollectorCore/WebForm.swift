import Foundation

/// The fields of a form a page posted (`application/x-www-form-urlencoded`, at most the collector's body limit):
/// `name=value` pairs joined by `&`, `+` for a space, `%XX` for a byte of UTF-8. A pair that does not decode is
/// left out; of a name given twice the last value counts.
enum WebForm {
    static func fields(_ body: [UInt8]) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), !name.isEmpty else { continue }
            guard let value = parts.count == 2 ? decode(parts[1]) : "" else { continue }
            fields[name] = value
        }
        return fields
    }

    private static func decode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
