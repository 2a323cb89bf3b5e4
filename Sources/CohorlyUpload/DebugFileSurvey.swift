import CohorlyCollectorAPI
import CohorlyDigests
import CohorlySymbols

/// The first half of every `debug-files upload`, whatever the destination: the ELF files under the paths
/// (``discover(_:)``), each read and given its kinds (``kinds(of:)``) or the reason it is of no use.
package enum DebugFileSurvey {
    /// A file found under the upload's paths, read and checked.
    package struct Surveyed {
        /// What is known so far: path, build id, kinds, and why it is skipped (status `skipped`, or `failed` for a
        /// named path that does not exist). Files with kinds are still to be decided by the destination.
        package var result: DebugFileResult
        /// The file's ELF facts, when it could be read.
        package var info: ObjectInfo?
    }

    /// The ELF files under `paths` (``discover(_:)``), each read and given its kinds (``kinds(of:)``) or the
    /// reason it is of no use. Named paths that failed come first, then the files in discovery order.
    package static func survey(_ paths: [String]) -> [Surveyed] {
        let found = discover(paths)
        var surveyed = found.skipped.map { Surveyed(result: $0, info: nil) }
        for (path, root) in found.files {
            var result = DebugFileResult(path: path, status: .skipped, root: root)
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

    /// What `path` should be stored as: a debug companion is `debuginfo`; a binary is `executable`, and also
    /// `debuginfo` when it has DWARF. Nil with a reason when it is of no use for symbolication.
    package static func kinds(of info: ObjectInfo) -> (kinds: [DebugFileKind], reason: String?) {
        if [.relocatable, .core, .other].contains(info.kind) { return ([], "\(info.kind.rawValue) file") }
        guard info.codeId != nil else { return ([], "no GNU build id") }
        if info.kind == .debugCompanion {
            return info.hasDebugInfo ? ([.debuginfo], nil) : ([], "debug file without debug info")
        }
        guard info.hasDebugInfo || info.hasSymtab || info.hasDynsym else {
            return ([], "neither debug info nor symbols")
        }
        return (info.hasDebugInfo ? [.executable, .debuginfo] : [.executable], nil)
    }

    /// The note on a binary without DWARF whose debug file is not in the run either: uploaded (its symbols still
    /// name functions), but a crash in it will have no file:line.
    package static let noDebugInfoWarning =
        "no DWARF debug info: crashes in it will have no file:line; upload the binary before it is stripped, or its"
        + " debug file (objcopy --only-keep-debug) with it"

    /// The reason of a skipped relocatable object (`.o`): listed as one summary line, not file by file.
    package static let relocatableReason = "relocatable file"

    /// SHA-256 and size of a file, read in 1 MiB pieces.
    package static func hash(_ path: String) throws(UploadFailure) -> (sha256: String, size: Int64) {
        let hash = Digest(.sha256)
        var size: Int64 = 0
        do {
            try RegularFile(path: path).forEachChunk { chunk in
                hash.update(chunk)
                size += Int64(chunk.count)
                return true
            }
        } catch {
            throw UploadFailure(description: error.description)
        }
        do {
            return (try hash.finalizeHex(), size)
        } catch {
            throw UploadFailure(description: error.description)
        }
    }
}
