// `cohorly-symbolicate`: `cohorly symbolicate --exe` in a lean executable. It links CohorlySymbols and the
// command-line helpers only — no Foundation, whose load-time initialisation and code pages make a quarter of the
// full CLI's resident memory before any work — and `cohorly symbolicate --exe` execs it when it sits beside
// `cohorly` (see `SymbolicateHandover` in the `cohorly` target). It takes the arguments of `cohorly symbolicate`.
import CohorlyCommandLine

#if canImport(Glibc)
    import Glibc
#endif

func run(_ arguments: [String]) -> ExitStatus {
    if arguments.contains("--help") || arguments.contains("-h") {
        Console.out(SymbolicateOptions.spec.help)
        return .success
    }
    let options: SymbolicateOptions
    do {
        options = try SymbolicateOptions.parse(arguments)
    } catch {
        return SymbolicateOptions.spec.usageError(error.reason)
    }
    guard let executable = options.executable else {
        return SymbolicateOptions.spec.usageError(
            "cohorly-symbolicate takes --exe FILE; a report is read by `cohorly symbolicate REPORT.json`")
    }
    return options.runExecutable(executable)
}

exit(run(Array(CommandLine.arguments.dropFirst())).rawValue)
