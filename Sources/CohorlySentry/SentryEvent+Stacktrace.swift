import CohorlyClient
import CohorlyCrashModel

/// A Sentry stacktrace written into the event's text: frames oldest first, inlined calls as frames of their own,
/// each frame's members in sorted order (SentryEvent.swift).
extension SentryEvent {
    /// A stacktrace: why the async walk stopped when the stack has async callers, the frames oldest first, and
    /// the adjustment their kinds call for (``adjustment(for:)``).
    static func stacktrace(
        _ frames: [CapturedException.LaidOutFrame], asyncStop: AsyncChain.Stop?, into out: inout JSONWriter
    ) {
        let adjustment = adjustment(for: frames)
        let root = asyncRootIndex(frames)
        out.openObject()
        if let asyncStop, root != nil { out.member(CapturedException.asyncStopKey, asyncStop.rawValue) }
        out.key("frames")
        out.openArray()
        for (index, laidOut) in frames.enumerated() {
            frame(laidOut, adjustment, stackStart: index == root, into: &out)
        }
        out.closeArray()
        out.member("instruction_addr_adjustment", adjustment.rawValue)
        out.closeObject()
    }

    /// A frame's members, in sorted order: `abs_path`, `colno`, `filename` and `lineno` where the line table
    /// placed the address, `function` (short, as the stack text prints it), `raw_function` (the full name, when
    /// `function` is shorter) and `symbol` (the mangled Swift name) as the device resolved them, the image's
    /// `image_addr` and `package`, `in_app`, `instruction_addr` and its kind, `stack_start`.
    static func frame(
        _ frame: CapturedException.LaidOutFrame, _ adjustment: AddressAdjustment, stackStart: Bool,
        into out: inout JSONWriter
    ) {
        let symbol = frame.resolved ? frame.symbol : nil
        // Where the line table placed the address: a file and a line.
        let located =
            frame.hasSourceLocation ? symbol.flatMap { symbol in symbol.file.map { (symbol: symbol, file: $0) } } : nil
        out.openObject()
        if let file = located?.file, file.hasPrefix("/") { out.member("abs_path", file) }
        if let column = located?.symbol.column, column > 0 {
            out.key("colno")
            out.int(column)
        }
        if let file = located?.file { out.member("filename", file) }
        // The short name as the stack text shows it (Sentry shows `function` as it comes), the full one as
        // `raw_function`.
        let function = symbol.flatMap { $0.shortFunction ?? $0.function }
        let fullFunction = symbol?.function.flatMap { $0 == function ? nil : $0 }
        if let function { out.member("function", function) }
        if let image = frame.image { out.member("image_addr", Address(image.base).description) }
        out.key("in_app")
        out.bool(frame.stackFrame.inApp)
        out.member("instruction_addr", sentAddress(frame, adjustment).description)
        if let kind = frame.kind { out.member(CapturedException.frameKindKey, kind.wireName) }
        if let line = located?.symbol.line {
            out.key("lineno")
            out.int(line)
        }
        if let image = frame.image { out.member("package", image.path) }
        if let fullFunction { out.member(CapturedException.rawFunctionKey, fullFunction) }
        if stackStart {
            out.key("stack_start")
            out.bool(true)
        }
        if symbol != nil, let mangled = frame.swiftMangledName { out.member("symbol", mangled) }
        out.closeObject()
    }
}
