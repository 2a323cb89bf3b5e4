import CCrypto

/// Why a digest could not be computed: libcrypto is missing (the reason names it) or it failed.
package struct DigestFailure: Error, CustomStringConvertible {
    /// The reason.
    package let description: String
}

/// A message digest fed piece by piece, through libcrypto's EVP interface (loaded on first use, CCrypto): files
/// are hashed while they stream and never held whole. The CLI hashes what it uploads with the same code the
/// collector checks with. A maintained library, not hand-written code: the digests must match other tools' bit
/// for bit.
package final class Digest {
    /// Which digest.
    package enum Algorithm: Sendable {
        /// SHA-1 (Sentry's chunk and file checksums).
        case sha1
        /// SHA-256 (debug-file uploads to the collector).
        case sha256
        /// SHA-512 (the PostHog symbol set's content hash).
        case sha512

        /// The digest's length in bytes.
        package var length: Int {
            switch self {
            case .sha1: return 20
            case .sha256: return 32
            case .sha512: return 64
            }
        }

        var code: Int32 {
            switch self {
            case .sha1: return Int32(CLY_DIGEST_SHA1.rawValue)
            case .sha256: return Int32(CLY_DIGEST_SHA256.rawValue)
            case .sha512: return Int32(CLY_DIGEST_SHA512.rawValue)
            }
        }

        var name: String {
            switch self {
            case .sha1: return "SHA-1"
            case .sha256: return "SHA-256"
            case .sha512: return "SHA-512"
            }
        }
    }

    /// The algorithm.
    package let algorithm: Algorithm
    private var context: UnsafeMutableRawPointer?
    private var spent = false

    /// A fresh digest. When libcrypto cannot be loaded, `finalizeHex` says so.
    package init(_ algorithm: Algorithm) {
        self.algorithm = algorithm
        context = cly_crypto_digest_begin(algorithm.code)
    }

    deinit { if let context { cly_crypto_digest_end(context, nil, 0) } }

    /// Adds `bytes` after everything added so far.
    package func update(_ bytes: UnsafeRawBufferPointer) {
        guard let context, !bytes.isEmpty else { return }
        if cly_crypto_digest_update(context, bytes.baseAddress, bytes.count) != 1 {
            cly_crypto_digest_end(context, nil, 0)
            self.context = nil
        }
    }

    /// Adds `bytes` after everything added so far.
    package func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The digest of everything added, as lowercase hex; the digest is spent afterwards.
    package func finalizeHex() throws(DigestFailure) -> String {
        var digest = [UInt8](repeating: 0, count: algorithm.length)
        let done = context.map { cly_crypto_digest_end($0, &digest, digest.count) } ?? 0
        let wasSpent = spent
        context = nil
        spent = true
        guard done == 1 else {
            let reason = wasSpent ? "already finalized" : cly_crypto_load_error().map { String(cString: $0) }
            throw DigestFailure(description: "\(algorithm.name) failed: \(reason ?? "libcrypto")")
        }
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(digest.count * 2)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The digest of `bytes`, lowercase hex.
    package static func hex(_ algorithm: Algorithm, _ bytes: UnsafeRawBufferPointer) throws(DigestFailure) -> String {
        let digest = Digest(algorithm)
        digest.update(bytes)
        return try digest.finalizeHex()
    }

    /// The digest of `bytes`, lowercase hex.
    package static func hex(_ algorithm: Algorithm, _ bytes: [UInt8]) throws(DigestFailure) -> String {
        let digest = Digest(algorithm)
        digest.update(bytes)
        return try digest.finalizeHex()
    }
}
