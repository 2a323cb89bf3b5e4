import CohorlyCrashModel
import CohorlySymbols

/// A symbolicated thread as HTML, in the order `crashes show` prints it: innermost first, each address's inlined
/// calls as rows of their own above the function they were inlined into, the awaiting callers (`async`) after
/// the frame they continue from with the executor's frames below folded into a `<details>`, runs of one repeated
/// frame (deep recursion) and runs of frames that are not in-app folded, the recorder's own frames at the top of
/// the crashed thread left out.
enum WebStack {
    /// The frames of `thread` as an `<ol class="frames">`; in-app frames are highlighted (without an answer:
    /// the frames of `executable`).
    static func frames(_ thread: CapturedException.Thread, executable: String?) -> HTML {
        var html = HTML()
        guard !thread.frames.isEmpty else {
            html.raw("<p class=\"muted\">No frames: the thread did not answer.</p>")
            return html
        }
        let app = executable.map(basename)
        var physical = thread.frames[...]
        if thread.crashed {
            let hidden = physical.prefix(while: SymbolicatedCrash.isRecorderFrame).count
            if hidden < physical.count { physical = physical.dropFirst(hidden) }
        }
        html.raw("<ol class=\"frames stack\">")
        if let chain = thread.async, !chain.frames.isEmpty, physical.indices.contains(chain.anchor) {
            let above = physical[...chain.anchor]
            html.append(rows(above, app: app))
            var number = chain.anchor + 1
            for frame in chain.frames {
                html.append(rows(of: frame, number: number, kind: "async", app: app))
                number += 1
            }
            if chain.stop != .taskRoot {
                html.raw("<li class=\"muted\">")
                html.text("The async callers end here: \(SymbolicatedCrash.stopDescription(chain.stop.rawValue)).")
                html.raw("</li>")
            }
            let below = physical[above.endIndex...]
            if !below.isEmpty {
                html.raw("<li><details><summary>\(below.count) executor frame\(below.count == 1 ? "" : "s")")
                html.raw("</summary><ol class=\"frames\">")
                html.append(rows(below, app: app))
                html.raw("</ol></details></li>")
            }
        } else {
            html.append(rows(physical, app: app))
        }
        if thread.truncated { html.raw("<li class=\"muted\">… (truncated: the recorder keeps 100 frames)</li>") }
        html.raw("</ol>")
        return html
    }

    /// Physical frames, runs of one repeated address folded after their first frame, runs of
    /// ``foldedRun`` or more frames that are not in-app (a server framework's router and middleware, thunks)
    /// folded into a `<details>` — never the innermost frame, where the thread stopped.
    private static func rows(_ frames: ArraySlice<CapturedException.StackFrame>, app: String?, folding: Bool = true)
        -> HTML
    {
        var html = HTML()
        var index = frames.startIndex
        while index < frames.endIndex {
            let frame = frames[index]
            let notApp = folding ? frames[index...].prefix { $0.inAppAnswer == false }.count : 0
            if folding && notApp >= foldedRun && index != frames.startIndex {
                html.raw("<li><details><summary>\(notApp) frames not in the app</summary><ol class=\"frames\">")
                html.append(rows(frames[index..<(index + notApp)], app: app, folding: false))
                html.raw("</ol></details></li>")
                index += notApp
                continue
            }
            html.append(rows(of: frame, number: index, kind: nil, app: app))
            var next = index + 1
            while next < frames.endIndex && frames[next].frame.address == frame.frame.address { next += 1 }
            if next - index > 2 {
                html.raw("<li class=\"muted\">… \(next - index - 1) more frames like #\(index)</li>")
                index = next
            } else {
                index += 1
            }
        }
        return html
    }

    /// How many frames that are not in-app, one after another, are folded.
    static let foldedRun = 3

    /// One address: its inlined calls (innermost first), then the function they are in, numbered `number`.
    private static func rows(of frame: CapturedException.StackFrame, number: Int, kind: String?, app: String?)
        -> HTML
    {
        var html = HTML()
        let module = frame.lookup?.imagePath.map(basename)
        // The event's in-app answer (AppCode); a symbolicator that did not say: the executable's frames.
        let inApp = frame.inAppAnswer ?? (module != nil && module == app)
        let classes = inApp ? " class=\"app\"" : ""
        let address = "#\(number) \(frame.frame.address) \(module ?? "???")"
        guard let physical = frame.symbols.last else {
            html.raw("<li\(classes)>")
            if let kind { html.raw("<span class=\"kind\">\(kind)</span>") }
            html.raw("<span class=\"fn\">??</span> <span class=\"addr\">")
            html.text(address + (frame.lookup?.fileAddress.map { " + \(Address($0))" } ?? ""))
            html.raw("</span></li>")
            return html
        }
        for inlined in frame.symbols.dropLast() {
            html.raw("<li\(classes)><span class=\"kind\">inlined</span>")
            html.append(describe(inlined))
            html.raw("</li>")
        }
        html.raw("<li\(classes)>")
        if let kind { html.raw("<span class=\"kind\">\(kind)</span>") }
        html.append(describe(physical))
        html.raw("<br><span class=\"addr\">")
        html.text(address)
        html.raw("</span></li>")
        return html
    }

    /// `name + offset at file:line:col` (no place without a line), every part escaped.
    private static func describe(_ symbol: FrameSymbol) -> HTML {
        var html = HTML(raw: "<span class=\"fn\">")
        let name = Demangler.name(function: symbol.function, rawFunction: symbol.rawFunction, style: .simplified)
        html.text((name ?? "??") + (symbol.symbolOffset.map { " + \($0)" } ?? ""))
        html.raw("</span>")
        // A file only with its line, as `crashes show` prints it (a file alone is a compile unit's name).
        if let place = symbol.sourceLocation {
            html.raw(" <span class=\"where\">at ")
            html.text(place)
            html.raw("</span>")
        }
        return html
    }

    private static func basename(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
