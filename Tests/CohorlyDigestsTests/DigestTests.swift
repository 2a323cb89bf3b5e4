import CohorlyDigests
import Testing

/// The digests come from libcrypto and zlib: known vectors (FIPS 180-4 examples, the CRC-32 check value), and
/// a digest fed in pieces of every awkward size equals the digest of the whole.
@Suite struct DigestTests {
    @Test func sha256MatchesKnownVectors() throws {
        #expect(try Digest.hex(.sha256, []) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            try Digest.hex(.sha256, Array("abc".utf8))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            try Digest.hex(.sha256, [UInt8](repeating: 0x61, count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func sha1AndSHA512MatchKnownVectors() throws {
        #expect(try Digest.hex(.sha1, Array("abc".utf8)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(
            try Digest.hex(.sha512, Array("abc".utf8))
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
    }

    @Test(arguments: [Digest.Algorithm.sha1, .sha256, .sha512])
    func piecesHashLikeTheWhole(_ algorithm: Digest.Algorithm) throws {
        let long = (0..<1_000_003).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let pieces = Digest(algorithm)
        long.withUnsafeBytes { bytes in
            var offset = 0
            for size in [0, 1, 63, 64, 65, 127, 128, 129, 1000, 4096] where offset + size <= bytes.count {
                pieces.update(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + size]))
                offset += size
            }
            pieces.update(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        }
        let hex = try pieces.finalizeHex()
        #expect(hex == (try Digest.hex(algorithm, long)))
        #expect(hex.count == algorithm.length * 2)
    }

    @Test func aFinalizedDigestCannotBeFinalizedAgain() throws {
        let digest = Digest(.sha256)
        digest.update(Array("abc".utf8))
        _ = try digest.finalizeHex()
        #expect(throws: DigestFailure.self) { try digest.finalizeHex() }
    }

    @Test func crc32MatchesKnownVectors() {
        func crc(_ text: String) -> UInt32 { Array(text.utf8).withUnsafeBytes { CRC32.update(0, $0) } }
        #expect(crc("") == 0)
        #expect(crc("123456789") == 0xCBF4_3926)
        #expect(crc("The quick brown fox jumps over the lazy dog") == 0x414F_A339)
        let text = Array("The quick brown fox jumps over the lazy dog".utf8)
        let split = text.withUnsafeBytes { bytes in
            CRC32.update(
                CRC32.update(0, UnsafeRawBufferPointer(rebasing: bytes[..<7])),
                UnsafeRawBufferPointer(rebasing: bytes[7...]))
        }
        #expect(split == 0x414F_A339)
    }
}
