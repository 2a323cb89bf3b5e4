import CohorlyCommandLine
import CohorlySymbols

#if canImport(Glibc)
    import Glibc
#endif

/// `cohorly symbolicate REPORT.json [--debug-dir DIR]… [--json]` and
/// `cohorly symbolicate --exe FILE [ADDR…]`.
enum SymbolicateCommand: Command {
    static let words = ["symbolicate"]
    static let summary =
        "Turn a crash report's (or an executable's) addresses into functions and lines."
    static let help = SymbolicateOptions.help

    static func run(_ arguments: [String]) -> ExitStatus {
        let options: SymbolicateOptions
        do {
            options = try SymbolicateOptions.parse(arguments)
        } catch {
            return Console.usageError(error.reason, command: "symbolicate")
        }
        if let executable = options.executable {
            SymbolicateHandover.exec(arguments)
            return options.runExecutable(executable)
        }
        guard options.positionals.count == 1, let report = options.positionals.first else {
            let reason =
                options.positionals.isEmpty
                ? "missing REPORT.json (or --exe FILE)" : "expected one REPORT.json"
            return Console.usageError(reason, command: "symbolicate")
        }
        return SymbolicateReport.run(
            path: report, debugDirs: options.debugDirs, json: options.json, names: options.names ?? .simplified,
            showsAsyncCallers: !options.noAsync)
    }
}
