/// Which code of a crashed process is the app's own: the one rule that decides a frame's `in_app` once its
/// symbols are known — on the device (CohorlyCrash), in the collector when it names frames the device left raw,
/// and so in every event, issue key, culprit and stack page.
///
/// SwiftPM links every package of a server (its framework, NIO, swift-log…) statically into the one executable,
/// so the image a frame is in says little. A frame is the app's when one of its source-level frames (the
/// physical function or a call inlined into it) is app code. A symbol, in this order:
/// 1. the crash recorder's own functions, compiler-made code (`partial apply for`, `thunk for`, reabstraction
///    thunks, `protocol witness for`, `merged`, `dispatch thunk of`, `outlined`…, also as a specialization or an
///    async function's piece) and C runtime start-up code (`_start`, `__libc_start_main`…) are never app code;
/// 2. a Swift module (``SwiftMangling/module(of:)``) in ``includeModules`` is, one in ``excludeModules`` is not;
/// 3. a source file under a package's `.build/` (`.build/checkouts/<package>/…`) is not; under
///    ``sourceRoot`` it is; anywhere else (a package dependency by path, the toolchain's sources) it is not;
/// 4. the Swift runtime's and the toolchain's modules (`Swift`, `_Concurrency`, `Foundation`, `Dispatch`…) are
///    not;
/// 5. otherwise the symbol says nothing (a C function without a source file, a module without a path).
///
/// A frame none of whose symbols says anything keeps its image's answer (the executable and the libraries
/// beside it), as does a frame nothing named. Only a module named in ``includeModules`` makes a frame of an
/// image that is not the app's in-app.
public struct AppCode: Sendable, Equatable {
    /// The root package's directory (no trailing slash): sources under it, outside `.build/`, are the app's.
    /// Nil when unknown (no DWARF for the executable): then only the rules by name and module apply.
    public var sourceRoot: String?
    /// Swift modules that are always the app's (default none).
    public var includeModules: [String]
    /// Swift modules that are never the app's (default none).
    public var excludeModules: [String]

