import CohorlyCommandLine
import CohorlyCollector
import Foundation

/// `cohorly serve`'s options as a collector configuration, every number range-checked.
enum ServeOptions {
    /// The options `cohorly serve` takes.
    static let table: [CommandOption] = [
        CommandOption("--port", .word("P"), "TCP port; 0 picks a free one and prints it.", default: "4000"),
        CommandOption("--bind", .word("ADDR"), "IPv4 address to listen on.", default: "127.0.0.1"),
        CommandOption(
            "--data", .directory("DIR"), "Where collector.sqlite lives; one collector per directory.",
            default: "$XDG_STATE_HOME/cohorly/collector"),
        CommandOption(
            "--token", .word("T"), "An accepted project token; repeatable.", default: "COHORLY_TOKEN, else any",
            repeatable: true),
        CommandOption(
            SecretOption.collector.file, .file("FILE"),
            "Secret required on /api/* and /admin/* (uploads included), read from the first line of FILE.",
            default: "\(SecretOption.collector.variable); else open to every local user"),
        CommandOption(
            SecretOption.collector.value, .word("S"), "The same secret on the command line, where `ps` shows it: avoid."
        ),
        CommandOption(
            SecretOption.flags.file, .file("FILE"),
            "Secret required on GET /flags/local-evaluation, first line of FILE.",
            default: "\(SecretOption.flags.variable); else the --auth-token-file secret; else open"),
        CommandOption(
            SecretOption.flags.value, .word("S"), "The same on the command line, where `ps` shows it: avoid."),
        CommandOption(
            "--rate-limit", .word("N/SECONDS"),
            "At most N requests per SECONDS seconds per client address (N up to 1000000, SECONDS up to 86400)."),
        CommandOption(
            "--debug-dir", .directory("DIR"),
            "A directory whose debug files (searched recursively by build id) and binaries crashes may be"
                + " symbolicated with (repeatable, e.g. /usr/lib/debug). Nothing else a crash names is ever opened.",
            repeatable: true),
        CommandOption(
            "--allow-host", .word("NAME"), "Another name clients use for this server in `Host` (repeatable).",
            repeatable: true),
        CommandOption("--max-upload", .word("SIZE"), "Largest debug-file upload, e.g. 512M or 8G.", default: "4G"),
        CommandOption(
            "--connections-per-client", .word("N"), "Connections one client address may hold open.", default: "32"),
        CommandOption("--log-requests", .none, "Log every request to standard error.", default: "the refused ones"),
        CommandOption(
            "--web-actions", .none, "Let the web page resolve, reopen and mute issues.", default: "it only reads"),
        .flag(
            "--no-issues",
            "Store crashes without grouping them into issues (only to measure what grouping costs: `cohorly issues`"
                + " then shows nothing)."),
    ]

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
