import CohorlySymbols
import CohorlyUpload
import Foundation

/// PostHog error tracking as a `debug-files upload` destination: the files our own upload would take
/// (``DebugFileSurvey``: the same walk, checks and skip rules) that carry DWARF, packed as PostHog symbol sets
/// (``PostHogSymbolSet``) and sent through the symbol-set API (``PostHogSymbolSetAPI``), ten per batch as
/// posthog-cli does. A file with split DWARF is skipped with a warning (``UploadRun/warnings``).
package struct PostHogUpload: DebugFileUploadDestination {
    /// Sets per `bulk_start_upload` (posthog-cli's batch size).
    static let batchSize = 10
    /// PostHog's US cloud, used when no other host is given.
    package static let defaultHost = "https://us.posthog.com"

    /// The host, project, key and retries.
    package let api: PostHogSymbolSetAPI

    /// An upload through `api`.
    package init(api: PostHogSymbolSetAPI) { self.api = api }

    /// Survey, choose, pack, upload in batches.
    package func upload(_ paths: [String]) -> UploadRun { Self.perform(api, paths: paths) }

    /// One file that will be packed: its place in the run and its debug id.
    private struct Candidate {
        var file: Int
        var path: String
        var debugId: String
        var size: Int64
    }

    /// Survey, choose, pack, upload in batches; the warnings (split DWARF) go to the run's.
    static func perform(_ api: PostHogSymbolSetAPI, paths: [String]) -> UploadRun {
        var run = UploadRun()
        var byDebugId: [String: Candidate] = [:]
        var order: [String] = []
        for surveyed in DebugFileSurvey.survey(paths) {
            var result = surveyed.result
            defer { run.files.append(result) }
            guard let info = surveyed.info else { continue }
            if info.hasSplitDwarf || result.path.hasSuffix(".dwo") || result.path.hasSuffix(".dwp") {
                result.reason = "split DWARF (.dwo/.dwp): PostHog reads only DWARF held in the file itself"
                run.warnings.append("\(result.path): split DWARF is not supported by PostHog; skipped")
                continue
            }
            guard !result.kinds.isEmpty, let debugId = info.debugId else { continue }
            guard info.hasDebugInfo else {
                result.reason = "no debug info; PostHog symbolicates from DWARF"
                continue
            }
            let size = Self.size(of: result.path)
            result.size = size
            let candidate = Candidate(file: run.files.count, path: result.path, debugId: debugId, size: size)
            // Two files with one debug id (a binary and its debug file): the larger is kept, as posthog-cli does.
            if let other = byDebugId[debugId] {
                if size > other.size {
                    byDebugId[debugId] = candidate
                    run.files[other.file].reason = "debug id \(debugId) also in \(result.path), which is larger"
                } else {
                    result.reason = "debug id \(debugId) also in \(other.path), which is larger"
                }
                continue
            }
            byDebugId[debugId] = candidate
            order.append(debugId)
        }
        let candidates = order.compactMap { byDebugId[$0] }
        run.sendInBatches(
            candidates, of: batchSize, file: \.file, notSent: "not uploaded (an earlier batch was refused)"
        ) {
            upload($0, api, &$1)
        }
        return run
    }

    /// One batch: pack, announce, upload what PostHog lacks, finish. Returns a reason to stop the whole run
    /// (PostHog refused the key or the project).
    private static func upload(_ batch: ArraySlice<Candidate>, _ api: PostHogSymbolSetAPI, _ run: inout UploadRun)
        -> String?
    {
        var packed: [(candidate: Candidate, set: PostHogSymbolSet)] = []
        for candidate in batch {
            run.files[candidate.file].reason = "debug id \(candidate.debugId)"
            do {
                let set = try PostHogSymbolSet.pack(path: candidate.path)
                guard set.bytes.count <= PostHogSymbolSet.largestPacked else {
                    run.files[candidate.file].reason =
                        "packed to \(set.bytes.count) bytes, over PostHog's limit of 100 MiB"
                    continue
                }
                packed.append((candidate, set))
            } catch {
                run.files[candidate.file].status = .failed
                run.files[candidate.file].reason = error.description
            }
        }
        guard !packed.isEmpty else { return nil }
        let started: [String: PostHogSymbolSetAPI.Started]
        do {
            started = try api.start(
                packed.map { .init(chunkId: $0.candidate.debugId, contentHash: $0.set.contentHash) })
        } catch {
            for entry in packed {
                run.files[entry.candidate.file].status = .failed
                run.files[entry.candidate.file].reason = error.description
            }
            return error.status == 401 || error.status == 403 ? error.description : nil
        }
        var finished: [String: String] = [:]
        var sent: [(file: Int, symbolSetId: String)] = []
        for entry in packed {
            let file = entry.candidate.file
            guard let target = started[entry.candidate.debugId] else {
                // Absent from id_map: PostHog has this debug id with this content already.
                run.files[file].status = .present
                continue
            }
            do {
                try api.upload(entry.set.bytes, to: target)
                run.files[file].bytesSent += Int64(entry.set.bytes.count)
                finished[target.symbolSetId] = entry.set.contentHash
                sent.append((file, target.symbolSetId))
            } catch {
                run.files[file].status = .failed
                run.files[file].reason = error.description
            }
        }
        guard !finished.isEmpty else { return nil }
        do {
            try api.finish(finished)
            for entry in sent { run.files[entry.file].status = .uploaded }
        } catch {
            for entry in sent {
                run.files[entry.file].status = .failed
                run.files[entry.file].reason = "uploaded, but not attached: \(error.description)"
            }
        }
        return nil
    }

    private static func size(of path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }
}
