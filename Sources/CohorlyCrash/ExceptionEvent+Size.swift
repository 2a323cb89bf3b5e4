import Cohorly

extension ExceptionEvent {
    /// A thread other than the crashed one, its frames grouped per physical frame (oldest first).
    struct OtherThread {
        var tid: Int32
        var name: String
        /// Why the thread's async walk stopped, when it has async callers.
        var stop: AsyncChain.Stop?
        var groups: [[ExceptionRecord.Frame]]
    }

    /// Room kept for what the client adds to the event (`distinct_id`) and the event's own wrapping.
    static let sizeMargin = 512

    /// Sets the record's threads (`$exception_threads`) and images (`$debug_images`) so that its event's JSON
    /// stays within `limit` bytes. The crashed thread is never cut; the other threads first lose their oldest
    /// frames (all of them down to the same depth, halving it until they fit), then, when even one frame each is
    /// too much, the last threads go whole. What was cut is counted in `$exception_frames_dropped` and
    /// `$exception_threads_dropped`.
    static func fit(
        _ others: [OtherThread], crashed: [[ExceptionRecord.Frame]], into record: inout ExceptionRecord,
        layout: FrameLayout, limit: Int
    ) {
        let allFrames = crashed.flatMap { $0 } + others.flatMap { $0.groups.flatMap { $0 } }
        record.images = layout.debugImages(referencedBy: allFrames)
        record.threads = []
        // Sizes are measured once: the base (everything but the other threads), then each frame group.
        let base = CohorlyValue.object(record.event.properties).jsonString.utf8.count + sizeMargin + 32
        let groupSizes = others.map { thread in
            thread.groups.map { group in group.reduce(0) { $0 + size($1.eventValue) + 1 } }
        }
        let headers = others.map { size(ExceptionRecord.Thread(id: $0.tid, name: $0.name, frames: []).eventValue) + 1 }
        func total(depth: Int, threads: Int) -> Int {
            (0..<threads).reduce(base) { sum, index in
                sum + headers[index] + groupSizes[index].suffix(depth).reduce(0, +)
            }
        }
        var threads = others.count
        let deepest = groupSizes.map(\.count).max() ?? 0
        var depth = deepest
        while depth > 1 && total(depth: depth, threads: threads) > limit { depth = max(1, depth / 2) }
        while threads > 0 && total(depth: depth, threads: threads) > limit { threads -= 1 }
        // With fewer threads left, they may have room for more frames again.
        if threads < others.count {
            while depth < deepest && total(depth: min(deepest, depth * 2), threads: threads) <= limit {
                depth = min(deepest, depth * 2)
            }
        }
        let kept = others.prefix(threads).map { thread in
            OtherThread(
                tid: thread.tid, name: thread.name, stop: thread.stop, groups: Array(thread.groups.suffix(depth)))
        }
        record.threads = kept.map {
            ExceptionRecord.Thread(
                id: $0.tid, name: $0.name, frames: $0.groups.flatMap { $0 }, asyncStop: $0.stop?.rawValue)
        }
        let framesDropped = others.prefix(threads).reduce(0) { $0 + max(0, $1.groups.count - depth) }
        let threadsDropped = others.count - threads
        if framesDropped > 0 || threadsDropped > 0 {
            record.properties["$exception_frames_dropped"] = .int(framesDropped)
            record.properties["$exception_threads_dropped"] = .int(threadsDropped)
            let referenced = crashed.flatMap { $0 } + kept.flatMap { $0.groups.flatMap { $0 } }
            record.images = layout.debugImages(referencedBy: referenced)
        }
    }

    private static func size(_ value: CohorlyValue) -> Int { value.jsonString.utf8.count }
}
