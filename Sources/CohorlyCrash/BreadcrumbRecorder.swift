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

    /// Clients whose activity is recorded already (an install twice must not record every track twice).
    private static let observed = Mutex<[ObjectIdentifier]>([])

    /// Keeps the last `count` breadcrumbs (clamped to 0…``Breadcrumb/maxCount``; 0 turns them off).
    static func configure(maxBreadcrumbs count: Int) {
        _ = cly_breadcrumbs_configure(UInt32(clamping: min(max(count, 0), Breadcrumb.maxCount)))
    }

    /// Records `cohorly`'s `track` calls and identity changes from now on (once per client).
    static func observe(_ cohorly: Cohorly) {
        let id = ObjectIdentifier(cohorly)
        let first = observed.withLock { ids in
            guard !ids.contains(id) else { return false }
            ids.append(id)
            return true
        }
        guard first else { return }
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
    static func add(category: String, message: String, data: String) {
        var category = String(category.prefix(utf8Bytes: Breadcrumb.maxCategoryBytes))
        var message = String(message.prefix(utf8Bytes: Breadcrumb.maxMessageBytes))
        var data = data
        category.withUTF8 { c in
            message.withUTF8 { m in
                data.withUTF8 { d in
                    d.withMemoryRebound(to: CChar.self) { d in
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
    static func dataJSON(_ data: Properties) -> String {
        if data.isEmpty { return "{}" }
        let whole = CohorlyValue.object(data).jsonString
        return whole.utf8.count <= Breadcrumb.maxDataBytes ? whole : summary(data, maxKeys: dataKeys)
    }

    /// A JSON object of at most ``Breadcrumb/maxDataBytes``: the first `maxKeys` keys by name (all of them when
    /// there are no more), texts cut at ``summaryTextBytes``, arrays and objects replaced by `"[N items]"` and
    /// `"{N keys}"`; keys that do not fit are left out and counted in `"$more_keys"`. Bounded work per call.
    static func summary(_ properties: Properties, maxKeys: Int) -> String {
        if properties.isEmpty { return "{}" }
        let keys =
            properties.count <= maxKeys ? Array(properties.keys) : Array(properties.keys.sorted().prefix(maxKeys))
        let budget = Breadcrumb.maxDataBytes - 24  // room for `,"$more_keys":N}`
        var out = "{"
        var written = 0
        for key in keys {
            guard let value = properties[key] else { continue }
            var member = written == 0 ? "" : ","
            CohorlyValue.writeString(String(key.prefix(utf8Bytes: summaryTextBytes)), into: &member)
            member += ":"
            switch value {
            case .string(let text):
                CohorlyValue.writeString(String(text.prefix(utf8Bytes: summaryTextBytes)), into: &member)
            case .array(let items): CohorlyValue.writeString("[\(items.count) items]", into: &member)
            case .object(let members): CohorlyValue.writeString("{\(members.count) keys}", into: &member)
            default: value.write(into: &member)
            }
            guard out.utf8.count + member.utf8.count <= budget else { break }
            out += member
            written += 1
        }
        if written < properties.count {
            out += (written == 0 ? "" : ",") + "\"$more_keys\":\(properties.count - written)"
        }
        return out + "}"
    }

    private static func object(_ members: [String: String]) -> String {
        summary(members.mapValues(CohorlyValue.string), maxKeys: members.count)
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
                data: CohorlyValue(json: data)?.objectValue ?? [:])
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
