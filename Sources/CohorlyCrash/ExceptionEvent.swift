import Cohorly
import CohorlySymbols

/// The `$exception` event a crash report becomes: the one place that knows its shape.
///
/// One shape for every destination: the one PostHog error tracking (`cymbal`) reads — native frames
/// (`platform: "native"`, `instruction_addr`, `image_addr`, `module` = the image's file name, `in_app`, and
/// `function`/`filename`/`lineno` when symbolicated on the device), oldest first with the crash site last,
/// inlined calls as `inline: true` frames after their physical frame, and `$debug_images` for the images the
/// frames reference, so a server holding the debug files can resolve what the device could not. Everything
/// about the launch comes from the report (the launch that crashed), never from the launch that sends it.
public enum ExceptionEvent {
    /// The event name.
    public static let name = "$exception"

    /// The event for `report` (``record(from:symbols:options:)`` as the `$exception` event).
    public static func make(
        from report: CrashReport, symbols: ReportSymbols? = nil, options: ExceptionEventOptions = .default
    ) -> PreparedEvent {
        record(from: report, symbols: symbols, options: options).event
    }

    /// The exception record for `report`: fatal level, the report's `$insert_id` and crash time, its context
    /// (including the super properties registered at crash time), the crashed thread whole and the other threads
    /// as far as ``ExceptionEventOptions/maxEventBytes`` allows. `symbols` are the frames made on the device
    /// (``symbolicate(_:options:)``); without them every frame is raw.
    public static func record(
        from report: CrashReport, symbols: ReportSymbols? = nil, options: ExceptionEventOptions = .default
    ) -> ExceptionRecord {
        var properties = contextProperties(report)
        let layout = FrameLayout(report: report, rules: options.inApp)
        // `symbols` follows `report.allThreads`: the crashed thread first when the report has one.
        let firstOther = report.crashedThread == nil ? 0 : 1
        let crashedSymbols = firstOther == 1 ? symbols?.threads.first ?? nil : nil
        let description = describe(report, crashSite: crashedSymbols?.first)
        var signal: Properties = ["number": .int(Int(report.signal.number)), "name": .string(report.signal.name)]
        signal["code"] = .int(Int(report.signal.code))
        signal["address"] = .string(report.signal.address.description)
        let meta: Properties = report.hang.map(hangMeta) ?? ["signal": .object(signal)]
        let crashedFrames = report.crashedThread.map { layout.frames(of: $0, symbols: crashedSymbols) } ?? []
        if let hang = report.hang { properties.merge(hangProperties(hang)) { _, hang in hang } }
        properties["$exception_pid"] = .int(Int(report.pid))
        properties["$exception_executable"] = .string(report.executable)
        if let name = report.crashedThread?.name, !name.isEmpty { properties["$exception_thread_name"] = .string(name) }
        if report.stackOverflow { properties["$exception_stack_overflow"] = true }
        if !report.complete { properties["$exception_report_complete"] = false }
        if let captureNs = report.captureNs { properties["$exception_capture_ns"] = .int(Int(clamping: captureNs)) }
        var record = ExceptionRecord(
            insertId: report.insertId, timestampMs: Int64(clamping: report.timestampMs), level: "fatal",
            issueName: description.issueName,
            exceptions: [
                ExceptionRecord.Exception(
                    type: description.type, value: description.value,
                    mechanism: ExceptionRecord.Mechanism(type: description.mechanism, handled: false, meta: meta),
                    threadId: report.crashedThread?.tid ?? 0, frames: crashedFrames.flatMap { $0 })
            ], properties: properties)
        addBreadcrumbs(of: report, to: &record)
        let others = report.threads.enumerated().map { index, thread in
            let threadSymbols = symbols.flatMap {
                index + firstOther < $0.threads.count ? $0.threads[index + firstOther] : nil
            }
            return OtherThread(
                tid: thread.tid, name: thread.name, groups: layout.frames(of: thread, symbols: threadSymbols))
        }
        fit(others, crashed: crashedFrames, into: &record, layout: layout, limit: options.maxEventBytes)
        return record
    }

    /// The report's crash-time context as event properties: the device fields and release, then the super
    /// properties registered at crash time (they win over the device fields, as on every other event), then
    /// the free-form crash properties where nothing else set the key.
    static func contextProperties(_ report: CrashReport) -> Properties { contextProperties(report.context) }

    /// A crash-time context (``CrashContext``, serialized) as event properties; see the report variant.
    static func contextProperties(_ context: [String: CohorlyValue]) -> Properties {
        var properties: Properties = [:]
        let nested: Set = [CrashContext.propertiesKey, CrashContext.superPropertiesKey]
        for (key, value) in context where !nested.contains(key) { properties[key] = value }
        if case .object(let registered)? = context[CrashContext.superPropertiesKey] {
            for (key, value) in registered where key != "distinct_id" { properties[key] = value }
        }
        if case .object(let extra)? = context[CrashContext.propertiesKey] {
            for (key, value) in extra where properties[key] == nil { properties[key] = value }
        }
        return properties
    }

    /// The first 16 bytes of the build id as a GUID with the first three fields byte-swapped (Sentry's rule),
    /// e.g. `02547a30…` → `307a5402-…`; empty without a build id.
    public static func debugId(fromBuildId buildId: String) -> String {
        guard let bytes = DebugId.buildId(hex: buildId) else { return "" }
        return DebugId.debugId(bytes)
    }
}
