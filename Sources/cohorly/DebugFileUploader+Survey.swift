import CohorlySymbols

extension DebugFileUploader {
    /// A file found under the upload's paths, read and checked.
    struct Surveyed {
        /// What is known so far: path, build id, kinds, and why it is skipped (status `skipped`, or `failed` for a
        /// named path that does not exist). Files with kinds are still to be decided by the destination.
        var result: FileResult
        /// The file's ELF facts, when it could be read.
        var info: ObjectInfo?
    }

    /// The first half of every `debug-files upload`, whatever the destination: the ELF files under `paths`
    /// (``discover(_:)``), each read and given its kinds (``kinds(of:)``) or the reason it is of no use.
    /// Named paths that failed come first, then the files in discovery order.
    static func survey(_ paths: [String]) -> [Surveyed] {
        let found = discover(paths)
        var surveyed = found.skipped.map { Surveyed(result: $0, info: nil) }
        for (path, root) in found.files {
            var result = FileResult(path: path, status: .skipped, root: root)
            let info: ObjectInfo
            do {
                info = try ObjectInfo(path: path)
            } catch {
                // A malformed ELF file is of no use to a symbolicator either: skipped, with the reason. One that
                // cannot be read (an I/O error, no permission) is a failure: it may well be the debug file needed.
                if case .cannotOpen = error { result.status = .failed }
                result.reason = "\(error)"
                surveyed.append(Surveyed(result: result, info: nil))
                continue
            }
            result.buildId = info.codeId
            (result.kinds, result.reason) = kinds(of: info)
            surveyed.append(Surveyed(result: result, info: info))
        }
        return surveyed
    }
}
