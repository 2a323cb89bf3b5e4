import CDwarf

#if canImport(Glibc)
    import Glibc
#endif

/// Turns linkage names into readable ones: Swift via the runtime's `swift_demangle`, C++ via `__cxa_demangle`.
/// ``simplified(_:)`` gives the Swift backtracer's shorter form.
public enum Demangler {
    /// How names are printed: ``full`` (`CrashDemo.crash(on: Swift.String, _: () -> ()) -> Swift.Never`, the
    /// default of JSON output and `symbolicate --exe`) or ``simplified`` (`crash(on:_:)`, as the Swift runtime's
    /// backtracer prints it).
    public enum Style: Sendable {
        /// Every module, argument and result type.
        case full
        /// The runtime's simplified options: no module names, no argument types, sugared types (`Int?`, `[A]`),
        /// `specialized` for generic specializations.
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
    /// `rawFunction` (the linkage name) when it has one.
    public static func name(function: String?, rawFunction: String?, style: Style) -> String? {
        guard style == .simplified, let rawFunction, let simplified = simplified(rawFunction),
            !simplified.hasSuffix(" in ")  // a closure of top-level code: the simplified form names no context
        else { return function }
        return simplified
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
        func starts(with prefix: StaticString) -> Bool {
            length >= prefix.utf8CodeUnitCount
                && memcmp(name, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
        }
        return starts(with: "$s") || starts(with: "$S") || starts(with: "$e") || starts(with: "_$s")
            || starts(with: "_$S") || starts(with: "_T0")
    }
}
