/// The awaiting callers of an async function: the chain of async contexts the recorder followed from one of
/// the thread's physical frames (format v2's per-thread `async`).
public struct AsyncChain: Sendable, Hashable {
    /// Index into the thread's physical frames of the frame the chain continues from (the async funclet whose
    /// context started the walk). A printer shows physical frames 0…anchor, then ``frames``, then the physical
    /// frames after the anchor (the executor's).
    public var anchor: Int
    /// Why the walk ended.
    public var stop: Stop
    /// Innermost first: the resume point in the function that awaited the anchor's function first, the task's
    /// root function last. Each is an ``Frame/Kind/asyncResume`` frame.
    public var frames: [Frame]

    /// Why the walk of the async contexts ended.
    public enum Stop: String, Sendable, Hashable, CaseIterable {
        /// The task's root context (its `Parent` was 0).
        case taskRoot = "task_root"
        /// A context could not be read.
        case fault
        /// A resume address was not a function start (neither an FDE start nor, where no FDE covers it, a Swift
        /// resume funclet's symbol), or a context was misaligned.
        case validation
        /// A context repeated.
        case loop
        /// The frame limit (64) was reached.
        case limit
        /// A stop reason this reader does not know.
        case unknown

        /// The reason a wire name stands for (``unknown`` for any other).
        public init(wireName: String) { self = Stop(rawValue: wireName) ?? .unknown }
    }

    /// The most async frames a report holds per thread (CLY_MAX_ASYNC_FRAMES).
    public static let maximumFrames = 64

    /// A chain continuing from physical frame `anchor`.
    public init(anchor: Int, stop: Stop, frames: [Frame]) {
        self.anchor = anchor
        self.stop = stop
        self.frames = frames
    }
}
