import CohorlyDigests

#if canImport(Glibc)
    import Glibc
#endif

/// Finds the debug file (and the executable) for a GNU build id. A candidate is accepted only when its own
/// build id matches.
///
/// Search order for a module's debug file: the code file itself (when it carries DWARF), its
/// `.gnu_debuglink` target (next to it, in `.debug/`, under each debug root), `.build-id/xx/rest.debug` under
/// each search directory and debug root, every ELF file found recursively under the search paths, then the
/// debuginfod servers.
///
/// The recursive scan of the search paths runs once, on first need, and is kept. Not thread-safe: use one
/// locator per thread.
public final class DebugFileLocator {
    /// Files and directories given by the user (directories are searched recursively).
    public let searchPaths: [String]
    /// Global debug roots (default `/usr/lib/debug`), searched for `.build-id/` and debuglink paths.
    public let debugRoots: [String]
    /// The debuginfod client, or nil when no servers are configured.
    public let debuginfod: DebuginfodClient?
    /// Whether a module's own path (and the debuglink places next to it) may be opened. Default: every path (the
    /// machine that crashed). A collector symbolicating an ingested event, whose paths come from someone else,
    /// allows only paths in directories it trusts; the search paths and debug roots are read either way.
    public var mayOpenCodeFile: (String) -> Bool = { _ in true }
    /// Whether any other candidate (found under the search paths and debug roots, or a debuglink target) may be
    /// opened. Default: every one. A collector allows only files whose real path lies in a directory it trusts, so
    /// a symbolic link planted in a trusted directory cannot make it read a file elsewhere.
    public var mayOpenFile: (String) -> Bool = { _ in true }

    /// The symbol cache (``SymbolCacheWriter``) for a build id, when one is at hand:
    /// ``ModuleSymbolicator/open(codeFile:buildId:locator:)`` then answers from it rather than from the debug
    /// file's DWARF. None by default.
    public var symbolCache: ([UInt8]) -> String? = { _ in nil }

    private var scanned: [String: [String]]?

    /// Creates a locator. `debuginfod` defaults to a client for `DEBUGINFOD_URLS` (nil when unset).
    public init(
        searchPaths: [String] = [], debugRoots: [String] = ["/usr/lib/debug"],
        debuginfod: DebuginfodClient? = DebuginfodClient.fromEnvironment()
    ) {
        self.searchPaths = searchPaths
        self.debugRoots = debugRoots
        self.debuginfod = debuginfod
    }

    /// Where a file was found.
    public enum Source: String, Sendable {
        /// The given file itself.
        case itself = "file"
        /// A `.gnu_debuglink` target.
        case debugLink = "debuglink"
        /// A `.build-id/xx/rest.debug` path.
        case buildIdDirectory = "build-id"
        /// A recursive scan of the search paths.
        case searchPath = "search path"
        /// A debuginfod server (the file is in the client's cache).
        case debuginfod
    }

    /// A located file with its facts.
    public struct Found: Sendable {
        /// The path of the file.
        public var path: String
        /// Facts about it.
        public var info: ObjectInfo
        /// How it was found.
        public var source: Source
    }

    /// The file to symbolicate a module from: the first candidate with DWARF and the right build id, else the
    /// first with symbols. `codeFile` is the module's path as loaded (may not exist here).
    public func debugFile(buildId: [UInt8]?, codeFile: String?) -> Found? {
        var fallback: Found?
        var seen: Set<String> = []
        for candidate in candidates(buildId: buildId, codeFile: codeFile)
        where seen.insert(candidate.path).inserted {
            guard candidate.source == .itself || mayOpenFile(candidate.path),
                let info = try? ObjectInfo(path: candidate.path)
            else { continue }
            if let buildId, info.buildId != buildId { continue }
            // Without a build id, a debuglink target must match the CRC the binary recorded.
            if buildId == nil, let crc = candidate.crc, Self.crc32(ofFile: candidate.path) != crc { continue }
            let found = Found(path: candidate.path, info: info, source: candidate.source)
            if info.hasDebugInfo && !info.problems.contains(.zstdSections) { return found }
            if fallback == nil && (info.hasSymtab || info.hasDynsym) { fallback = found }
        }
        if let buildId, let debuginfod, let path = debuginfod.fetch(buildId: buildId, kind: .debuginfo),
            let info = try? ObjectInfo(path: path), info.buildId == buildId
        {
            return Found(path: path, info: info, source: .debuginfod)
        }
        return fallback
    }

