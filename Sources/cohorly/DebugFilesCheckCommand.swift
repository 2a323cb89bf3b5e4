import CohorlyCommandLine
import CohorlySymbols

/// `cohorly debug-files check PATH… [--json]`.
enum DebugFilesCheckCommand: DeclaredCommand {
    static let spec = CommandSpec(
        words: ["debug-files", "check"], summary: "Show kind, arch, ids, features and problems of ELF files.",
        positionals: CommandPositionals("PATH…", count: 1...Int.max, missing: "missing PATH", areFiles: true),
        about: """
            For each ELF file: kind (executable, library, debug companion, relocatable), architecture, code_id (the
            GNU build id), debug_id (its first 16 bytes as a GUID), features (symtab, debug, unwind), the
            .gnu_debuglink target, compressed debug sections, and problems (no build id, no debug info, debug file
            without unwind info, zstd sections, split DWARF). A file that cannot be read gets a one-line error;
            the other files are still checked. With several files, a last line sums them up
            (`3 files checked: 1 usable, 1 with problems, 1 unreadable`).
            """,
        options: [.flag("--json", "Print a JSON array (one object per PATH; failures have an \"error\" key).")],
        epilogue: "EXIT STATUS: 0 every file was read, 1 some file could not be read, 2 usage error.")

    static func run(_ arguments: [String]) -> ExitStatus {
        guard let parsed = spec.parseOrReport(arguments) else { return .usage }
        let json = parsed.flags.contains("--json")
        var status = ExitStatus.success
        // Files are read, and their output made, on every core; it is printed in the order given.
        let results = Parallel.map(parsed.positionals) { path -> (output: [UInt8], error: String?, usable: Bool) in
            do throws(SymbolsError) {
                let info = try ObjectInfo(path: path)
                return json
                    ? (JSON.bytes(ObjectInfoOutput.json(info)), nil, info.problems.isEmpty)
                    : (Array((ObjectInfoOutput.text(info) + "\n").utf8), nil, info.problems.isEmpty)
            } catch {
                let item = JSON.Value.object([("path", .string(path)), ("error", .string(error.description))])
                return (json ? JSON.bytes(item) : [], "cohorly: \(error)", false)
            }
        }
        var output = ByteOutput()
        if json { output.append("[") }
        for (index, result) in results.enumerated() {
            if let error = result.error {
                status = .failure
                output.flush()
                Console.error(error)
            }
            if json && index > 0 { output.append(",") }
            result.output.withUnsafeBufferPointer { output.append($0) }
        }
        if json { output.append("]\n") }
        output.flush()
        if !json && results.count > 1 {
            let unreadable = results.filter { $0.error != nil }.count
            let usable = results.filter(\.usable).count
            Console.out(
                "\(results.count) files checked: \(usable) usable, \(results.count - usable - unreadable) with problems, "
                    + "\(unreadable) unreadable")
        }
        return status
    }
}

/// Text and JSON renderings of ``ObjectInfo`` (shared by `check` and `find`).
enum ObjectInfoOutput {
    static func text(_ info: ObjectInfo, indent: String = "") -> String {
        var lines = [info.path]
        func add(_ label: String, _ value: String) {
            lines.append(indent + "  " + (label + ":").padded(to: 12) + value)
        }
        add("kind", info.kind.rawValue)
        add("arch", info.arch)
        add("code_id", info.codeId ?? "none")
        add("debug_id", info.debugId ?? "none")
        add("features", info.features.isEmpty ? "none" : info.features.joined(separator: ", "))
        if let link = info.debugLink {
            add("debuglink", "\(link.name) (crc 0x\(String(link.crc, radix: 16)))")
        }
        if !info.compressedSections.isEmpty {
            let sections = info.compressedSections.sorted { $0.key < $1.key }.map {
                "\($0.key) (\($0.value.rawValue))"
            }
            add("compressed", sections.joined(separator: ", "))
        }
        let problems = info.problems
        add("usable", problems.isEmpty ? "yes" : "with problems")
        for problem in problems { lines.append(indent + "    - " + problem.rawValue) }
        return lines.joined(separator: "\n")
    }

    static func json(_ info: ObjectInfo, extra: [(String, JSON.Value)] = []) -> JSON.Value {
        var pairs: [(String, JSON.Value)] = [
            ("path", .string(info.path)),
            ("kind", .string(info.kind.rawValue)),
            ("arch", .string(info.arch)),
            ("code_id", JSON.string(info.codeId)),
            ("debug_id", JSON.string(info.debugId)),
            ("features", .array(info.features.map(JSON.Value.string))),
        ]
        if let link = info.debugLink {
            pairs.append(
                ("debug_link", .object([("name", .string(link.name)), ("crc", .int(Int(link.crc)))])))
        }
        pairs.append(
            (
                "compressed_sections",
                .object(
                    info.compressedSections.sorted { $0.key < $1.key }.map {
                        ($0.key, .string($0.value.rawValue))
                    })
            ))
        pairs.append(("problems", .array(info.problems.map { .string($0.rawValue) })))
        return .object(pairs + extra)
    }
}

extension String {
    func padded(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
