import Cohorly

extension ExceptionBuilder {
    /// The event property holding the breadcrumbs.
    public static let breadcrumbsProperty = CapturedException.breadcrumbsProperty

    /// `$exception_breadcrumbs`: oldest first, each in Sentry's breadcrumb shape — `timestamp` (RFC 3339, UTC,
    /// milliseconds), `type` (`default`), `level` (`info`), `category` (`track`, `identity`, or the app's),
    /// `message` and `data` (an object).
    public static func breadcrumbsValue(_ breadcrumbs: [Breadcrumb]) -> CohorlyValue {
        CapturedException.breadcrumbsValue(breadcrumbs)
    }
}
