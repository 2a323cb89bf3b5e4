import CohorlyCommandLine
import CohorlySymbols

#if canImport(Glibc)
    import Glibc
#endif

/// `cohorly symbolicate REPORT.json [--debug-dir DIR]… [--json]` and
/// `cohorly symbolicate --exe FILE [ADDR…]`.
enum SymbolicateCommand: DeclaredCommand {
    static let spec = SymbolicateOptions.spec

    static func run(_ arguments: [String]) -> ExitStatus {
        let options: SymbolicateOptions
        do {
            options = try SymbolicateOptions.parse(arguments)
        } catch {
            return spec.usageError(error.reason)
        }
        if let executable = options.executable {
            SymbolicateHandover.exec(arguments)
            return options.runExecutable(executable)
        }
        guard options.positionals.count == 1, let report = options.positionals.first else {
            return spec.usageError(options.positionals.isEmpty ? spec.positionals.missing : "expected one REPORT.json")
        }
        return SymbolicateReport.run(
            path: report, debugDirs: options.debugDirs, json: options.json, names: options.names ?? .simplified,
            showsAsyncCallers: !options.noAsync)
    }
}
