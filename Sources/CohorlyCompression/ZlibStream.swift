import CZlib

/// A zlib stream that turns input pieces into output pieces of at most `chunkSize` bytes, so compressed
/// uploads are inflated (collector) or deflated (CLI) while they stream, in bounded memory; request bodies are
/// gzipped in one go (`gzip(_:level:)`, `Gzip.compress`).
package final class ZlibStream {
    /// Which way the bytes go.
    package enum Mode {
        /// Compress into the zlib format (RFC 1950) at this level.
        case deflate(level: Int32)
        /// Compress into raw deflate data (RFC 1951, no header or trailer, as a ZIP entry holds) at this level.
        case rawDeflate(level: Int32)
        /// Compress into the gzip format (RFC 1952) at this level (Sentry's `file_gzip` chunks).
        case gzip(level: Int32)
        /// Decompress zlib or gzip data (the header tells which).
        case inflate
    }

    /// zlib refused the data; `message` is zlib's reason.
    package struct Failure: Error, CustomStringConvertible {
        /// zlib's reason.
        package let description: String
    }

    private var stream = z_stream()
    private let compressing: Bool
    private let chunkSize: Int
    private var output: [UInt8]
    private var open = false
    /// True once the end of the compressed stream was read (inflate) or written (deflate).
    package private(set) var finished = false

    /// A stream; output is handed over in pieces of at most `chunkSize` bytes. Default 64 KiB.
    package init(_ mode: Mode, chunkSize: Int = 64 << 10) throws(Failure) {
        self.chunkSize = chunkSize
        output = [UInt8](repeating: 0, count: chunkSize)
        let status: Int32
        switch mode {
        case .deflate(let level):
            compressing = true
            status = cly_deflate_init(&stream, level)
        case .rawDeflate(let level):
            compressing = true
            status = cly_deflate_init_raw(&stream, level)
        case .gzip(let level):
            compressing = true
            status = cly_deflate_init_gzip(&stream, level)
        case .inflate:
            compressing = false
            status = cly_inflate_init_auto(&stream)
        }
        guard status == Z_OK else { throw Failure(description: "zlib init failed (\(status))") }
        open = true
    }

    deinit {
        guard open else { return }
        if compressing { deflateEnd(&stream) } else { inflateEnd(&stream) }
    }

    /// Feeds `input`; `emit` receives each output piece. Throws on corrupt data (inflate) or data past the end.
    package func process(_ input: UnsafeRawBufferPointer, _ emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard !input.isEmpty else { return }
        guard !finished else { throw Failure(description: "data after the end of the compressed stream") }
        try run(input, flush: Z_NO_FLUSH, emit)
    }

    /// Ends the stream: deflate writes its trailer; inflate checks that the compressed stream was complete.
    package func finish(_ emit: (UnsafeRawBufferPointer) throws -> Void) throws {
        if compressing {
            if !finished { try run(UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_FINISH, emit) }
        } else if !finished {
            throw Failure(description: "compressed body ends early (truncated stream)")
        }
    }

    private func run(
        _ input: UnsafeRawBufferPointer, flush: Int32, _ emit: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        defer {
            stream.next_in = nil
            stream.avail_in = 0
        }
        let chunk = chunkSize
        while true {
            var produced = 0
            let status: Int32 = output.withUnsafeMutableBufferPointer { buffer in
                stream.next_out = buffer.baseAddress
                stream.avail_out = uInt(chunk)
                let status = compressing ? deflate(&stream, flush) : inflate(&stream, Z_NO_FLUSH)
                produced = chunk - Int(stream.avail_out)
                stream.next_out = nil
                return status
            }
            if produced > 0 {
                try output.withUnsafeBytes { try emit(UnsafeRawBufferPointer(rebasing: $0[..<produced])) }
            }
            switch status {
            case Z_STREAM_END:
                finished = true
                if !compressing && stream.avail_in > 0 {
                    throw Failure(description: "data after the end of the compressed stream")
                }
                return
            case Z_OK:
                if stream.avail_in == 0 && produced < chunk && flush != Z_FINISH { return }
            case Z_BUF_ERROR:
                // No progress possible: all input consumed and nothing more to write for now.
                if stream.avail_in == 0 && flush != Z_FINISH { return }
                throw Failure(description: "zlib made no progress")
            default:
                let reason = stream.msg.map { String(cString: $0) } ?? "error \(status)"
                throw Failure(description: "invalid compressed body: \(reason)")
            }
        }
    }
}

extension ZlibStream {
    /// `bytes` gzip-compressed in one go (a Sentry chunk: at most a few MiB).
    package static func gzip(_ bytes: UnsafeRawBufferPointer, level: Int32 = 6) throws -> [UInt8] {
        let stream = try ZlibStream(.gzip(level: level))
        var output: [UInt8] = []
        try stream.process(bytes) { output.append(contentsOf: $0) }
        try stream.finish { output.append(contentsOf: $0) }
        return output
    }
}
