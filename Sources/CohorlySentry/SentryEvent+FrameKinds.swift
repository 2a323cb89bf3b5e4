import CohorlyClient
import CohorlyCrashModel

/// How a Sentry stacktrace tells which of its addresses are return addresses, from the crash model's frame kinds
/// (issue 24), so Sentry's symbolicator steps back into the call only where the device's frame was a return
/// address — never at a crash site (`pc`) or an async resume point (`async_resume`).
///
/// Sentry accepts the adjustment per stacktrace only (`instruction_addr_adjustment`; its normalizer drops
/// unknown frame members). A stack whose innermost frame is exact and the rest return addresses (a crash) is
/// sent as it is with `all_but_first`; one of return addresses only (a capture by a call: a handled error, a
/// message) with `all`; any other (a stack with async callers) with `none`, each return address already
/// stepped back into its call, as `none` means. Every frame also carries its kind under
/// ``CapturedException/frameKindKey`` for readers that keep it (the local collector reads it back); and the
/// task's root function — where the chain of async callers starts — is marked `stack_start`, the one frame
/// member Sentry keeps for chained async stacks.
extension SentryEvent {
    /// Sentry's `instruction_addr_adjustment` values this SDK sends.
    enum AddressAdjustment: String {
        /// Every frame but the innermost is a return address.
        case allButFirst = "all_but_first"
        /// Every frame is a return address.
        case all
        /// No frame is to be adjusted: the return addresses were stepped back into their calls here.
        case none
    }

    /// The adjustment that says what the frames of `frames` (oldest first) are.
    static func adjustment(for frames: [CapturedException.LaidOutFrame]) -> AddressAdjustment {
        let kinds = frames.reversed().compactMap(\.kind)
        guard let innermost = kinds.first else { return .all }
        guard kinds.dropFirst().allSatisfy({ $0 == .returnAddress }) else { return .none }
        switch innermost {
        case .pc: return .allButFirst
        case .returnAddress: return .all
        case .asyncResume: return .none
        }
    }

    /// The `instruction_addr` sent for `frame`: its address, or (with ``AddressAdjustment/none``) the address
    /// its kind says to look up (a return address one byte back). An inlined call has its physical frame's.
    static func sentAddress(_ frame: CapturedException.LaidOutFrame, _ adjustment: AddressAdjustment) -> Address {
        let physical = frame.stackFrame.frame
        return adjustment == .none ? Address(physical.lookupAddress) : physical.address
    }

    /// Index in `frames` (oldest first) of the task's root function: the oldest async frame.
    static func asyncRootIndex(_ frames: [CapturedException.LaidOutFrame]) -> Int? {
        frames.firstIndex { $0.kind == .asyncResume }
    }
}
