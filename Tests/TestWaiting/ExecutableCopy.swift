import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Copies the executable at `source` to `destination` (mode 0755), so a test can run it from another path.
///
/// Why not `FileManager.copyItem`: it opens the copy for writing without `O_CLOEXEC`, and the test process spawns
/// children from other threads all the time. A child forked while the copy is open inherits the write descriptor
/// and keeps it for its whole life, so running the copy fails with ETXTBSY ("Text file busy") until that child
/// exits (GroupingTests hit this under load). Here the descriptor is close-on-exec, so a child holds it at most
/// until its own exec.
public func copyExecutable(from source: String, to destination: String) throws {
    let contents = try Data(contentsOf: URL(fileURLWithPath: source))
    let descriptor = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
    guard descriptor >= 0 else { throw ExecutableCopyError(path: destination, errno: errno) }
    defer { close(descriptor) }
    var written = 0
    while written < contents.count {
        let result = contents.withUnsafeBytes { bytes in
            write(descriptor, bytes.baseAddress.map { $0 + written }, contents.count - written)
        }
        if result < 0 && errno == EINTR { continue }
        guard result > 0 else { throw ExecutableCopyError(path: destination, errno: errno) }
        written += result
    }
}

/// `copyExecutable` could not create or write `path`.
public struct ExecutableCopyError: Error, CustomStringConvertible {
    /// The copy's path.
    public let path: String
    /// The failing call's errno.
    public let errno: Int32

    public var description: String { "cannot write \(path): \(String(cString: strerror(errno)))" }
}
