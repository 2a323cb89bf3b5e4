import Foundation
import Testing

@testable import CohorlyCompression

/// zlib streams against Python's `zlib` and `gzip` modules (an independent caller of zlib): what is deflated here
/// inflates there to the same bytes in every format, what Python compresses inflates here, whatever the sizes of
/// the pieces in and out; truncated, corrupt and trailing data are refused.
@Suite struct ZlibStreamTests {
    /// Compressible text with an incompressible stretch, over several output chunks.
    static let sample: [UInt8] = {
        var bytes = Array(String(repeating: "crash report frame 0x00007f3a ", count: 4_000).utf8)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<50_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes.append(UInt8(truncatingIfNeeded: state >> 56))
        }
        return bytes
    }()

    /// `input` through a stream fed in pieces of `pieceSize`, output chunks of `chunkSize`.
    static func run(_ mode: ZlibStream.Mode, _ input: [UInt8], pieceSize: Int, chunkSize: Int = 64 << 10) throws
        -> [UInt8]
    {
        let stream = try ZlibStream(mode, chunkSize: chunkSize)
        var output: [UInt8] = []
        var offset = 0
        while offset < input.count {
            let end = min(input.count, offset + pieceSize)
            try input[offset..<end].withUnsafeBytes { piece in
                try stream.process(piece) { chunk in
                    #expect(chunk.count <= chunkSize)
                    output.append(contentsOf: chunk)
                }
            }
            offset = end
        }
        try stream.finish { output.append(contentsOf: $0) }
        #expect(stream.finished)
        return output
    }

    /// Runs `script` with python3 in a fresh directory holding `files`; the directory's files afterwards.
    static func python(_ script: String, files: [String: [UInt8]]) throws -> [String: [UInt8]] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("zlib-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, bytes) in files { try Data(bytes).write(to: directory.appendingPathComponent(name)) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        process.currentDirectoryURL = directory
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        var result: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            result[name] = Array(try Data(contentsOf: directory.appendingPathComponent(name)))
        }
        return result
    }

    @Test func whatIsDeflatedHereInflatesInPythonInEveryFormat() throws {
        let files: [String: [UInt8]] = [
            "input": Self.sample,
            "zlib": try Self.run(.deflate(level: 6), Self.sample, pieceSize: 7_777),
            "raw": try Self.run(.rawDeflate(level: 1), Self.sample, pieceSize: 65_536, chunkSize: 100),
            "gzip": try Self.run(.gzip(level: 9), Self.sample, pieceSize: 1),
            "oneshot": try #require(Gzip.compress(Self.sample)),
            "empty": try #require(Gzip.compress([])),
        ]
        #expect(files["zlib"].map(\.count) ?? 0 < Self.sample.count)
        let script = """
            import gzip, zlib
            data = open("input", "rb").read()
            assert zlib.decompress(open("zlib", "rb").read()) == data, "zlib"
            assert zlib.decompress(open("raw", "rb").read(), -15) == data, "raw"
            assert gzip.decompress(open("gzip", "rb").read()) == data, "gzip"
            assert gzip.decompress(open("oneshot", "rb").read()) == data, "oneshot"
            assert gzip.decompress(open("empty", "rb").read()) == b"", "empty"
            open("checked", "w").write("ok")
            """
        #expect(try Self.python(script, files: files)["checked"] == Array("ok".utf8))
    }

    @Test(arguments: [1, 13, 4096, 1 << 20])
    func whatPythonCompressesInflatesHere(_ pieceSize: Int) throws {
        let script = """
            import gzip, zlib
            data = open("input", "rb").read()
            open("zlib", "wb").write(zlib.compress(data, 9))
            open("gzip", "wb").write(gzip.compress(data, 1))
            """
        let files = try Self.python(script, files: ["input": Self.sample])
        for format in ["zlib", "gzip"] {
            let compressed = try #require(files[format])
            #expect(
                try Self.run(.inflate, compressed, pieceSize: pieceSize, chunkSize: 1000) == Self.sample, "\(format)")
        }
    }

    @Test func truncatedCorruptAndTrailingDataAreRefused() throws {
        let compressed = try #require(Gzip.compress(Self.sample))
        // Truncated: every piece is accepted, the end is not.
        let refused = ZlibStream.Failure.self
        #expect(throws: refused) {
            _ = try Self.run(.inflate, Array(compressed.dropLast(20)), pieceSize: 4096)
        }
        // Corrupt: a flipped bit in the deflate data or the CRC.
        var corrupt = compressed
        corrupt[corrupt.count / 2] ^= 0x10
        #expect(throws: refused) { _ = try Self.run(.inflate, corrupt, pieceSize: 4096) }
        var badCRC = compressed
        badCRC[badCRC.count - 6] ^= 0x01
        #expect(throws: refused) { _ = try Self.run(.inflate, badCRC, pieceSize: 4096) }
        // Bytes after the end, in the same piece or a later one.
        #expect(throws: refused) { _ = try Self.run(.inflate, compressed + [0], pieceSize: 1 << 20) }
        #expect(throws: refused) { _ = try Self.run(.inflate, compressed + [0], pieceSize: compressed.count) }
        // Not compressed at all.
        #expect(throws: refused) { _ = try Self.run(.inflate, Array("plain text".utf8), pieceSize: 4) }
        #expect(throws: refused) { _ = try Self.run(.inflate, [], pieceSize: 1) }
    }
}
