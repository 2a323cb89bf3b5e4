/// HTML text built by the web pages. Every string that came from an event (titles, frames, breadcrumbs, device
/// facts: attacker-controlled, since any app may send anything) enters through `text(_:)` or `attribute(_:)`,
/// which escape it; only the pages' own markup enters raw.
struct HTML: Sendable {
    /// The markup so far.
    private(set) var markup = ""

    init() {}

    /// Markup written by the page itself (never event data).
    init(raw markup: String) { self.markup = markup }

    /// Appends the page's own markup.
    mutating func raw(_ markup: String) { self.markup += markup }

    /// Appends `text` escaped for an element's content.
    mutating func text(_ text: String) { markup += Self.escape(text) }

    /// Appends other built markup.
    mutating func append(_ other: HTML) { markup += other.markup }

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
        markup += "<\(name)\(attributes.isEmpty ? "" : " " + attributes)>\(Self.escape(text))</\(name)>"
    }

    /// `&`, `<`, `>`, `"` and `'` as character references, so the result is inert both as element content and
    /// inside a quoted attribute value. C0 controls other than tab and newline, DEL and the C1 controls become
    /// U+FFFD (HTML parsers report them as errors, and some read the C1 controls as other characters).
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
