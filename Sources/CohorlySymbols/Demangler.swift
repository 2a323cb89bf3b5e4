import CDwarf

#if canImport(Glibc)
    import Glibc
#endif

/// Turns linkage names into readable ones: Swift via the runtime's `swift_demangle`, C++ via `__cxa_demangle`.
public enum Demangler {
    /// The readable form of `name`, or `name` unchanged when it is not a Swift or Itanium C++ mangled name.
    public static func demangle(_ name: String) -> String {
        if isSwiftMangled(name) { return swift(name) ?? name }
        if name.hasPrefix("_Z") { return cxx(name) ?? name }
        return name
    }

    /// Whether `name` carries a Swift mangling prefix (`$s`, `$S`, `$e`, `_$s`, `_$S`, `_T0`).
    public static func isSwiftMangled(_ name: String) -> Bool {
        name.hasPrefix("$s") || name.hasPrefix("$S") || name.hasPrefix("$e") || name.hasPrefix("_$s")
            || name.hasPrefix("_$S") || name.hasPrefix("_T0")
    }

    static func swift(_ name: String) -> String? {
        var name = name
        return name.withUTF8 { bytes -> String? in
            guard let base = bytes.baseAddress else { return nil }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { chars -> String? in
                guard let result = swift_demangle(chars, bytes.count, nil, nil, 0) else { return nil }
                defer { free(result) }
                return String(cString: result)
            }
        }
    }

    static func cxx(_ name: String) -> String? {
        var status: Int32 = 0
        guard let result = __cxa_demangle(name, nil, nil, &status) else { return nil }
        defer { free(result) }
        return status == 0 ? String(cString: result) : nil
    }
}
