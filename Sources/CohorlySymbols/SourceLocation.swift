import CohorlyCrashModel

/// Where a frame is in its source, printed only when the line table places its address there: a file with a
/// line. A file without one is not a location — it is the compile unit's name (`crtstuff.c`, `main.swift`) or
/// the `STT_FILE` symbol before a local symbol (`Swift.o`), which llvm-symbolizer prints as `crtstuff.c:0:0`.
extension FrameSymbol {
    /// `file:line:column` (`file:line` when the column is unknown), or nil when no line is known.
    public var sourceLocation: String? {
        SourceLocation.text(file: file, line: line, column: column)
    }
}

extension SymbolicatedFrame {
    /// `file:line:column` (`file:line` when the column is unknown), or nil when no line is known (see
    /// ``CohorlyCrashModel/FrameSymbol/sourceLocation``).
    public var sourceLocation: String? {
        SourceLocation.text(file: file, line: line, column: column)
    }
}

enum SourceLocation {
    static func text(file: String?, line: Int, column: Int) -> String? {
        guard let file, !file.isEmpty, line > 0 else { return nil }
        return "\(file):\(line)" + (column > 0 ? ":\(column)" : "")
    }
}
