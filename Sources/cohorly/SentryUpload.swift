import CohorlyCommandLine
import CohorlySymbols
import Foundation

/// `cohorly debug-files upload PATH… --to sentry`: the files our own upload would take (``DebugFileUploader``'s
/// survey) sent to Sentry by its chunk-upload protocol (``SentryChunkAPI``), as `sentry-cli debug-files upload`
/// does: the server's options first; each file hashed in chunks (``SentryDebugFile``); one assemble call
/// tells which chunks the server lacks; only those are sent (gzipped when offered), as many per request as it
/// allows; then the files are assembled, polled until `ok` or `error` for at most `maxWait` seconds. Printed and
/// summed up like the upload to a collector (``UploadRun``).
enum SentryUpload {
    static let defaultURL = "https://sentry.io/"
    /// Sentry's auth token: `--auth-token-file`, else `SENTRY_AUTH_TOKEN` (never the command line: see `run`).
    static let secret = SecretOption(file: "--auth-token-file", value: "--auth-token", variable: "SENTRY_AUTH_TOKEN")
    /// Files per assemble call.
    static let assembleBatch = 50

    /// Runs with the already-parsed arguments of `debug-files upload`.
    static func run(_ parsed: ParsedArguments) -> ExitStatus {
        let command = "debug-files upload"
        let environment = ProcessInfo.processInfo.environment
        guard !parsed.positionals.isEmpty else { return Console.usageError("missing PATH", command: command) }
        if parsed.options["--auth-token"] != nil {
            return Console.usageError(
                "--auth-token would show Sentry's token to `ps`: use SENTRY_AUTH_TOKEN or --auth-token-file",
                command: command)
        }
        for other in ["--host", "--project-id", "--api-key", "--api-key-file", "--release"]
        where parsed.options[other] != nil {
            return Console.usageError(
                "\(other) does not apply to --to sentry (use --url, --org, --project)", command: command)
        }
        if parsed.flags.contains("--force") {
            return Console.usageError("--force does not apply to --to sentry", command: command)
        }
        let url = parsed.value("--url", orEnvironment: "SENTRY_URL") ?? defaultURL
        guard let parsedURL = URL(string: url), parsedURL.scheme == "http" || parsedURL.scheme == "https",
            parsedURL.host != nil
        else { return Console.usageError("invalid --url \(url)", command: command) }
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
        case (.failure(let error), _), (_, .failure(let error)):
            return Console.usageError(error.reason, command: command)
        }
        let token: String
        switch secret.resolve(parsed) {
        case .success(let value?): token = value
        case .success(nil):
            return Console.usageError(
                "missing Sentry's auth token (SENTRY_AUTH_TOKEN or --auth-token-file)", command: command)
        case .failure(let error): return Console.usageError(error.reason, command: command)
        }
        var maxWait = 300.0
        if let text = parsed.options["--max-wait"]?.last {
            guard let seconds = Double(text), seconds.isFinite, (0...86_400).contains(seconds) else {
                return Console.usageError("invalid --max-wait \(text) (seconds, 0 to 86400)", command: command)
            }
            maxWait = seconds
        }
        var api = SentryChunkAPI(url: url, org: org, project: project, token: token)
        var pollDelay = 0.5
        if let delay = environment["COHORLY_RETRY_DELAY_MS"].flatMap(Double.init), delay >= 0 {
            api.retryDelay = delay / 1000
            pollDelay = delay / 1000
        }
        var run = perform(api, paths: parsed.positionals, maxWait: maxWait, pollDelay: pollDelay)
        run.fatal = run.fatal.map { $0.replacingOccurrences(of: token, with: "<token>") }
        if let fatal = run.fatal { Console.error("cohorly: \(fatal)") }
        for file in run.files where file.status == .failed {
            Console.error("cohorly: \(file.path): \(file.reason ?? "failed")")
        }
        if parsed.flags.contains("--json") {
            Console.out(JSON.render(run.json))
        } else {
            for file in run.files { Console.out(run.line(file)) }
            Console.out(run.summary)
        }
        return run.succeeded ? .success : .failure
    }
}
