import CDwarf

#if canImport(Glibc)
    import Glibc
#endif

/// Turns linkage names into readable ones: Swift via the runtime's `swift_demangle`, C++ via `__cxa_demangle`.
public enum Demangler {
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
    private static func hasSwiftPrefix(_ name: UnsafePointer<CChar>, _ length: Int) -> Bool {
        func starts(with prefix: StaticString) -> Bool {
            length >= prefix.utf8CodeUnitCount
                && memcmp(name, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
        }
        return starts(with: "$s") || starts(with: "$S") || starts(with: "$e") || starts(with: "_$s")
            || starts(with: "_$S") || starts(with: "_T0")
    }
}
