import CohorlyDigests
import CohorlySymbols
import CohorlyUpload
import Foundation

/// One file as Sentry's chunk upload sees it (docs/sentry.md "Debug files"): the SHA-1 of the whole
/// file (its `checksum`) and of each `chunkSize` piece, computed in one pass of 1 MiB reads, so memory stays
/// bounded whatever the file's size. A chunk is read again only when the server lacks it.
package struct SentryDebugFile {
    /// The path as found.
    package let path: String
    /// What Sentry shows: the file's name.
    package var name: String { (path as NSString).lastPathComponent }
    /// Sentry's debug id of the file (``ObjectInfo/debugId``).
    package let debugId: String
    /// The file's size when it was hashed.
    package let size: Int64
    /// SHA-1 of the file, lowercase hex.
    package let checksum: String
    /// SHA-1 of each chunk in order, lowercase hex.
    package let chunks: [String]
    /// The chunk size the hashes were made with.
    package let chunkSize: Int

    /// Reads and hashes the file at `path` in chunks of `chunkSize` bytes.
    package init(path: String, debugId: String, chunkSize: Int) throws(UploadFailure) {
        self.path = path
        self.debugId = debugId
        self.chunkSize = chunkSize
        let file: RegularFile
        do {
            file = try RegularFile(path: path)
        } catch {
            throw .init(description: "\(error)")
        }
        let whole = Digest(.sha1)
        var chunk = Digest(.sha1)
        var inChunk = 0
        var hashes: [String] = []
        var total: Int64 = 0
        var failure: UploadFailure?
        do {
            try file.forEachChunk { piece in
                whole.update(piece)
                total += Int64(piece.count)
                var rest = piece
                while !rest.isEmpty {
                    let take = min(rest.count, chunkSize - inChunk)
                    chunk.update(UnsafeRawBufferPointer(rebasing: rest[..<take]))
                    inChunk += take
                    rest = UnsafeRawBufferPointer(rebasing: rest[take...])
                    guard inChunk == chunkSize else { continue }
                    do throws(UploadFailure) {
                        hashes.append(try Self.hex(chunk))
                        chunk = Digest(.sha1)
                    } catch {
                        failure = error
                        return false
                    }
                    inChunk = 0
                }
                return true
            }
        } catch {
            throw .init(description: "\(error)")
        }
        if let failure { throw failure }
        if inChunk > 0 || hashes.isEmpty { hashes.append(try Self.hex(chunk)) }
        size = total
        checksum = try Self.hex(whole)
        chunks = hashes
    }

    /// The bytes of chunk `index`, read again from the file; throws when the file changed since it was hashed.
    package func chunk(_ index: Int) throws(UploadFailure) -> [UInt8] {
        let offset = Int64(index) * Int64(chunkSize)
        let count = Int(min(Int64(chunkSize), max(0, size - offset)))
        var bytes = [UInt8](repeating: 0, count: count)
        let file: RegularFile
        do {
            file = try RegularFile(path: path)
        } catch {
            throw .init(description: "\(error)")
        }
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { buffer in
                pread(file.descriptor, buffer.baseAddress.map { $0 + done }, count - done, off_t(offset) + off_t(done))
            }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { throw .init(description: "\(path): changed while it was uploaded (short read)") }
            done += got
        }
        let stream = Digest(.sha1)
        stream.update(bytes)
        let hash = try Self.hex(stream)
        guard index < chunks.count, hash == chunks[index] else {
            throw .init(description: "\(path): changed while it was uploaded (chunk \(index) differs)")
        }
        return bytes
    }

    /// `digest` finalized (lowercase hex), its failure said as the upload's.
    private static func hex(_ digest: Digest) throws(UploadFailure) -> String {
        do {
            return try digest.finalizeHex()
        } catch {
            throw .init(description: error.description)
        }
    }
}
