/// What `read` returns once it holds at least `count` elements (waiting up to 60 s, then failing).
///
/// A launch that finds crash, hang or abnormal-exit reports starts a detached sender before it turns them into
/// events (docs/internals.md "Who sends a crash"); whichever of the two takes `queue.lock` first sends the queue,
/// so the events may arrive after the launch has exited. Tests read what the collector received through this.
func delivered<Element>(atLeast count: Int = 1, _ read: () throws -> [Element]) async throws -> [Element] {
    try await waitUntil("\(count) event(s) reached the collector", seconds: 60) {
        ((try? read()) ?? []).count >= count
    }
    return try read()
}
