extension SwiftMangling {
    /// The Swift module that declared the entity `name` mangles (`$s11Hummingbird6RouterV…` → `Hummingbird`), or
    /// nil when `name` is not a Swift symbol or its context is not one this reads.
    ///
    /// Read from the context at the start of the name, so a generic specialization (`…Tg5`), a function signature
    /// specialization (`…Tf4…_n`), an async function's pieces (`…TQ0_`), a closure (`…fU_`) and a thunk keep the
    /// module of the function they were made from. The standard substitutions name their module (`s`, `Sa`,
    /// `SS`… `Swift`; `Sc…` `_Concurrency`; `So` `__C`, imported C and Objective-C); an extension declared in
    /// another module (`$sSa3AppE…`, `$s9Framework6RouterV3AppE…`) names the extension's module, where its code
    /// is. Punycode and word-substituted identifiers after the module end the reading (the module read so far
    /// stands); a reabstraction thunk between function types (`$sIeg_…`) has no module.
    public static func module(of name: String) -> String? {
        var utf8 = name.utf8[...]
        guard
            let prefix = prefixes.first(where: { prefix in
                utf8.starts(with: UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
            })
        else { return nil }
        utf8 = utf8.dropFirst(prefix.utf8CodeUnitCount)
        var module: String
        guard let first = utf8.first else { return nil }
        switch first {
        case UInt8(ascii: "s"):
            module = "Swift"
            utf8 = utf8.dropFirst()
        case UInt8(ascii: "S"):
            let kind = utf8.dropFirst().first ?? 0
            switch kind {
            case UInt8(ascii: "o"): module = "__C"
            case UInt8(ascii: "C"): module = "__C_Synthesized"
            case UInt8(ascii: "c"): module = "_Concurrency"
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): module = "Swift"
            default: return nil
            }
            utf8 = utf8.dropFirst(kind == UInt8(ascii: "c") ? 3 : 2)
        default:
            // A module identifier: a length then its characters (`00`: Punycode, not read).
            guard first != UInt8(ascii: "0"), let identifier = Self.identifier(&utf8) else { return nil }
            module = identifier
        }
        // The nominal types of the context (`6RouterV`); an identifier followed by `E` is the module of an
        // extension, which holds the code.
        while let next = utf8.first, next != UInt8(ascii: "0"), let identifier = Self.identifier(&utf8) {
            guard let kind = utf8.first else { break }
            if kind == UInt8(ascii: "E") {
                module = identifier
                break
            }
            // Struct, class, enum, protocol, type alias: the context goes on.
            guard [UInt8(ascii: "V"), UInt8(ascii: "C"), UInt8(ascii: "O"), UInt8(ascii: "P")].contains(kind) else {
                break
            }
            utf8 = utf8.dropFirst()
        }
        return module
    }

    /// A length-prefixed identifier at the start of `utf8` (`11Hummingbird`), consumed; nil (nothing consumed)
    /// when none is there or the length runs past the name.
    private static func identifier(_ utf8: inout Substring.UTF8View) -> String? {
        var rest = utf8
        var length = 0
        while let digit = rest.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) {
            length = length * 10 + Int(digit - UInt8(ascii: "0"))
            guard length <= 4096 else { return nil }
            rest = rest.dropFirst()
        }
        guard length > 0, rest.count >= length else { return nil }
        let identifier = String(decoding: rest.prefix(length), as: UTF8.self)
        utf8 = rest.dropFirst(length)
        return identifier
    }
}
