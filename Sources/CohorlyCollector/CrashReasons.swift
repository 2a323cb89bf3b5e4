import CohorlySymbols

/// The reason of each crash in a list, the same one `GET /api/crashes/<id>` gives after symbolicating the
/// whole crash: when the event carries no Swift message or C++ exception, only the crash site (frame 0 of the
/// crashed thread) is looked up, for a `Swift runtime failure: …` inline frame. Each module is opened once
/// for the whole list. Not thread-safe: one per request.
final class CrashReasons {
    /// The locator for a module's build id.
    private let locator: ([UInt8]) -> DebugFileLocator
    /// Opened modules by build id (hex); nil when the module has no usable symbols.
    private var modules: [String: ModuleSymbolicator?] = [:]

    /// A finder that looks modules up with the locator `locator` gives for their build id.
    init(locator: @escaping ([UInt8]) -> DebugFileLocator) {
        self.locator = locator
    }

    /// The crash's reason (``CrashSymbolicator/reason(_:crashSiteFunctions:)``).
    func reason(_ input: CrashInput) -> String {
        let needsCrashSite = input.message?.isEmpty != false && input.cxxType == nil
        let functions = needsCrashSite ? crashSiteFunctions(input) : []
        return CrashSymbolicator.reason(input, crashSiteFunctions: functions).reason
    }

    /// The function names at frame 0 of the crashed thread, innermost first (empty when unknown).
    private func crashSiteFunctions(_ input: CrashInput) -> [String?] {
        guard let address = input.threads.first(where: \.crashed)?.addresses.first,
            let image = input.images.first(where: { address >= $0.base && address - $0.base < max($0.size, 1) }),
            let buildId = image.buildId
        else { return [] }
        let key = DebugId.codeId(buildId)
        let module: ModuleSymbolicator?
        if let known = modules[key] {
            module = known
        } else {
            module = try? ModuleSymbolicator.open(codeFile: image.path, buildId: buildId, locator: locator(buildId))
            modules[key] = module
        }
        guard let module, module.debugFile.buildId == buildId else { return [] }
        return module.symbolicate((address - image.base) &+ module.loadAddress).frames.map(\.function)
    }
}
