/// Symbolicates addresses of one ELF module: DWARF (functions, inline chains, lines) when the debug file has
/// it, else the symbol table (function + offset).
///
/// The index is built once, lazily per compile unit, and reused for every address, so create one per module
/// and feed it all of that module's addresses. Not thread-safe: use one instance per thread.
public final class ModuleSymbolicator {
    /// Facts about the file the symbols come from.
    public let debugFile: ObjectInfo
    /// The page-aligned `p_vaddr` of the first `PT_LOAD` segment: a crash report's `pc - base + loadAddress`
    /// is the file-relative address to look up (0 for PIE executables and shared libraries).
    public let loadAddress: UInt64
    /// Why DWARF could not be used (nil when it is used, or the file simply has none).
    public let dwarfError: SymbolsError?

    private let dwarf: DwarfIndex?
    private let file: ElfFile
    private let codeFile: String?
    /// Read on first need (most addresses are answered by DWARF alone).
    private lazy var symbols: SymbolTable = {
        let table = SymbolTable(file: file)
        if table.symbols.isEmpty, let codeFile, codeFile != file.path,
            let code = try? ElfFile(path: codeFile)
        {
            return SymbolTable(file: code)
        }
        return table
    }()
    private var demangled: [String: String] = [:]

    /// Opens `debugFile` (the binary itself when it has DWARF, or its separate debug file). When
    /// `codeFile` is given and the debug file has no symbol table, the code file's symbols are used.
    public init(debugFile path: String, codeFile: String? = nil) throws(SymbolsError) {
        let file = try ElfFile(path: path)
        let info = ObjectInfo(file: file)
        debugFile = info
        loadAddress = file.firstLoadAddress()
        var index: DwarfIndex?
        var error: SymbolsError?
        if info.hasDebugInfo {
            do {
                index = try DwarfIndex(file: file)
            } catch let caught {
                error = caught
            }
        }
        dwarf = index
        dwarfError = error
        self.file = file
        self.codeFile = codeFile
    }

    /// The DWARF index (for tests).
    var dwarfIndex: DwarfIndex? { dwarf }

    /// Whether DWARF line and inline information is available.
    public var hasDWARF: Bool { dwarf != nil }

    /// The frames for a file-relative virtual address (as `llvm-symbolizer --obj` takes it). A return address
    /// (every frame of a backtrace but the crashed thread's first) is looked up at `address - 1`, so the call
    /// instruction, not the next line, is reported.
    public func symbolicate(_ address: UInt64, isReturnAddress: Bool = false) -> SymbolicatedAddress {
        let lookup = isReturnAddress && address > 0 ? address - 1 : address
        var frames: [SymbolicatedFrame] = []
        if let dwarf, let found = dwarf.lookup(lookup) {
            var file = found.file
            var line = found.line
            var column = found.column
            for (position, entry) in found.chain.enumerated() {
                frames.append(
                    SymbolicatedFrame(
                        function: entry.name?.readable, rawFunction: entry.name?.raw, file: file, line: line,
                        column: column, isInlined: position < found.chain.count - 1))
                file = entry.callFile
                line = entry.callLine
                column = entry.callColumn
            }
            if frames.isEmpty {
                let symbol = symbols.lookup(lookup)
                frames.append(
                    SymbolicatedFrame(
                        function: symbol.map { demangle($0.name) }, rawFunction: symbol?.name,
                        file: file ?? symbol?.file,
                        line: line, column: column))
            } else if frames[frames.count - 1].rawFunction == nil, let symbol = symbols.lookup(lookup) {
                frames[frames.count - 1].rawFunction = symbol.name
                frames[frames.count - 1].function = demangle(symbol.name)
            }
        } else if let symbol = symbols.lookup(lookup) {
            frames.append(
                SymbolicatedFrame(
                    function: demangle(symbol.name), rawFunction: symbol.name, file: symbol.file,
                    symbolOffset: lookup - symbol.address))
        }
        return SymbolicatedAddress(address: lookup, frames: frames)
    }

    private func demangle(_ name: String) -> String {
        if let cached = demangled[name] { return cached }
        let result = Demangler.demangle(name)
        demangled[name] = result
        return result
    }
}
