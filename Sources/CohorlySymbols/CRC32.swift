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
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var crc: UInt32 = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count == 0 { return crc }
            if count < 0 { return nil }
            crc = buffer.withUnsafeBytes { update(crc, UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
    }
}
