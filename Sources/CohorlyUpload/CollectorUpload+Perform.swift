import Foundation

extension CollectorUpload {
    /// Discover, read, check, upload: the files under `paths` the collector lacks (only found, checked and hashed
    /// with ``dryRun``), each kind on its own, with the symbol caches when ``includeCache`` is set.
    package func upload(_ paths: [String]) -> UploadRun {
        var run = UploadRun()
        run.dryRun = dryRun
        var items: [(file: Int, item: Item)] = []
        // --include-cache: one symbol cache per build with DWARF (CollectorUpload+Cache.swift).
        let caches = includeCache && !dryRun ? try? Self.makeCacheDirectory() : nil
        defer { caches.map(Self.removeCaches) }
        var cachedBuilds: Set<String> = []
        let surveyed = DebugFileSurvey.survey(paths)
        let withDebugInfo = Set(surveyed.compactMap { $0.result.kinds.contains(.debuginfo) ? $0.result.buildId : nil })
        for surveyed in surveyed {
            var result = surveyed.result
            if result.kinds == [.executable], let buildId = result.buildId, !withDebugInfo.contains(buildId) {
                result.reason = DebugFileSurvey.noDebugInfoWarning
            }
            defer { run.files.append(result) }
            let path = result.path
            guard let buildId = surveyed.info?.codeId, !result.kinds.isEmpty else { continue }
            do {
                let (sha, size) = try DebugFileSurvey.hash(path)
                result.size = size
                result.status = .present
                for kind in result.kinds {
                    items.append(
                        (run.files.count, .init(path: path, kind: kind, buildId: buildId, sha256: sha, size: size)))
                }
                if let caches, result.kinds.contains(.debuginfo), cachedBuilds.insert(buildId).inserted {
                    do {
                        let cache = try Self.writeCache(of: path, buildId: buildId, into: caches)
                        let (cacheSHA, cacheSize) = try DebugFileSurvey.hash(cache)
                        items.append(
                            (
                                run.files.count,
                                .init(path: cache, kind: .symcache, buildId: buildId, sha256: cacheSHA, size: cacheSize)
                            ))
                    } catch {
                        result.reason = "\(error)"  // the files still go; the collector makes the cache itself
                    }
                }
            } catch {
                result.status = .failed
                result.reason = "\(error)"
            }
        }
        if dryRun {
            for index in Set(items.map(\.file)) where run.files[index].status != .failed {
                run.files[index].status = .wouldUpload
            }
            run.warnings = Self.warnings(run.files)
            return run
        }
        let lacking: [Item]
        do {
            lacking = try missing(items.map(\.item))
        } catch {
            run.fatal = "\(error)"
            for index in Set(items.map(\.file)) {
                run.files[index].status = .failed
                run.files[index].reason = "not uploaded (the check failed)"
            }
            run.warnings = Self.warnings(run.files)
            return run
        }
        func key(_ item: Item) -> String {
            item.buildId + "/" + item.kind.rawValue + "/" + item.sha256
        }
        let missingKeys = Set(lacking.map(key))
        var sentContent: Set<String> = []
        var recheck: [(file: Int, item: Item)] = []
        // Each kind is sent on its own: when one half of an unstripped binary is refused (its executable is
        // stored with other bytes, a stripped copy uploaded by mistake), the other half is still stored.
        var failures: [Int: [String]] = [:]
        for (index, item) in items where missingKeys.contains(key(item)) {
            // The same bytes under a second kind (an unstripped binary): the collector finds them by hash.
            if sentContent.contains(item.sha256) {
                recheck.append((index, item))
                continue
            }
            let (sent, error) = upload(item)
            run.files[index].bytesSent += sent
            if let error {
                failures[index, default: []].append("\(item.kind.rawValue): \(error)")
            } else {
                run.files[index].status = .uploaded
                sentContent.insert(item.sha256)
            }
        }
        if !recheck.isEmpty {
            let stillMissing = (try? self.missing(recheck.map(\.item))).map { Set($0.map(key)) }
            for (index, item) in recheck where stillMissing?.contains(key(item)) ?? true {
                failures[index, default: []].append(
                    "\(item.kind.rawValue): the collector did not accept the uploaded content")
            }
        }
        for (index, reasons) in failures {
            run.files[index].status = .failed
            run.files[index].reason = reasons.joined(separator: "; ")
        }
        run.warnings = Self.warnings(run.files)
        return run
    }

    /// A binary without DWARF whose debug file is not in the run either (``DebugFileSurvey/noDebugInfoWarning``),
    /// unless it failed: `PATH: the warning`.
    static func warnings(_ files: [DebugFileResult]) -> [String] {
        files.filter { $0.status != .failed && $0.reason == DebugFileSurvey.noDebugInfoWarning }.map {
            "\($0.path): \(DebugFileSurvey.noDebugInfoWarning)"
        }
    }
}
