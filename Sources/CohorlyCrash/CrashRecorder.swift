import CCrashRecorder
import CohorlyFiles
import Foundation
import Synchronization

/// The crash recorder: catches every crash of the process and writes one report file per crash.
///
/// Install it once, as early as possible:
/// ```swift
/// try CrashRecorder.install(.init())
/// CrashRecorder.updateContext { $0.release = "MyApp@1.2.0"; $0.distinctId = "user-42" }
/// ```
/// The reports land in ``Options/reportDirectory`` and are read back with ``CrashReportStore``.
public enum CrashRecorder {
    /// What ``install(_:)`` sets up.
    public struct Options: Sendable, Equatable {
        /// Where reports are written. Default: `$XDG_STATE_HOME/cohorly/crashes/<app>`, else
        /// `~/.local/state/cohorly/crashes/<app>` (``defaultReportDirectory(environment:executableName:)``). Created with mode 0700 (parents too) when missing, whatever the
        /// umask; an existing one must belong to this user and not be group- or world-writable. When the default
        /// cannot be used (a read-only home), `install` falls back to `$XDG_RUNTIME_DIR/cohorly/crashes/<app>`, then
        /// to `cohorly-<uid>/crashes/<app>` in the temporary directory, and says so once on standard error.
        public var reportDirectory: URL
        /// After a report is written: `true` (default) calls the handlers that were installed before ours — the
        /// Swift runtime's backtracer only when `SWIFT_BACKTRACE` says `enable=yes` (it symbolicates in the dying
        /// process, for seconds); `false` restores the default action. Either way the process dies of the original
        /// signal, after one line on stderr naming the reason and the crashing function.
        public var chainToPreviousHandlers: Bool
        /// Context present from the first crash on (default: empty; the device fields are always added).
        public var context: CrashContext

        /// Options with the defaults documented on each property.
        public init(
            reportDirectory: URL? = nil, chainToPreviousHandlers: Bool = true,
            context: CrashContext = CrashContext()
        ) {
            self.reportDirectory = reportDirectory ?? Self.defaultReportDirectory()
            self.chainToPreviousHandlers = chainToPreviousHandlers
            self.context = context
        }

        /// `$XDG_STATE_HOME/cohorly/crashes/<app>`, else `~/.local/state/cohorly/crashes/<app>`, where `<app>` is
        /// `executableName` (default: this executable's file name, from `/proc/self/exe`). Each app has its own
        /// directory, so one app never sends another's crash reports, abnormal exits or hang reports under its own
        /// project. `environment` defaults to the process environment.
        public static func defaultReportDirectory(
            environment: [String: String]? = nil, executableName: String? = nil
        ) -> URL {
            let app = directoryName(for: executableName ?? StateDirectory.executableName())
            return URL(
                fileURLWithPath: StateDirectory.cohorly("crashes/" + app, environment: environment), isDirectory: true)
        }

        /// `name` as one path component: letters, digits, `.`, `_` and `-` kept, anything else `_`; "app" when
        /// nothing usable is left.
        static func directoryName(for name: String) -> String { StateDirectory.appName(name) }
    }

    /// Why ``install(_:)`` failed. The process is left as it was.
    public enum InstallError: Error, Equatable, CustomStringConvertible {
        /// The report directory could not be created, is not writable, belongs to another user or is group- or
        /// world-writable (`reason` says which).
        case reportDirectoryUnusable(path: String, reason: String)
        /// The recorder could not be set up (libunwind missing, sigaction failed…).
        case recorderUnavailable(reason: String)

        /// A one-line explanation naming the directory or the missing part.
        public var description: String {
            switch self {
            case .reportDirectoryUnusable(let path, let reason):
                "crash report directory \(path): \(reason)"
            case .recorderUnavailable(let reason): "crash recorder unavailable: \(reason)"
            }
        }
    }

    private struct State {
        var options: Options?
        var context = CrashContext()
    }
    private static let state = Mutex(State())

