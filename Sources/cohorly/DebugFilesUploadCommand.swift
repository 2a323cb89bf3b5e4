import CohorlyCollectorAPI
import CohorlyCommandLine
import CohorlySymbols
import Foundation

/// `cohorly debug-files upload PATH… --release R [--host URL] [--auth-token-file F] [--force] [--json]`, or
/// `--to posthog` (PostHogUpload.swift), or `--to sentry` (SentryUpload.swift).
enum DebugFilesUploadCommand: Command {
    static let words = ["debug-files", "upload"]
    static let summary = "Upload executables and debug files to a collector, PostHog or Sentry (only what it lacks)."
    static let help = """
        USAGE: cohorly debug-files upload PATH… --release R [--host URL] [--auth-token-file F] [--force] [--dry-run] [--allow-empty] [--include-cache] [--json]
               cohorly debug-files upload PATH… --to posthog [--project-id ID] [--api-key-file FILE] [--host URL] [--force] [--allow-empty] [--json]
               cohorly debug-files upload PATH… --to sentry [--url URL] [--org ORG] [--project P] [--auth-token-file F] [--max-wait S] [--json]

        Finds ELF files under the PATHs (directories recursively, a symlinked directory named on the command line
        too; symlinks inside are not followed), skips what has neither debug info nor symbols (or no GNU build
        id; `.o` files are summed up in one line), asks the collector which build ids / contents it already has, and uploads
        only the missing ones: deflate-compressed, streamed (any size, bounded memory). A separate debug file is
        stored as `debuginfo`; a binary as `executable`, and also as `debuginfo` when it still has DWARF (its
        bytes are sent once). Both files of one build id are kept. Connection errors and 5xx answers are
        retried 3 times with a short backoff. A progress line is shown when stderr is a terminal.

        OPTIONS:
          --release R       The release the files belong to (default COHORLY_RELEASE; required).
          --host URL        The collector (default COHORLY_HOST, else http://127.0.0.1:4000).
          --auth-token-file F  The upload secret, from a file (`cohorly serve --auth-token-file`; default
                            COHORLY_AUTH_TOKEN). `--auth-token T` also works, but shows it in `ps`.
          --force           Replace a file the collector holds for the same build id with other bytes (a
                            stripped copy uploaded by mistake; with the secret when the collector has one). With
                            --to posthog: replace a symbol set stored under the same debug id.
          --dry-run         Find, check and hash the files and list what would be uploaded; send nothing
                            (the collector is not contacted; --release is not needed).
          --allow-empty     Succeed when a PATH holds nothing to upload (by default that is an error: a
                            pipeline pointed at the wrong directory would ship without symbols).
          --include-cache   Also make each DWARF build's symbol cache (`cohorly debug-files cache`) here and send
                            it (kind symcache); without it the collector makes the cache when the debug file
                            arrives.
          --json            Print a JSON summary (counts, bytes sent, one object per file).
          --to posthog      Upload to PostHog error tracking instead, as symbol sets: the same files that carry
                            DWARF, one per debug id (the larger kept), split DWARF skipped. --host is then
                            PostHog's (default POSTHOG_CLI_HOST, else https://us.posthog.com).
          --project-id ID   The PostHog project (default POSTHOG_CLI_PROJECT_ID).
          --api-key-file F  Read the personal API key from F's first line; default POSTHOG_CLI_API_KEY.
                            (--api-key KEY works too, but shows the key to `ps`.)
          --to sentry       Upload to Sentry by its chunk-upload protocol (as sentry-cli does): the same files,
                            only the chunks the server lacks, then assembled. The auth token comes from
                            SENTRY_AUTH_TOKEN or --auth-token-file (never the command line).
          --url URL         Sentry (default SENTRY_URL, else https://sentry.io/).
          --org ORG         The organization slug (default SENTRY_ORG).
          --project P       The project slug (default SENTRY_PROJECT).
          --max-wait S      Seconds to wait for Sentry to assemble the files (default 300).
          -h, --help        Show this help.

        ENVIRONMENT: COHORLY_RELEASE, COHORLY_HOST, COHORLY_AUTH_TOKEN, COHORLY_RETRY_DELAY_MS (first retry
        delay, doubled each time; default 250, with --to posthog or sentry 500), POSTHOG_CLI_HOST,
        POSTHOG_CLI_PROJECT_ID, POSTHOG_CLI_API_KEY, SENTRY_URL, SENTRY_ORG, SENTRY_PROJECT, SENTRY_AUTH_TOKEN.

        EXIT STATUS: 0 everything needed is on the collector, 1 something that should have been uploaded was
        not (a file that cannot be read, the collector could not be reached), or a PATH held nothing to upload
        (without --allow-empty), 2 usage error.
        """

