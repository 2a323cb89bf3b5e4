import CCrashRecorder
import Cohorly

/// One breadcrumb: something the app did shortly before a crash (a `track` call, an identity change, or
/// ``Cohorly/addBreadcrumb(_:category:data:)``), as a report keeps it.
public struct Breadcrumb: Codable, Sendable, Equatable {
    /// When it was added, unix milliseconds.
    public var timestampMs: UInt64
    /// `track`, `identity`, or the app's own category (default `app`).
    public var category: String
    /// The event name for `track`; `identify`, `alias` or `reset` for `identity`; the app's text otherwise.
    public var message: String
    /// A small JSON object: a summary of the event's properties, the new distinct id, or the app's data.
    public var data: Properties

    /// Bytes of a category kept (longer ones are cut): 32.
    public static let maxCategoryBytes = Int(CLY_BREADCRUMB_CATEGORY_BYTES)
    /// Bytes of a message kept (longer ones are cut at a character boundary): 256.
    public static let maxMessageBytes = Int(CLY_BREADCRUMB_MESSAGE_BYTES)
    /// Bytes of the data's JSON kept (larger data is summarized, then cut key by key): 512.
    public static let maxDataBytes = Int(CLY_BREADCRUMB_DATA_BYTES)
    /// Bytes of breadcrumbs in one crash report (the newest that fit are kept): 16 KiB.
    public static let maxReportBytes = Int(CLY_MAX_BREADCRUMB_REPORT_BYTES)
    /// The most breadcrumbs kept (``CohorlyCrash/Options/maxBreadcrumbs`` is clamped to it): 1,000.
    public static let maxCount = Int(CLY_MAX_BREADCRUMBS)

    /// A breadcrumb with these parts.
    public init(timestampMs: UInt64, category: String, message: String, data: Properties = [:]) {
        self.timestampMs = timestampMs
        self.category = category
        self.message = message
        self.data = data
    }

    enum CodingKeys: String, CodingKey {
        case category, message, data
        case timestampMs = "timestamp_ms"
    }

    /// Decodes a breadcrumb; fields missing from a salvaged report take neutral values.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        timestampMs = try c.decodeIfPresent(UInt64.self, forKey: .timestampMs) ?? 0
        category = try c.decodeIfPresent(String.self, forKey: .category) ?? ""
        message = try c.decodeIfPresent(String.self, forKey: .message) ?? ""
        data = try c.decodeIfPresent(Properties.self, forKey: .data) ?? [:]
    }
}
