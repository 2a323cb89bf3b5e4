import Cohorly

extension Cohorly {
    /// Adds a breadcrumb: crash reports (and the `$exception` events made from them) carry the last
    /// ``CohorlyCrash/Options/maxBreadcrumbs`` breadcrumbs (default 50) as `$exception_breadcrumbs`, oldest first,
    /// next to the `track` calls and identity changes CohorlyCrash records by itself.
    /// - Parameters:
    ///   - message: what happened; cut at ``Breadcrumb/maxMessageBytes`` (256) bytes.
    ///   - category: a short label (default `app`); cut at ``Breadcrumb/maxCategoryBytes`` (32) bytes.
    ///   - data: details (default none); when their JSON exceeds ``Breadcrumb/maxDataBytes`` (512) bytes, long
    ///     texts and nested values are summarized, then keys left out.
    ///
    /// Cheap and safe from any thread; a crash never waits for it.
    public func addBreadcrumb(_ message: String, category: String = "app", data: Properties = [:]) {
        BreadcrumbRecorder.add(category: category, message: message, data: BreadcrumbRecorder.dataJSON(data))
    }

    /// ``addBreadcrumb(_:category:data:)`` with data whose values are Swift values (`["items": items]`).
    public func addBreadcrumb(
        _ message: String, category: String = "app", data: [String: any CohorlyPropertyValue]
    ) {
        addBreadcrumb(message, category: category, data: data.cohorlyProperties)
    }
}
