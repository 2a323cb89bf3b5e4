import CohorlyCrashModel

/// How much of one crash `cohorly symbolicate` symbolicates: the first 100 frames of each thread (the recorder's
/// own cap) and at most 100 threads (the crashed ones always kept), so its memory stays bounded whatever a report
/// or event file (up to 64 MiB) holds. A thread cut is marked truncated (`… (truncated)` in the text,
/// `"truncated": true` in `--json`) and a note on standard error says what was left out.
enum SymbolicateLimits {
    /// Frames symbolicated per thread (and per async chain): 100.
    static let framesPerThread = 100
    /// Threads symbolicated per crash: 100.
    static let threads = 100

    /// `crash` within the limits, and a note for each cut.
    static func capped(_ crash: CapturedException) -> (crash: CapturedException, notes: [String]) {
        var crash = crash
        var notes: [String] = []
        if crash.threads.count > threads {
            let total = crash.threads.count
            var room = threads - crash.threads.filter(\.crashed).count
            crash.threads = crash.threads.filter { thread in
                if thread.crashed { return true }
                room -= 1
                return room >= 0
            }
            notes.append("\(total) threads: \(crash.threads.count) are symbolicated (at most \(threads))")
        }
        for index in crash.threads.indices {
            let name = crash.threads[index].tid.map { "thread \($0)" } ?? "thread #\(index)"
            let count = crash.threads[index].frames.count
            if count > framesPerThread {
                crash.threads[index].frames.removeSubrange(framesPerThread...)
                crash.threads[index].truncated = true
                notes.append(
                    "\(name): \(count) frames, the first \(framesPerThread) are symbolicated (the recorder's cap)")
            }
            if var chain = crash.threads[index].async, chain.frames.count > framesPerThread {
                notes.append(
                    "\(name): \(chain.frames.count) async callers, the first \(framesPerThread) are symbolicated")
                chain.frames.removeSubrange(framesPerThread...)
                crash.threads[index].async = chain
                crash.threads[index].truncated = true
            }
        }
        return (crash, notes)
    }
}
