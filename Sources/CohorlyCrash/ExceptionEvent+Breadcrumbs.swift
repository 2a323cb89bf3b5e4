import Cohorly

extension ExceptionEvent {
    /// The event property holding the breadcrumbs.
    public static let breadcrumbsProperty = "$exception_breadcrumbs"

    /// `$exception_breadcrumbs`: oldest first, each in Sentry's breadcrumb shape — `timestamp` (RFC 3339, UTC,
    /// milliseconds), `type` (`default`), `level` (`info`), `category` (`track`, `identity`, or the app's),
    /// `message` and `data` (an object).
    public static func breadcrumbsValue(_ breadcrumbs: [Breadcrumb]) -> CohorlyValue {
        .array(
            breadcrumbs.map { crumb in
                [
                    "timestamp": .string(RFC3339.format(milliseconds: Int64(clamping: crumb.timestampMs))),
                    "type": "default", "level": "info", "category": .string(crumb.category),
                    "message": .string(crumb.message), "data": .object(crumb.data),
                ]
            })
    }

    /// Sets `$exception_breadcrumbs` (and `$exception_breadcrumbs_dropped` when the report left some out);
    /// nothing for a report without breadcrumbs.
    static func addBreadcrumbs(of report: CrashReport, to properties: inout Properties) {
        guard let breadcrumbs = report.breadcrumbs else { return }
        properties[breadcrumbsProperty] = breadcrumbsValue(breadcrumbs)
        if let dropped = report.breadcrumbsDropped, dropped > 0 {
            properties["$exception_breadcrumbs_dropped"] = .int(dropped)
        }
    }

    /// Sets `$exception_breadcrumbs` of a live event from the breadcrumbs taken at its capture (nothing when there
    /// are none, or the app set the property itself).
    static func addBreadcrumbs(_ snapshot: BreadcrumbSnapshot?, to properties: inout Properties) {
        guard properties[breadcrumbsProperty] == nil, let crumbs = snapshot?.breadcrumbs, !crumbs.isEmpty else {
            return
        }
        properties[breadcrumbsProperty] = breadcrumbsValue(crumbs)
    }
}
