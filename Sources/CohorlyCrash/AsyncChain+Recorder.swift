import CCrashRecorder

extension AsyncChain {
    /// The chain the recorder wrote (`cly_async_chain`): nil when it found none, or when its anchor is not one of
    /// the `physicalCount` frames captured beside it.
    init?(recorded chain: cly_async_chain, physicalCount: Int) {
        var chain = chain
        let count = Int(max(0, min(chain.count, CLY_MAX_ASYNC_FRAMES)))
        let anchor = Int(chain.anchor)
        guard count > 0, anchor >= 0, anchor < physicalCount else { return nil }
        let frames = withUnsafeBytes(of: &chain.frames) { raw in
            raw.bindMemory(to: UInt.self).prefix(count).map { Frame(UInt64($0), kind: .asyncResume) }
        }
        let name = cly_async_stop_name(chain.stop).map { String(cString: $0) } ?? ""
        self.init(anchor: anchor, stop: Stop(wireName: name), frames: frames)
    }
}
