import Cohorly
import CohorlyCompression
import Foundation
import Testing

import CohorlyCollector
@testable import CohorlyCollectorCore

/// Uploads cannot fill the disk (a size limit, a free-space check, a body that inflates past its declared size
/// is stopped) nor replace a stored debug file with other bytes unless the secret holder asks for it.
@Suite struct UploadLimitTests {
    /// A zlib stream of `count` zero bytes, compressed piece by piece (small whatever `count` is).
    static func zeros(_ count: Int) throws -> [UInt8] {
        let stream = try ZlibStream(.deflate(level: 1))
        let chunk = [UInt8](repeating: 0, count: 1 << 20)
        var out: [UInt8] = []
        for _ in 0..<(count >> 20) { try chunk.withUnsafeBytes { try stream.process($0) { out += $0 } } }
        try stream.finish { out += $0 }
        return out
    }

    static let buildId = "00112233445566778899aabbccddeeff00112233"

    static func put(_ collector: Collector, _ body: [UInt8], _ headers: [(String, String)]) -> Reply {
        sendBytes(collector, "/api/debug-files/\(buildId)/debuginfo", method: "PUT", body: body, headers: headers)
    }

    @Test func aBodyThatInflatesPastItsDeclaredSizeIsStopped() throws {
        let collector = try startCollector()
        defer { collector.stop() }
        let bomb = try Self.zeros(64 << 20)
        #expect(bomb.count < 1 << 20)
        let reply = Self.put(
            collector, bomb, [("Content-Encoding", "deflate"), ("X-Cohorly-Content-Size", String(1 << 20))])
        #expect(reply.status == 413, "\(reply.text)")
        #expect(
            reply.body?["error"]?.stringValue?.contains("inflates past its declared X-Cohorly-Content-Size") == true)
        #expect(DebugFileStoreTests.files(collector).temp == 0)
    }

    @Test func uploadsOverTheLimitAreRefusedFromTheirDeclaredSize() throws {
        let collector = try startCollector { $0.maxUploadBytes = 1 << 20 }
        defer { collector.stop() }
        let declared = Self.put(collector, [1, 2, 3], [("X-Cohorly-Content-Size", String(2 << 20))])
        #expect(declared.status == 413)
        #expect(
            declared.body?["error"]?.stringValue?.contains("upload too large: 2097152 bytes (limit 1048576)") == true)
        // Uncompressed, its length says it: refused from the headers, nothing stored.
        let plain = Self.put(collector, [UInt8](repeating: 7, count: 2 << 20), [])
        #expect(plain.status == 413)
        #expect(collector.debugFiles.statistics.bytesReceived == 0)
        // Compressed without a declared size: stopped when the inflated bytes pass the limit.
        let inflating = Self.put(collector, try Self.zeros(8 << 20), [("Content-Encoding", "deflate")])
        #expect(inflating.status == 413)
        #expect(inflating.body?["error"]?.stringValue?.contains("more than 1048576 bytes") == true)
        #expect(DebugFileStoreTests.files(collector).temp == 0)
    }

    @Test func anUploadLargerThanTheFreeSpaceIsRefused() throws {
        let collector = try startCollector { $0.maxUploadBytes = 1 << 62 }
        defer { collector.stop() }
        let reply = Self.put(collector, [1], [("X-Cohorly-Content-Size", String(1 << 60))])
        #expect(reply.status == 507)
        #expect(reply.body?["error"]?.stringValue?.contains("not enough free space") == true)
    }

    @Test func withoutASecretAStoredDebugFileIsReplacedOnlyWithForce() throws {
        let program = try SplitProgram.get()
        let collector = try startCollector()
        defer { collector.stop() }
        let debug = contents(program.debug)
        let full = contents(program.full)
        #expect(
            try DebugFileStoreTests.upload(collector, debug, buildId: program.buildId, kind: "debuginfo", secret: nil)
                .status == 201)
        let other = sendBytes(
            collector, "/api/debug-files/\(program.buildId)/debuginfo", method: "PUT", body: full, headers: [])
        #expect(other.status == 409, "\(other.text)")
        // The refusal says the way out.
        let reason = other.body?["error"]?.stringValue ?? ""
        #expect(reason.contains("already has a debuginfo with other bytes"), "\(reason)")
        #expect(reason.contains("upload again with `cohorly debug-files upload --force`"), "\(reason)")
        // The same bytes again are fine (another release), and the stored file is still the first.
        #expect(
            try DebugFileStoreTests.upload(
                collector, debug, buildId: program.buildId, kind: "debuginfo", secret: nil, release: "prog@2"
            ).status == 201)
        #expect(
            DebugFileStoreTests.get(collector, "/buildid/\(program.buildId)/debuginfo").bytes.digest == debug.digest)
        // A check naming the other bytes does not attach them either.
        _ = try DebugFileStoreTests.upload(collector, full, buildId: program.buildId, kind: "executable", secret: nil)
        let check = send(
            collector, "/api/debug-files/check",
            body:
                #"{"release":"r","files":[{"build_id":"\#(program.buildId)","kind":"debuginfo","sha256":"\#(full.digest)"}]}"#
        )
        #expect(check.body?["missing"]?.arrayValue?.count == 1)
        #expect(
            DebugFileStoreTests.get(collector, "/buildid/\(program.buildId)/debuginfo").bytes.digest == debug.digest)
        // With force (header or query) it is replaced: a collector without a secret lets anyone upload anyway.
        let forcedUploads: [(bytes: [UInt8], query: String, headers: [(String, String)])] = [
            (full, "?force=1", []), (debug, "", [("X-Cohorly-Replace", "1")]),
        ]
        for forced in forcedUploads {
            let reply = sendBytes(
                collector, "/api/debug-files/\(program.buildId)/debuginfo" + forced.query, method: "PUT",
                body: forced.bytes, headers: forced.headers)
            #expect(reply.status == 201, "\(reply.text)")
            #expect(
                DebugFileStoreTests.get(collector, "/buildid/\(program.buildId)/debuginfo").bytes.digest
                    == forced.bytes.digest)
        }
    }

    @Test func withASecretReplacingNeedsForce() throws {
        let program = try SplitProgram.get()
        let collector = try DebugFileStoreTests.collector()
        defer { collector.stop() }
        let debug = contents(program.debug)
        let full = contents(program.full)
        #expect(
            try DebugFileStoreTests.upload(collector, debug, buildId: program.buildId, kind: "debuginfo").status == 201)
        #expect(
            try DebugFileStoreTests.upload(collector, full, buildId: program.buildId, kind: "debuginfo").status == 409)
        let auth = ("Authorization", "Bearer \(DebugFileStoreTests.secret)")
        let forced = sendBytes(
            collector, "/api/debug-files/\(program.buildId)/debuginfo", method: "PUT", body: full,
            headers: [auth, ("X-Cohorly-Replace", "1")])
        #expect(forced.status == 201, "\(forced.text)")
        #expect(DebugFileStoreTests.get(collector, "/buildid/\(program.buildId)/debuginfo").bytes.digest == full.digest)
    }
}
