/// An ELF object loaded in a process: its path, where it was loaded, its extent and its GNU build id. One type for
/// both holders: a crash report keeps its addresses as ``Address`` (``CrashReport/Module``), a captured exception
/// as `UInt64` (``CapturedException/Image``).
public struct LoadedObject<Location: Sendable & Equatable>: Sendable, Equatable {
    /// Its path as the loader knows it (`code_file`).
    public var path: String
    /// Load address: the first `PT_LOAD` page.
    public var base: Location
    /// Extent of the `PT_LOAD` segments.
    public var size: Location
    /// GNU build id, lowercase hex (empty when the object has none).
    public var buildId: String

    /// An object loaded at `base`.
    public init(path: String, base: Location, size: Location, buildId: String) {
        self.path = path
        self.base = base
        self.size = size
        self.buildId = buildId
    }
}

extension LoadedObject where Location == Address {
    /// Whether `address` lies inside this module.
    public func contains(_ address: Address) -> Bool {
        address.value >= base.value && address.value - base.value < size.value
    }
}

extension LoadedObject where Location == UInt64 {
    /// Whether `address` lies inside it (an image of unknown size, 0, holds its base alone).
    public func contains(_ address: UInt64) -> Bool { address >= base && address - base < max(size, 1) }
}
