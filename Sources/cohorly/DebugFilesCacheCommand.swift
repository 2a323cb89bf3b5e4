import CohorlyCommandLine
import CohorlySymbols

#if canImport(Glibc)
    import Glibc
#endif

/// `cohorly debug-files cache FILE -o CACHE [--debug-dir DIR]…`.
enum DebugFilesCacheCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["debug-files", "cache"],
        summary: "Write a symbol cache of an ELF file (what `symbolicate --exe --cache` reads).",
        positionals: CommandPositionals(
            "FILE", count: 1...1, missing: "expected exactly one FILE", tooMany: "expected exactly one FILE",
            areFiles: true),
        about: """
            Writes the symbol cache of FILE (an executable or library; its debug file is found as `symbolicate` finds
            it): a compact, versioned file keyed by FILE's GNU build id holding every answer `symbolicate --exe`
            gives — functions, inline chains, file:line:column, names stored demangled (full and simplified) with
            thunks and `Swift runtime failure:` frames flagged. `cohorly symbolicate --exe FILE --cache CACHE` reads
            it in place (mapped) and gives the same answers. Format: docs/symbol-cache.md.
            """,
        options: [
            CommandOption(
                "-o", .file("CACHE"), "Where to write the cache, replaced whole: written beside it, then renamed.",
                required: true),
            CommandOption(
                "--debug-dir", .directory("DIR"),
                "Also look for FILE's debug file here (recursive; repeatable; must exist).", repeatable: true),
        ],
        epilogue:
            "EXIT STATUS: 0 written, 1 FILE unreadable or without a build id, or CACHE not writable, 2 usage error.")

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments) else { return .usage }
        // The table has checked both: one FILE, and `-o` (required).
        guard let file = parsed.positionals.first, let output = parsed.options["-o"]?.last else { return .usage }
        let debugDirs = parsed.options["--debug-dir"] ?? []
        if let missing = DirectoryArguments.firstMissing(debugDirs) {
            return spec.usageError("--debug-dir \(missing): no such directory")
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
