/// GNU build ids as text, and the `debug_id` GUID Sentry and PostHog derive from them. The one place the rule
/// lives: the events (`debug_meta`, `$exception` images) use it here, CohorlySymbols' `DebugId` for files.
public enum BuildIdentifier {
    /// The first 16 bytes of the build id (zero-padded) as a GUID, with the first three fields byte-swapped when
    /// the ELF file is little-endian (Sentry's rule; age 0): `02547a30…` → `307a5402-…`.
    public static func debugId(_ buildId: [UInt8], littleEndian: Bool = true) -> String {
        var bytes = Array(buildId.prefix(16))
        bytes += [UInt8](repeating: 0, count: 16 - bytes.count)
        if littleEndian {
            bytes[0..<4].reverse()
            bytes[4..<6].reverse()
            bytes[6..<8].reverse()
        }
        let digits = Array(hex(bytes).utf8)
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (index, digit) in digits.enumerated() {
            if index == 8 || index == 12 || index == 16 || index == 20 { out.append(UInt8(ascii: "-")) }
            out.append(digit)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Lowercase hex of `bytes`.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of a hex string (upper or lower case), or nil when it is not an even number of hex digits.
    public static func bytes(fromHex text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let high = nibble(chars[index]), let low = nibble(chars[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }

    private static func nibble(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return char - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// Swift's mangling prefixes: the one list the crash model (which frames carry a `symbol`, which language a
/// frame is) and CohorlySymbols' demangler read.
public enum SwiftMangling {
    /// `$s` (Swift 5+), `$S` (4.2), `$e` (embedded), their `_`-prefixed forms as some platforms write them, and
    /// `_T0` (Swift 4).
    public static let prefixes: [StaticString] = ["$s", "$S", "$e", "_$s", "_$S", "_T0"]

    /// Whether `name` starts with one of `prefixes`.
    public static func isMangled(_ name: String) -> Bool {
        prefixes.contains { prefix in
            name.utf8.starts(with: UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount))
        }
    }
}