    /// Every local file whose build id matches `identifier` (debug files and executables), then debuginfod's
    /// answers when nothing local has DWARF or nothing local has code.
    public func find(_ identifier: DebugId.Identifier) -> [Found] {
        var results: [Found] = []
        var seen: Set<String> = []
        func consider(_ path: String, _ source: Source) {
            guard seen.insert(path).inserted, source == .debuginfod || mayOpenFile(path),
                let info = try? ObjectInfo(path: path),
                let buildId = info.buildId,
                identifier.matches(buildId: buildId, littleEndian: info.littleEndian)
            else { return }
            results.append(Found(path: path, info: info, source: source))
        }
        if case .codeId(let hex) = identifier, let buildId = DebugId.bytes(fromHex: hex) {
            for path in buildIdPaths(buildId) { consider(path, .buildIdDirectory) }
        }
        if case .debugId(let guid) = identifier, let prefix = DebugId.codeIdPrefix(debugId: guid) {
            for path in buildIdPaths(codeIdPrefix: prefix) { consider(path, .buildIdDirectory) }
        }
        for paths in scan().values { for path in paths { consider(path, .searchPath) } }
        if case .codeId(let hex) = identifier, let buildId = DebugId.bytes(fromHex: hex), let debuginfod {
            if !results.contains(where: { $0.info.hasDebugInfo }),
                let path = debuginfod.fetch(buildId: buildId, kind: .debuginfo)
            {
                consider(path, .debuginfod)
            }
            if !results.contains(where: { $0.info.kind != .debugCompanion }),
                let path = debuginfod.fetch(buildId: buildId, kind: .executable)
            {
                consider(path, .debuginfod)
            }
        }
        return results
    }

    /// A place to look, with the CRC the binary's debuglink expects (checked when there is no build id).
    private typealias Candidate = (path: String, source: Source, crc: UInt32?)

    private func candidates(buildId: [UInt8]?, codeFile: String?) -> [Candidate] {
        var result: [Candidate] = []
        if let codeFile {
            result.append((codeFile, .itself, nil))
            if let info = try? ObjectInfo(path: codeFile), let link = info.debugLink {
                let directory = Paths.directory(of: codeFile)
                var places = [
                    Paths.join(directory, link.name), Paths.join(directory, ".debug/" + link.name),
                ]
                places += debugRoots.map { Paths.join(root: $0, directory, link.name) }
                places += searchPaths.map { Paths.join($0, link.name) }
                result += places.map { ($0, .debugLink, link.crc) }
            }
        }
        if let buildId {
            result += buildIdPaths(buildId).map { ($0, .buildIdDirectory, nil) }
            result += (scan()[DebugId.codeId(buildId)] ?? []).map { ($0, .searchPath, nil) }
        }
        return result
    }

    /// `ROOT/.build-id/xx/rest.debug` (and the executable `ROOT/.build-id/xx/rest`) for every root.
    private func buildIdPaths(_ buildId: [UInt8]) -> [String] {
        guard buildId.count >= 2 else { return [] }
        let hex = DebugId.codeId(buildId)
        let head = String(hex.prefix(2))
        let rest = String(hex.dropFirst(2))
        var result: [String] = []
        for root in searchPaths + debugRoots {
            for base in [Paths.join(root, ".build-id"), root] {
                result.append(Paths.join(base, "\(head)/\(rest).debug"))
                result.append(Paths.join(base, "\(head)/\(rest)"))
            }
        }
        return result.filter { Paths.exists($0) }
    }

    /// The files under `ROOT/.build-id/xx/` (and `ROOT/xx/`) of every root whose name starts with the rest of
    /// `codeIdPrefix` (hex): a debug id names only the first 16 bytes of a build id.
    private func buildIdPaths(codeIdPrefix: String) -> [String] {
        guard codeIdPrefix.count > 2 else { return [] }
        let head = String(codeIdPrefix.prefix(2))
        let rest = String(codeIdPrefix.dropFirst(2))
        var result: [String] = []
        for root in searchPaths + debugRoots {
            for base in [Paths.join(root, ".build-id"), root] {
                let directory = Paths.join(base, head)
                for name in Paths.names(in: directory) where name.hasPrefix(rest) {
                    result.append(Paths.join(directory, name))
                }
            }
        }
        return result.filter { Paths.exists($0) }
    }

    /// Build id (hex) → ELF files under the search paths, scanned once.
    private func scan() -> [String: [String]] {
        if let scanned { return scanned }
        var map: [String: [String]] = [:]
        var visited: Set<String> = []
        for path in searchPaths {
            Paths.walk(path, visited: &visited) { file in
                guard mayOpenFile(file), let info = try? ObjectInfo(path: file), let id = info.codeId else { return }
                map[id, default: []].append(file)
            }
        }
        scanned = map
        return map
    }
}

extension DebugFileLocator {
    /// The CRC-32 of a whole file (a `.gnu_debuglink` check), or nil when it cannot be read.
    static func crc32(ofFile path: String) -> UInt32? {
        guard let file = try? RegularFile(path: path) else { return nil }
        var crc: UInt32 = 0
        do {
            try file.forEachChunk(size: 1 << 16) { chunk in
                crc = CRC32.update(crc, chunk)
                return true
            }
        } catch {
            return nil
        }
        return crc
    }
}
