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

    /// A symbol.
    public init(
        function: String?, rawFunction: String? = nil, file: String?, line: Int, column: Int, inlined: Bool,
        symbolOffset: UInt64? = nil
    ) {
        self.function = function
        self.rawFunction = rawFunction
        self.file = file
        self.line = line
        self.column = column
        self.inlined = inlined
        self.symbolOffset = symbolOffset
    }

    enum CodingKeys: String, CodingKey {
        case function, file, line, column, inlined
        case rawFunction = "raw_function"
        case symbolOffset = "symbol_offset"
    }
}
