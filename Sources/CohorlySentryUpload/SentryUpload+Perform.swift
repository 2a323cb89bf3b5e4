import CohorlyCompression
import CohorlySymbols
import CohorlyUpload
import Foundation

extension SentryUpload {
    /// One file on its way: its place in the run and its chunks.
    private struct Pending {
        var file: Int
        var debugFile: SentryDebugFile
        /// Chunks were sent for it, or the server was asked to assemble it (then `ok` means uploaded).
        var started = false
    }

    /// Survey, hash, ask, send what is missing, assemble and wait (at most `maxWait` seconds, first polling after
    /// `pollDelay` seconds, doubled up to 5 s).
    static func perform(_ api: SentryChunkAPI, paths: [String], maxWait: Double, pollDelay: Double) -> UploadRun {
        var run = UploadRun()
        let surveyed = DebugFileSurvey.survey(paths)
        let options: SentryChunkAPI.Options
        do {
            options = try api.options()
        } catch {
            run.files = surveyed.map(\.result)
            run.fatal = error.description
            for index in run.files.indices where !run.files[index].kinds.isEmpty {
                run.files[index].status = .failed
                run.files[index].reason = "not uploaded (the server's options could not be read)"
            }
            return run
        }
        var pending: [Pending] = []
        var byChecksum: [String: String] = [:]
        for entry in surveyed {
            var result = entry.result
            defer { run.files.append(result) }
            guard !result.kinds.isEmpty, let debugId = entry.info?.debugId else { continue }
            result.reason = "debug id \(debugId)"
            do {
                let file = try SentryDebugFile(path: result.path, debugId: debugId, chunkSize: options.chunkSize)
                result.size = file.size
                guard file.size <= options.maxFileSize else {
                    result.status = .failed
                    result.reason =
                        "\(file.size) bytes, over the server's maxFileSize of \(options.maxFileSize): upload its"
                        + " separate debug file (objcopy --only-keep-debug), or raise the server's limit"
                    continue
                }
                if let other = byChecksum[file.checksum] {
                    result.reason = "the same content as \(other)"
                    continue
                }
                byChecksum[file.checksum] = file.path
                result.status = .present
                pending.append(Pending(file: run.files.count, debugFile: file))
            } catch {
                result.status = .failed
                result.reason = error.description
            }
        }
        run.sendInBatches(
            pending, of: assembleBatch, file: \.file, notSent: "not uploaded (an earlier call was refused)"
        ) {
            upload(Array($0), api, options, maxWait: maxWait, pollDelay: pollDelay, &$1)
        }
        return run
    }

    /// One batch: assemble to learn what is missing, send it, assemble, poll. Returns a reason to stop the run
    /// (the server refused the token, organization or project).
    private static func upload(
        _ batch: [Pending], _ api: SentryChunkAPI, _ options: SentryChunkAPI.Options, maxWait: Double,
        pollDelay: Double, _ run: inout UploadRun
    ) -> String? {
        var waiting = batch
        func fail(_ entries: [Pending], _ reason: String) {
            for entry in entries {
                run.files[entry.file].status = .failed
                run.files[entry.file].reason = reason
            }
        }
        var states: [String: SentryChunkAPI.FileState]
        do {
            states = try api.assemble(waiting.map(\.debugFile))
        } catch {
            fail(waiting, error.description)
            return [401, 403, 404].contains(error.status ?? 0) ? error.description : nil
        }
        // What the server lacks, each chunk once (two files may share one).
        var missing: [(sha1: String, entry: Int, index: Int)] = []
        var seen: Set<String> = []
        for (position, entry) in waiting.enumerated() {
            guard let state = states[entry.debugFile.checksum], !state.missingChunks.isEmpty else { continue }
            waiting[position].started = true
            for sha1 in state.missingChunks where seen.insert(sha1).inserted {
                guard let index = entry.debugFile.chunks.firstIndex(of: sha1) else { continue }
                missing.append((sha1, position, index))
            }
        }
        var failed: Set<Int> = []
        var request: [(sha1: String, bytes: [UInt8], entry: Int)] = []
        var requestBytes = 0
        func flush() {
            guard !request.isEmpty else { return }
            defer {
                request = []
                requestBytes = 0
            }
            do {
                _ = try api.upload(request.map { ($0.sha1, $0.bytes) }, gzip: options.gzip, to: options.url)
                for chunk in request { run.files[waiting[chunk.entry].file].bytesSent += Int64(chunk.bytes.count) }
            } catch {
                for chunk in request where failed.insert(chunk.entry).inserted {
                    fail([waiting[chunk.entry]], error.description)
                }
            }
        }
        for chunk in missing where !failed.contains(chunk.entry) {
            do {
                var bytes = try waiting[chunk.entry].debugFile.chunk(chunk.index)
                if options.gzip { bytes = try bytes.withUnsafeBytes { try ZlibStream.gzip($0) } }
                if !request.isEmpty,
                    request.count >= options.chunksPerRequest || requestBytes + bytes.count > options.maxRequestSize
                {
                    flush()
                }
                request.append((chunk.sha1, bytes, chunk.entry))
                requestBytes += bytes.count
            } catch {
                if failed.insert(chunk.entry).inserted { fail([waiting[chunk.entry]], "\(error)") }
            }
        }
        flush()
        waiting = waiting.enumerated().filter { !failed.contains($0.offset) }.map(\.element)
        // Settle what is already decided, then ask again (which starts assembling what was sent) and poll.
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int64(maxWait * 1000))
        var delay = pollDelay
        var first = true
        while !waiting.isEmpty {
            if !first {
                do {
                    states = try api.assemble(waiting.map(\.debugFile))
                } catch {
                    fail(waiting, error.description)
                    return nil
                }
            }
            var still: [Pending] = []
            for var entry in waiting {
                let state = states[entry.debugFile.checksum]
                switch state?.state {
                case "ok":
                    if entry.started { run.files[entry.file].status = .uploaded }
                case "error":
                    fail([entry], "Sentry could not process it: \(TerminalText.fromServer(state?.detail ?? "error"))")
                case "not_found" where !first && !(state?.missingChunks.isEmpty ?? true):
                    fail(
                        [entry],
                        "the server still lacks \(state?.missingChunks.count ?? 0) chunks after the upload; upload again"
                    )
                case nil:
                    fail([entry], "the assemble answer does not name it")
                default:
                    entry.started = true
                    still.append(entry)
                }
            }
            waiting = still
            guard !waiting.isEmpty else { break }
            if !first {
                guard clock.now < deadline else {
                    for entry in waiting {
                        let state = states[entry.debugFile.checksum]?.state ?? "pending"
                        fail([entry], "still \(state) on the server after \(maxWait) s (--max-wait)")
                    }
                    break
                }
                api.sleep(delay)
                delay = min(delay * 2, 5)
            }
            first = false
        }
        return nil
    }
}
