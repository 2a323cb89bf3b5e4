import CZstd
import CohorlyCompression
import CohorlyDigests
import CohorlySymbols
import CohorlyUpload

/// One ELF file packed as a PostHog symbol set (docs/posthog.md "Upload debug files to PostHog", PostHog's
/// `rust/common/symbol_data`): a ZIP archive whose one entry `dwarf` is the whole file, deflated; the archive
/// zstd-compressed (level 3) behind the header `posthog_error_tracking` + u32le version 2 + u32le type 6
/// (ElfDebugInfo) + u8 compression 1 (zstd). `contentHash` is the SHA-512 of those wrapped bytes, lowercase hex.
package struct PostHogSymbolSet {
    /// The wrapped bytes, as uploaded.
    package let bytes: [UInt8]
    /// SHA-512 of ``bytes``, lowercase hex (the `content_hash` PostHog checks).
    package let contentHash: String

    /// PostHog's limit on the wrapped bytes (posthog-cli `MAX_FILE_SIZE`): larger sets are skipped locally.
    package static let largestPacked = 100 * 1024 * 1024
    /// Files larger than this are not packed at all (the ZIP is built in memory): 1 GiB.
    package static let largestInput: Int64 = 1 << 30

    /// The header's first bytes.
    package static let magic = Array("posthog_error_tracking".utf8)
    /// The header's format version.
    package static let version: UInt32 = 2
    /// The header's symbol-set type: ELF debug info.
    package static let elfDebugInfo: UInt32 = 6
    /// The header's compression: zstd.
    package static let zstd: UInt8 = 1
    /// The zstd level posthog-cli uses.
    package static let zstdLevel: Int32 = 3
    /// The ZIP entry's name.
    package static let entryName = Array("dwarf".utf8)

    /// Packs the file at `path`; throws with a one-line reason when it cannot be read or compressed.
    package static func pack(path: String) throws(UploadFailure) -> PostHogSymbolSet {
        let archive = try zip(path: path)
        var bytes = magic
        append32(version, to: &bytes)
        append32(elfDebugInfo, to: &bytes)
        bytes.append(zstd)
        let header = bytes.count
        if let reason = cly_zstd_load_error() { throw .init(description: String(cString: reason)) }
        let bound = cly_zstd_compress_bound(archive.count)
        bytes += [UInt8](repeating: 0, count: bound)
        var error: UnsafePointer<CChar>?
        let written = bytes.withUnsafeMutableBytes { output in
            archive.withUnsafeBytes { input in
                cly_zstd_compress(
                    output.baseAddress.map { $0 + header }, bound, input.baseAddress, input.count, zstdLevel, &error)
            }
        }
        guard written > 0 else {
            throw .init(description: "\(path): zstd: \(error.map { String(cString: $0) } ?? "failed")")
        }
        bytes.removeLast(bound - written)
        return PostHogSymbolSet(bytes: bytes, contentHash: try sha512Hex(bytes))
    }

    /// SHA-512 of `bytes` (libcrypto), lowercase hex.
    package static func sha512Hex(_ bytes: [UInt8]) throws(UploadFailure) -> String {
        do {
            return try Digest.hex(.sha512, bytes)
        } catch {
            throw .init(description: error.description)
        }
    }

    /// A ZIP archive (PKWARE APPNOTE 4.3: local header, data, central directory, end record) holding the file
    /// deflated as one entry. The container is written here rather than with libzip: one entry with its sizes and
    /// CRC-32 is a hundred bytes of fixed headers around zlib's raw deflate output, and zlib provides both the
    /// deflate and the CRC-32 (the parts worth a library). Sizes stay under 4 GiB (``largestInput``), so no
    /// ZIP64 records are needed.
    package static func zip(path: String) throws(UploadFailure) -> [UInt8] {
        func failure(_ reason: String) -> UploadFailure { .init(description: "\(path): \(reason)") }
        let tooLarge = "larger than 1 GiB: upload its separate debug file (objcopy --only-keep-debug) instead"
        let deflater: ZlibStream
        let file: RegularFile
        do {
            file = try RegularFile(path: path)
            deflater = try ZlibStream(.rawDeflate(level: 6))
        } catch {
            throw .init(description: "\(error)")
        }
        guard file.size <= largestInput else { throw failure(tooLarge) }
        var data: [UInt8] = []
        var crc: UInt32 = 0
        var size: Int64 = 0
        var problem: String?
        do {
            try file.forEachChunk { piece in
                size += Int64(piece.count)
                guard size <= largestInput else {
                    problem = tooLarge
                    return false
                }
                crc = CRC32.update(crc, piece)
                do {
                    try deflater.process(piece) { data.append(contentsOf: $0) }
                } catch {
                    problem = "deflate: \(error)"
                    return false
                }
                return true
            }
            if let problem { throw failure(problem) }
            try deflater.finish { data.append(contentsOf: $0) }
        } catch let error as UploadFailure {
            throw error
        } catch let error as SymbolsError {
            throw .init(description: "\(error)")
        } catch {
            throw failure("deflate: \(error)")
        }
        let crc32Value = crc
        let compressed = UInt32(truncatingIfNeeded: data.count)
        let uncompressed = UInt32(truncatingIfNeeded: size)
        var archive: [UInt8] = []
        archive.reserveCapacity(data.count + 128)
        // Local file header: version 2.0, no flags, method 8 (deflate), time 00:00, date 1980-01-01.
        append32(0x0403_4b50, to: &archive)
        for field: UInt16 in [20, 0, 8, 0, 0x21] { append16(field, to: &archive) }
        for field in [crc32Value, compressed, uncompressed] { append32(field, to: &archive) }
        append16(UInt16(entryName.count), to: &archive)
        append16(0, to: &archive)
        archive += entryName
        archive += data
        // Central directory: the same entry, its local header at offset 0.
        let directoryOffset = UInt32(truncatingIfNeeded: archive.count)
        append32(0x0201_4b50, to: &archive)
        for field: UInt16 in [20, 20, 0, 8, 0, 0x21] { append16(field, to: &archive) }
        for field in [crc32Value, compressed, uncompressed] { append32(field, to: &archive) }
        for field: UInt16 in [UInt16(entryName.count), 0, 0, 0, 0] { append16(field, to: &archive) }
        append32(0, to: &archive)  // external attributes
        append32(0, to: &archive)  // local header offset
        archive += entryName
        let directorySize = UInt32(truncatingIfNeeded: archive.count) - directoryOffset
        // End of central directory record: one disk, one entry, no comment.
        append32(0x0605_4b50, to: &archive)
        for field: UInt16 in [0, 0, 1, 1] { append16(field, to: &archive) }
        append32(directorySize, to: &archive)
        append32(directoryOffset, to: &archive)
        append16(0, to: &archive)
        return archive
    }

    private static func append16(_ value: UInt16, to bytes: inout [UInt8]) {
        bytes += [UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8)]
    }

    private static func append32(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}
