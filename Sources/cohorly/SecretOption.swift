import CohorlyCommandLine
import Foundation

/// A secret given to a command: `--…-file PATH` (first line of a regular file), else the option itself
/// (visible to every local user in `ps`: for throwaway secrets only), else an environment variable. An empty
/// secret is an error, never "no secret".
struct SecretOption {
    /// The option naming a file that holds the secret, e.g. `--auth-token-file`.
    let file: String
    /// The option holding the secret itself, e.g. `--auth-token`.
    let value: String
    /// The environment variable, e.g. `COHORLY_AUTH_TOKEN`.
    let variable: String

    /// The collector secret: `--auth-token-file`, `--auth-token`, `COHORLY_AUTH_TOKEN`.
    static let collector = SecretOption(
        file: "--auth-token-file", value: "--auth-token", variable: "COHORLY_AUTH_TOKEN")
    /// The collector's flag secret for `GET /flags/local-evaluation`: `--flag-secret-file`, `--flag-secret`,
    /// `COHORLY_FLAG_SECRET` (distinct from the project token and the admin secret; cohorly-api.md §5).
    static let flags = SecretOption(
        file: "--flag-secret-file", value: "--flag-secret", variable: "COHORLY_FLAG_SECRET")
    /// PostHog's personal API key: `--api-key-file`, `--api-key`, `POSTHOG_CLI_API_KEY`.
    static let postHog = SecretOption(file: "--api-key-file", value: "--api-key", variable: "POSTHOG_CLI_API_KEY")
    /// Sentry's auth token: `--auth-token-file`, else `SENTRY_AUTH_TOKEN` (`debug-files upload --to sentry` refuses
    /// `--auth-token` itself: the token would show in `ps`).
    static let sentry = SecretOption(file: "--auth-token-file", value: "--auth-token", variable: "SENTRY_AUTH_TOKEN")

    /// The options that carry the collector secret.
    static var options: Set<String> { collector.options }

    /// The collector secret, nil when none is given; the error is a usage error's reason.
    static func resolve(_ parsed: ParsedArguments) -> Result<String?, UsageError> { collector.resolve(parsed) }

    /// Files larger than this are not a secret: 4 KiB.
    static let maximumFileBytes = 4096

    /// The options that carry this secret.
    var options: Set<String> { [file, value] }

    /// The secret, nil when none is given; the error is a usage error's reason. A secret holding a control
    /// character is refused (it becomes a header line, where a line break would add headers of its own).
    func resolve(_ parsed: ParsedArguments) -> Result<String?, UsageError> {
        let found: Result<String?, UsageError>
        if let path = parsed.options[file]?.last {
            found = read(path).flatMap { secret in
                secret.isEmpty ? .failure(UsageError(reason: "\(file) \(path) is empty")) : .success(secret)
            }
        } else if let secret = parsed.options[value]?.last {
            found = secret.isEmpty ? .failure(UsageError(reason: "\(value) is empty")) : .success(secret)
        } else if let secret = ProcessInfo.processInfo.environment[variable] {
            found = secret.isEmpty ? .failure(UsageError(reason: "\(variable) is set but empty")) : .success(secret)
        } else {
            found = .success(nil)
        }
        return found.flatMap { secret in
            guard let secret, !secret.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7f }) else {
                return .success(secret)
            }
            return .failure(UsageError(reason: "the secret of \(value) holds a control character"))
        }
    }

    /// The file's first line without surrounding white space; only a regular file is read (a FIFO would block).
    private func read(_ path: String) -> Result<String, UsageError> {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            return .failure(
                UsageError(reason: "cannot read \(file) \(path): \(String(cString: strerror(errno)))"))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return .failure(UsageError(reason: "\(file) \(path) is not a regular file"))
        }
        guard info.st_size <= Self.maximumFileBytes else {
            return .failure(UsageError(reason: "\(file) \(path) is larger than \(Self.maximumFileBytes) bytes"))
        }
        var bytes = [UInt8](repeating: 0, count: Self.maximumFileBytes)
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