    /// The options only `--to sentry` takes.
    static let sentryOptions: Set<String> = ["--url", "--org", "--project", "--max-wait"]

    static func run(_ arguments: [String]) -> ExitStatus {
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments.parse(
                arguments, flags: ["--json", "--force", "--dry-run", "--allow-empty", "--include-cache"],
                options: Set(["--release", "--host", "--to", "--project-id"]).union(SecretOption.options).union(
                    SecretOption.postHog.options
                ).union(sentryOptions))
        } catch {
            return Console.usageError(error.reason, command: "debug-files upload")
        }
        switch parsed.options["--to"]?.last {
        case nil, "cohorly": break
        case "posthog":
            guard !parsed.flags.contains("--dry-run") else {
                return Console.usageError(
                    "--dry-run works with our collector only, not --to posthog", command: "debug-files upload")
            }
            return PostHogUpload.run(parsed)
        case "sentry":
            guard !parsed.flags.contains("--dry-run") else {
                return Console.usageError(
                    "--dry-run works with our collector only, not --to sentry", command: "debug-files upload")
            }
            return SentryUpload.run(parsed)
        case let other?:
            return Console.usageError(
                "unknown --to \(other) (expected cohorly, posthog or sentry)", command: "debug-files upload")
        }
        if let option = sentryOptions.first(where: { parsed.options[$0] != nil }) {
            return Console.usageError("\(option) works with --to sentry only", command: "debug-files upload")
        }
        if let option = (SecretOption.postHog.options.union(["--project-id"])).first(where: {
            parsed.options[$0] != nil
        }) {
            return Console.usageError("\(option) works with --to posthog only", command: "debug-files upload")
        }
        let environment = ProcessInfo.processInfo.environment
        func option(_ name: String, _ variable: String) -> String? {
            parsed.options[name]?.last ?? environment[variable].flatMap { $0.isEmpty ? nil : $0 }
        }
        guard !parsed.positionals.isEmpty else {
            return Console.usageError("missing PATH", command: "debug-files upload")
        }
        let dryRun = parsed.flags.contains("--dry-run")
        guard let release = option("--release", "COHORLY_RELEASE") ?? (dryRun ? "" : nil) else {
            return Console.usageError("missing --release (or COHORLY_RELEASE)", command: "debug-files upload")
        }
        let (host, source) = CollectorAddress.resolve(option: parsed.options["--host"]?.last, environment: environment)
        if let problem = CollectorAddress.problem(host, source: source) {
            return Console.usageError(problem, command: "debug-files upload")
        }
        let secret: String?
        switch SecretOption.resolve(parsed) {
        case .failure(let error): return Console.usageError(error.reason, command: "debug-files upload")
        case .success(let value): secret = value
        }
        var uploader = DebugFileUploader(host: host, release: release, authToken: secret)
        uploader.force = parsed.flags.contains("--force")
        if let delay = environment["COHORLY_RETRY_DELAY_MS"].flatMap(Double.init), delay >= 0 {
            uploader.retryDelay = delay / 1000
        }
        let progressLine = ProgressLine(enabled: isatty(STDERR_FILENO) != 0)
        uploader.progress = { path, done, total in progressLine.show(path: path, done: done, total: total) }
        let json = parsed.flags.contains("--json")

