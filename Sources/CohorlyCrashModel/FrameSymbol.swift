/// A function and where in it: one source-level frame of a looked-up address (an address inside inlined code
/// has several, the innermost first, the physical function last).
public struct FrameSymbol: Codable, Sendable, Equatable {
    /// Demangled name.
    public var function: String?
    /// Name as stored in the file.
    public var rawFunction: String?
    /// Source file.
    public var file: String?
    /// Line (0 unknown).
    public var line: Int
    /// Column (0 unknown).
    public var column: Int
    /// Inlined into the next symbol.
    public var inlined: Bool
    /// Offset from the symbol's start (symbol-table names only).
    public var symbolOffset: UInt64?
    /// The function as the wires and issues show it: the stack text's short form in normal form
    /// (``FunctionName``, made by CohorlySymbols' `Demangler.shortName`), e.g. `startService(_:)` for
    /// `(2) suspend resume partial function for App.startService(Swift.String) async -> Swift.String`; nil when
    /// not made (``function`` then stands).
    public var shortFunction: String?
    /// The function's language (`swift`, `cpp`, `c`) as an event named it (a frame's `lang`), kept when the name
    /// it was told from did not come with it (a C++ frame's `_Z…` name is not sent); nil: told from the name or
    /// the file (``CapturedException/LaidOutFrame/language``). The crash model's JSON keeps it; `Codable` (the
    /// symbolicated crash the collector's API answers with) leaves it out.
    public var language: String?

    /// A symbol.
    public init(
        function: String?, rawFunction: String? = nil, file: String?, line: Int, column: Int, inlined: Bool,
        symbolOffset: UInt64? = nil, shortFunction: String? = nil, language: String? = nil
    ) {
        self.language = language
        self.function = function
        self.rawFunction = rawFunction
        self.file = file
        self.line = line
        self.column = column
        self.inlined = inlined
        self.symbolOffset = symbolOffset
        self.shortFunction = shortFunction
    }

    enum CodingKeys: String, CodingKey {
        case function, file, line, column, inlined
        case rawFunction = "raw_function"
        case symbolOffset = "symbol_offset"
        case shortFunction = "short_function"
    }
}
