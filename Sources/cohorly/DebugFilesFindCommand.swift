import CohorlyCommandLine
import CohorlySymbols

/// `cohorly debug-files find ID… [--path DIR]… [--json]`.
enum DebugFilesFindCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["debug-files", "find"], summary: "Find the debug file and executable for code ids or debug ids.",
        positionals: CommandPositionals("ID…", count: 1...Int.max, missing: "missing ID"),
        about: """
            ID is a code_id (GNU build id in hex) or a debug_id (GUID). Looks in every --path (files, or
            directories searched recursively, including .build-id/xx/rest.debug layouts; the current directory
            when no --path is given), in /usr/lib/debug/.build-id, and (for code ids) on the debuginfod servers in
            DEBUGINFOD_URLS. A file is reported only when its own build id matches.
            """,
        options: [
            CommandOption(
                "--path", .directory("DIR"), "Search here instead of the current directory (repeatable; must exist).",
                repeatable: true),
            .flag("--json", "Print a JSON array (one object per ID)."),
        ],
        epilogue:
            "EXIT STATUS: 0 every ID was found, 1 some ID was not found, 2 usage error (including a malformed ID).")

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments) else { return .usage }
        var identifiers: [(String, DebugId.Identifier)] = []
        for text in parsed.positionals {
            guard let identifier = DebugId.parse(text) else {
                return spec.usageError("'\(text)' is neither a code_id (hex) nor a debug_id (GUID)")
            }
            identifiers.append((text, identifier))
        }
        let json = parsed.flags.contains("--json")
        let paths = parsed.options["--path"] ?? ["."]
        if let missing = DirectoryArguments.firstMissing(paths) {
            return spec.usageError("--path \(missing): no such directory")
        }
        let locator = DebugFileLocator.cli(searchPaths: paths)
        var status = ExitStatus.success
        var items: [JSON.Value] = []
        for (text, identifier) in identifiers {
            let found = locator.find(identifier)
            let debugFiles = found.filter { $0.info.hasDebugInfo }
            let executables = found.filter {
                $0.info.kind != .debugCompanion && $0.info.kind != .relocatable
            }
            if found.isEmpty { status = .failure }
            if json {
                func entry(_ item: DebugFileLocator.Found) -> JSON.Value {
                    ObjectInfoOutput.json(item.info, extra: [("source", .string(item.source.rawValue))])
                }
                items.append(
                    .object([
                        ("id", .string(text)),
                        ("found", .bool(!found.isEmpty)),
                        ("debug_files", .array(debugFiles.map(entry))),
                        ("executables", .array(executables.map(entry))),
                    ]))
                continue
            }
            var lines = [text]
            if let first = found.first {
                lines.append("  code_id:    " + (first.info.codeId ?? "none"))
                lines.append("  debug_id:   " + (first.info.debugId ?? "none"))
            }
            for item in debugFiles {
                lines.append("  debug file: \(item.path) (\(item.source.rawValue))")
            }
            for item in executables {
                lines.append("  executable: \(item.path) (\(item.source.rawValue))")
            }
            if found.isEmpty { lines.append("  not found") }
            Console.out(lines.joined(separator: "\n"))
        }
        if json { Console.out(JSON.render(.array(items))) }
        return status
    }
}
