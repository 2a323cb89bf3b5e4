import Foundation

/// The collector secret of a command: `--auth-token-file PATH` (first line of a regular file), else
/// `--auth-token S` (visible to every local user in `ps`: for throwaway secrets only), else `COHORLY_AUTH_TOKEN`.
/// An empty secret is an error, never "no secret".
enum SecretOption {
    /// The options that carry it.
    static let options: Set<String> = ["--auth-token", "--auth-token-file"]

    /// Files larger than this are not a secret: 4 KiB.
    static let maximumFileBytes = 4096

    /// The secret, nil when none is given; the error is a usage error's reason.
    static func resolve(_ parsed: ParsedArguments) -> Result<String?, UsageError> {
        if let path = parsed.options["--auth-token-file"]?.last {
            return read(path).flatMap { secret in
                secret.isEmpty ? .failure(UsageError(reason: "--auth-token-file \(path) is empty")) : .success(secret)
            }
        }
        if let secret = parsed.options["--auth-token"]?.last {
            return secret.isEmpty ? .failure(UsageError(reason: "--auth-token is empty")) : .success(secret)
        }
        if let secret = ProcessInfo.processInfo.environment["COHORLY_AUTH_TOKEN"] {
            return secret.isEmpty
                ? .failure(UsageError(reason: "COHORLY_AUTH_TOKEN is set but empty")) : .success(secret)
        }
        return .success(nil)
    }

    /// The file's first line without surrounding white space; only a regular file is read (a FIFO would block).
    private static func read(_ path: String) -> Result<String, UsageError> {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            return .failure(
                UsageError(reason: "cannot read --auth-token-file \(path): \(String(cString: strerror(errno)))"))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return .failure(UsageError(reason: "--auth-token-file \(path) is not a regular file"))
        }
        guard info.st_size <= maximumFileBytes else {
            return .failure(UsageError(reason: "--auth-token-file \(path) is larger than \(maximumFileBytes) bytes"))
        }
        var bytes = [UInt8](repeating: 0, count: maximumFileBytes)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return -1 }
                return Glibc.read(fd, base + count, buffer.count - count)
            }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            count += got
        }
        let text = String(decoding: bytes[..<count], as: UTF8.self)
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return .success(line.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
