/// HMAC (RFC 2104) over the digests of ``Digest``: a keyed hash that proves knowledge of a key without sending it.
package enum HMAC {
    /// HMAC-SHA256 of `message` under `key`, lowercase hex.
    package static func sha256Hex(key: [UInt8], message: [UInt8]) throws(DigestFailure) -> String {
        let blockSize = 64
        var block = key.count > blockSize ? try bytes(Digest.hex(.sha256, key)) : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        let inner = Digest(.sha256)
        inner.update(block.map { $0 ^ 0x36 })
        inner.update(message)
        let outer = Digest(.sha256)
        outer.update(block.map { $0 ^ 0x5c })
        outer.update(try bytes(inner.finalizeHex()))
        return try outer.finalizeHex()
    }

    /// The bytes of lowercase hex digits (as `Digest.finalizeHex` writes them).
    private static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        func value(_ digit: UInt8) -> UInt8 { digit >= 0x61 ? digit - 0x61 + 10 : digit - 0x30 }
        return stride(from: 0, to: digits.count - 1, by: 2).map { value(digits[$0]) << 4 | value(digits[$0 + 1]) }
    }
}
