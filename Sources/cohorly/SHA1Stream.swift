import CCrypto

/// SHA-1 over bytes fed piece by piece (libcrypto's EVP digest, loaded on first use): the checksums of Sentry's
/// chunk upload, for files of any size in bounded memory.
final class SHA1Stream {
    private var context: UnsafeMutableRawPointer?

    /// A fresh digest; throws with libcrypto's load error when it is missing.
    init() throws(DebugFileUploader.Failure) {
        guard let context = cly_crypto_sha1_begin() else {
            throw .init(
                description: "SHA-1 failed: \(cly_crypto_load_error().map { String(cString: $0) } ?? "libcrypto")")
        }
        self.context = context
    }

    deinit { if let context { cly_crypto_sha1_end(context, nil) } }

    /// Adds `bytes`.
    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let context, !bytes.isEmpty else { return }
        cly_crypto_sha1_update(context, bytes.baseAddress, bytes.count)
    }

    /// The digest of everything added, as lowercase hex; the stream is spent afterwards.
    func finalizeHex() throws(DebugFileUploader.Failure) -> String {
        var digest = [UInt8](repeating: 0, count: 20)
        let done = context.map { cly_crypto_sha1_end($0, &digest) } ?? 0
        context = nil
        guard done == 1 else { throw .init(description: "SHA-1 failed") }
        return digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// The SHA-1 of `bytes`, lowercase hex.
    static func hex(_ bytes: UnsafeRawBufferPointer) throws(DebugFileUploader.Failure) -> String {
        let stream = try SHA1Stream()
        stream.update(bytes)
        return try stream.finalizeHex()
    }
}
