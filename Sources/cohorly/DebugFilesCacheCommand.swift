import CohorlyCommandLine
import CohorlySymbols

#if canImport(Glibc)
    import Glibc
#endif

/// `cohorly debug-files cache FILE -o CACHE [--debug-dir DIR]…`.
enum DebugFilesCacheCommand: Command {
    static let words = ["debug-files", "cache"]
    static let summary = "Write a symbol cache of an ELF file (what `symbolicate --exe --cache` reads)."
    static let help = """
        USAGE: cohorly debug-files cache FILE -o CACHE [--debug-dir DIR]…

        Writes the symbol cache of FILE (an executable or library; its debug file is found as `symbolicate` finds
        it): a compact, versioned file keyed by FILE's GNU build id holding every answer `symbolicate --exe`
        gives — functions, inline chains, file:line:column, names stored demangled (full and simplified) with
        thunks and `Swift runtime failure:` frames flagged. `cohorly symbolicate --exe FILE --cache CACHE` reads
        it in place (mapped) and gives the same answers. Format: docs/symbol-cache.md.

        OPTIONS:
          -o CACHE          Where to write the cache (replaced whole: written beside it, then renamed).
          --debug-dir DIR   Also look for FILE's debug file here (recursive; repeatable; must exist).
          -h, --help        Show this help.

        EXIT STATUS: 0 written, 1 FILE unreadable or without a build id, or CACHE not writable, 2 usage error.
        """

    static func run(_ arguments: [String]) -> ExitStatus {
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments.parse(arguments, flags: [], options: ["-o", "--debug-dir"])
        } catch {
            return Console.usageError(error.reason, command: "debug-files cache")
        }
        guard parsed.positionals.count == 1, let file = parsed.positionals.first else {
            return Console.usageError("expected exactly one FILE", command: "debug-files cache")
        }
        guard let outputs = parsed.options["-o"], outputs.count == 1, let output = outputs.first else {
            return Console.usageError("missing -o CACHE", command: "debug-files cache")
        }
        let debugDirs = parsed.options["--debug-dir"] ?? []
        if let missing = DirectoryArguments.firstMissing(debugDirs) {
            return Console.usageError("--debug-dir \(missing): no such directory", command: "debug-files cache")
        }
        let bytes: [UInt8]
        do {
            bytes = try SymbolCacheWriter.make(codeFile: file, locator: .cli(searchPaths: debugDirs))
        } catch {
            Console.error("cohorly: \(error)")
            return .failure
        }
        if let problem = replace(output, with: bytes) {
            Console.error("cohorly: \(output): cannot write the cache (\(problem))")
            return .failure
        }
        return .success
    }

    /// Writes `bytes` to `path` through a temporary file beside it, renamed over it; the reason when that fails.
    private static func replace(_ path: String, with bytes: [UInt8]) -> String? {
        let temporary = path + ".tmp.\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { all in
                all.baseAddress.map { write(descriptor, $0 + written, all.count - written) } ?? -1
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                unlink(temporary)
                return reason
            }
            written += count
        }
        guard close(descriptor) == 0, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            return reason
        }
        return nil
    }
}
