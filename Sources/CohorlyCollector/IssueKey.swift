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

    /// The key of `exception`, with the in-app frames the device left raw looked up by `symbolicator` when
    /// given. `custom` is the event's `$exception_fingerprint` (a string, or a list of strings joined by newlines).
    init(_ exception: CapturedException, custom: JSONValue?, symbolicator: ImageSymbolicator? = nil) {
        let subject = exception.subject
        let logical = subject?.logicalFrames ?? []
        var names: [String] = []
        var culprits: [String] = []
        var raw: Set<String> = []
        var crashSite: [String?] = []
        for (index, frame) in logical.enumerated() {
            let looked = symbolicator.flatMap { Self.lookedUp(frame, $0) }
            if index == 0 { crashSite = (looked ?? frame.symbols).map(\.function) }
            guard frame.inApp else { continue }
            let image = exception.imageIndex(containing: frame.frame.address.value).map { exception.images[$0] }
            let module = image.map { Self.fileName($0.path) } ?? "?"
            if let function = Self.physicalFunction(looked ?? frame.symbols) {
                names.append("\(module) \(function)")
                culprits.append(function)
            } else if let image {
                names.append("\(module) +0x" + String(frame.frame.lookupAddress &- image.base, radix: 16))
                culprits.append(names[names.count - 1])
                if !image.buildId.isEmpty { raw.insert(image.buildId.lowercased()) }
            } else {
                names.append("? +0x" + String(frame.frame.lookupAddress, radix: 16))
                culprits.append(names[names.count - 1])
            }
        }
        let description =
            symbolicator == nil ? exception.description : CrashReason.describe(exception.facts, crashSite: crashSite)
        title = description.type.isEmpty ? "Exception" : description.type
        // The crash recorder's own frames (`cly_…`, in the app's executable when linked statically) name no culprit.
        culprit = culprits.first { !$0.hasPrefix("cly_") } ?? culprits.first ?? ""
        // A release trap's type already says the value (`Swift runtime failure: Index out of range`).
        let value = description.value
        subtitle = value.isEmpty || title.hasSuffix(value) ? culprit : value
        level = exception.level
        mechanism = description.mechanism
        rawBuildIds = raw.sorted()
        if let custom = Self.customFingerprint(custom) {
            fingerprint =
                custom.unicodeScalars.count <= Self.maxCustomFingerprint ? custom : Self.sha256(custom)
            rawBuildIds = []
        } else {
            let stack = names.isEmpty ? [description.value] : names
            fingerprint = Self.sha256(([title] + stack).joined(separator: "\n"))
        }
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
            FrameSymbol(function: $0.function, file: $0.file, line: $0.line, column: $0.column, inlined: $0.isInlined)
        }
    }

    /// The physical function of a frame's symbols (innermost first, the physical one last): inlined calls are
    /// left out, so a device that resolved names from the symbol table alone and a collector reading DWARF agree.
    private static func physicalFunction(_ symbols: [FrameSymbol]) -> String? {
        (symbols.last { !$0.inlined } ?? symbols.last)?.function
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
    static func sha256(_ text: String) -> String {
        (try? Digest.hex(.sha256, Array(text.utf8))) ?? text
    }
}