        let run = UploadRun.perform(
            uploader, paths: parsed.positionals, dryRun: dryRun, includeCache: parsed.flags.contains("--include-cache"))
        progressLine.clear()
        if let fatal = run.fatal { Console.error("cohorly: \(fatal)") }
        for file in run.files where file.status == .failed && run.fatal == nil {
            Console.error("cohorly: \(file.path): \(file.reason ?? "failed")")
        }
        for file in run.files where file.status != .failed && file.reason == DebugFileUploader.noDebugInfoWarning {
            Console.error("cohorly: warning: \(file.path): \(DebugFileUploader.noDebugInfoWarning)")
        }
        return run.finish(paths: parsed.positionals, json: json, allowEmpty: parsed.flags.contains("--allow-empty"))
    }
}

/// The outcome of one upload run: what happened to each file, and the totals.
struct UploadRun {
    var files: [DebugFileUploader.FileResult] = []
    var fatal: String?

    var count: (uploaded: Int, present: Int, skipped: Int, failed: Int, wouldUpload: Int) {
        (
            files.filter { $0.status == .uploaded }.count, files.filter { $0.status == .present }.count,
            files.filter { $0.status == .skipped }.count, files.filter { $0.status == .failed }.count,
            files.filter { $0.status == .wouldUpload }.count
        )
    }

    /// Whether this was a `--dry-run` (nothing sent).
    var dryRun = false

    var bytesSent: Int64 { files.reduce(0) { $0 + $1.bytesSent } }

    var succeeded: Bool { fatal == nil && count.failed == 0 }

    /// `N uploaded (X bytes sent), M already present, K skipped[, F failed]`.
    var summary: String {
        let count = self.count
        if dryRun {
            return "dry run: \(count.wouldUpload) would be uploaded (if the collector lacks them), "
                + "\(count.skipped) skipped; nothing was sent"
        }
        var text =
            "\(count.uploaded) uploaded (\(bytesSent) bytes sent), \(count.present) already present, "
            + "\(count.skipped) skipped"
        if count.failed > 0 { text += ", \(count.failed) failed" }
        return text
    }

    func line(_ file: DebugFileUploader.FileResult) -> String {
        let kinds = file.kinds.map(\.rawValue).joined(separator: "+")
        var text = "  " + file.status.rawValue.padded(to: 16) + (kinds.isEmpty ? "-" : kinds).padded(to: 21)
        text += (file.buildId ?? "-").padded(to: 42) + file.path
        if let reason = file.reason, file.status != .failed { text += " (\(reason))" }
        return text
    }

    var json: JSON.Value {
        let count = self.count
        let list: [JSON.Value] = files.map { file in
            var pairs: [(String, JSON.Value)] = [
                ("path", .string(file.path)), ("status", .string(file.status.rawValue)),
                ("build_id", JSON.string(file.buildId)), ("kinds", .array(file.kinds.map { .string($0.rawValue) })),
                ("size", .int(Int(file.size))), ("bytes_sent", .int(Int(file.bytesSent))),
            ]
            if let reason = file.reason { pairs.append(("reason", .string(reason))) }
            return .object(pairs)
        }
        var pairs: [(String, JSON.Value)] = [
            ("uploaded", .int(count.uploaded)), ("already_present", .int(count.present)),
            ("skipped", .int(count.skipped)), ("failed", .int(count.failed)), ("bytes_sent", .int(Int(bytesSent))),
            ("dry_run", .bool(dryRun)), ("would_upload", .int(count.wouldUpload)),
            ("files", .array(list)),
        ]
        if let fatal { pairs.append(("error", .string(fatal))) }
        return .object(pairs)
    }

