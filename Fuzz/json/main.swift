// Fuzz target `json`: CohorlyJSON's parser (what the collector runs on every request body and the client on
// every stored event). Checks that parsing never crashes, that a parsed value survives write → parse, and
// agrees with Foundation's parser (`JSONDecoder`): what we accept, Foundation accepts with the same value.
// Known, intended differences are left out: we turn a lone `\uD800`-style surrogate and invalid UTF-8 into
// U+FFFD where Foundation rejects the document, we keep `1.0` a double where Foundation reads an integer, and
// of duplicate object keys we keep the last where Foundation keeps the first (RFC 8259 leaves it open).
import CohorlyJSON
import Foundation

/// Equal, with numbers compared by value (`.int(1)` and `.double(1.0)` agree).
func same(_ a: CohorlyValue, _ b: CohorlyValue) -> Bool {
    switch (a, b) {
    case (.int(let x), .double(let y)), (.double(let y), .int(let x)):
        // Foundation reads a number with a fraction as Int when a Double cannot hold that fraction (|value| ≥ 2^53:
        // "-9346744073456789.510" → Int -9346744073456789, dropping ".510"); we read the Double. Same number.
        return Double(x) == y || (abs(y) >= 0x1p53 && abs(Double(x) - y) <= y.ulp)
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
    case (.object(let x), .object(let y)):
        return x.count == y.count && x.allSatisfy { key, value in y[key].map { same(value, $0) } ?? false }
    default: return a == b
    }
}

/// Whether the document holds something we read leniently on purpose.
func hasIntendedLeniency(_ bytes: [UInt8]) -> Bool {
    if String(validating: bytes, as: UTF8.self) == nil { return true }
    let text = String(decoding: bytes, as: UTF8.self).lowercased()
    return text.contains("\\ud8") || text.contains("\\ud9") || text.contains("\\uda") || text.contains("\\udb")
        || text.contains("\\udc") || text.contains("\\udd") || text.contains("\\ude") || text.contains("\\udf")
}

/// Whether a valid JSON document has an object with the same key twice (keys compared decoded).
func hasDuplicateKeys(_ bytes: [UInt8]) -> Bool {
    var stack: [(isObject: Bool, expectingKey: Bool, keys: Set<String>)] = []
    var i = 0
    while i < bytes.count {
        switch bytes[i] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            stack.append((bytes[i] == UInt8(ascii: "{"), bytes[i] == UInt8(ascii: "{"), []))
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            if !stack.isEmpty { stack.removeLast() }
        case UInt8(ascii: ","):
            if let top = stack.last, top.isObject { stack[stack.count - 1].expectingKey = true }
        case UInt8(ascii: "\""):
            var end = i + 1
            while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1
            }
            if let top = stack.last, top.isObject, top.expectingKey {
                let key = CohorlyValue(bytes: Array(bytes[i..<min(end + 1, bytes.count)]))?.stringValue ?? ""
                if top.keys.contains(key) { return true }
                stack[stack.count - 1].keys.insert(key)
                stack[stack.count - 1].expectingKey = false
            }
            i = end
        default: break
        }
        i += 1
    }
    return false
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let fromBytes = CohorlyValue(bytes: bytes)
    // The String entry point sees the same bytes after UTF-8 repair.
    let fromString = CohorlyValue(json: String(decoding: bytes, as: UTF8.self))
    for value in [fromBytes, fromString].compactMap({ $0 }) {
        let text = value.jsonString
        guard let again = CohorlyValue(json: text) else {
            fatalError("written JSON does not parse: \(text)")
        }
        guard again == value else { fatalError("write → parse changed the value: \(text)") }
        guard again.jsonString == text else { fatalError("writing is not stable: \(text)") }
    }
    if let ours = fromBytes, !hasIntendedLeniency(bytes) {
        guard let theirs = try? JSONDecoder().decode(CohorlyValue.self, from: Data(bytes)) else {
            fatalError("accepted, but Foundation rejects it: \(String(decoding: bytes, as: UTF8.self))")
        }
        guard same(ours, theirs) || hasDuplicateKeys(bytes) else {
            fatalError("read differently from Foundation: \(ours.jsonString) vs \(theirs.jsonString)")
        }
    }
    return 0
}
