import CohorlyCrashModel

/// Identifier helpers: GNU build id bytes to `code_id` and `debug_id` text.
public enum DebugId {
    /// Lowercase hex of the build id bytes (`code_id`).
    public static func codeId(_ buildId: [UInt8]) -> String {
        hex(buildId)
    }

    /// The first 16 bytes of the build id (zero-padded) as a GUID, with the first three fields byte-swapped
    /// when the ELF file is little-endian (Sentry's rule; age 0): `02547a30…` → `307a5402-…`.
    public static func debugId(_ buildId: [UInt8], littleEndian: Bool = true) -> String {
        BuildIdentifier.debugId(buildId, littleEndian: littleEndian)
    }

    /// Parses a `code_id` (any even number of hex digits) or a `debug_id` GUID (with or without dashes and an
    /// optional age suffix). Returns nil for anything else.
    public static func parse(_ text: String) -> Identifier? {
        let lower = text.lowercased()
        let parts = lower.split(separator: "-", omittingEmptySubsequences: false)
        if parts.count >= 5, parts[0].count == 8, parts[1].count == 4, parts[2].count == 4,
            parts[3].count == 4,
            parts[4].count == 12
        {
            let guid = parts[0..<5].joined(separator: "-")
            guard bytes(fromHex: parts[0..<5].joined()) != nil else { return nil }
            return .debugId(guid)
        }
        guard let raw = bytes(fromHex: lower), !raw.isEmpty else { return nil }
        return .codeId(lower)
    }

    /// An identifier given by a user.
    public enum Identifier: Equatable, Sendable {
        /// A GNU build id in hex.
        case codeId(String)
        /// A GUID-style debug id, lowercase with dashes.
        case debugId(String)

        /// Whether a file with this build id answers to the identifier.
        public func matches(buildId: [UInt8], littleEndian: Bool = true) -> Bool {
            switch self {
            case .codeId(let hex): return DebugId.codeId(buildId) == hex
            case .debugId(let guid): return DebugId.debugId(buildId, littleEndian: littleEndian) == guid
            }
        }
    }

    /// The build id's first 16 bytes (as hex) that a little-endian file's `debug_id` GUID stands for: the
    /// GUID with its first three fields swapped back. Nil when `debugId` is not a GUID.
    public static func codeIdPrefix(debugId: String) -> String? {
        guard case .debugId(let guid)? = parse(debugId),
            var bytes = bytes(fromHex: guid.split(separator: "-").joined()), bytes.count == 16
        else { return nil }
        bytes[0..<4].reverse()
        bytes[4..<6].reverse()
        bytes[6..<8].reverse()
        return hex(bytes)
    }

    /// Build id bytes from a hex string (upper or lower case), or nil when it is not an even number of hex digits.
    public static func buildId(hex text: String) -> [UInt8]? {
        guard let bytes = bytes(fromHex: text), !bytes.isEmpty else { return nil }
        return bytes
    }

    static func hex(_ bytes: [UInt8]) -> String { BuildIdentifier.hex(bytes) }

    static func bytes(fromHex text: String) -> [UInt8]? { BuildIdentifier.bytes(fromHex: text) }
}
