extension CapturedException {
    /// Room kept for what the client adds to the event (`distinct_id`) and the event's own wrapping.
    public static let eventSizeMargin = 512

    /// The exception cut so that its `$exception` event's JSON stays within `limit` bytes. The subject thread is
    /// never cut; the other threads first lose their oldest frames (all of them down to the same depth,
    /// halving it until they fit), then, when even one frame each is too much, the last threads go whole. What
    /// was cut is counted in `$exception_frames_dropped` and `$exception_threads_dropped`.
    public func fitted(toEventBytes limit: Int) -> CapturedException {
        let others = otherThreads
        guard hasStack, !others.isEmpty else { return self }
        let groups = others.map(laidOutGroups(of:))
        // Sizes are measured once: the base (everything but the other threads, with the images of all), then
        // each frame group and each thread's own members.
        var bare = self
        bare.threads = threads.filter(\.crashed)
        var baseProperties = bare.eventProperties
        let allFrames = (crashedThread.map(laidOutFrames(of:)) ?? []) + groups.flatMap { $0.flatMap { $0 } }
        baseProperties["$debug_images"] = .array(debugImages(referencedBy: allFrames).map { imageValue($0) })
        baseProperties[Self.threadsProperty] = []
        let base = Self.size(.object(baseProperties)) + Self.eventSizeMargin + 32
        let groupSizes = groups.map { thread in
            thread.map { group in group.reduce(0) { $0 + Self.size(Self.frameValue($1)) + 1 } }
        }
        let headers = others.map { Self.size(Self.threadValue($0, frames: [])) + 1 }
        func total(depth: Int, threads: Int) -> Int {
            (0..<threads).reduce(base) { sum, index in
                sum + headers[index] + groupSizes[index].suffix(depth).reduce(0, +)
            }
        }
        var kept = others.count
        let deepest = groupSizes.map(\.count).max() ?? 0
        var depth = deepest
        while depth > 1 && total(depth: depth, threads: kept) > limit { depth = max(1, depth / 2) }
        while kept > 0 && total(depth: depth, threads: kept) > limit { kept -= 1 }
        // With fewer threads left, they may have room for more frames again.
        if kept < others.count {
            while depth < deepest && total(depth: min(deepest, depth * 2), threads: kept) <= limit {
                depth = min(deepest, depth * 2)
            }
        }
        let framesDropped = groupSizes.prefix(kept).reduce(0) { $0 + max(0, $1.count - depth) }
        let threadsDropped = others.count - kept
        guard framesDropped > 0 || threadsDropped > 0 else { return self }
        var fitted = self
        fitted.threads = threads.filter(\.crashed) + others.prefix(kept).map { $0.keepingInnermost(depth) }
        fitted.properties["$exception_frames_dropped"] = .int(framesDropped)
        fitted.properties["$exception_threads_dropped"] = .int(threadsDropped)
        return fitted
    }

    private static func size(_ value: CohorlyValue) -> Int { value.jsonString.utf8.count }
}

extension CapturedException.Thread {
    /// The thread with only its `count` innermost frames of ``logicalFrames`` (the physical frames down to the
    /// anchor first, then the async callers, then the executor's frames); marked truncated when cut.
    public func keepingInnermost(_ count: Int) -> CapturedException.Thread {
        let count = max(0, count)
        guard count < logicalFrames.count else { return self }
        var thread = self
        thread.truncated = true
        guard let chain = async, chain.anchor < frames.count else {
            thread.frames = Array(frames.prefix(count))
            return thread
        }
        let head = chain.anchor + 1
        if count <= head {
            thread.frames = Array(frames.prefix(count))
            thread.async = nil
        } else if count <= head + chain.frames.count {
            thread.frames = Array(frames.prefix(head))
            thread.async?.frames = Array(chain.frames.prefix(count - head))
        } else {
            thread.frames = Array(frames.prefix(count - chain.frames.count))
        }
        return thread
    }
}
