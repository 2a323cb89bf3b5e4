import CohorlyCommandLine

extension UploadRun {
    /// The reason of a skipped relocatable object (`.o`): listed as one summary line, not file by file.
    static let relocatableReason = "relocatable file"

    /// Prints the run (the JSON summary, or one line per file with the `.o` files summed up, then the totals),
    /// says on stderr which named PATHs gave nothing to upload, and returns the exit status: failure when a file
    /// failed or, unless `allowEmpty`, a PATH held nothing usable (a CI pipeline that would ship without symbols).
    func finish(paths: [String], json: Bool, allowEmpty: Bool) -> ExitStatus {
        let empty = emptyPaths(paths)
        if !allowEmpty {
            for path in empty {
                let looked = files.filter { $0.root == paths.firstIndex(of: path) }
                let notELF = looked.filter { $0.reason == DebugFileUploader.notELFReason }.count
                let elf = looked.count - notELF
                var found = ["\(elf) ELF file\(elf == 1 ? "" : "s") skipped"]
                if notELF > 0 { found.append("\(notELF) file\(notELF == 1 ? "" : "s") not ELF") }
                Console.error(
                    "cohorly: nothing to upload under \(path): no ELF file with a GNU build id and debug info or"
                        + " symbols (\(found.joined(separator: ", "))); check the path (a build"
                        + " directory, not its parent?), or pass --allow-empty")
            }
        }
        if json {
            Console.out(JSON.render(self.json))
        } else {
            let relocatable = files.filter { $0.status == .skipped && $0.reason == Self.relocatableReason }
            for file in files where !(file.status == .skipped && file.reason == Self.relocatableReason) {
                Console.out(line(file))
            }
            if !relocatable.isEmpty {
                let count = relocatable.count
                Console.out(
                    "  " + "skipped".padded(to: 16) + "\(count) relocatable object file\(count == 1 ? "" : "s")"
                        + " (.o: not linked, nothing to symbolicate; upload the linked binaries)")
            }
            Console.out(summary)
        }
        return succeeded && (allowEmpty || empty.isEmpty) ? .success : .failure
    }

    /// The named PATHs (that exist) under which every file was skipped: nothing was, or would be, uploaded.
    func emptyPaths(_ paths: [String]) -> [String] {
        paths.indices.filter { root in
            !files.contains { $0.root == root && $0.status != .skipped }
        }.map { paths[$0] }
    }
}
