import CohorlyCollector
import CohorlySentryUpload
import CohorlyUpload
import DebugFileFixtures
import Foundation
import Testing

/// Sentry's chunk-upload protocol as the library speaks it: the chunk plan against Python's hashlib, and the
/// whole upload (options, assemble, only the missing chunks, poll) against the collector's own Sentry
/// chunk-upload routes over loopback, in process. (The CLI around it: CohorlyCollectorTests' SentryUploadTests.)
@Suite struct SentryUploadProtocolTests {
    static let secret = "sentry-upload-secret"

    static func api(_ collector: Collector, token: String = secret) -> SentryChunkAPI {
        var api = SentryChunkAPI(url: collector.baseURL.absoluteString, org: "o", project: "p", token: token)
        api.retryDelay = 0.01
        return api
    }

    @Test func theChunkPlanIsTheSHA1OfEachPieceAndOfTheWhole() throws {
        let fixture = try SplitProgram.get()
        let chunkSize = 1000
        let file = try SentryDebugFile(path: fixture.debug, debugId: "id", chunkSize: chunkSize)
        let expected = try UploadFixture.python(
            """
            import hashlib, sys
            data = open(sys.argv[1], 'rb').read()
            size = int(sys.argv[2])
            print(len(data), hashlib.sha1(data).hexdigest())
            for start in range(0, len(data), size): print(hashlib.sha1(data[start:start + size]).hexdigest())
            """, [fixture.debug, String(chunkSize)]
        ).split(separator: "\n").map(String.init)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixture.debug)))
        #expect(bytes.count > 2 * chunkSize)
        #expect(expected.first == "\(bytes.count) \(file.checksum)")
        #expect(file.size == Int64(bytes.count))
        #expect(file.chunks == Array(expected.dropFirst()))
        // A chunk read back is the file's piece; the last one is short.
        let last = file.chunks.count - 1
        #expect(try file.chunk(0) == Array(bytes[..<chunkSize]))
        #expect(try file.chunk(last) == Array(bytes[(last * chunkSize)...]))
    }

    @Test func theCollectorsOptionsAreReadAndChecked() throws {
        let collector = try UploadFixture.collector(secret: Self.secret)
        defer { collector.stop() }
        let options = try Self.api(collector).options()
        #expect(options.url.absoluteString.hasPrefix(collector.baseURL.absoluteString))
        #expect(options.url.absoluteString.hasSuffix("/api/0/organizations/o/chunk-upload/"))
        #expect((1...SentryChunkAPI.largestChunk).contains(options.chunkSize))
        #expect(options.maxRequestSize <= SentryChunkAPI.largestRequest)
        do {
            _ = try Self.api(collector, token: "not-the-secret-42").options()
            Issue.record("a wrong token was accepted")
        } catch {
            #expect(error.status == 401, "\(error)")
            #expect(!error.description.contains("not-the-secret-42"))
        }
    }

    @Test func aDebugFileIsAssembledByTheCollectorThenFoundPresent() throws {
        let fixture = try SplitProgram.get()
        let collector = try UploadFixture.collector(secret: Self.secret)
        defer { collector.stop() }
        var upload = SentryUpload(api: Self.api(collector))
        upload.pollDelay = 0.01
        upload.maxWait = 30
        let first = upload.upload([fixture.debug])
        #expect(first.succeeded, "\(first.fatal ?? "") \(first.files.map { "\($0.path): \($0.reason ?? "")" })")
        #expect(first.files.map(\.status) == [.uploaded])
        #expect(first.files.first?.bytesSent ?? 0 > 0)
        let stored = try collector.debugFiles.list()
        #expect(stored.map(\.kind) == [.debuginfo])
        #expect(stored.first?.buildId == fixture.buildId)
        // The server has every chunk now: the assemble call says `ok` and nothing is sent.
        let second = upload.upload([fixture.debug])
        #expect(second.files.map(\.status) == [.present])
        #expect(second.bytesSent == 0)
    }

    @Test func aRefusedTokenStopsTheRunWithoutShowingIt() throws {
        let fixture = try SplitProgram.get()
        let collector = try UploadFixture.collector(secret: Self.secret)
        defer { collector.stop() }
        let token = "not-the-secret-0123456789"
        let run = SentryUpload(api: Self.api(collector, token: token)).upload([fixture.debug])
        #expect(!run.succeeded)
        #expect(run.fatal?.contains("401") == true, "\(run.fatal ?? "")")
        #expect(run.files.map(\.status) == [.failed])
        #expect(!(run.fatal ?? "").contains(token))
        #expect(try collector.debugFiles.list().isEmpty)
    }
}
