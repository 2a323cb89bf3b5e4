import CDwarf
import CohorlyCrashModel

#if canImport(Glibc)
    import Glibc
#endif

/// Turns linkage names into readable ones: Swift via the runtime's `swift_demangle`, C++ via `__cxa_demangle`.
/// ``simplified(_:)`` gives the Swift backtracer's shorter form.
public enum Demangler {
    /// How names are printed: ``simplified`` (`crash(on:_:)`, as the Swift runtime's backtracer prints it: the
    /// default of every printed stack) or ``full`` (`CrashDemo.crash(on: Swift.String, _: () -> ()) -> Swift.Never`,
    /// `--no-sugar`; the form JSON output and events carry in `function`). One style holds for every frame of a
    /// stack: it is made from each frame's linkage name, wherever the frame was resolved.
    public enum Style: Sendable {
        /// Every module, argument and result type, no sugar (`Swift.Optional<Swift.Int>`): the runtime's
        /// `swift_demangle`, as `swift-demangle --no-sugar` prints it.
        case full
        /// The runtime's simplified options: no module names, no argument types, sugared types (`Int?`, `[A]`),
        /// `specialized` for generic specializations — `swift-demangle --simplified`.
        case simplified
    }

    /// The Swift backtracer's form of a linkage name (libswiftCore's `_swift_backtrace_demangle`: simplified
    /// and sugared Swift names; C++ names as `__cxa_demangle` gives them), or nil when `name` is not mangled.
    public static func simplified(_ name: String) -> String? {
        let demangled = name.withCString { cly_simplified_demangle($0, strlen($0)) }
        guard let demangled else { return nil }
        defer { free(demangled) }
        return String(cString: demangled)
    }

    /// A frame's name in `style`: `function` (the full readable name) or, simplified, the simplified form of
    /// `rawFunction` (the linkage name) when it has one. A C or C++ name reads the same in both styles (the
    /// backtracer prints C++ as `__cxa_demangle` does). A closure of top-level code, whose simplified form names
    /// no context (`closure #1 in `), is given its module from the full name (`closure #1 in CrashDemo`).
    public static func name(function: String?, rawFunction: String?, style: Style) -> String? {
        guard let rawFunction, isSwiftMangled(rawFunction) else { return function }
        guard style == .simplified, let simplified = simplified(rawFunction) else {
            return function ?? demangle(rawFunction)
        }
        guard simplified.hasSuffix(" in ") else { return simplified }
        let full = function ?? demangle(rawFunction)
        let parts = full.split(separator: " in ", omittingEmptySubsequences: false)
        guard parts.count > 1, let context = parts.last, !context.isEmpty, !context.contains(" ") else {
            return simplified + "top-level code"
        }
        return simplified + context
    }

    /// A frame's function as the wires and issues show it: its ``Style/simplified`` name (as the stack text prints
    /// it) in normal form (``FunctionName/normalized(_:)``: no `specialized`, `merged` or async-piece prefix), e.g.
    /// `startService(_:)` for `(2) suspend resume partial function for App.startService(Swift.String) async ->
    /// Swift.String`. nil when there is no name.
    public static func shortName(function: String?, rawFunction: String?) -> String? {
        name(function: function, rawFunction: rawFunction, style: .simplified).map(FunctionName.normalized)
    }

    /// The readable form of `name`, or `name` unchanged when it is not a Swift or Itanium C++ mangled name.
    public static func demangle(_ name: String) -> String {
        name.withCString { withReadable($0) { String(cString: $0) } }
    }

    /// Whether `name` carries a Swift mangling prefix (`$s`, `$S`, `$e`, `_$s`, `_$S`, `_T0`).
    public static func isSwiftMangled(_ name: String) -> Bool {
        name.withCString { hasSwiftPrefix($0, strlen($0)) }
    }

    /// Calls `body` with the readable form of a NUL-terminated name (the name itself when it is not mangled or
    /// cannot be demangled), without making Swift strings: for symbolicators demangling thousands of names.
    static func withReadable<Result>(
        _ name: UnsafePointer<CChar>, _ body: (UnsafePointer<CChar>) -> Result
    ) -> Result {
        let demangled = readableCopy(name)
        guard let demangled else { return body(name) }
        defer { free(demangled) }
        return body(demangled)
    }

    /// The readable form of a NUL-terminated name in memory from `malloc` (the caller frees it), or nil when the
    /// name is not mangled or cannot be demangled. Safe on any thread.
    static func readableCopy(_ name: UnsafePointer<CChar>) -> UnsafeMutablePointer<CChar>? {
        let length = strlen(name)
        if hasSwiftPrefix(name, length) { return swift_demangle(name, length, nil, nil, 0) }
        guard length > 2 && name[0] == 0x5f && name[1] == 0x5a else { return nil }  // "_Z"
        var status: Int32 = 0
        let demangled = __cxa_demangle(name, nil, nil, &status)
        if status != 0, let demangled {
            free(demangled)
            return nil
        }
        return demangled
    }

    /// Whether a C string of `length` bytes starts with a Swift mangling prefix.
    static func hasSwiftPrefix(_ name: UnsafePointer<CChar>, _ length: Int) -> Bool {
        SwiftMangling.prefixes.contains { prefix in
            length >= prefix.utf8CodeUnitCount && memcmp(name, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
        }
    }
}
