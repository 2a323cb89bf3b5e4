/// How a crash report becomes its `$exception` event (``CohorlyCrash/Options/events``).
public struct ExceptionEventOptions: Sendable, Equatable, Codable {
    /// Symbolicate the frames on the device when the report is turned into an event (default true): function,
    /// file, line and inlined calls, from the crashed launch's binaries while their build id still matches, or
    /// their debug files found the usual ways (`.gnu_debuglink`, `.build-id` directories under ``debugRoots``).
    /// Frames nothing matches stay raw (addresses and debug images), for a server holding the debug files.
    public var symbolicate: Bool
    /// Directories searched for `.build-id/xx/rest.debug` and debuglink targets (default `/usr/lib/debug`).
    public var debugRoots: [String]
    /// How long symbolication may go on once the crashed thread is done (default 1 s): the other threads are
    /// symbolicated while it lasts and stay raw after. The crashed thread is always symbolicated whole.
    public var symbolicationBudget: Duration
    /// Which images are the app's own (`in_app`); see ``InAppRules`` (default: the executable and the
    /// libraries beside it).
    public var inApp: InAppRules
    /// The largest event, as JSON bytes (default 900,000: PostHog drops events over about 1 MB). The crashed
    /// thread is always kept whole; the other threads are trimmed, then dropped, to fit.
    public var maxEventBytes: Int

    /// Options with the documented defaults.
    public init(
        symbolicate: Bool = true, debugRoots: [String] = ["/usr/lib/debug"],
        symbolicationBudget: Duration = .seconds(1), inApp: InAppRules = InAppRules(), maxEventBytes: Int = 900_000
    ) {
        self.symbolicate = symbolicate
        self.debugRoots = debugRoots
        self.symbolicationBudget = symbolicationBudget
        self.inApp = inApp
        self.maxEventBytes = maxEventBytes
    }

    /// The defaults.
    public static let `default` = ExceptionEventOptions()
}
