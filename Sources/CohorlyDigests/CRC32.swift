import CZlib

/// CRC-32 (IEEE 802.3, as ZIP and `.gnu_debuglink` use it), from zlib's `crc32_z`.
package enum CRC32 {
    /// Continues `crc` (0 to start) over `bytes`.
    package static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        let value = crc32_z(uLong(crc), base.assumingMemoryBound(to: Bytef.self), z_size_t(bytes.count))
        return UInt32(truncatingIfNeeded: value)
    }
}