    /// A rule with this root and these overrides.
    public init(sourceRoot: String? = nil, includeModules: [String] = [], excludeModules: [String] = []) {
        self.sourceRoot = sourceRoot.map { $0.count > 1 && $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.includeModules = includeModules
        self.excludeModules = excludeModules
    }

    /// Whether a frame whose source-level frames are `symbols` (innermost first, the physical function last) is
    /// the app's, when its image's answer is `imageInApp`.
    public func isInApp(_ symbols: [FrameSymbol], imageInApp: Bool) -> Bool {
        if symbols.last?.namesCrashRecorder ?? false { return false }
        var said = false
        for symbol in symbols {
            switch verdict(symbol) {
            case .included: return true
            case .app: if imageInApp { return true }
            case .notApp: said = true
            case nil: continue
            }
        }
        return said ? false : imageInApp
    }

    /// What one symbol says: app code, a module the app includes, not app code, or nothing (nil).
    public enum Verdict: Sendable, Equatable {
        /// App code.
        case app
        /// A module named in ``includeModules`` (in-app wherever its image is).
        case included
        /// Not the app's code.
        case notApp
    }

    /// What `symbol` says of its code (the rule in the type's summary).
    public func verdict(_ symbol: FrameSymbol) -> Verdict? {
        let name = symbol.function ?? symbol.rawFunction
        if symbol.namesCrashRecorder { return .notApp }
        if let name, Self.isCompilerMade(name) || Self.startUpFunctions.contains(name) { return .notApp }
        if let raw = symbol.rawFunction, Self.startUpFunctions.contains(raw) { return .notApp }
        let module = (symbol.rawFunction ?? symbol.function).flatMap(SwiftMangling.module(of:))
        if let module {
            if includeModules.contains(module) { return .included }
            if excludeModules.contains(module) { return .notApp }
        }
        if let file = symbol.file, file.hasPrefix("/") {
            if file.contains("/.build/") { return .notApp }
            if let sourceRoot { return Self.isInside(file, sourceRoot) ? .app : .notApp }
        }
        if let module, Self.toolchainModules.contains(module) { return .notApp }
        return nil
    }

    /// The root package's directory from the `DW_AT_comp_dir` of the executable's `main` (SwiftPM compiles a
    /// package's Swift code, and its dependencies', in the root package's directory; a C target in
    /// `.build/<triple>/<configuration>/<Target>.build`, so the part before `/.build/` is the root).
    public static func sourceRoot(compilationDirectory: String) -> String? {
        guard compilationDirectory.hasPrefix("/") else { return nil }
        var root = Substring(compilationDirectory)
        if let build = root.firstRange(of: "/.build/") {
            root = root[..<build.lowerBound]
        } else if root.hasSuffix("/.build") {
            root = root.dropLast("/.build".count)
        }
        while root.count > 1 && root.hasSuffix("/") { root = root.dropLast() }
        return root.isEmpty ? nil : String(root)
    }

    /// C runtime start-up and thread start code: whatever links it, never the app's.
    public static let startUpFunctions: Set<String> = [
        "_start", "__libc_start_main", "__libc_start_call_main", "__libc_start_main_impl",
        "__libc_start_main_alias_2", "__libc_csu_init", "_dl_start", "_dl_start_user", "_dl_start_final", "_init",
        "_fini", "start_thread", "clone", "clone3", "__clone", "__clone3",
    ]

    /// Modules of the Swift runtime, Foundation and the toolchain (also when linked statically).
    public static let toolchainModules: Set<String> = [
        "Swift", "_Concurrency", "_StringProcessing", "_RegexParser", "RegexBuilder", "Synchronization",
        "Observation", "Distributed", "_Differentiation", "Cxx", "CxxStdlib", "Foundation", "FoundationEssentials",
        "FoundationInternationalization", "FoundationNetworking", "FoundationXML", "Dispatch", "XCTest", "Testing",
        "Glibc", "Musl", "SwiftGlibc", "_Backtracing", "Runtime", "__C", "__C_Synthesized",
    ]

    /// The demangler's names of code the compiler made (checked after ``strippingPieceAndSpecialization(_:)``).
    package static let compilerMadePrefixes = [
        "partial apply for ", "partial apply forwarder for ", "thunk for ", "reabstraction thunk ",
        "protocol witness for ", "merged ", "dispatch thunk of ", "outlined ", "type metadata accessor for ",
        "type metadata completion function for ", "value witness ", "objc thunk for ",
    ]

    /// Whether `name` (demangled) is a function the compiler made: a thunk, a partial application, a protocol
    /// witness, a merged function, an outlined copy — also as a specialization or an async function's piece
    /// (`(1) await resume partial function for partial apply for …`).
    public static func isCompilerMade(_ name: String) -> Bool {
        let core = strippingPieceAndSpecialization(name[...])
        return compilerMadePrefixes.contains { core.hasPrefix($0) }
    }

    /// `name` without the demangler's leading words for an async function's piece (`(N) suspend resume partial
    /// function for `, `(N) await resume partial function for `) and for specializations (`specialized `,
    /// `generic specialization <…> of `, `function signature specialization <…> of `…), however nested.
    static func strippingPieceAndSpecialization(_ name: Substring) -> Substring {
        var rest = name
        while true {
            if rest.hasPrefix("("), let close = rest.firstIndex(of: ")"),
                rest[rest.index(after: rest.startIndex)..<close].utf8.allSatisfy({ (0x30...0x39).contains($0) })
            {
                let after = rest[rest.index(after: close)...]
                guard
                    let piece = [" suspend resume partial function for ", " await resume partial function for "]
                        .first(where: after.hasPrefix)
                else { return rest }
                rest = after.dropFirst(piece.count)
            } else if rest.hasPrefix("specialized ") {
                rest = rest.dropFirst("specialized ".count)
            } else if let open = rest.firstIndex(of: "<"), rest[..<open].hasSuffix("specialization "),
                !rest[..<open].contains(" of ")
            {
                // Up to the matching `>` (a `->` inside is a function type, not a bracket), then ` of `.
                var depth = 0
                var previous: Character = " "
                var end: Substring.Index?
                for index in rest[open...].indices {
                    let character = rest[index]
                    if character == "<" { depth += 1 }
                    if character == ">" && previous != "-" {
                        depth -= 1
                        if depth == 0 {
                            end = index
                            break
                        }
                    }
                    previous = character
                }
                guard let end, rest[rest.index(after: end)...].hasPrefix(" of ") else { return rest }
                rest = rest[rest.index(after: end)...].dropFirst(" of ".count)
            } else {
                return rest
            }
        }
    }

    /// Whether `path` is `root` or below it.
    static func isInside(_ path: String, _ root: String) -> Bool {
        root == "/" || path == root || (path.hasPrefix(root) && path.dropFirst(root.count).hasPrefix("/"))
    }
}

extension CapturedException.StackFrame {
    /// Whether this frame is in-app once `found` names it: a frame the device named keeps its answer; one it
    /// left raw (in-app by its image alone) is decided by `code` from `found` (the collector naming raw frames
    /// from uploaded debug files applies the device's rule).
    public func inApp(namedBy found: [FrameSymbol], code: AppCode) -> Bool {
        guard symbols.isEmpty, !found.isEmpty else { return inApp }
        return code.isInApp(found, imageInApp: inApp)
    }
}

extension CapturedException {
    /// The rule for frames the collector names itself: ``AppCode`` with the root found by `sourceRoot` for the
    /// executable's image (the image whose path is ``executable``, else none), no module overrides (the app's
    /// own stay on its device).
    public func appCode(sourceRoot: (Image) -> String?) -> AppCode {
        let image = executable.flatMap { path in images.first { $0.path == path } }
        return AppCode(sourceRoot: image.flatMap(sourceRoot))
    }
}
