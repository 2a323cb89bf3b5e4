/// One source-level frame for an address: a function, and where in it the address is.
///
/// An address inside inlined code yields several frames sharing the address: the innermost (the inlined
/// callee) first, the physical function last.
public struct SymbolicatedFrame: Equatable, Sendable {
    /// The readable function name (demangled), or nil when unknown.
    public var function: String?
    /// The function name as stored in the file (linkage name when there is one), or nil when unknown.
    public var rawFunction: String?
    /// The source file path, or nil when unknown.
    public var file: String?
    /// The source line (0 when unknown).
    public var line: Int
    /// The source column (0 when unknown).
    public var column: Int
    /// True for every frame but the last of an address's chain (the code was inlined into the next frame).
    public var isInlined: Bool
    /// The offset from the symbol's start, set when the name came from the symbol table (no DWARF).
    public var symbolOffset: UInt64?

    /// Creates a frame; every field but the function name defaults to unknown.
    public init(
        function: String?, rawFunction: String?, file: String? = nil, line: Int = 0, column: Int = 0,
        isInlined: Bool = false, symbolOffset: UInt64? = nil
    ) {
        self.function = function
        self.rawFunction = rawFunction
        self.file = file
        self.line = line
        self.column = column
        self.isInlined = isInlined
        self.symbolOffset = symbolOffset
    }

    /// The reason of a Swift runtime trap when this is its artificial inline frame
    /// (`Swift runtime failure: Division by zero` → `Division by zero`), else nil.
    public var swiftRuntimeFailure: String? {
        let prefix = "Swift runtime failure: "
        guard let function, function.hasPrefix(prefix) else { return nil }
        return String(function.dropFirst(prefix.count))
    }
}

/// The frames for one looked-up address, innermost first (empty when nothing is known about it).
public struct SymbolicatedAddress: Equatable, Sendable {
    /// The file-relative virtual address that was looked up (after any return-address adjustment).
    public var address: UInt64
    /// The frames, innermost (inlined) first; empty when the address is unknown.
    public var frames: [SymbolicatedFrame]

    /// Creates a result.
    public init(address: UInt64, frames: [SymbolicatedFrame]) {
        self.address = address
        self.frames = frames
    }

    /// The Swift runtime trap reason found among the frames, if any.
    public var swiftRuntimeFailure: String? {
        frames.lazy.compactMap(\.swiftRuntimeFailure).first
    }
}
