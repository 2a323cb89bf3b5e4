import Foundation

/// Repairs a report file that was cut short (the process died while writing it, or the handler itself
/// crashed): keeps every complete value, drops the torn tail, and closes the open objects and arrays.
///
/// This is the normal-code half of "writer and repairer are separate": the signal-safe writer only streams;
/// everything tolerant lives here.
enum CrashReportSalvager {
    /// The marker the handler appends when it crashes while writing (cly_report.c).
    static let recrashMarker = Array("\n#cohorly-recrash signal=".utf8)

    /// The repaired JSON text and the signal of a recorded recrash, or nil when nothing usable is left.
    static func repair(_ data: Data) -> (json: Data, recrashSignal: Int32?)? {
        var bytes = [UInt8](data)
        var recrash: Int32?
        if let marker = firstIndex(of: recrashMarker, in: bytes) {
            let digits = bytes[(marker + recrashMarker.count)...].prefix { $0 >= 0x30 && $0 <= 0x39 }
            recrash = Int32(String(decoding: digits, as: UTF8.self))
            bytes.removeSubrange(marker...)
        }
        guard let (cut, open) = lastSafeCut(bytes) else { return nil }
        var repaired = Array(bytes[..<cut])
        for container in open.reversed() { repaired.append(container == .object ? 0x7d : 0x5d) }
        return (Data(repaired), recrash)
    }

    private enum Container { case object, array }

    /// The end of the last complete value and the containers still open there.
    private static func lastSafeCut(_ bytes: [UInt8]) -> (Int, [Container])? {
        var stack: [(Container, expectingKey: Bool)] = []
        var cut: (Int, [Container])?
        var i = 0
        func markCut(_ position: Int) { cut = (position, stack.map(\.0)) }
        while i < bytes.count {
            let c = bytes[i]
            switch c {
            case 0x20, 0x0a, 0x0d, 0x09:
                i += 1
            case 0x7b, 0x5b:  // { [
                stack.append((c == 0x7b ? .object : .array, expectingKey: c == 0x7b))
                i += 1
                markCut(i)
            case 0x7d, 0x5d:  // } ]
                guard !stack.isEmpty else { return cut }
                stack.removeLast()
                i += 1
                markCut(i)
                if stack.isEmpty { return cut }
            case 0x3a:  // :
                i += 1
            case 0x2c:  // ,
                if let top = stack.last, top.0 == .object { stack[stack.count - 1].expectingKey = true }
                i += 1
            case 0x22:  // "
                guard let end = stringEnd(bytes, from: i) else { return cut }
                i = end
                if let top = stack.last, top.0 == .object, top.expectingKey {
                    stack[stack.count - 1].expectingKey = false  // a key: its value must follow
                } else {
                    markCut(i)
                }
            default:  // number, true, false, null
                var j = i
                while j < bytes.count, !isDelimiter(bytes[j]) { j += 1 }
                guard j < bytes.count, j > i else { return cut }  // cut inside the literal
                i = j
                markCut(i)
            }
        }
        return cut
    }

    private static func isDelimiter(_ c: UInt8) -> Bool {
        c == 0x2c || c == 0x7d || c == 0x5d || c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09
            || c == 0x3a
    }

    /// The index just past the closing quote of the string starting at `start`, or nil when it is cut.
    private static func stringEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var i = start + 1
        while i < bytes.count {
            if bytes[i] == 0x5c {
                i += 2
            } else if bytes[i] == 0x22 {
                return i + 1
            } else {
                i += 1
            }
        }
        return nil
    }

    private static func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start }
        }
        return nil
    }
}
