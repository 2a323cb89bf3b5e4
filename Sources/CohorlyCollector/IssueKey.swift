import CohorlyCrashModel
import CohorlyDigests
import CohorlySymbols

/// What decides the issue of one `$exception` occurrence, and what the issue shows about it.
///
/// The fingerprint follows PostHog's grouping (research/posthog.md part C): a caller-supplied
/// `$exception_fingerprint` wins (kept as sent up to 64 characters, else its SHA-256); otherwise the SHA-256 of
/// the exception type and, for each in-app frame of the subject thread in caller-chain order (physical frames to
/// the async anchor, the awaiting callers, then the rest), its module's file name and its physical function's
/// name, or — when neither the device nor the collector resolved the frame — `+0x<offset>` into its module
/// (the lookup address minus the image's base: the same for every launch of one build, whatever ASLR did).
/// With no in-app frame the value stands in for the frames (PostHog: the message only without a stack).
struct IssueKey: Sendable, Hashable {
    /// The issue's fingerprint.
    var fingerprint: String
    /// The exception type.
    var title: String
    /// The value (unless the title ends with it), else the culprit.
    var subtitle: String
    /// The top in-app frame: its function, else `module +0x<offset>` (empty without in-app frames).
    var culprit: String
    /// `$exception_level`.
    var level: String
    /// The mechanism type.
    var mechanism: String
    /// Build ids (lowercase hex) of the in-app frames keyed by offset: an upload of one of their debug files
    /// regroups the occurrence (IssueRegrouping.swift). Empty when every in-app frame had a name.
    var rawBuildIds: [String]

    /// Fingerprints a caller sent are kept as sent up to this many characters, else hashed (PostHog's rule).
    static let maxCustomFingerprint = 64

    /// The key of an exception whose reason is `description`, of level `level`, with these in-app frames in
    /// caller-chain order. `custom` is the event's `$exception_fingerprint` (a string, or a list of strings
    /// joined by newlines).
    init(
        description: CrashDescription, level: String, frames: [CapturedException.GroupingFrame], custom: JSONValue?
    ) {
        // Each frame's line `\n<module> <function or +0x<offset>>`, appended as bytes, not a string made per
        // piece: the collector keys every event it stores (BENCHMARKS.md "Issues", session 11).
        var stack: [UInt8] = []
        stack.reserveCapacity(frames.count * 64)
        var culprit: String?
        var raw: Set<String> = []
        var lastImage: (path: String, module: String)?
        // The crash recorder's own frames (an earlier SDK marked them in-app) are left out: they say nothing of
        // the bug, and events of either SDK group together.
        for frame in frames where !(frame.function.map(FrameSymbol.isCrashRecorderFunction) ?? false) {
            var module = "?"
            if let path = frame.image?.path {
                // Most frames are in the image of the frame before.
                module = lastImage?.path == path ? lastImage?.module ?? "?" : Self.fileName(path)
                lastImage = (path, module)
            }
            stack.append(UInt8(ascii: "\n"))
            stack.append(contentsOf: module.utf8)
            if let function = frame.function {
                stack.append(UInt8(ascii: " "))
                stack.append(contentsOf: function.utf8)
                if culprit == nil { culprit = Self.culpritName(function) }
                continue
            }
            let offset: String
            if let image = frame.image {
                offset = " +0x" + String(frame.frame.lookupAddress &- image.base, radix: 16)
                if !image.buildId.isEmpty { raw.insert(image.buildId.lowercased()) }
            } else {
                offset = " +0x" + String(frame.frame.lookupAddress, radix: 16)
            }
            stack.append(contentsOf: offset.utf8)
            if culprit == nil { culprit = module + offset }
        }
        title = description.type.isEmpty ? "Exception" : description.type
        self.culprit = culprit ?? ""
        // A release trap's type already says the value (`Swift runtime failure: Index out of range`).
        let value = description.value
        subtitle = value.isEmpty || title.hasSuffix(value) ? self.culprit : value
        self.level = level
        mechanism = description.mechanism
        rawBuildIds = raw.sorted()
        if let custom = Self.customFingerprint(custom) {
            fingerprint =
                custom.unicodeScalars.count <= Self.maxCustomFingerprint ? custom : Self.sha256(custom)
            rawBuildIds = []
        } else {
            fingerprint = Self.sha256(
                Array(title.utf8) + (stack.isEmpty ? Array(("\n" + description.value).utf8) : stack))
        }
    }

