import CohorlySymbols

/// HTML text built by the web pages. Every string that came from an event (titles, frames, breadcrumbs, device
/// facts: attacker-controlled, since any app may send anything) enters through `text(_:)` or `attribute(_:)`,
/// which escape it; only the pages' own markup enters raw. Element content is also isolated (`<bdi>`), so
/// right-to-left text in a value cannot reorder the page's text around it, and the explicit bidirectional
/// controls are shown as `\u{202e}`, never obeyed.
struct HTML: Sendable {
    /// The markup so far.
    private(set) var markup = ""

    init() {}

    /// Markup written by the page itself (never event data).
    init(raw markup: String) { self.markup = markup }

    /// Appends the page's own markup.
    mutating func raw(_ markup: String) { self.markup += markup }

    /// Appends `text` escaped for an element's content, isolated from the text around it (`<bdi>`).
    mutating func text(_ text: String) { markup += "<bdi>" + Self.escape(text) + "</bdi>" }

    /// Appends `text` escaped, not wrapped: for content that holds text only (`<title>`, an SVG `<title>` or
    /// `<text>`), where the bidirectional controls are still shown rather than obeyed.
    mutating func plainText(_ text: String) { markup += Self.escape(text) }

    /// Appends other built markup.
    mutating func append(_ other: HTML) { markup += other.markup }

    /// A list's row opened with its title cell (`<tr><td class="title">`): `title` linked to `href` (the page's own
    /// path), then `marks` (a short id, a badge; none by default), then `subtitle` muted below. The cell is left
    /// open for what the page adds to it.
    mutating func titleCell(href: String, title: String, marks: HTML = HTML(), subtitle: String) {
        raw("<tr><td class=\"title\"><a href=\"\(href)\">")
        text(title)
        raw("</a>")
        append(marks)
        raw("<div class=\"muted\">")
        text(subtitle)
        raw("</div>")
    }

    /// `<name attributes>escaped text</name>`; `attributes` are the page's own (values through `attribute`).
    /// A `<dl class="facts">` of the rows that have a value (empty and nil ones left out), names as markup and
    /// values escaped.
    mutating func facts(_ rows: [(name: String, value: String?)]) {
        raw("<dl class=\"facts\">")
        for (name, value) in rows {
            guard let value, !value.isEmpty else { continue }
            raw("<dt>\(name)</dt><dd>")
            text(value)
            raw("</dd>")
        }
        raw("</dl>")
    }

    mutating func element(_ name: String, _ attributes: String = "", text: String) {
        markup +=
            "<\(name)\(attributes.isEmpty ? "" : " " + attributes)><bdi>\(Self.escape(text))</bdi></\(name)>"
    }

    /// `&`, `<`, `>`, `"` and `'` as character references, so the result is inert both as element content and
    /// inside a quoted attribute value. C0 controls other than tab and newline, DEL and the C1 controls become
    /// U+FFFD (HTML parsers report them as errors, and some read the C1 controls as other characters). The
    /// explicit bidirectional controls (U+202A–202E, U+2066–2069) are written as the text `\u{202e}`: shown, so
    /// "crash in \u{202e}txt.exe" cannot read as "crash in exe.txt".
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            case "\t", "\n": result.unicodeScalars.append(scalar)
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    result += "\u{FFFD}"
                } else if TerminalText.isBidiControl(scalar) {
                    result += "\\u{" + String(scalar.value, radix: 16) + "}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    /// `name="escaped value"`, for an attribute whose value came from data.
    static func attribute(_ name: String, _ value: String) -> String { "\(name)=\"\(escape(value))\"" }

    /// A percent-encoded path segment or query value (only unreserved characters stay as they are), so a value
    /// from an event can never end the segment, start a query or change the scheme.
    static func urlComponent(_ value: String) -> String {
        var result = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                result += "%"
                result.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                result.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0xF)]))
            }
        }
        return result
    }
}
