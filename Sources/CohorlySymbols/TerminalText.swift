/// Text that came from outside (a crash report, an event, a debug file) made safe to print on a terminal:
/// control characters are escaped, so no raw ESC, BEL, CR or other C0/C1 control (nor DEL) reaches the
/// terminal to move the cursor, retitle the window or hide a line, and the explicit bidirectional controls
/// (U+202A–202E, U+2066–2069) are shown as `\u{202e}`, so "crash in \u{202e}txt.exe" cannot print as
/// "crash in exe.txt". JSON output does not use this: it stays exact (its encoder escapes controls as `\u00XX`).
public enum TerminalText {
    /// `text` with each control character written as an escape: `\n`, `\r`, `\t`, and `\x1b`-style hex for
    /// the rest of C0 and DEL, `\u{9b}`-style for C1 and the bidirectional controls. A backslash stays as it is. Printable text, including
    /// non-ASCII letters, is unchanged.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard isControl(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar.value {
            case 0x0a: result += "\\n"
            case 0x0d: result += "\\r"
            case 0x09: result += "\\t"
            case 0x80...0x9f, 0x202a...0x202e, 0x2066...0x2069:
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            default:
                let digits = String(scalar.value, radix: 16)
                result += "\\x" + (digits.count < 2 ? "0" : "") + digits
            }
        }
        return result
    }

    /// Whether `scalar` is a C0 control, DEL, a C1 control or an explicit bidirectional control.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7f...0x9f).contains(scalar.value) || isBidiControl(scalar)
    }

    /// Whether `scalar` is one of the explicit bidirectional embeddings, overrides or isolates (U+202A–202E,
    /// U+2066–2069), which reorder the text around them.
    public static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202a...0x202e).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// How many characters of a server's text (an error's `detail`, a collector's `error`) are printed.
    public static let serverTextLimit = 300

    /// Text a server answered, for a terminal: clipped to ``serverTextLimit`` characters (with how many more
    /// there were) and escaped like event text, so an answer can neither drive the terminal nor flood it.
    public static func fromServer(_ text: String) -> String {
        guard text.count > serverTextLimit else { return escaped(text) }
        let shown = text.prefix(serverTextLimit)
        return escaped(String(shown)) + "… (\(text.count - serverTextLimit) more characters)"
    }
}
