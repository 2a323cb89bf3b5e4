import CohorlyCommandLine
import CohorlyJSON
import CohorlySymbols
import Foundation

/// `cohorly crashes list`: the crashes a collector holds, newest crash time first.
enum CrashesListCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["crashes", "list"], summary: "List the crashes, hangs and handled errors a collector received.",
        about: """
            Every `$exception` event: crashes, hangs and abnormal exits (level fatal), handled errors and hangs the
            app survived (level error). MECHANISM says which: signal, swift_fatal, cxx_exception, hang,
            abnormal_exit, generic (captureError / captureMessage). TIME is when it happened (a crash arrives at the
            next launch); when the collector received it is `received_at` in --json and `Received:` in crashes show.
            """,
        options: [
            CollectorOptions.host, CollectorOptions.limit("At most N crashes, newest crash time first.", default: 100),
            CommandOption(
                "--level", .choice("LEVEL", ["fatal", "error"]),
                "Only events of this level: fatal (what ended the app) or error (what it survived)."),
            CommandOption(
                "--flag", .word("KEY[=VALUE]"),
                "Only crashes of launches served flag KEY on (or with variant/value VALUE)."),
        ] + CollectorOptions.secret("read") + [CollectorOptions.json],
        epilogue: "EXIT STATUS: 0 success, 1 the collector could not be reached or refused, 2 usage error.")

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments) else { return .usage }
        if let flag = parsed.options["--flag"]?.last, flag.isEmpty || flag.hasPrefix("=") {
            return spec.usageError("invalid --flag '\(flag)' (expected KEY or KEY=VALUE)")
        }
        let level = parsed.options["--level"]?.last
        let flag = parsed.options["--flag"]?.last
        let query =
            (flag.map { [URLQueryItem(name: "flag", value: $0)] } ?? [])
            + (level.map { [URLQueryItem(name: "level", value: $0)] } ?? [])
        return CollectorRequest.read(parsed, command: spec.name, path: "/api/crashes", query: query) {
            text, request in
            guard let list = try? JSONDecoder().decode(CrashList.self, from: Data(text.utf8)) else {
                Console.error("cohorly: unexpected answer from \(request.host)")
                return .failure
            }
            guard !list.crashes.isEmpty else {
                // Not a bare header: say so, with the filters that were given.
                let filters = (level.map { ["--level \($0)"] } ?? []) + (flag.map { ["--flag \($0)"] } ?? [])
                print("no crashes match" + (filters.isEmpty ? "" : " " + filters.joined(separator: " ")))
                return .success
            }
            print(
                [
                    "TIME (UTC)".padded(24), "LEVEL".padded(5), "MECHANISM".padded(13), "RELEASE".padded(20),
                    "DISTINCT ID".padded(36), "INSERT ID".padded(36),
                    "THREAD".padded(16), "REASON",
                ]
                .joined(separator: " "))
            for crash in list.crashes {
                // The collector's `reason` is the one `crashes show` gives; older collectors only send type/value.
                let text = crash.text
                let reason = text[.reason] ?? [text[.type], text[.value]].compactMap { $0 }.joined(separator: ": ")
                let column = { (key: CrashKey, width: Int) in TerminalText.escaped(text[key] ?? "-").padded(width) }
                let columns = [
                    Timestamp.iso8601(milliseconds: crash.time).padded(24), column(.level, 5), column(.mechanism, 13),
                    column(.release, 20), TerminalText.escaped(text[.distinctId] ?? "").padded(36),
                    column(.insertId, 36), column(.threadName, 16), TerminalText.escaped(reason),
                ]
                print(columns.joined(separator: " "))
            }
            return .success
        }
    }

    struct CrashList: Decodable {
        var crashes: [Summary]
    }

    struct Summary: Decodable {
        /// Crash time, unix milliseconds (0 when absent).
        var time: Int64
        /// The text fields present (`insert_id`, `distinct_id`, `release`, `type`, `value`, `reason`,
        /// `thread_name`, `level`, `mechanism`).
        var text: [CrashKey: String] = [:]

        /// The text fields the list shows.
        static let textKeys: [CrashKey] = [
            .insertId, .distinctId, .release, .type, .value, .reason, .threadName, .level, .mechanism,
        ]

        /// Every field read on its own: a crash whose event holds something unexpected (a number for its
        /// release, an object for its type) shows what it has, and never makes the whole list unreadable.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CrashKey.self)
            time = container.lenientNumber(.time) ?? 0
            for key in Self.textKeys { text[key] = container.lenientText(key) }
        }
    }
}

