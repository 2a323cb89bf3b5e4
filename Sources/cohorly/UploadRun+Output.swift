import CohorlyCommandLine
import CohorlyUpload

/// How `debug-files upload` prints a run, whatever its destination: one line per file, the totals, or JSON.
extension UploadRun {
    /// `N uploaded (X bytes sent), M already present, K skipped[, F failed]`.
    var summary: String {
        let count = self.count
        if dryRun {
            return "dry run: \(count.wouldUpload) would be uploaded (if the collector lacks them), "
                + "\(count.skipped) skipped; nothing was sent"
        }
        var text =
            "\(count.uploaded) uploaded (\(bytesSent) bytes sent), \(count.present) already present, "
            + "\(count.skipped) skipped"
        if count.failed > 0 { text += ", \(count.failed) failed" }
        return text
    }

    /// `  STATUS  KINDS  BUILD-ID  PATH (reason)`.
    func line(_ file: DebugFileResult) -> String {
        let kinds = file.kinds.map(\.rawValue).joined(separator: "+")
        var text = "  " + file.status.rawValue.padded(to: 16) + (kinds.isEmpty ? "-" : kinds).padded(to: 21)
        text += (file.buildId ?? "-").padded(to: 42) + file.path
        if let reason = file.reason, file.status != .failed { text += " (\(reason))" }
        return text
    }

    /// The `--json` summary: the counts, the bytes sent, one object per file, and the error that stopped the run.
    var json: JSON.Value {
        let count = self.count
        let list: [JSON.Value] = files.map { file in
            var pairs: [(String, JSON.Value)] = [
                ("path", .string(file.path)), ("status", .string(file.status.rawValue)),
                ("build_id", JSON.string(file.buildId)), ("kinds", .array(file.kinds.map { .string($0.rawValue) })),
                ("size", .int(Int(file.size))), ("bytes_sent", .int(Int(file.bytesSent))),
            ]
            if let reason = file.reason { pairs.append(("reason", .string(reason))) }
            return .object(pairs)
        }
        var pairs: [(String, JSON.Value)] = [
            ("uploaded", .int(count.uploaded)), ("already_present", .int(count.present)),
            ("skipped", .int(count.skipped)), ("failed", .int(count.failed)), ("bytes_sent", .int(Int(bytesSent))),
            ("dry_run", .bool(dryRun)), ("would_upload", .int(count.wouldUpload)),
            ("files", .array(list)),
        ]
        if let fatal { pairs.append(("error", .string(fatal))) }
        return .object(pairs)
    }

    /// Prints the run (the JSON summary, or one line per file with the `.o` files summed up, then the totals),
    /// says on stderr which named PATHs gave nothing to upload, and returns the exit status: failure when a file
    /// failed or, unless `allowEmpty`, a PATH held nothing usable (a CI pipeline that would ship without symbols).
    func finish(paths: [String], json: Bool, allowEmpty: Bool) -> ExitStatus {
        let empty = emptyPaths(paths)
        if !allowEmpty {
            for path in empty {
                let looked = files.filter { $0.root == paths.firstIndex(of: path) }
                let notELF = looked.filter { $0.reason == DebugFileSurvey.notELFReason }.count
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
            let relocatable = files.filter { $0.status == .skipped && $0.reason == DebugFileSurvey.relocatableReason }
            for file in files where !(file.status == .skipped && file.reason == DebugFileSurvey.relocatableReason) {
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
}
