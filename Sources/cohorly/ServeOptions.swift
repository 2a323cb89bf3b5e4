import CohorlyCommandLine
import CohorlyCollector
import Foundation

/// `cohorly serve`'s options as a collector configuration, every number range-checked.
enum ServeOptions {
    static func configuration(_ parsed: ParsedArguments) -> Result<CollectorConfiguration, UsageError> {
        var configuration = CollectorConfiguration()
        configuration.port = 4000
        if let port = parsed.options["--port"]?.last {
            guard let value = UInt16(port) else { return .failure(UsageError(reason: "invalid --port \(port)")) }
            configuration.port = value
        }
        if let bind = parsed.options["--bind"]?.last { configuration.bindAddress = bind }
        if let limit = parsed.options["--rate-limit"]?.last {
            guard let value = CollectorConfiguration.RateLimit(limit) else {
                return .failure(
                    UsageError(
                        reason: "invalid --rate-limit \(limit) (expected N/SECONDS, N from 1 to 1000000, SECONDS "
                            + "from 0.001 to 86400, e.g. 100/10)"))
            }
            configuration.rateLimit = value
        }
        if let size = parsed.options["--max-upload"]?.last {
            guard let bytes = byteCount(size) else {
                return .failure(UsageError(reason: "invalid --max-upload \(size) (expected e.g. 4G, 512M or bytes)"))
            }
            configuration.maxUploadBytes = bytes
        }
        if let count = parsed.options["--connections-per-client"]?.last {
            guard let value = UInt32(count), (1...10_000).contains(value) else {
                return .failure(UsageError(reason: "invalid --connections-per-client \(count) (expected 1 to 10000)"))
            }
            configuration.connectionsPerClient = value
        }
        for directory in parsed.options["--debug-dir"] ?? [] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
            else { return .failure(UsageError(reason: "--debug-dir \(directory) is not a directory")) }
            configuration.extraDebugFileDirectories.append(directory)
        }
        configuration.allowedHosts = parsed.options["--allow-host"] ?? []
        configuration.requestLog = parsed.flags.contains("--log-requests") ? .all : .refused
        configuration.webActions = parsed.flags.contains("--web-actions")
        configuration.groupsIssues = !parsed.flags.contains("--no-issues")
        let environment = ProcessInfo.processInfo.environment
        configuration.dataDirectory =
            parsed.options["--data"]?.last.map { URL(fileURLWithPath: $0) }
            ?? CollectorConfiguration.defaultDataDirectory()
        configuration.tokens = Set(parsed.options["--token"] ?? [])
        if configuration.tokens.isEmpty, let token = environment["COHORLY_TOKEN"], !token.isEmpty {
            configuration.tokens = [token]
        }
        switch SecretOption.resolve(parsed) {
        case .failure(let error): return .failure(error)
        case .success(let secret): configuration.adminToken = secret
        }
        switch SecretOption.flags.resolve(parsed) {
        case .failure(let error): return .failure(error)
        case .success(let secret): configuration.flagSecret = secret
        }
        return .success(configuration)
    }

    /// `123`, `64K`, `512M`, `4G` (binary units, optional `iB`/`B`), 1 byte to 1 TiB; nil otherwise.
    static func byteCount(_ text: String) -> Int64? {
        var digits = Substring(text.uppercased())
        for suffix in ["IB", "B"] where digits.hasSuffix(suffix) { digits = digits.dropLast(suffix.count) }
        var shift: Int64 = 0
        switch digits.last {
        case "K": shift = 10
        case "M": shift = 20
        case "G": shift = 30
        case "T": shift = 40
        default: break
        }
        if shift > 0 { digits = digits.dropLast() }
        guard let value = Int64(digits), value > 0 else { return nil }
        let (bytes, overflow) = value.multipliedReportingOverflow(by: Int64(1) << shift)
        guard !overflow, bytes <= Int64(1) << 40 else { return nil }
        return bytes
    }
}