/// `cohorly crashes show ID`: one crash, symbolicated by the collector, printed like a Swift backtrace.
enum CrashesShowCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["crashes", "show"],
        summary: "Show one crash, hang or handled error, symbolicated, like a Swift backtrace.",
        positionals: CommandPositionals(
            "INSERT_ID", count: 1...1, missing: "expected one INSERT_ID (or a prefix of one)",
            tooMany: "expected one INSERT_ID (or a prefix of one)"),
        about: """
            The collector symbolicates the crash with the debug files uploaded to it (cohorly debug-files upload):
            the reason first (from the Swift message, the C++ exception, the DWARF `Swift runtime failure` frame, or
            the signal), then every thread, names simplified as the Swift backtracer prints them (frames the device
            resolved and frames the collector resolved alike); modules whose debug file is missing stay raw and are
            named at the end. A hang or a handled error says `Captured:` and `Thread N captured`, a crash `Crash:`
            and `Thread N crashed`. INSERT_ID may be a unique prefix of the id.
            """,
        options: [CollectorOptions.host] + CollectorOptions.secret("read") + [
            .flag(
                "--no-sugar",
                "Full names (`CrashDemo.crash(on: Swift.String, …) -> Swift.Never`), as in --json (--full-names is the"
                    + " same)."),
            .flag("--full-names", "Full names, as --no-sugar.", listed: false),
            .flag("--simplified", "Simplified names (`crash(on:_:)`, `Int?`, `[A]`): the default."),
            .flag(
                "--all-frames",
                "Every frame: runs of 3 or more frames that are not the app's code (a framework, the runtime, thunks:"
                    + " `in_app` false) are otherwise folded into one line naming their modules."),
            .flag(
                "--no-async",
                "The raw physical stacks: without the `[async]` callers of a crash in async code, and with the"
                    + " executor's frames below them (folded into one line by default)."),
            CollectorOptions.json,
        ],
        epilogue: "EXIT STATUS: 0 success, 1 no such crash or the collector could not be reached, 2 usage error.")

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments) else { return .usage }
        guard let id = parsed.positionals.first, !id.isEmpty else { return spec.usageError(spec.positionals.missing) }
        let names: Demangler.Style
        do {
            names = try NamingFlags.style(parsed) ?? .simplified
        } catch {
            return spec.usageError(error.reason)
        }
        let encoded = id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? id
        return CollectorRequest.read(parsed, command: spec.name, path: "/api/crashes/" + encoded) {
            text, request in
            let shown: ShownCrash
            do {
                shown = try JSONDecoder().decode(ShownCrash.self, from: Data(text.utf8))
            } catch {
                let field = ShownCrash.failedField(error).map { " (the field `\(TerminalText.escaped($0))`)" } ?? ""
                Console.error("cohorly: unexpected answer from \(request.host)\(field)")
                return .failure
            }
            let escaped = TerminalText.escaped
            var header = [
                "Insert id: \(escaped(shown.insertId ?? id))", "Time: \(Timestamp.iso8601(milliseconds: shown.time))",
            ]
            if let received = shown.receivedAt {
                header.append("Received: \(Timestamp.iso8601(milliseconds: received))")
            }
            if let release = shown.release {
                header.append("Release: \(escaped(release))" + (shown.dist.map { " (\(escaped($0)))" } ?? ""))
            }
            header.append("User: \(escaped(shown.distinctId))")
            if let os = shown.os {
                header.append("OS: \(escaped(os)) \(escaped(shown.osVersion ?? "")) \(escaped(shown.arch ?? ""))")
            }
            let options = SymbolicatedCrash.TextOptions(
                names: names, missingDebugFilesAdvice: advice,
                showsAsyncCallers: !parsed.flags.contains("--no-async"),
                foldsOtherCode: !parsed.flags.contains("--all-frames"))
            print(shown.crash.text(header: header, options: options))
            if let breadcrumbs = BreadcrumbLines(shown.breadcrumbs) { print("\n" + breadcrumbs.text) }
            return .success
        }
    }

    /// What to do when frames stay raw or without lines.
    static let advice =
        "Hint: upload their debug files to the collector with `cohorly debug-files upload PATH… --release R`,"
        + " or start it with `cohorly serve --debug-dir DIR` on a directory holding them (system libraries: their"
        + " -dbgsym packages install into /usr/lib/debug)."

    struct ShownCrash: Decodable {
        var insertId: String?
        var time: Int64
        var distinctId: String
        var release: String?
        var dist: String?
        var os: String?
        var osVersion: String?
        var arch: String?
        var crash: SymbolicatedCrash
        /// `$exception_breadcrumbs` as the event holds it (read leniently: see ``BreadcrumbLines``).
        var breadcrumbs: CohorlyValue?
        /// When the collector received the event (unix ms; absent from older collectors).
        var receivedAt: Int64?

        /// The text fields are read leniently, as ingestion accepts them: a `release`, `dist` or `$os` that is not
        /// a string (a number, an object) shows as its JSON text rather than making the crash unreadable. Only the
        /// crash itself must have its shape; a failure there names the field (``ShownCrash/failedField(_:)``).
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CrashKey.self)
            let text = container.lenientText
            let number = container.lenientNumber
            insertId = text(.insertId)
            time = number(.time) ?? 0
            distinctId = text(.distinctId) ?? ""
            release = text(.release)
            dist = text(.dist)
            os = text(.os)
            osVersion = text(.osVersion)
            arch = text(.arch)
            crash = try container.decode(SymbolicatedCrash.self, forKey: .crash)
            breadcrumbs = try? container.decodeIfPresent(CohorlyValue.self, forKey: .breadcrumbs)
            receivedAt = number(.receivedAt)
        }

        /// The JSON path of the field that did not decode (`crash.threads[0].frames`), for the error line.
        static func failedField(_ error: any Error) -> String? {
            let path: [any CodingKey]
            switch error as? DecodingError {
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context),
                .dataCorrupted(let context):
                path = context.codingPath
                if case .keyNotFound(let key, _) = error as? DecodingError { return render(path + [key]) }
            default: return nil
            }
            return path.isEmpty ? nil : render(path)
        }

        private static func render(_ path: [any CodingKey]) -> String {
            var text = ""
            for key in path {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += (text.isEmpty ? "" : ".") + key.stringValue
                }
            }
            return text
        }
    }
}