    /// Discover, read, check, upload.
    static func perform(
        _ uploader: DebugFileUploader, paths: [String], dryRun: Bool = false, includeCache: Bool = false
    ) -> UploadRun {
        var run = UploadRun()
        run.dryRun = dryRun
        var items: [(file: Int, item: DebugFileUploader.Item)] = []
        // --include-cache: one symbol cache per build with DWARF (DebugFileUploader+Cache.swift).
        let caches = includeCache && !dryRun ? try? DebugFileUploader.makeCacheDirectory() : nil
        defer { caches.map(DebugFileUploader.removeCaches) }
        var cachedBuilds: Set<String> = []
        let surveyed = DebugFileUploader.survey(paths)
        let withDebugInfo = Set(surveyed.compactMap { $0.result.kinds.contains(.debuginfo) ? $0.result.buildId : nil })
        for surveyed in surveyed {
            var result = surveyed.result
            if result.kinds == [.executable], let buildId = result.buildId, !withDebugInfo.contains(buildId) {
                result.reason = DebugFileUploader.noDebugInfoWarning
            }
            defer { run.files.append(result) }
            let path = result.path
            guard let buildId = surveyed.info?.codeId, !result.kinds.isEmpty else { continue }
            do {
                let (sha, size) = try DebugFileUploader.hash(path)
                result.size = size
                result.status = .present
                for kind in result.kinds {
                    items.append(
                        (run.files.count, .init(path: path, kind: kind, buildId: buildId, sha256: sha, size: size)))
                }
                if let caches, result.kinds.contains(.debuginfo), cachedBuilds.insert(buildId).inserted {
                    do {
                        let cache = try DebugFileUploader.writeCache(of: path, buildId: buildId, into: caches)
                        let (cacheSHA, cacheSize) = try DebugFileUploader.hash(cache)
                        items.append(
                            (
                                run.files.count,
                                .init(path: cache, kind: .symcache, buildId: buildId, sha256: cacheSHA, size: cacheSize)
                            ))
                    } catch {
                        result.reason = "\(error)"  // the files still go; the collector makes the cache itself
                    }
                }
            } catch {
                result.status = .failed
                result.reason = "\(error)"
            }
        }
        if dryRun {
            for index in Set(items.map(\.file)) where run.files[index].status != .failed {
                run.files[index].status = .wouldUpload
            }
            return run
        }
        let missing: [DebugFileUploader.Item]
        do {
            missing = try uploader.missing(items.map(\.item))
        } catch {
            run.fatal = "\(error)"
            for index in Set(items.map(\.file)) {
                run.files[index].status = .failed
                run.files[index].reason = "not uploaded (the check failed)"
            }
            return run
        }
        func key(_ item: DebugFileUploader.Item) -> String {
            item.buildId + "/" + item.kind.rawValue + "/" + item.sha256
        }
        let missingKeys = Set(missing.map(key))
        var sentContent: Set<String> = []
        var recheck: [(file: Int, item: DebugFileUploader.Item)] = []
        // Each kind is sent on its own: when one half of an unstripped binary is refused (its executable is
        // stored with other bytes, a stripped copy uploaded by mistake), the other half is still stored.
        var failures: [Int: [String]] = [:]
        for (index, item) in items where missingKeys.contains(key(item)) {
            // The same bytes under a second kind (an unstripped binary): the collector finds them by hash.
            if sentContent.contains(item.sha256) {
                recheck.append((index, item))
                continue
            }
            let (sent, error) = uploader.upload(item)
            run.files[index].bytesSent += sent
            if let error {
                failures[index, default: []].append("\(item.kind.rawValue): \(error)")
            } else {
                run.files[index].status = .uploaded
                sentContent.insert(item.sha256)
            }
        }
        if !recheck.isEmpty {
            let stillMissing = (try? uploader.missing(recheck.map(\.item))).map { Set($0.map(key)) }
            for (index, item) in recheck where stillMissing?.contains(key(item)) ?? true {
                failures[index, default: []].append(
                    "\(item.kind.rawValue): the collector did not accept the uploaded content")
            }
        }
        for (index, reasons) in failures {
            run.files[index].status = .failed
            run.files[index].reason = reasons.joined(separator: "; ")
        }
        return run
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
