import CohorlyCrashModel

extension SymbolicatedCrash {
    /// A thread whose async callers are known, as the Swift runtime's backtracer shows one (with file:line:col):
    /// the physical frames down to the anchor, then the awaiting callers tagged `[async]` (numbered on), then one
    /// line for the executor's frames below the anchor (`swift_job_run`, libdispatch, `start_thread`).
    static func asyncLines(
        _ thread: CapturedException.Thread, physical: ArraySlice<StackFrame>, chain: CapturedException.AsyncStack,
        _ options: TextOptions
    ) -> [String] {
        var lines: [String] = []
        let anchor = chain.anchor
        let asyncFrames = chain.frames
        let above = physical[..<min(anchor + 1, physical.endIndex)]
        for index in above.indices { lines += Self.lines(of: above[index], options, number: index) }
        var number = anchor + 1
        var position = 0
        while position < asyncFrames.count {
            // The awaiting chain of a server's handler runs through its framework's router and middleware: runs of
            // other code fold as in a physical stack.
            let run = otherCodeRun(asyncFrames, at: position, isFirst: false, options)
            if run > 0 {
                let folded = asyncFrames[position..<(position + run)]
                lines.append(otherCodeLine(folded, first: number, last: number + run - 1) + " [async]")
                number += run
                position += run
                continue
            }
            lines += Self.lines(of: asyncFrames[position], options, number: number, tag: "[async] ")
            number += 1
            position += 1
        }
        if chain.stop != .taskRoot {
            lines.append("    … the async callers end here: \(Self.stopDescription(chain.stop.rawValue))")
        }
        let below = physical[above.endIndex...]
        if !below.isEmpty {
            let names = below.compactMap { frame -> String? in
                guard let symbol = frame.symbols.last else { return nil }
                return Self.name(symbol, options)
            }
            var line = "    … \(below.count) executor frame" + (below.count == 1 ? "" : "s")
            if !names.isEmpty { line += ": " + TerminalText.escaped(Self.uniqueInOrder(names).joined(separator: ", ")) }
            line += " (#\(below.startIndex)–#\(below.endIndex - 1) of the physical stack;"
            line += " --no-async shows them)"
            lines.append(line)
        }
        if thread.truncated { lines.append("  … (truncated)") }
        return lines
    }

    /// Why an async walk stopped, in words.
    package static func stopDescription(_ stop: String) -> String {
        switch stop {
        case "fault": "a context could not be read"
        case "validation": "a resume point did not check out"
        case "loop": "a context repeated"
        case "limit": "the limit of 64 async frames"
        default: stop
        }
    }

    private static func uniqueInOrder(_ names: [String]) -> [String] {
        var seen = Set<String>()
        return names.filter { seen.insert($0).inserted }
    }
}