/// The fields of a crash in the collector's answers, one set for `crashes list` (`GET /api/crashes`) and
/// `crashes show` (`GET /api/crashes/<id>`).
enum CrashKey: String, CodingKey {
    case time, release, dist, os, arch, type, value, reason, level, mechanism, crash, breadcrumbs
    case insertId = "insert_id"
    case distinctId = "distinct_id"
    case threadName = "thread_name"
    case osVersion = "os_version"
    case receivedAt = "received_at"
}

/// Unix milliseconds as `2026-11-30T08:39:20.763Z`.
enum Timestamp {
    /// The times printed as dates: years 1 to 9999.
    static let printable: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    /// The time as ISO 8601; `-` when unknown, `invalid (N)` outside years 1 to 9999 (an event's time is input).
    static func iso8601(milliseconds: Int64?) -> String {
        guard let milliseconds else { return "-" }
        guard printable.contains(milliseconds) else { return "invalid (\(milliseconds))" }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}

extension String {
    func padded(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}

extension KeyedDecodingContainer {
    /// A text field read as ingestion accepted it: a string as it is, any other JSON value (a number, an object)
    /// as its JSON text, nil when absent or null; never an error that makes the whole answer unreadable.
    func lenientText(_ key: Key) -> String? {
        guard let value = try? decodeIfPresent(CohorlyValue.self, forKey: key) else { return nil }
        switch value {
        case .null: return nil
        case .string(let string): return string
        default: return value.jsonString
        }
    }

    /// A whole-number field; nil when absent or of another type.
    func lenientNumber(_ key: Key) -> Int64? {
        (try? decodeIfPresent(Int64.self, forKey: key)) ?? nil
    }
}
