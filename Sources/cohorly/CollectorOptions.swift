import CohorlyCollectorClient
import CohorlyCommandLine

/// The options of every command that talks to a collector, declared once for their tables.
enum CollectorOptions {
    /// `--host URL`.
    static let host = CommandOption(
        "--host", .word("URL"), "The collector.", default: "COHORLY_HOST, else \(CollectorAddress.defaultHost)")

    /// `--json`: the collector's answer as it is.
    static let json = CommandOption.flag("--json", "Print the collector's JSON answer.")

    /// `--auth-token-file F` (listed) and `--auth-token S` (parsed, not listed: `ps` shows it), the collector's
    /// `role` secret (`read`, `admin`) for ``SecretOption/collector``.
    static func secret(_ role: String) -> [CommandOption] {
        [
            CommandOption(
                SecretOption.collector.file, .file("F"), "The collector's \(role) secret, from a file.",
                default: SecretOption.collector.variable),
            CommandOption(
                SecretOption.collector.value, .word("S"), "The same secret on the command line, where `ps` shows it.",
                listed: false),
        ]
    }

    /// `--limit N`, said by `help`, `fallback` without it.
    static func limit(_ help: String, default fallback: Int) -> CommandOption {
        CommandOption("--limit", .word("N"), help, default: String(fallback))
    }
}
