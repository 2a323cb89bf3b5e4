extension FrameSymbol {
    /// The crash recorder's C++ terminate hook, mangled and demangled (it is in an anonymous namespace).
    static let terminateHook = (
        mangled: "_ZN12_GLOBAL__N_114terminate_hookEv", demangled: "(anonymous namespace)::terminate_hook()"
    )

    /// Whether `name` (mangled or demangled) is a function of the crash recorder itself: its C functions
    /// (`cly_…`, linked into the app's executable) and its C++ terminate hook. Their frames sit on top of the
    /// stack of an uncaught C++ exception or a live capture: the device marks them not in-app, grouping leaves
    /// them out of the key and the culprit, and the crash text hides them, as the Swift backtracer hides its
    /// own frames.
    public static func isCrashRecorderFunction(_ name: String) -> Bool {
        // Compared, not hashed: grouping asks for every in-app frame of every event the collector stores.
        name.hasPrefix("cly_") || name == terminateHook.mangled || name == terminateHook.demangled
    }

    /// Whether this names a function of the crash recorder (``isCrashRecorderFunction(_:)``).
    public var namesCrashRecorder: Bool {
        (rawFunction.map(Self.isCrashRecorderFunction) ?? false)
            || (function.map(Self.isCrashRecorderFunction) ?? false)
    }
}
