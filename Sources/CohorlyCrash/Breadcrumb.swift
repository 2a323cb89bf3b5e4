import CCrashRecorder
import CohorlyCrashModel

/// The recorder's caps on breadcrumbs (``Breadcrumb`` is the crash model's).
extension Breadcrumb {
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
}
