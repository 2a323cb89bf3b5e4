/// An ELF image loaded in a crashed process, as a crash report lists it.
public struct LoadedImage: Equatable, Sendable {
    /// The path the process loaded it from.
    public var path: String
    /// The load address of its first `PT_LOAD` segment's page.
    public var base: UInt64
    /// The extent of its `PT_LOAD` segments.
    public var size: UInt64
    /// Its GNU build id (nil when it has none).
    public var buildId: [UInt8]?

    /// Creates an image.
    public init(path: String, base: UInt64, size: UInt64, buildId: [UInt8]?) {
        self.path = path
        self.base = base
        self.size = size
        self.buildId = buildId
    }
}

/// Symbolicates absolute addresses of a crashed process: finds the image of each address, opens that image's
/// debug file once (through a ``DebugFileLocator``) and reuses it for every later address.
/// Not thread-safe: use one instance per thread.
public final class ImageSymbolicator {
    /// The images, sorted by base address.
    public let images: [LoadedImage]
    private let locator: DebugFileLocator
    private var opened: [Int: Result<ModuleSymbolicator, SymbolsError>] = [:]

    /// The result for one address.
    public struct Lookup: Sendable {
        /// The index in ``images`` of the image containing the address (nil when none does).
        public var imageIndex: Int?
        /// The file-relative address looked up (after the return-address adjustment), when the image is known.
        public var fileAddress: UInt64?
        /// The frames (nil when the image is unknown or its symbols could not be opened).
        public var result: SymbolicatedAddress?
    }

    /// Creates a symbolicator for `images`.
    public init(images: [LoadedImage], locator: DebugFileLocator) {
        self.images = images.sorted { $0.base < $1.base }
        self.locator = locator
    }

    /// Looks up an absolute address. Return addresses (every frame but the first of a thread) are looked up
    /// at `address - 1`.
    public func symbolicate(_ address: UInt64, isReturnAddress: Bool) -> Lookup {
        guard let index = imageIndex(containing: address) else { return Lookup() }
        let image = images[index]
        let offset = address - image.base
        switch symbolicator(for: index) {
        case .success(let module):
            let result = module.symbolicate(
                offset &+ module.loadAddress, isReturnAddress: isReturnAddress)
            return Lookup(imageIndex: index, fileAddress: result.address, result: result)
        case .failure:
            let adjusted = isReturnAddress && offset > 0 ? offset - 1 : offset
            return Lookup(imageIndex: index, fileAddress: adjusted, result: nil)
        }
    }

    /// Images whose symbols could not be opened so far, with the reason.
    public var failures: [(image: LoadedImage, error: SymbolsError)] {
        opened.sorted { $0.key < $1.key }.compactMap { entry in
            if case .failure(let error) = entry.value { return (images[entry.key], error) }
            return nil
        }
    }

    /// Images opened so far whose symbols come from a symbol table only (no DWARF was found for them).
    public var modulesWithoutDebugInfo: [LoadedImage] {
        opened.sorted { $0.key < $1.key }.compactMap { entry in
            if case .success(let module) = entry.value, !module.hasDWARF { return images[entry.key] }
            return nil
        }
    }

    /// The open module for an image (nil when it has no usable symbols).
    public func module(at index: Int) -> ModuleSymbolicator? {
        try? symbolicator(for: index).get()
    }

    /// The root package's directory of the image at `path` (``ModuleSymbolicator/sourceRoot``): for the
    /// executable, what ``AppCode`` needs. Nil when no image has that path or its file has no DWARF.
    public func sourceRoot(ofImageAt path: String) -> String? {
        guard let index = images.firstIndex(where: { $0.path == path }) else { return nil }
        return module(at: index)?.sourceRoot
    }

    private func symbolicator(for index: Int) -> Result<ModuleSymbolicator, SymbolsError> {
        if let done = opened[index] { return done }
        let image = images[index]
        let result: Result<ModuleSymbolicator, SymbolsError>
        do throws(SymbolsError) {
            let module = try ModuleSymbolicator.open(
                codeFile: image.path, buildId: image.buildId, locator: locator)
            if let expected = image.buildId, module.debugFile.buildId != expected {
                throw SymbolsError.cannotOpen(
                    path: image.path, reason: "no file with build id \(DebugId.codeId(expected))")
            }
            result = .success(module)
        } catch {
            result = .failure(error)
        }
        opened[index] = result
        return result
    }

    private func imageIndex(containing address: UInt64) -> Int? {
        let index = partitionPoint(0..<images.count) { images[$0].base <= address } - 1
        guard index >= 0, address - images[index].base < max(images[index].size, 1) else { return nil }
        return index
    }
}
