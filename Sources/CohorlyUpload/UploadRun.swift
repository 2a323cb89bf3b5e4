import CohorlyCollectorAPI

/// A file found under the upload's paths and what became of it.
package struct DebugFileResult: Sendable {
    /// What became of a file.
    package enum Status: String, Sendable {
        case uploaded
        case present = "already present"
        case skipped
        case failed
        /// `--dry-run`: found, checked and hashed, but the collector was not asked.
        case wouldUpload = "would upload"
    }
    /// The path as found (under a named PATH, or the PATH itself).
    package var path: String
    package var status: Status
    /// The GNU build id, when the file has one.
    package var buildId: String?
    /// What it is stored as (our collector's kinds; a vendor destination takes the same files).
    package var kinds: [DebugFileKind] = []
    /// Its size in bytes, once read.
    package var size: Int64 = 0
    /// The bytes sent for it over every attempt (compressed where the wire compresses).
    package var bytesSent: Int64 = 0
    /// Why it was skipped or failed, or a note on it (its debug id, a warning).
    package var reason: String?
    /// Which of the named PATHs it was found under (its index).
    package var root = 0

    /// A file at `path` with `status`.
    package init(path: String, status: Status, buildId: String? = nil, reason: String? = nil, root: Int = 0) {
        self.path = path
        self.status = status
        self.buildId = buildId
        self.reason = reason
        self.root = root
    }
}

/// The outcome of one upload run: what happened to each file, and the totals. Destinations return it; the CLI
/// prints it.
package struct UploadRun: Sendable {
    /// Every file found, in discovery order (named paths that failed first).
    package var files: [DebugFileResult] = []
    /// Why the whole run stopped (the destination could not be reached, or refused the credentials).
    package var fatal: String?
    /// Notes for the person running the upload that are not a file's failure (a file the destination cannot
    /// read), in the order they arose.
    package var warnings: [String] = []
    /// Whether this was a `--dry-run` (nothing sent).
    package var dryRun = false

    /// An empty run.
    package init() {}

    /// How many files ended in each state.
    package var count: (uploaded: Int, present: Int, skipped: Int, failed: Int, wouldUpload: Int) {
        (
            files.filter { $0.status == .uploaded }.count, files.filter { $0.status == .present }.count,
            files.filter { $0.status == .skipped }.count, files.filter { $0.status == .failed }.count,
            files.filter { $0.status == .wouldUpload }.count
        )
    }

    /// The bytes sent over every file.
    package var bytesSent: Int64 { files.reduce(0) { $0 + $1.bytesSent } }

    /// No file failed and nothing stopped the run.
    package var succeeded: Bool { fatal == nil && count.failed == 0 }

    /// Sends `items` in batches of at most `size` through `send`, which returns a reason to stop the whole run (nil:
    /// go on). At the first such reason the run is ``fatal`` and each later item's file (`file(item)`, its index in
    /// ``files``) has failed with `notSent`; no later batch is sent.
    package mutating func sendInBatches<Item>(
        _ items: [Item], of size: Int, file: (Item) -> Int, notSent: String,
        _ send: (ArraySlice<Item>, inout UploadRun) -> String?
    ) {
        let size = max(1, size)
        for start in stride(from: 0, to: items.count, by: size) {
            let batch = items[start..<min(start + size, items.count)]
            guard let fatal = send(batch, &self) else { continue }
            self.fatal = fatal
            for later in items[batch.endIndex...] {
                files[file(later)].status = .failed
                files[file(later)].reason = notSent
            }
            return
        }
    }

    /// The named PATHs (that exist) under which every file was skipped: nothing was, or would be, uploaded.
    package func emptyPaths(_ paths: [String]) -> [String] {
        paths.indices.filter { root in
            !files.contains { $0.root == root && $0.status != .skipped }
        }.map { paths[$0] }
    }
}

/// An upload's failure, said in one line: the file (or server), the problem and, where there is one, the fix.
package struct UploadFailure: Error, CustomStringConvertible {
    package let description: String

    /// A failure said as `description`.
    package init(description: String) { self.description = description }
}
