import CCrashRecorder

/// The stacks of the process's threads at one moment of a hang, taken without stopping them
/// (`cly_live_capture`): the hung thread first, then the others, within the recorder's caps
/// (CLY_MAX_THREADS threads × CLY_MAX_FRAMES frames); plus the modules their frames need.
struct HangCapture: Sendable {
    /// The hung thread first (`crashed` marks it), then the others. A thread that did not answer in time has
    /// no frames.
    var threads: [CrashReport.Thread]
    /// The recorder's module table, plus the objects loaded since that the frames point into.
    var modules: [CrashReport.Module]
    /// Threads asked for their stacks, and how many answered in time.
    var requested: Int
    var answered: Int

    /// Captures `tid` and the other threads (not the calling one), waiting at most `waitMilliseconds` for the
    /// answers. Nil when live capture is unavailable (not installed, another capture running, a crash started)
    /// or `tid` is gone.
    static func take(subject tid: Int32, waitMilliseconds: UInt32) -> HangCapture? {
        var buffer = [cly_live_thread](repeating: cly_live_thread(), count: Int(CLY_MAX_THREADS))
        var requested: Int32 = 0
        var answered: Int32 = 0
        let count = buffer.withUnsafeMutableBufferPointer { slots in
            cly_live_capture(tid, slots.baseAddress, Int32(slots.count), waitMilliseconds, &requested, &answered)
        }
        guard count > 0 else { return nil }
        let taken = Array(buffer.prefix(Int(count)))
        let threads = taken.enumerated().map { index, slot in thread(slot, subject: index == 0) }
        return HangCapture(
            threads: threads, modules: modules(for: taken), requested: Int(requested), answered: Int(answered))
    }

    /// The same capture with thread `tid` as the hung one (first, `crashed`), when it was captured.
    func withSubject(_ tid: Int32) -> HangCapture {
        guard let index = threads.firstIndex(where: { $0.tid == tid }), index != 0 else { return self }
        var copy = self
        var subject = copy.threads.remove(at: index)
        subject.crashed = true
        copy.threads =
            [subject]
            + copy.threads.map { thread in
                var thread = thread
                thread.crashed = false
                return thread
            }
        return copy
    }

    private static func thread(_ slot: cly_live_thread, subject: Bool) -> CrashReport.Thread {
        var slot = slot
        let frames = withUnsafeBytes(of: &slot.frames) { raw in
            raw.bindMemory(to: UInt.self).prefix(Int(max(0, min(slot.frame_count, CLY_MAX_FRAMES))))
                .map { Address(UInt64($0)) }
        }
        let name = withUnsafeBytes(of: &slot.name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        // A thread interrupted by a signal has its exact PC as frame 0 (the recorder says which).
        var kinds = Frame.interrupted(frames)
        if slot.first_frame_kind != Int32(CLY_FRAME_PC.rawValue), !kinds.isEmpty { kinds[0].kind = .returnAddress }
        return CrashReport.Thread(
            tid: slot.tid, name: name, crashed: subject, frames: kinds, truncated: slot.truncated,
            async: AsyncChain(recorded: slot.async, physicalCount: kinds.count))
    }

    private static func modules(for threads: [cly_live_thread]) -> [CrashReport.Module] {
        var modules: [CrashReport.Module] = []
        threads.withUnsafeBufferPointer { slots in
            withUnsafeMutablePointer(to: &modules) { list in
                cly_live_list_modules(
                    slots.baseAddress, Int32(slots.count),
                    { path, base, size, id, length, context in
                        guard let path, let context else { return }
                        let buildId = (0..<Int(max(0, length))).map { index in
                            let byte = id?[index] ?? 0
                            return String(byte >> 4, radix: 16) + String(byte & 0xf, radix: 16)
                        }.joined()
                        context.assumingMemoryBound(to: [CrashReport.Module].self).pointee.append(
                            CrashReport.Module(
                                path: String(cString: path), base: Address(UInt64(base)), size: Address(UInt64(size)),
                                buildId: buildId))
                    }, list)
            }
        }
        return modules
    }
}
