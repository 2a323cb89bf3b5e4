/// One frame of a stack: an address and what kind of address it is, which decides how it is looked up.
///
/// Like the Swift runtime backtracer's `Frame` (`programCounter`, `returnAddress`, `asyncResumePoint`): only a
/// return address points after the call it stands for, so only it is looked up one byte back.
public struct Frame: Sendable, Hashable, CustomStringConvertible {
    /// The absolute address.
    public var address: Address
    /// What the address is.
    public var kind: Kind

    /// What a frame's address is.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// An exact instruction address (where a thread was interrupted): looked up as is.
        case pc
        /// A return address (the instruction after a call): looked up at address − 1.
        case returnAddress = "return_address"
        /// The entry of an async resume funclet (where an awaiting function continues): looked up as is.
        case asyncResume = "async_resume"

        /// The kind a wire name stands for; an unknown name reads as a return address (format v2's rule).
        public init(wireName: String) { self = Kind(rawValue: wireName) ?? .returnAddress }

        /// `pc`, `return_address` or `async_resume`.
        public var wireName: String { rawValue }
    }

    /// A frame at `address` of `kind`.
    public init(_ address: Address, kind: Kind) {
        self.address = address
        self.kind = kind
    }

    /// A frame at `value` of `kind`.
    public init(_ value: UInt64, kind: Kind) { self.init(Address(value), kind: kind) }

    /// The address to look up: one byte back for a return address (inside the call), else the address itself.
    public var lookupAddress: UInt64 {
        kind == .returnAddress && address.value > 0 ? address.value - 1 : address.value
    }

    /// Whether the symbolicator must step back into the call (a return address).
    public var isReturnAddress: Bool { kind == .returnAddress }

    /// The address's value.
    public var value: UInt64 { address.value }

    /// The address as `0x…`.
    public var description: String { address.description }

    /// Physical frames as a capture by signal gives them: frame 0 the exact interrupted PC, the rest return
    /// addresses (format v1's rule for every thread).
    public static func interrupted(_ addresses: [Address]) -> [Frame] {
        addresses.enumerated().map { Frame($1, kind: $0 == 0 ? .pc : .returnAddress) }
    }

    /// Physical frames of a thread that captured itself by a call: every frame a return address.
    public static func called(_ addresses: [Address]) -> [Frame] {
        addresses.map { Frame($0, kind: .returnAddress) }
    }
}
