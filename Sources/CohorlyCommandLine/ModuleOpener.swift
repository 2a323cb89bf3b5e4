import CohorlySymbols

/// Opens modules for the `symbolicate` modes with one shared locator (so directories are scanned once).
package struct ModuleOpener {
    package let locator: DebugFileLocator

    package init(debugDirs: [String]) {
        locator = .cli(searchPaths: debugDirs)
    }

    package func open(codeFile: String?, buildId: [UInt8]?) throws(SymbolsError) -> ModuleSymbolicator {
        try ModuleSymbolicator.open(codeFile: codeFile, buildId: buildId, locator: locator)
    }
}

extension DebugFileLocator {
    /// The CLI's locator: the debuginfod servers of `DEBUGINFOD_URLS` with their shared time budget
    /// (`COHORLY_DEBUGINFOD_TIMEOUT`), each fetch announced on stderr.
    package static func cli(searchPaths: [String]) -> DebugFileLocator {
        let client = DebuginfodClient.fromEnvironment()
        client?.log = { Console.error("cohorly: " + $0) }
        return DebugFileLocator(searchPaths: searchPaths, debuginfod: client)
    }
}
