#if canImport(Glibc)
    import Glibc
#endif

/// Output helpers (stdout for results, stderr for errors).
package enum Console {
    package static func out(_ text: String) {
        print(text)
    }

    package static func error(_ text: String) {
        write(text + "\n", to: STDERR_FILENO)
    }

    /// Writes `text` as is (no newline added) to a file descriptor, stdout by default.
    package static func write(_ text: String, to descriptor: Int32 = STDOUT_FILENO) {
        write(Array(text.utf8), to: descriptor)
    }

    /// Writes bytes as they are to a file descriptor, stdout by default.
    package static func write(_ data: [UInt8], to descriptor: Int32 = STDOUT_FILENO) {
        data.withUnsafeBufferPointer { write($0, to: descriptor) }
    }

    /// Writes bytes as they are to a file descriptor (after whatever `print` still buffers).
    package static func write(_ data: UnsafeBufferPointer<UInt8>, to descriptor: Int32 = STDOUT_FILENO) {
        if descriptor == STDOUT_FILENO { fflush(nil) }
        var bytes = data
        while let start = bytes.baseAddress, !bytes.isEmpty {
            let written = Glibc.write(descriptor, start, bytes.count)
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            bytes = UnsafeBufferPointer(rebasing: bytes[written...])
        }
    }

    /// Everything readable from a file descriptor (stdin by default) until its end.
    package static func readAll(from descriptor: Int32 = STDIN_FILENO) -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return result }
            result.append(contentsOf: chunk[0..<count])
        }
    }

    /// Prints `cohorly: <reason>` and the usage hint for a command; returns the usage exit status.
    package static func usageError(_ reason: String, command: String) -> ExitStatus {
        error("cohorly: \(reason)")
        error("Run 'cohorly \(command) --help' for usage.")
        return .usage
    }

    /// Whether stdout is a terminal (human output) or a pipe.
    package static var isTerminal: Bool { isatty(STDOUT_FILENO) != 0 }
}
