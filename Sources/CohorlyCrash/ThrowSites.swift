import CCrashRecorder
import CohorlyCrashModel

/// Where thrown errors were thrown (cly_throw_sites.c): the runtime's `_swift_willThrow` hook keeps the return
/// addresses of every throw in a fixed table keyed by the error's box, chained to any hook installed before it;
/// ``Cohorly/captureError(_:properties:)`` looks its error up there. Process-wide.
enum ThrowSites {
    /// Turns the recording of throw sites on (installing the hook once, which needs the unwinder) or off
    /// (``HandledErrorOptions/throwSites``). Returns whether throws are recorded now.
    @discardableResult
    static func setRecording(_ enabled: Bool) -> Bool {
        if enabled {
            guard LiveStack.unavailableReason == nil else { return false }
            _ = cly_throw_sites_install()
        } else {
            cly_throw_sites_set_enabled(false)
        }
        return cly_throw_sites_enabled()
    }

    /// Whether throws are recorded.
    static var isRecording: Bool { cly_throw_sites_enabled() }

    /// Whether the hook was installed (recording on or off).
    static var isInstalled: Bool { cly_throw_sites_installed() }

    /// The throw site of `error`, innermost first (return addresses, the first one into the function that threw),
    /// or nil when its throw was not recorded. `error` must be the value the `catch` bound (an `any Error` keeps
    /// the thrown box; a `catch let e as T` binds a copy, found by the calling thread's last throw of that type).
    static func stack(of error: any Error) -> (frames: [Frame], truncated: Bool)? {
        guard isRecording else { return nil }
        let box = unsafeBitCast(error as any Error, to: UnsafeRawPointer.self)
        let type = unsafeBitCast(Swift.type(of: error) as Any.Type, to: UnsafeRawPointer.self)
        let capacity = Int(CLY_THROW_SITE_FRAMES)
        var truncated = false
        var addresses = [UInt](repeating: 0, count: capacity)
        let count = addresses.withUnsafeMutableBufferPointer { buffer in
            Int(cly_throw_sites_find(box, type, buffer.baseAddress, Int32(capacity), &truncated))
        }
        guard count > 0 else { return nil }
        let frames = addresses.prefix(min(count, capacity)).map { Frame(UInt64($0), kind: .returnAddress) }
        return (frames, truncated)
    }
}
