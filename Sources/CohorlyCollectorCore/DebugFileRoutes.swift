import Foundation

// The debug-file endpoints (ours: Cohorly publishes none; documented in docs/collector.md):
//
//   POST /api/debug-files/check              {"release":R,"files":[{build_id,kind,sha256}]} -> missing / present
//   PUT  /api/debug-files/<build_id>/<kind>?release=R&name=FILE   body streamed to disk, verified, stored
//   GET  /api/debug-files                    what is stored
//   GET  /buildid/<build_id>/debuginfo       debuginfod: the file, streamed (404 when unknown)
//   GET  /buildid/<build_id>/executable
//
// `/api/*` needs `Authorization: Bearer <adminToken>` when the collector has one (Router+Policy.swift); the
// debuginfod reads are open.

/// Headers of an upload.
enum DebugFileHeader {
    /// SHA-256 (hex) of the uncompressed file; when present the collector checks it.
    static let sha256 = "X-Cohorly-Content-SHA256"
    /// Size in bytes of the uncompressed file; when present the collector checks it, and stops the upload as soon
    /// as the body passes it.
    static let size = "X-Cohorly-Content-Size"
    /// `1`: replace a stored file of this build id and kind that has other bytes (`cohorly debug-files upload
    /// --force`; with the collector's secret when it has one, as every upload). Also `?force=1`.
    static let replace = "X-Cohorly-Replace"
}

extension Router {
    /// Claims the upload route before its body arrives, so the body streams to disk instead of memory.
    func stream(_ request: HTTPRequest) -> (any RequestBodySink)? {
        if let sink = wireBodySink(request) { return sink }  // a wire's streamed upload (IngestionWire.swift)
        guard request.method == "PUT", request.path.hasPrefix("/api/debug-files/") else { return nil }
        let parts = request.path.dropFirst("/api/debug-files/".count).split(
            separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let buildId = DebugFileStore.normalizedBuildId(String(parts[0])) else {
            return RejectedUpload(.error(404, "expected PUT /api/debug-files/<build id hex>/<debuginfo|executable>"))
        }
        guard let kind = DebugFileKind(rawValue: String(parts[1])) else {
            return RejectedUpload(.error(404, "unknown kind '\(parts[1])' (expected debuginfo or executable)"))
        }
        if faults.pending.contains(where: { $0.path == request.path }), let fault = faults.next(for: request.path) {
            if fault.delay > 0 { faults.delay(fault.delay) }
            return RejectedUpload(fault.dropConnection ? nil : .error(fault.status ?? 503, "injected fault"))
        }
        do {
            // Replacing a stored file with other bytes needs an explicit force (and, like every upload, the secret
            // when the collector has one). A collector without a secret lets every local user upload and read
            // anyway: refusing them --force too only left a stripped binary uploaded by mistake in place until a
            // restart (docs/collector.md, "What the collector refuses").
            let force = request.header(DebugFileHeader.replace) == "1" || request.query["force"] == "1"
            let upload = try DebugFileUpload(
                store: debugFiles, buildId: buildId, kind: kind, request: request,
                limits: .init(
                    maxBytes: configuration.maxUploadBytes, mayReplace: force,
                    reserve: configuration.diskReserveBytes))
            return RegroupingUpload(upload, buildId: buildId, store: store)  // IssueRegrouping.swift
        } catch {
            return RejectedUpload(.error(error.status, error.description))
        }
    }

    /// `GET|HEAD /buildid/<id>/debuginfo|executable` (the other debuginfod paths answer 404).
    func debuginfod(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == "GET" || request.method == "HEAD" else {
            return .error(405, "debuginfod is read-only")
        }
        let parts = request.path.dropFirst("/buildid/".count).split(separator: "/")
        guard parts.count == 2, let buildId = DebugFileStore.normalizedBuildId(String(parts[0])),
            let kind = DebugFileKind(rawValue: String(parts[1]))
        else {
            return .error(404, "not found (this server has /buildid/<id>/debuginfo and /executable)")
        }
        guard let url = debugFiles.debugFile(buildId: buildId, kind: kind) else {
            return .error(404, "no \(kind.rawValue) for build id \(buildId)")
        }
        return .file(url.path, headers: [("X-DEBUGINFOD-FILE", url.lastPathComponent)])
    }

    /// `POST /api/debug-files/check`: which of the listed files the collector lacks. Files it has are attached
    /// to the release at once, so they never need to be sent again.
    func checkDebugFiles(_ request: HTTPRequest) -> HTTPResponse {
        let usage = #"expected {"release":"R","files":[{"build_id":"hex","kind":"debuginfo","sha256":"hex"}]}"#
        guard let json = JSONValue(bytes: request.body), let files = json["files"]?.arrayValue else {
            return .error(400, usage)
        }
        let release = json["release"]?.stringValue ?? ""
        var missing: [JSONValue] = []
        var present: [JSONValue] = []
        for file in files {
            guard let buildId = file["build_id"]?.stringValue.flatMap(DebugFileStore.normalizedBuildId),
                let kind = file["kind"]?.stringValue.flatMap(DebugFileKind.init(rawValue:)),
                let sha = file["sha256"]?.stringValue.flatMap(DebugFileStore.normalizedSHA256)
            else {
                return .error(400, usage)
            }
            let entry: JSONValue = [
                "build_id": .string(buildId), "kind": .string(kind.rawValue), "sha256": .string(sha),
            ]
            do {
                let stored = try debugFiles.checkAndAttach(buildId: buildId, kind: kind, sha256: sha, release: release)
                if stored { present.append(entry) } else { missing.append(entry) }
            } catch {
                return .error(500, "storage error: \(error)")
            }
        }
        return .json(200, ["status": 1, "missing": .array(missing), "present": .array(present)])
    }

    /// `GET /api/debug-files`: every stored (build id, kind) and the upload counters.
    func listDebugFiles() -> HTTPResponse {
        do {
            let files: [JSONValue] = try debugFiles.list().map { file in
                [
                    "build_id": .string(file.buildId), "kind": .string(file.kind.rawValue),
                    "sha256": .string(file.sha256), "size": .int(Int(file.size)),
                    "releases": .array(file.releases.map(JSONValue.string)), "file_name": .string(file.fileName),
                    "uploaded_at": .int(Int(file.uploadedAt)),
                ]
            }
            let statistics = debugFiles.statistics
            return .json(
                200,
                [
                    "debug_files": .array(files), "count": .int(files.count),
                    "uploads_stored": .int(statistics.uploadsStored),
                    "uploads_refused": .int(statistics.uploadsRefused),
                    "bytes_received": .int(Int(statistics.bytesReceived)),
                ])
        } catch {
            return .error(500, "storage error: \(error)")
        }
    }
}
