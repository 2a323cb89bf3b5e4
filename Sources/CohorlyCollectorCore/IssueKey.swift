import CohorlyCrashModel
import CohorlyDigests
import CohorlySymbols

/// What decides the issue of one `$exception` occurrence, and what the issue shows about it (docs/issues.md).
///
/// The fingerprint: a caller-supplied `$exception_fingerprint` wins (kept as sent up to 64 characters, else its
/// SHA-256, as PostHog does); otherwise the SHA-256 of the title and the culprit — the first in-app frame of the
/// subject thread in caller-chain order (physical frames to the async anchor, the awaiting callers, then the rest),
/// counted as its module's file name and its function after inline expansion in normal form
/// (``normalName(_:)``), or, when neither the device nor the collector resolved it, `+0x<offset>` into its module
/// (the lookup address minus the image's base: the same for every launch of one build, whatever ASLR did). Not
/// the frames above it: the same failure in the same function reached by two paths, or built debug and release
/// (where inlining, specialization and async pieces make the frame lists differ), is one issue. With no in-app
/// frame the value stands in for the culprit (PostHog: the message only without a stack).
struct IssueKey: Sendable, Hashable {
    /// The app the occurrence came from (``IssueApp/name(of:)``; empty when the event names none): it joins the
    /// fingerprint in the key, so two apps' crashes at one site are two issues.
    var app = ""
    /// The issue's fingerprint (unique within its app).
    var fingerprint: String
    /// The exception type as issues show it (``title(of:)``: one title for a debug and a release build).
    var title: String
    /// The value (unless the title ends with it), else the culprit.
    var subtitle: String
    /// The culprit: its function in normal form, else `module +0x<offset>` (empty without in-app frames).
    var culprit: String
    /// `$exception_level`.
    var level: String
    /// The mechanism type.
    var mechanism: String
    /// Build ids (lowercase hex) of the culprit's image when it is keyed by offset: an upload of its debug file
    /// regroups the occurrence (IssueRegrouping.swift). Empty when the culprit had a name.
    var rawBuildIds: [String]

    /// Fingerprints a caller sent are kept as sent up to this many characters, else hashed (PostHog's rule).
    static let maxCustomFingerprint = 64

    /// What the key is made of, numbered: a collector whose stored issues were keyed by another version regroups
    /// them when it opens its database (IssueRegrouping+Upgrade.swift). 2: the culprit alone, in normal form,
    /// under the build-independent title (1: the type and every in-app frame's physical function as named). 3: the
    /// app joins the key (and the regrouping fills the function index, IssueFunctions.swift).
    static let version = 3

    /// What makes an issue one: its app and its fingerprint.
    struct Identity: Hashable {
        var app: String
        var fingerprint: String
    }

    /// This key's ``Identity``.
    var identity: Identity { Identity(app: app, fingerprint: fingerprint) }

    /// The title of a description: a Swift runtime trap that a release build names by its DWARF pseudo-frame
    /// (`Swift runtime failure: Index out of range`) is titled as the debug build's message titles it, `Fatal
    /// error` (with the failure as the value); every other type as it is.
    static func title(of description: CrashDescription) -> (title: String, value: String) {
        if let failure = CrashReason.runtimeFailure(description.type) { return ("Fatal error", failure) }
        return (description.type.isEmpty ? "Exception" : description.type, description.value)
    }

    /// The key of an exception whose reason is `description`, of level `level`, with these in-app frames in
    /// caller-chain order. `custom` is the event's `$exception_fingerprint` (a string, or a list of strings
    /// joined by newlines).
    init(
        description: CrashDescription, level: String, frames: [CapturedException.GroupingFrame], custom: JSONValue?
    ) {
        // The crash recorder's own frames (an earlier SDK marked them in-app) are left out: they say nothing of
        // the bug, and events of either SDK group together.
        let candidates = frames.filter { !($0.function.map(FrameSymbol.isCrashRecorderFunction) ?? false) }
        let first = Self.isStackOverflow(description) ? Self.recursing(candidates) : candidates.first
        var culprit = ""
        var module = "?"
        var raw: [String] = []
        if let first {
            if let path = first.image?.path { module = Self.fileName(path) }
            if first.function != nil {
                culprit = Self.normalName(first)
            } else if let image = first.image {
                culprit = module + " +0x" + String(first.frame.lookupAddress &- image.base, radix: 16)
                if !image.buildId.isEmpty { raw = [image.buildId.lowercased()] }
            } else {
                culprit = module + " +0x" + String(first.frame.lookupAddress, radix: 16)
            }
        }
        let (title, value) = Self.title(of: description)
        self.title = title
        self.culprit = culprit
        // A type that says the value already keeps the culprit as the subtitle.
        subtitle = value.isEmpty || title.hasSuffix(value) ? culprit : value
        self.level = level
        mechanism = description.mechanism
        rawBuildIds = raw
        if let custom = Self.customFingerprint(custom) {
            fingerprint =
                custom.unicodeScalars.count <= Self.maxCustomFingerprint ? custom : Self.sha256(custom)
            rawBuildIds = []
        } else if first == nil {
            fingerprint = Self.sha256(title + "\n" + value)
        } else if first?.function != nil {
            fingerprint = Self.sha256(title + "\n" + module + " " + culprit)
        } else {
            fingerprint = Self.sha256(title + "\n" + culprit)
        }
    }

    /// Whether the exception is a stack overflow (the recorder's reason: `Stack overflow at 0x…`).
    static func isStackOverflow(_ description: CrashDescription) -> Bool {
        description.value.hasPrefix("Stack overflow")
    }

    /// Of a stack overflow's frames, the one that names it: the in-app function found most often (the recursion;
    /// ties: the innermost), not the innermost frame, which is wherever the recursion happened to run out of
    /// stack (the recursing function itself or a callee of it) and differs from crash to crash.
    static func recursing(_ frames: [CapturedException.GroupingFrame]) -> CapturedException.GroupingFrame? {
        var counts: [String: Int] = [:]
        for frame in frames { if let function = frame.function { counts[function, default: 0] += 1 } }
        guard let most = counts.values.max(), most > 1 else { return frames.first }
        return frames.first { $0.function.map { counts[$0] == most } ?? false }
    }

    /// The normal form of a grouping frame's function (``FunctionName``): the short name the device made, else
    /// one made here from its linkage and full names as the device makes it (events of earlier SDKs, frames
    /// the collector looked up), so both key alike.
    static func normalName(_ frame: CapturedException.GroupingFrame) -> String {
        if let short = frame.shortFunction { return FunctionName.normalized(short) }
        guard let raw = frame.rawFunction, Demangler.isSwiftMangled(raw) else {
            return FunctionName.normalized(frame.function ?? "")
        }
        return ShortNameCache.shared.shortName(function: frame.function, rawFunction: raw)
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

    /// `crash` as the key reads it when frames are looked up: its subject thread and images, not the other
    /// threads, and not its executable (the in-app rule of frames named here takes no source root from it).
    static func grouped(_ crash: CapturedException) -> CapturedException {
        var grouped = crash
        grouped.threads = crash.subject.map { [$0] } ?? []
        grouped.executable = nil
        return grouped
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
