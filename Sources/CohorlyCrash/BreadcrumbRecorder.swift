import CCrashRecorder
import Cohorly
import Synchronization

/// Puts breadcrumbs into the recorder's ring (cly_breadcrumbs.c), which the crash handler copies without locks.
///
/// Texts are cut here at a character boundary and data become a JSON object of at most
/// ``Breadcrumb/maxDataBytes``, so what the ring holds is always whole; the ring is process-wide (one per
/// process, whatever the number of clients).
enum BreadcrumbRecorder {
    /// Keys of a `track` call's properties kept in its breadcrumb (the first by name when there are more).
    static let trackKeys = 8
    /// Keys of an app breadcrumb's data kept when they must be summarized.
    static let dataKeys = 16
    /// Bytes of a text value (and of a key) kept in a summary.
    static let summaryTextBytes = 64

    /// Attached to a client whose activity is recorded already (an install twice must not record every track
    /// twice): on the client itself, so a new client at a released one's address is observed too.
    private struct Observed: Sendable {}

    /// Keeps the last `count` breadcrumbs (clamped to 0…``Breadcrumb/maxCount``; 0 turns them off).
    static func configure(maxBreadcrumbs count: Int) {
        _ = cly_breadcrumbs_configure(UInt32(clamping: min(max(count, 0), Breadcrumb.maxCount)))
    }

    /// Records `cohorly`'s `track` calls and identity changes from now on (once per client).
    static func observe(_ cohorly: Cohorly) {
        guard cohorly.attachments.value(Observed.self, make: { Observed() }).made else { return }
        cohorly.observeActivity { activity in record(activity) }
    }

    /// The breadcrumb of one client activity.
    static func record(_ activity: ClientActivity) {
        switch activity {
        case .track(let event, let properties):
            add(category: "track", message: event, data: summary(properties, maxKeys: trackKeys))
        case .identify(let distinctId):
            add(category: "identity", message: "identify", data: object(["distinct_id": distinctId]))
        case .alias(let alias, let distinctId):
            add(category: "identity", message: "alias", data: object(["alias": alias, "distinct_id": distinctId]))
        case .reset(let distinctId):
            add(category: "identity", message: "reset", data: object(["distinct_id": distinctId]))
        }
    }

    /// Adds one breadcrumb; `data` must be a JSON object of at most ``Breadcrumb/maxDataBytes``.
    static func add(category: String, message: String, data: [UInt8]) {
        var category = String(category.prefix(utf8Bytes: Breadcrumb.maxCategoryBytes))
        var message = String(message.prefix(utf8Bytes: Breadcrumb.maxMessageBytes))
        category.withUTF8 { c in
            message.withUTF8 { m in
                data.withUnsafeBytes { d in
                    let d = d.bindMemory(to: CChar.self)
                    m.withMemoryRebound(to: CChar.self) { m in
                        c.withMemoryRebound(to: CChar.self) { c in
                            _ = cly_breadcrumbs_add(
                                c.baseAddress, c.count, m.baseAddress, m.count, d.baseAddress, d.count)
                        }
                    }
                }
            }
        }
    }

    /// The breadcrumbs kept now, oldest first (for events sent while the process lives).
    static func current() -> [Breadcrumb] { snapshot().breadcrumbs }

    /// The breadcrumbs kept now, copied as they are (a memcpy under the writers' lock: cheap enough for the
    /// thread that captures an error); ``BreadcrumbSnapshot/breadcrumbs`` turns them into values later.
    static func snapshot() -> BreadcrumbSnapshot {
        let capacity = Int(cly_breadcrumbs_capacity())
        guard capacity > 0 else { return BreadcrumbSnapshot(raw: []) }
        let crumbs = [cly_breadcrumb](unsafeUninitializedCapacity: capacity) { buffer, count in
            count = buffer.baseAddress.map { cly_breadcrumbs_copy($0, capacity) } ?? 0
        }
        return BreadcrumbSnapshot(raw: crumbs)
    }

    /// `data` as JSON when it fits in ``Breadcrumb/maxDataBytes``, else summarized (``summary(_:maxKeys:)``).
    static func dataJSON(_ data: Properties) -> [UInt8] {
        if data.isEmpty { return Array("{}".utf8) }
        let whole = CohorlyValue.object(data).jsonString
        return whole.utf8.count <= Breadcrumb.maxDataBytes ? Array(whole.utf8) : summary(data, maxKeys: dataKeys)
    }

