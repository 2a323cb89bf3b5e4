#if canImport(Glibc)
    import Glibc
#endif

/// CRC-32 (IEEE 802.3, as zlib and `.gnu_debuglink` use it).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// Continues `crc` over `bytes`.
    static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var value = ~crc
        for byte in bytes { value = table[Int((value ^ UInt32(byte)) & 0xff)] ^ (value >> 8) }
        return ~value
    }

    /// The CRC-32 of a whole file, or nil when it cannot be read.
    static func file(_ path: String) -> UInt32? {
        guard let file = try? RegularFile(path: path) else { return nil }
        var crc: UInt32 = 0
        do {
            try file.forEachChunk(size: 1 << 16) { chunk in
                crc = update(crc, chunk)
                return true
            }
        } catch {
            return nil
        }
        return crc
    }
}