    /// The key of an event's grouping view (CapturedException+Grouping.swift in the crash model).
    init(_ view: CapturedException.GroupingView, custom: JSONValue?) {
        self.init(description: view.description, level: view.level, frames: view.frames, custom: custom)
    }

    /// The key of `exception`, with the in-app frames the device left raw looked up by `symbolicator` when
    /// given (the crash site then decides the reason again, as `cohorly crashes show` does).
    init(_ exception: CapturedException, custom: JSONValue?, symbolicator: ImageSymbolicator? = nil) {
        var description = exception.description
        var frames = exception.groupingFrames()
        if let symbolicator {
            let crashSite = exception.subject?.logicalFrames.first.map { frame in
                (Self.lookedUp(frame, symbolicator) ?? frame.symbols).map(\.function)
            }
            description = CrashReason.describe(exception.facts, crashSite: crashSite ?? [])
            // The frames named here are in-app as on the device (AppCode, with the root from the executable's
            // debug file).
            frames = exception.groupingFrames(
                symbols: { Self.lookedUp($0, symbolicator) },
                code: exception.appCode { symbolicator.sourceRoot(ofImageAt: $0.path) })
        }
        self.init(description: description, level: exception.level, frames: frames, custom: custom)
    }

    /// The key of a stored `$exception` event's properties.
    init(properties: JSONValue, symbolicator: ImageSymbolicator? = nil) {
        self.init(
            Self.exception(properties), custom: properties["$exception_fingerprint"], symbolicator: symbolicator)
    }

    /// The exception of `properties` as the key reads it: only the members it looks at (the first exception,
    /// the images, the level and issue name), not the other threads nor the context (a crash of 20 threads ×
    /// 100 frames is read 20 times faster).
    static func exception(_ properties: JSONValue) -> CapturedException {
        var fields: [String: JSONValue] = [:]
        for key in ["$debug_images", "$exception_level", "$issue_name"] { fields[key] = properties[key] }
        if let first = properties["$exception_list"]?.arrayValue?.first { fields["$exception_list"] = [first] }
        return CapturedException(exceptionEvent: .object(fields))
    }

    /// The symbols the collector finds for `frame` (nil: none, the device's then stand).
    private static func lookedUp(_ frame: CapturedException.StackFrame, _ symbolicator: ImageSymbolicator)
        -> [FrameSymbol]?
    {
        guard let frames = symbolicator.symbolicate(frame.frame).result?.frames, !frames.isEmpty else { return nil }
        return frames.map {
            FrameSymbol(
                function: $0.function, rawFunction: $0.rawFunction, file: $0.file, line: $0.line, column: $0.column,
                inlined: $0.isInlined)
        }
    }

    /// How a function shows as a culprit: the piece of an async function where it resumed (`(1) suspend resume
    /// partial function for F`, `(2) await resume partial function for F`, as Swift's demangler names them) as
    /// `F`, the function that was written; any other name as it is. Only what the issue shows: the key keeps the
    /// name whole.
    static func culpritName(_ function: String) -> String {
        guard function.hasPrefix("("), let close = function.firstIndex(of: ")") else { return function }
        let counter = function[function.index(after: function.startIndex)..<close]
        guard !counter.isEmpty, counter.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return function }
        let rest = function[close...].dropFirst()
        for piece in [" suspend resume partial function for ", " await resume partial function for "]
        where rest.hasPrefix(piece) && rest.count > piece.count {
            return String(rest.dropFirst(piece.count))
        }
        return function
    }

    /// `$exception_fingerprint` as one string: a non-empty string, or a list of strings joined by newlines.
    static func customFingerprint(_ value: JSONValue?) -> String? {
        if let text = value?.stringValue { return text.isEmpty ? nil : text }
        guard let parts = value?.arrayValue?.compactMap(\.stringValue), !parts.isEmpty else { return nil }
        return parts.joined(separator: "\n")
    }

    /// A path's last component.
    static func fileName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// SHA-256 of `text`, lowercase hex (libcrypto); without libcrypto the text itself, which groups the same.
    static func sha256(_ text: String) -> String { sha256(Array(text.utf8)) }

    /// SHA-256 of `bytes`, lowercase hex (libcrypto); without libcrypto the bytes as text, which groups the same.
    static func sha256(_ bytes: [UInt8]) -> String {
        (try? Digest.hex(.sha256, bytes)) ?? String(decoding: bytes, as: UTF8.self)
    }
}
