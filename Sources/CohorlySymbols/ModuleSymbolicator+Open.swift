extension ModuleSymbolicator {
  /// Opens the best debug file for a module found by `locator`: the code file itself when it has DWARF,
  /// else a matching debug file (debuglink, `.build-id`, search paths, debuginfod), else the code file's
  /// own symbol table. `buildId` defaults to the code file's. Throws when nothing usable is found.
  public static func open(codeFile: String?, buildId: [UInt8]?, locator: DebugFileLocator)
    throws(SymbolsError)
    -> ModuleSymbolicator
  {
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
      return try ModuleSymbolicator(debugFile: found.path, codeFile: codeFile)
    }
    if let codeError { throw codeError }
    guard let codeFile else {
      throw .cannotOpen(
        path: id.map(DebugId.codeId) ?? "?", reason: "no debug file found for this build id")
    }
    return try ModuleSymbolicator(debugFile: codeFile, codeFile: codeFile)
  }
}
