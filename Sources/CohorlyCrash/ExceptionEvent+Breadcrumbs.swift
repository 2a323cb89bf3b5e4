import Cohorly

extension ExceptionEvent {
    /// The event property holding the breadcrumbs.
    public static let breadcrumbsProperty = ExceptionRecord.breadcrumbsProperty

    /// `$exception_breadcrumbs`: oldest first, each in Sentry's breadcrumb shape — `timestamp` (RFC 3339, UTC,
    /// milliseconds), `type` (`default`), `level` (`info`), `category` (`track`, `identity`, or the app's),
    /// `message` and `data` (an object).
    public static func breadcrumbsValue(_ breadcrumbs: [Breadcrumb]) -> CohorlyValue {
        ExceptionRecord.breadcrumbsValue(records(breadcrumbs))
    }

    /// The breadcrumbs as the record holds them.
    static func records(_ breadcrumbs: [Breadcrumb]) -> [ExceptionRecord.Breadcrumb] {
        breadcrumbs.map { crumb in
            ExceptionRecord.Breadcrumb(
                timestampMs: Int64(clamping: crumb.timestampMs), category: crumb.category, message: crumb.message,
                data: crumb.data)
        }
    }

    /// Sets the record's breadcrumbs (and `$exception_breadcrumbs_dropped` when the capture left some out);
    /// nothing when there are none, or the app set the property itself.
    static func addBreadcrumbs(_ breadcrumbs: [Breadcrumb], dropped: Int, to record: inout ExceptionRecord) {
        guard record.properties[breadcrumbsProperty] == nil, !breadcrumbs.isEmpty else { return }
        record.breadcrumbs = records(breadcrumbs)
        if dropped > 0 { record.properties["$exception_breadcrumbs_dropped"] = .int(dropped) }
    }
}
