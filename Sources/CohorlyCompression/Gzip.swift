/// One-shot gzip (RFC 1952) for request bodies (`Content-Encoding: gzip`): `ZlibStream` in one go.
package enum Gzip {
    /// `bytes` gzip-compressed; nil if zlib fails (then the body is sent uncompressed).
    package static func compress(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8]? {
        bytes.withUnsafeBytes { try? ZlibStream.gzip($0, level: level) }
    }
}
