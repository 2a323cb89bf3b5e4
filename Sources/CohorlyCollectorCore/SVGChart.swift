/// Small charts as inline SVG (no script, no external asset; colours from the stylesheet's `svg.chart` rules,
/// which the CSP allows where a `style` attribute would not be).
enum SVGChart {
    /// The `<svg>` element's opening of class `classes`, `width` × `height` CSS pixels, named `title` (its
    /// `aria-label` and first `<title>`).
    private static func opening(_ classes: String, width: Int, height: Int, title: String) -> HTML {
        var html = HTML(
            raw: "<svg class=\"\(classes)\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(width) \(height)\" "
                + "width=\"\(width)\" height=\"\(height)\" role=\"img\" ")
        html.raw(HTML.attribute("aria-label", title))
        html.raw("><title>")
        html.plainText(title)
        html.raw("</title>")
        return html
    }

    /// A column per value, oldest first, scaled to the largest; `labels[i]` names column i in its tooltip
    /// (`<title>`). `width` × `height` is the drawing's size in CSS pixels (it shrinks to fit its box).
    static func columns(_ values: [Int], labels: [String], width: Int, height: Int, title: String) -> HTML {
        var html = opening("chart", width: width, height: height, title: title)
        let top = max(1, values.max() ?? 1)
        let slot = values.isEmpty ? width : width / values.count
        let gap = slot > 4 ? 1 : 0
        for (index, value) in values.enumerated() {
            // An empty column still shows as a 1 px line, so the days without occurrences read as days.
            let barHeight = value == 0 ? 1 : max(2, value * height / top)
            html.raw(
                "<rect\(value == 0 ? " class=\"empty\"" : "") x=\"\(index * slot)\" y=\"\(height - barHeight)\" "
                    + "width=\"\(max(1, slot - gap))\" height=\"\(barHeight)\"><title>")
            html.plainText("\(index < labels.count ? labels[index] : String(index)): \(value)")
            html.raw("</title></rect>")
        }
        html.raw("</svg>")
        return html
    }

    /// A bar per (label, value) row, the largest the full width, each labelled on its left and counted on its
    /// right.
    static func bars(_ rows: [(label: String, value: Int)], width: Int, title: String) -> HTML {
        let rowHeight = 20
        let labelWidth = width * 2 / 5
        let countWidth = 56
        let barSpace = max(1, width - labelWidth - countWidth)
        let height = max(rowHeight, rows.count * rowHeight)
        var html = opening("chart bars", width: width, height: height, title: title)
        let top = max(1, rows.map(\.value).max() ?? 1)
        for (index, row) in rows.enumerated() {
            let y = index * rowHeight
            let barWidth = max(1, row.value * barSpace / top)
            html.raw("<g><title>")
            html.plainText("\(row.label): \(row.value)")
            html.raw("</title><text x=\"0\" y=\"\(y + 14)\">")
            html.plainText(Self.clipped(row.label, to: max(4, labelWidth / 7)))
            html.raw("</text><rect x=\"\(labelWidth)\" y=\"\(y + 4)\" width=\"\(barWidth)\" height=\"12\"></rect>")
            html.raw("<text x=\"\(labelWidth + barWidth + 4)\" y=\"\(y + 14)\">\(row.value)</text></g>")
        }
        html.raw("</svg>")
        return html
    }

    /// `text` cut to `limit` characters, with an ellipsis when cut.
    static func clipped(_ text: String, to limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
    }
}
