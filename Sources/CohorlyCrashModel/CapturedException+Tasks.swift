/// Tasks as context: the Swift task the exception happened in (`$exception_task`, the same value as the `task` of
/// the breadcrumbs it added) and the order breadcrumbs are shown in.
extension CapturedException {
    /// The event property holding the id of the Swift task the crashed (or capturing) thread was running.
    public static let taskProperty = "$exception_task"

    /// The id of the Swift task the exception happened in (nil outside a task).
    public var task: UInt64? { properties[Self.taskProperty]?.intValue.flatMap { UInt64(exactly: $0) } }

    /// The breadcrumbs as every view lists them: those the exception's task added first (oldest first), then the
    /// others (oldest first). Without a task: oldest first.
    public var breadcrumbsTaskFirst: [Breadcrumb] { Self.taskFirst(breadcrumbs, task: task) }

    /// `breadcrumbs` with `task`'s first (each part in its order).
    public static func taskFirst(_ breadcrumbs: [Breadcrumb], task: UInt64?) -> [Breadcrumb] {
        guard let task else { return breadcrumbs }
        return breadcrumbs.filter { $0.task == task } + breadcrumbs.filter { $0.task != task }
    }

    /// The report's task and task context as event properties: `$exception_task`, and each tag of the context
    /// (`request_id`…) as a property of its own (the tags win over the crash-time context's keys of the same
    /// name; `$` keys are the SDK's and are left out).
    public static func taskProperties(task: UInt64?, context: Properties?, into properties: inout Properties) {
        if let task { properties[taskProperty] = .int(Int(clamping: task)) }
        for (key, value) in context ?? [:] where !key.hasPrefix("$") { properties[key] = value }
    }
}
