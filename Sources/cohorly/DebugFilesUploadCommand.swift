import CohorlyCollectorClient
import CohorlyCommandLine
import CohorlyPostHogUpload
import CohorlySentryUpload
import CohorlyUpload
import Foundation

/// `cohorly debug-files upload PATH…`: to our collector (``CollectorUpload``), or `--to posthog`
/// (``PostHogUpload``), or `--to sentry` (``SentryUpload``). The one place the CLI names the vendor upload
/// families: the destination is picked by the value of `--to`, made from the options, then run and printed alike.
enum DebugFilesUploadCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["debug-files", "upload"],
        summary: "Upload executables and debug files to a collector, PostHog or Sentry (only what it lacks).",
        // Counted in `run`: a destination's own usage errors (`--dry-run` with `--to posthog`) come first.
        positionals: CommandPositionals("PATH…", count: 0...Int.max, missing: "missing PATH", areFiles: true),
        about: """
            The three destinations (--to):
              cohorly debug-files upload PATH… --release R [--host URL] [--auth-token-file F] [--force] [--dry-run]
                                               [--allow-empty] [--include-cache] [--json]
              cohorly debug-files upload PATH… --to posthog [--project-id ID] [--api-key-file FILE] [--host URL]
                                               [--force] [--allow-empty] [--json]
              cohorly debug-files upload PATH… --to sentry [--url URL] [--org ORG] [--project P]
                                               [--auth-token-file F] [--max-wait S] [--json]

            Finds ELF files under the PATHs (directories recursively, a symlinked directory named on the command line
            too; symlinks inside are not followed), skips what has neither debug info nor symbols (or no GNU build
            id; `.o` files are summed up in one line), asks the collector which build ids / contents it already has,
            and uploads only the missing ones: deflate-compressed, streamed (any size, bounded memory). A separate
            debug file is stored as `debuginfo`; a binary as `executable`, and also as `debuginfo` when it still has
            DWARF (its bytes are sent once). Both files of one build id are kept. Connection errors and 5xx answers
            are retried 3 times with a short backoff. A progress line is shown when stderr is a terminal.
            """,
        options: [
            CommandOption(
                "--release", .word("R"), "The release the files belong to, required but with --dry-run.",
                default: "COHORLY_RELEASE"),
            CommandOption(
                "--host", .word("URL"),
                "The collector (default COHORLY_HOST, else \(CollectorAddress.defaultHost)); with --to posthog,"
                    + " PostHog's (default POSTHOG_CLI_HOST, else \(PostHogUpload.defaultHost))."),
            CommandOption(
                "--auth-token-file", .file("F"),
                "The upload secret, from a file (`cohorly serve --auth-token-file`; default COHORLY_AUTH_TOKEN); with"
                    + " --to sentry, Sentry's auth token (default SENTRY_AUTH_TOKEN). `--auth-token T` also works for"
                    + " the collector, but shows it in `ps`."),
            CommandOption("--auth-token", .word("T"), "The upload secret itself (visible in `ps`).", listed: false),
            .flag(
                "--force",
                "Replace a file the collector holds for the same build id with other bytes (a stripped copy uploaded by"
                    + " mistake; with the secret when the collector has one). With --to posthog: replace a symbol set"
                    + " stored under the same debug id."),
            .flag(
                "--dry-run",
                "Find, check and hash the files and list what would be uploaded; send nothing (the collector is not"
                    + " contacted; --release is not needed)."),
            .flag(
                "--allow-empty",
                "Succeed when a PATH holds nothing to upload (by default that is an error: a pipeline pointed at the"
                    + " wrong directory would ship without symbols)."),
            .flag(
                "--include-cache",
                "Also make each DWARF build's symbol cache (`cohorly debug-files cache`) here and send it (kind"
                    + " symcache); without it the collector makes the cache when the debug file arrives."),
            .flag("--json", "Print a JSON summary (counts, bytes sent, one object per file)."),
            CommandOption(
                "--to", .word("DEST"),
                "Where to upload: cohorly (our collector, the default), posthog (PostHog error tracking, as symbol"
                    + " sets: the same files that carry DWARF, one per debug id, the larger kept, split DWARF skipped) or"
                    + " sentry (Sentry's chunk-upload protocol, as sentry-cli does: the same files, only the chunks the"
                    + " server lacks, then assembled; the auth token from SENTRY_AUTH_TOKEN or --auth-token-file, never"
                    + " the command line)."),
            CommandOption(
                "--project-id", .word("ID"), "With --to posthog, the PostHog project.",
                default: "POSTHOG_CLI_PROJECT_ID"),
            CommandOption(
                "--api-key-file", .file("F"),
                "With --to posthog, read PostHog's personal API key from F's first line; --api-key KEY works too, but"
                    + " shows the key to `ps`.",
                default: "POSTHOG_CLI_API_KEY"),
            CommandOption(
                "--api-key", .word("KEY"), "PostHog's personal API key itself (visible in `ps`).", listed: false),
            CommandOption(
                "--url", .word("URL"), "With --to sentry, Sentry's address.",
                default: "SENTRY_URL, else \(SentryUpload.defaultURL)"),
            CommandOption("--org", .word("ORG"), "The Sentry organization slug.", default: "SENTRY_ORG"),
            CommandOption("--project", .word("P"), "The Sentry project slug.", default: "SENTRY_PROJECT"),
            CommandOption(
                "--max-wait", .word("S"), "Seconds to wait for Sentry to assemble the files.", default: "300"),
        ],
        epilogue: """
            ENVIRONMENT: COHORLY_RELEASE, COHORLY_HOST, COHORLY_AUTH_TOKEN, COHORLY_RETRY_DELAY_MS (first retry
            delay, doubled each time; default 250, with --to posthog or sentry 500), POSTHOG_CLI_HOST,
            POSTHOG_CLI_PROJECT_ID, POSTHOG_CLI_API_KEY, SENTRY_URL, SENTRY_ORG, SENTRY_PROJECT, SENTRY_AUTH_TOKEN.

            EXIT STATUS: 0 everything needed is on the collector, 1 something that should have been uploaded was
            not (a file that cannot be read, the collector could not be reached), or a PATH held nothing to upload
            (without --allow-empty), 2 usage error.
            """)

    /// The options only `--to sentry` takes.
    static let sentryOptions = ["--url", "--org", "--project", "--max-wait"]
    /// The options only `--to posthog` takes.
    static let postHogOptions = ["--api-key-file", "--api-key", "--project-id"]

    /// A destination made from the options, and how its run is printed.
    private struct Chosen {
        var destination: any DebugFileUploadDestination
        /// Shown while files stream (our collector only).
        var progressLine: ProgressLine?
        /// Whether a failed file is named when the whole run stopped (no for our collector, whose files all fail
        /// with the check that stopped it).
        var namesFailuresAfterFatal = true
        /// Every file listed and the exit status from the files alone, without the summed-up `.o` files or the
        /// empty-PATH check (Sentry's listing, as sentry-cli's).
        var plainListing = false
    }

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments) else { return .usage }
        let made: Result<Chosen, UsageError>
        switch parsed.options["--to"]?.last {
        case nil, "cohorly": made = toCollector(parsed)
        case "posthog":
            guard !parsed.flags.contains("--dry-run") else {
                return spec.usageError("--dry-run works with our collector only, not --to posthog")
            }
            made = toPostHog(parsed)
        case "sentry":
            guard !parsed.flags.contains("--dry-run") else {
                return spec.usageError("--dry-run works with our collector only, not --to sentry")
            }
            made = toSentry(parsed)
        case let other?:
            return spec.usageError("unknown --to \(other) (expected cohorly, posthog or sentry)")
        }
        let chosen: Chosen
        switch made {
        case .failure(let error): return spec.usageError(error.reason)
        case .success(let value): chosen = value
        }
        let run = chosen.destination.upload(parsed.positionals)
        chosen.progressLine?.clear()
        if let fatal = run.fatal { Console.error("cohorly: \(fatal)") }
        for file in run.files where file.status == .failed && (run.fatal == nil || chosen.namesFailuresAfterFatal) {
            Console.error("cohorly: \(file.path): \(file.reason ?? "failed")")
        }
        for warning in run.warnings { Console.error("cohorly: warning: \(warning)") }
        let json = parsed.flags.contains("--json")
        guard chosen.plainListing else {
            return run.finish(paths: parsed.positionals, json: json, allowEmpty: parsed.flags.contains("--allow-empty"))
        }
        if json {
            Console.out(JSON.render(run.json))
        } else {
            for file in run.files { Console.out(run.line(file)) }
            Console.out(run.summary)
        }
        return run.succeeded ? .success : .failure
    }

    /// A usage error of a destination's options.
    private static func refuse(_ reason: String) -> Result<Chosen, UsageError> { .failure(UsageError(reason: reason)) }

    /// `COHORLY_RETRY_DELAY_MS` in seconds: the first wait before a retry (tests make it short).
    private static func retryDelay(_ environment: [String: String]) -> Double? {
        environment["COHORLY_RETRY_DELAY_MS"].flatMap(Double.init).flatMap { $0 >= 0 ? $0 / 1000 : nil }
    }

    // MARK: - Our collector

    private static func toCollector(_ parsed: ParsedArguments) -> Result<Chosen, UsageError> {
        if let option = sentryOptions.first(where: { parsed.options[$0] != nil }) {
            return refuse("\(option) works with --to sentry only")
        }
        if let option = postHogOptions.sorted().first(where: { parsed.options[$0] != nil }) {
            return refuse("\(option) works with --to posthog only")
        }
        let environment = ProcessInfo.processInfo.environment
        guard !parsed.positionals.isEmpty else { return refuse("missing PATH") }
        let dryRun = parsed.flags.contains("--dry-run")
        guard let release = parsed.value("--release", orEnvironment: "COHORLY_RELEASE") ?? (dryRun ? "" : nil) else {
            return refuse("missing --release (or COHORLY_RELEASE)")
        }
        let (host, source) = CollectorAddress.resolve(option: parsed.options["--host"]?.last, environment: environment)
        if let problem = CollectorAddress.problem(host, source: source) { return refuse(problem) }
        let secret: String?
        switch SecretOption.resolve(parsed) {
        case .failure(let error): return refuse(error.reason)
        case .success(let value): secret = value
        }
        var upload = CollectorUpload(host: host, release: release, authToken: secret)
        upload.force = parsed.flags.contains("--force")
        upload.dryRun = dryRun
        upload.includeCache = parsed.flags.contains("--include-cache")
        if let delay = retryDelay(environment) { upload.retryDelay = delay }
        let progressLine = ProgressLine(enabled: isatty(STDERR_FILENO) != 0)
        upload.progress = { path, done, total in progressLine.show(path: path, done: done, total: total) }

        return .success(Chosen(destination: upload, progressLine: progressLine, namesFailuresAfterFatal: false))
    }

    // MARK: - PostHog

    private static func toPostHog(_ parsed: ParsedArguments) -> Result<Chosen, UsageError> {
        let environment = ProcessInfo.processInfo.environment
        guard !parsed.positionals.isEmpty else { return refuse("missing PATH") }
        let host = parsed.value("--host", orEnvironment: "POSTHOG_CLI_HOST") ?? PostHogUpload.defaultHost
        guard let url = URL(string: host), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            return refuse("invalid --host \(host)")
        }
        guard let projectId = parsed.value("--project-id", orEnvironment: "POSTHOG_CLI_PROJECT_ID") else {
            return refuse("missing --project-id (or POSTHOG_CLI_PROJECT_ID)")
        }
        guard !projectId.isEmpty, projectId.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
        else { return refuse("invalid --project-id \(projectId)") }
        let apiKey: String
        switch SecretOption.postHog.resolve(parsed) {
        case .success(let key?): apiKey = key
        case .success(nil):
            return refuse("missing the personal API key (POSTHOG_CLI_API_KEY or --api-key-file)")
        case .failure(let error): return refuse(error.reason)
        }
        if let secret = SecretOption.collector.options.first(where: { parsed.options[$0] != nil }) {
            return refuse(
                "\(secret) is the collector's secret; PostHog's key comes from POSTHOG_CLI_API_KEY or --api-key-file")
        }
        var api = PostHogSymbolSetAPI(host: host, projectId: projectId, apiKey: apiKey)
        api.force = parsed.flags.contains("--force")
        if let delay = retryDelay(environment) { api.retryDelay = delay }

        return .success(Chosen(destination: PostHogUpload(api: api)))
    }

    // MARK: - Sentry

    private static func toSentry(_ parsed: ParsedArguments) -> Result<Chosen, UsageError> {
        let environment = ProcessInfo.processInfo.environment
        guard !parsed.positionals.isEmpty else { return refuse("missing PATH") }
        if parsed.options["--auth-token"] != nil {
            return refuse(
                "--auth-token would show Sentry's token to `ps`: use SENTRY_AUTH_TOKEN or --auth-token-file")
        }
        for other in ["--host", "--project-id", "--api-key", "--api-key-file", "--release"]
        where parsed.options[other] != nil {
            return refuse("\(other) does not apply to --to sentry (use --url, --org, --project)")
        }
        if parsed.flags.contains("--force") { return refuse("--force does not apply to --to sentry") }
        let url = parsed.value("--url", orEnvironment: "SENTRY_URL") ?? SentryUpload.defaultURL
        guard let parsedURL = URL(string: url), parsedURL.scheme == "http" || parsedURL.scheme == "https",
            parsedURL.host != nil
        else { return refuse("invalid --url \(url)") }
        func slug(_ name: String, _ variable: String) -> Result<String, UsageError> {
            guard let value = parsed.value(name, orEnvironment: variable) else {
                return .failure(UsageError(reason: "missing \(name) (or \(variable))"))
            }
            guard value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }) else {
                return .failure(UsageError(reason: "invalid \(name) \(value)"))
            }
            return .success(value)
        }
        let org: String
        let project: String
        switch (slug("--org", "SENTRY_ORG"), slug("--project", "SENTRY_PROJECT")) {
        case (.success(let o), .success(let p)): (org, project) = (o, p)
        case (.failure(let error), _), (_, .failure(let error)): return refuse(error.reason)
        }
        let token: String
        switch SecretOption.sentry.resolve(parsed) {
        case .success(let value?): token = value
        case .success(nil):
            return refuse("missing Sentry's auth token (SENTRY_AUTH_TOKEN or --auth-token-file)")
        case .failure(let error): return refuse(error.reason)
        }
        var upload = SentryUpload(api: SentryChunkAPI(url: url, org: org, project: project, token: token))
        if let text = parsed.options["--max-wait"]?.last {
            guard let seconds = Double(text), seconds.isFinite, (0...86_400).contains(seconds) else {
                return refuse("invalid --max-wait \(text) (seconds, 0 to 86400)")
            }
            upload.maxWait = seconds
        }
        if let delay = retryDelay(environment) {
            upload.api.retryDelay = delay
            upload.pollDelay = delay
        }

        return .success(Chosen(destination: upload, plainListing: true))
    }
}

/// A single progress line on stderr when it is a terminal: `uploading NAME  42% of 12.3 MB`, erased at the end.
final class ProgressLine: @unchecked Sendable {
    private let enabled: Bool
    private var lastPercent = -1
    private var lastPath = ""
    private var shown = false

    init(enabled: Bool) { self.enabled = enabled }

    func show(path: String, done: Int64, total: Int64) {
        guard enabled else { return }
        let percent = total > 0 ? Int(done * 100 / total) : 100
        guard percent != lastPercent || path != lastPath else { return }
        lastPercent = percent
        lastPath = path
        let name = URL(fileURLWithPath: path).lastPathComponent
        let size =
            total >= 1_000_000 ? String(format: "%.1f MB", Double(total) / 1_000_000) : "\((total + 999) / 1000) kB"
        Console.write("\r\u{1b}[2Kuploading \(name)  \(percent)% of \(size)", to: STDERR_FILENO)
        shown = true
    }

    func clear() {
        if enabled && shown { Console.write("\r\u{1b}[2K", to: STDERR_FILENO) }
    }
}
