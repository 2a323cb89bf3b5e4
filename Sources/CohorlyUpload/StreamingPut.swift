import CCurl
import CohorlyCompression
import CohorlyJSON
import CohorlySymbols
import Foundation

/// One HTTP PUT of a file, deflated on the fly and sent with chunked transfer encoding through libcurl: the
/// file is read 256 KiB at a time, so memory stays bounded whatever its size.
package enum StreamingPut {
    /// How one PUT ended.
    package enum Result {
        case success
        /// Worth retrying: a connection error or a 5xx answer.
        case transient(String)
        /// Not worth retrying: a 4xx answer (the collector's `error`), or the file could not be read.
        case permanent(String)
    }

    /// Sends `path` to `url`; `progress` gets the bytes of the file read so far.
    package static func perform(
        url: String, headers: [String], path: String, size: Int64, progress: ((Int64) -> Void)?
    ) -> (result: Result, bytesSent: Int64) {
        let source: DeflatingSource
        do {
            source = try DeflatingSource(path: path, progress: progress)
        } catch {
            return (.permanent("\(error)"), 0)
        }
        guard let handle = cly_curl_easy_init() else {
            return (.transient(cly_curl_load_error().map { String(cString: $0) } ?? "curl_easy_init failed"), 0)
        }
        defer { cly_curl_easy_cleanup(handle) }
        var list: UnsafeMutablePointer<curl_slist>?
        for header in headers { list = cly_curl_slist_append(list, header) }
        defer { cly_curl_slist_free_all(list) }
        let answer = Answer()
        let sourcePointer = Unmanaged.passUnretained(source).toOpaque()
        let answerPointer = Unmanaged.passUnretained(answer).toOpaque()
        _ = cly_curl_setopt_string(handle, CURLOPT_URL, url)
        _ = cly_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = cly_curl_setopt_long(handle, CURLOPT_UPLOAD, 1)
        _ = cly_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT, 10)
        // No overall timeout (files can be large); give up when fewer than 1 byte/s move for 60 s.
        _ = cly_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1)
        _ = cly_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, 60)
        _ = cly_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, list)
        _ = cly_curl_setopt_data_callback(handle, CURLOPT_READFUNCTION, streamingPutRead)
        _ = cly_curl_setopt_pointer(handle, CURLOPT_READDATA, sourcePointer)
        _ = cly_curl_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, streamingPutWrite)
        _ = cly_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, answerPointer)
        let code = cly_curl_easy_perform(handle)
        let sent = withExtendedLifetime(source) { source.bytesSent }
        withExtendedLifetime(answer) {}
        if let failure = source.failure { return (.permanent(failure), sent) }
        guard code == CURLE_OK else { return (.transient(String(cString: cly_curl_easy_strerror(code))), sent) }
        var status = 0
        _ = cly_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        let reason = "\(status): " + Self.reason(answer.body)
        switch status {
        case 200..<300: return (.success, sent)
        case 500...: return (.transient(reason), sent)
        default: return (.permanent(reason), sent)
        }
    }

    /// The `error` of the collector's JSON answer, else its text (shortened; server text escaped and clipped,
    /// ``TerminalText/fromServer(_:)``).
    package static func reason(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(1 << 20), as: UTF8.self)
        if let error = CohorlyValue(json: text)?["error"]?.stringValue { return TerminalText.fromServer(error) }
        return TerminalText.fromServer(String(text.prefix(4096)))
    }

    /// The answer body (at most 64 KiB kept).
    final class Answer {
        var body: [UInt8] = []
    }

    /// The file, deflated as libcurl asks for more.
    final class DeflatingSource {
        private let file: RegularFile
        private var fd: Int32 { file.descriptor }
        private let deflater: ZlibStream
        private var input = [UInt8](repeating: 0, count: 256 << 10)
        private var pending: [UInt8] = []
        private var offset = 0
        private var done = false
        private var read: Int64 = 0
        private let progress: ((Int64) -> Void)?
        private(set) var bytesSent: Int64 = 0
        private(set) var failure: String?

        init(path: String, progress: ((Int64) -> Void)?) throws {
            do {
                file = try RegularFile(path: path)
            } catch {
                throw UploadFailure(description: error.description)
            }
            deflater = try ZlibStream(.deflate(level: 6))
            self.progress = progress
        }

        /// Copies up to `capacity` bytes of the compressed body into `buffer`; 0 at the end.
        func fill(_ buffer: UnsafeMutableRawPointer, capacity: Int) -> Int? {
            while offset == pending.count && !done {
                pending.removeAll(keepingCapacity: true)
                offset = 0
                let count = input.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                do {
                    if count < 0 {
                        failure = "read failed: \(String(cString: strerror(errno)))"
                        return nil
                    } else if count == 0 {
                        try deflater.finish { pending.append(contentsOf: $0) }
                        done = true
                    } else {
                        read += Int64(count)
                        progress?(read)
                        try input.withUnsafeBytes {
                            try deflater.process(UnsafeRawBufferPointer(rebasing: $0[..<count])) {
                                pending.append(contentsOf: $0)
                            }
                        }
                    }
                } catch {
                    failure = "\(error)"
                    return nil
                }
            }
            let count = min(capacity, pending.count - offset)
            guard count > 0 else { return 0 }
            pending.withUnsafeBytes {
                if let base = $0.baseAddress { buffer.copyMemory(from: base + offset, byteCount: count) }
            }
            offset += count
            bytesSent += Int64(count)
            return count
        }
    }
}

private let curlReadAbort = 0x1000_0000  // CURL_READFUNC_ABORT

private func streamingPutRead(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let data, let context else { return curlReadAbort }
    let source = Unmanaged<StreamingPut.DeflatingSource>.fromOpaque(context).takeUnretainedValue()
    return source.fill(data, capacity: size * count) ?? curlReadAbort
}

private func streamingPutWrite(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
    guard let data, let context else { return 0 }
    let answer = Unmanaged<StreamingPut.Answer>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    let keep = max(0, min(length, (64 << 10) - answer.body.count))
    data.withMemoryRebound(to: UInt8.self, capacity: length) {
        answer.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: keep))
    }
    return length
}
