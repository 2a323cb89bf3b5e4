import CohorlySymbols

/// Opens modules for the `symbolicate` modes with one shared locator (so directories are scanned once).
struct ModuleOpener {
    let locator: DebugFileLocator

    init(debugDirs: [String]) {
        locator = DebugFileLocator(searchPaths: debugDirs)
    }

    func open(codeFile: String?, buildId: [UInt8]?) throws(SymbolsError) -> ModuleSymbolicator {
        try ModuleSymbolicator.open(codeFile: codeFile, buildId: buildId, locator: locator)
    }
}