    /// Installs the handlers (SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT, uncaught C++ exceptions) and
    /// gives the calling thread an alternate signal stack. Calling it again only applies the new options.
    /// The default report directory, when it cannot be made (a read-only home), is replaced by a fallback (see
    /// ``Options/reportDirectory``).
    /// - Throws: ``InstallError`` when the directory named in `options` is unusable, or the recorder cannot be set up.
    public static func install(_ options: Options = Options()) throws {
        try installed(options)
    }

    /// ``install(_:)``, returning the options in force: the default report directory, when it cannot be made
    /// (a read-only home), is replaced by its fallback (``StateDirectory/makeDefault(_:environment:)``), said once on
    /// standard error. Only a directory the caller named makes it throw.
    @discardableResult
    static func installed(_ options: Options) throws -> Options {
        cly_test_probe_mark("swift: start")
        var options = options
        let isDefault = options.reportDirectory == Options.defaultReportDirectory()
        do {
            if isDefault {
                let app = Options.directoryName(for: StateDirectory.executableName())
                options.reportDirectory = URL(
                    fileURLWithPath: try StateDirectory.makeDefault("crashes/" + app), isDirectory: true)
            } else {
                try PrivateFiles.makeDirectory(options.reportDirectory.path, requireOwnerOnly: true)
            }
        } catch {
            let directory = options.reportDirectory.path
            throw InstallError.reportDirectoryUnusable(
                path: directory, reason: error.path == directory ? error.reason : error.description)
        }
        let directory = options.reportDirectory.path
        cly_test_probe_mark("swift: report directory")
        var message = [CChar](repeating: 0, count: 512)
        let result = cly_install(directory, options.chainToPreviousHandlers, &message, message.count)
        if result != 0 {
            let reason = String(
                decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if access(directory, W_OK | X_OK) != 0 {
                throw InstallError.reportDirectoryUnusable(path: directory, reason: "not writable")
            }
            throw InstallError.recorderUnavailable(reason: reason)
        }
        state.withLock {
            $0.options = options
            $0.context = options.context
            publish($0.context)
        }
        cly_test_probe_mark("swift: context handed over")
        return options
    }

    /// Whether ``install(_:)`` succeeded in this process.
    public static var isInstalled: Bool { cly_is_installed() }

    /// The options of the last successful ``install(_:)``, or nil.
    public static var options: Options? { state.withLock { $0.options } }

    /// The context the next crash report will carry.
    public static var context: CrashContext { state.withLock { $0.context } }

    /// Changes the crash-time context (release, distinct id, free-form pairs). Safe from any thread; a crash
    /// sees the context before or after the change, never a mix.
    public static func updateContext(_ change: (inout CrashContext) -> Void) {
        state.withLock {
            change(&$0.context)
            publish($0.context)  // under the lock: updates reach the recorder in the order they were made
        }
    }

    /// Gives the calling thread an alternate signal stack so a stack overflow on it is caught (the installing
    /// thread has one already). Call it first thing on threads you create. Returns false when it failed.
    @discardableResult
    public static func prepareCurrentThread() -> Bool { cly_prepare_current_thread() == 0 }

    /// Rescans the loaded libraries now (a crash finds libraries loaded later anyway, through the loader).
    public static func refreshModules() { cly_refresh_modules() }

    /// The `$insert_id` the next report of this process will carry.
    public static var pendingInsertId: String {
        var buffer = [CChar](repeating: 0, count: 37)
        cly_current_insert_id(&buffer)
        return String(decoding: buffer.prefix(36).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Calls `body` with the serialized context, holding the state lock: every later change reaches the
    /// launch marker after it (``LaunchMarker``).
    static func withSerializedContext(_ body: (String) -> Void) {
        state.withLock { body($0.context.serializedForCrash()) }
    }

    /// Hands the context to the crash path (and the launch marker). Called with the state lock held.
    private static func publish(_ context: CrashContext) {
        _ = DeviceInfo.current
        cly_test_probe_mark("swift: device facts")
        let json = context.serializedForCrash()
        cly_test_probe_mark("swift: context JSON")
        _ = json.withCString { cly_set_context($0, strlen($0)) }
        LaunchMarker.contextChanged(json)
        cly_refresh_modules()
    }
}
