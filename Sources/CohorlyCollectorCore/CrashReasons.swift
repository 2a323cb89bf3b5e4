import CohorlyCrashModel
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

    /// The crash's reason (``CrashReason/describe(_:crashSite:)``, as ``CrashSymbolicator`` decides it).
    func reason(_ exception: CapturedException) -> String {
        let functions = CrashReason.needsCrashSite(exception.facts) ? crashSiteFunctions(exception) : []
        return CrashReason.describe(exception.facts, crashSite: functions).summary
    }

    /// The function names at frame 0 of the crashed thread, innermost first (empty when unknown), looked up by
    /// its kind.
    private func crashSiteFunctions(_ exception: CapturedException) -> [String?] {
        guard let frame = exception.threads.first(where: \.crashed)?.frames.first?.frame,
            let image = exception.images.first(where: { $0.contains(frame.address.value) }),
            let buildId = DebugId.buildId(hex: image.buildId)
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
        let offset = (frame.address.value - image.base) &+ module.loadAddress
        return module.symbolicate(offset, isReturnAddress: frame.isReturnAddress).frames.map(\.function)
    }
}