    /// A JSON object of at most ``Breadcrumb/maxDataBytes``: the first `maxKeys` keys by name, texts cut at
    /// ``summaryTextBytes``, arrays and objects replaced by `"[N items]"` and `"{N keys}"`; keys that do not fit
    /// are left out and counted in `"$more_keys"`. Bounded work per call, and cheap: it runs on every `track`
    /// caller's thread, so it writes bytes (no intermediate strings) and looks no key up twice.
    static func summary(_ properties: Properties, maxKeys: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Breadcrumb.maxDataBytes)
        out.append(UInt8(ascii: "{"))
        let budget = Breadcrumb.maxDataBytes - 24  // room for `,"$more_keys":N}`
        var written = 0
        for (key, value) in firstByName(properties, maxKeys) {
            let start = out.count
            if written > 0 { out.append(UInt8(ascii: ",")) }
            SummaryWriter.appendString(key, limit: summaryTextBytes, to: &out)
            out.append(UInt8(ascii: ":"))
            switch value {
            case .string(let text): SummaryWriter.appendString(text, limit: summaryTextBytes, to: &out)
            case .array(let items): SummaryWriter.appendString("[\(items.count) items]", limit: .max, to: &out)
            case .object(let members): SummaryWriter.appendString("{\(members.count) keys}", limit: .max, to: &out)
            case .int(let number): out.append(contentsOf: String(number).utf8)
            case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
            case .null: out.append(contentsOf: "null".utf8)
            case .double: out.append(contentsOf: value.jsonString.utf8)
            }
            guard out.count <= budget else {
                out.removeSubrange(start...)
                break
            }
            written += 1
        }
        if written < properties.count {
            if written > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: "\"$more_keys\":\(properties.count - written)".utf8)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The first `count` members of `properties` by key, in key order (one pass keeping the smallest; no sort of
    /// them all).
    private static func firstByName(_ properties: Properties, _ count: Int) -> [(key: String, value: CohorlyValue)] {
        var kept: [(key: String, value: CohorlyValue)] = []
        kept.reserveCapacity(min(count, properties.count) + 1)
        guard count > 0 else { return kept }
        for member in properties {
            if kept.count == count, let last = kept.last, member.key >= last.key { continue }
            let position = kept.firstIndex { member.key < $0.key } ?? kept.count
            kept.insert(member, at: position)
            if kept.count > count { kept.removeLast() }
        }
        return kept
    }

    private static func object(_ members: [String: String]) -> [UInt8] {
        summary(members.mapValues(CohorlyValue.string), maxKeys: members.count)
    }
}

/// JSON text for breadcrumb summaries, written as bytes.
private enum SummaryWriter {
    /// Appends `text` as a JSON string, cut to at most `limit` UTF-8 bytes at a character boundary.
    static func appendString(_ text: String, limit: Int, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var utf8 = text
        utf8.withUTF8 { bytes in
            let kept = bytes.count <= limit ? bytes.count : characterBoundary(in: bytes, atMost: limit, of: text)
            for byte in bytes[..<kept] {
                switch byte {
                case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case 0x0a: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 0x0d: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 0..<0x20:
                    out.append(contentsOf: "\\u00".utf8)
                    out.append(hexDigits[Int(byte >> 4)])
                    out.append(hexDigits[Int(byte & 0xf)])
                default: out.append(byte)
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// How many of `bytes` (the UTF-8 of `text`) to keep so that at most `limit` are kept and the cut falls
    /// between characters. ASCII text is cut between bytes (unless that splits a CR LF pair); other text is
    /// walked character by character.
    private static func characterBoundary(in bytes: UnsafeBufferPointer<UInt8>, atMost limit: Int, of text: String)
        -> Int
    {
        if !bytes[...limit].contains(where: { $0 >= 0x80 }) {
            return bytes[limit - 1] == 0x0d && bytes[limit] == 0x0a ? limit - 1 : limit
        }
        return text.prefix(utf8Bytes: limit).utf8.count
    }
}

/// Breadcrumbs copied out of the ring, oldest first, not yet turned into values.
struct BreadcrumbSnapshot: Sendable {
    let raw: [cly_breadcrumb]

    /// The breadcrumbs as values.
    var breadcrumbs: [Breadcrumb] {
        func text<T>(_ field: T) -> String {
            withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        return raw.map { crumb in
            let category = text(crumb.category)
            let message = text(crumb.message)
            let data = text(crumb.data)
            return Breadcrumb(
                timestampMs: crumb.timestamp_ms, category: category, message: message,
                data: CohorlyValue(json: data)?.objectValue ?? [:], task: crumb.task == 0 ? nil : crumb.task)
        }
    }
}

extension String {
    /// The longest prefix of at most `limit` UTF-8 bytes that ends on a character boundary.
    fileprivate func prefix(utf8Bytes limit: Int) -> Substring {
        if utf8.count <= limit { return self[...] }
        var end = startIndex
        var bytes = 0
        for index in indices {
            let next = self.index(after: index)
            bytes += self[index..<next].utf8.count
            if bytes > limit { break }
            end = next
        }
        return self[..<end]
    }
}
