extension ModuleSymbolicator {
    /// Opens the best debug file for a module found by `locator`: the code file itself when it has DWARF,
    /// else a matching debug file (debuglink, `.build-id`, search paths, debuginfod), else the code file's
    /// own symbol table. `buildId` defaults to the code file's; every file used must carry it. Throws when
    /// nothing usable is found (or only files with another build id are).
    /// A `codeFile` the locator may not open (`mayOpenCodeFile`) is never read.
    public static func open(codeFile: String?, buildId: [UInt8]?, locator: DebugFileLocator)
        throws(SymbolsError)
        -> ModuleSymbolicator
    {
        let codeFile = codeFile.flatMap { locator.mayOpenCodeFile($0) ? $0 : nil }
        var id = buildId
        var codeError: SymbolsError?
        if let codeFile, id == nil {
            do {
                id = try ObjectInfo(path: codeFile).buildId
            } catch {
                codeError = error
            }
        }
        if let found = locator.debugFile(buildId: id, codeFile: codeFile) {
            // The found file has the build id: it keys the cache and gives the load address.
            if let id, let cache = locator.symbolCache(id),
                let cached = try? ModuleSymbolicator(cache: cache, codeFile: found.path)
            {
                return cached
            }
            return try ModuleSymbolicator(debugFile: found.path, codeFile: codeFile)
        }
        if let codeError { throw codeError }
        guard let codeFile, id == nil else {
            throw .cannotOpen(
                path: codeFile ?? id.map(DebugId.codeId) ?? "?",
                reason: "no file with build id \(id.map(DebugId.codeId) ?? "?") found")
        }
        return try ModuleSymbolicator(debugFile: codeFile, codeFile: codeFile)
    }
}
