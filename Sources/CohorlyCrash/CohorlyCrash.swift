import CCrashRecorder
import Cohorly
import Foundation
import Synchronization

/// Crash reporting for a Cohorly client: the recorder, plus delivery of every stored report as one fatal
/// `$exception` event through the client's persisted queue.
///
/// ```swift
/// let cohorly = Cohorly.initialize(apiHost: URL(string: "https://cohorly-service.velloalabs.com")!, token: "TOKEN")
/// try CohorlyCrash.install(cohorly: cohorly, version: "1.2.0")
/// ```
public enum CohorlyCrash {
    /// Options beyond the client, release and dist.
    public struct Options: Sendable {
        /// Where reports are written (default: the recorder's default directory).
        public var reportDirectory: URL?
        /// Call the previously installed handlers after the report (default true); the Swift runtime's backtracer
        /// among them only when `SWIFT_BACKTRACE` says `enable=yes` (``CrashRecorder/Options/chainToPreviousHandlers``).
        public var chainToPreviousHandlers: Bool
        /// Hand queued crash events to a detached sender process that outlives this launch (default true),
        /// so that an app that crashes again right away (a crash loop) still reports.
        public var detachedSender: Bool
        /// How long a detached sender keeps trying before it gives up for this launch (default 120 s).
        public var senderTimeout: Duration
        /// Start the detached sender from the crash handler the moment a crash report is committed (default true),
        /// so the crash is sent within seconds even when the app is never launched again (a CLI tool, a cron or
        /// Kubernetes job). Takes effect with ``detachedSender`` only; off, the next launch sends the crash.
        public var startSenderAtCrash = true
        /// The executable the crash handler starts as the sender (default `/proc/self/exe`: this one); tests point
        /// it at a file that cannot be executed.
        package var senderExecutable = CrashEventSender.executable
        /// How reports become events: on-device symbolication (on by default), in-app rules, size cap
        /// (default ``ExceptionEventOptions/default``).
        public var events: ExceptionEventOptions
        /// Abnormal exits (SIGKILL, OOM kills, power loss) reported by the next launch: on, with the resident
        /// memory sampled every 10 s (default ``AbnormalExitOptions/default``).
        public var abnormalExits: AbnormalExitOptions = .default
        /// How handled errors (`cohorly.captureError`) are rate-limited (default 10 per error type and call site
        /// per minute); their events follow ``events`` unless these options set their own.
        public var handledErrors: HandledErrorOptions
        /// Turns the hang watchdog on: the main thread (once it services the main queue), every
        /// ``Heartbeat`` and every ``WatchedExecutor`` busy without progress for longer than this is a hang,
        /// reported once as a `$exception` of level `error` (docs/crash-reporting.md "Hangs"). Default nil: off.
        public var hangThreshold: Duration?
        /// A hang still going on after this long is reported then instead of at its end (default 30 s).
        package var hangOngoingReportAfter: Duration = .seconds(30)
        /// How many breadcrumbs (the last `track` calls, identity changes and ``Cohorly/addBreadcrumb(_:category:data:)``
        /// calls) a crash report keeps (default 50; at most ``Breadcrumb/maxCount``; 0 keeps none).
        public var maxBreadcrumbs: Int

        /// Options with the documented defaults.
        public init(
            reportDirectory: URL? = nil, chainToPreviousHandlers: Bool = true, detachedSender: Bool = true,
            senderTimeout: Duration = .seconds(120), events: ExceptionEventOptions = .default,
            handledErrors: HandledErrorOptions = .default,
            hangThreshold: Duration? = nil,
            maxBreadcrumbs: Int = Int(CLY_DEFAULT_BREADCRUMBS)
        ) {
            self.maxBreadcrumbs = maxBreadcrumbs
            self.reportDirectory = reportDirectory
            self.chainToPreviousHandlers = chainToPreviousHandlers
            self.detachedSender = detachedSender
            self.senderTimeout = senderTimeout
            self.events = events
            self.handledErrors = handledErrors
            self.hangThreshold = hangThreshold
        }
    }

    /// What happened to the reports found at install.
    public struct DeliverySummary: Sendable, Equatable {
        /// Reports whose events are now durably queued (their files are deleted).
        public var queued = 0
        /// Reports dropped because the user opted out.
        public var discarded = 0
        /// Reports that could not be read (left in place or quarantined, never retried forever).
        public var unreadable = 0
        /// Reports kept because the queue refused them or lives in memory (retried next launch).
        public var kept = 0
        /// Whether a detached sender was started.
        public var senderStarted = false
        /// Abnormal exits of earlier launches whose events are now queued.
        public var abnormalExits = 0
    }

    /// The delivery of the reports found at install, running off the caller's thread.
    public final class Delivery: Sendable {
        private let done = DispatchSemaphore(value: 0)
        private let result = Mutex<DeliverySummary?>(nil)

        func finish(_ summary: DeliverySummary) {
            result.withLock { $0 = summary }
            done.signal()
        }

        /// Waits until every report found at install was handed to the queue (or `timeout` passed).
        /// Returns the summary, or nil on timeout.
        public func wait(timeout: Duration = .seconds(30)) -> DeliverySummary? {
            let nanoseconds =
                timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000
            guard done.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success else { return nil }
            done.signal()  // later waiters return at once
            return result.withLock { $0 }
        }
    }

    /// Installs the crash recorder for `cohorly`, then (off the caller's thread) turns every stored report into
    /// one fatal `$exception` event in the client's persisted queue. A report is deleted only once its event is
    /// durably queued.
    /// - Parameters:
    ///   - release: the release crash events (and what the destination keeps of the launch) carry. Default the
    ///     release the client's destination names, when it names one, else `<executable name>@<version>`.
    ///   - dist: the distribution, optional.
    ///   - version: the version in the default release. Default `COHORLY_RELEASE` from the environment.
    /// A default report directory or queue directory that cannot be made (a read-only home) is not fatal: both fall
    /// back to `$XDG_RUNTIME_DIR/cohorly`, then to a private directory in the temporary directory, said once on
    /// standard error.
    /// - Throws: ``CrashRecorder/InstallError`` when the directory named in `options` is unusable or the recorder
    ///   cannot be installed.
    @discardableResult
    public static func install(
        cohorly: Cohorly, release: String? = nil, dist: String? = nil, version: String? = nil,
        options: Options = Options()
    ) throws -> Delivery {
        // One release for the launch's events and what the destination keeps of it: the one given, else the
        // destination's, else the default.
        let launchRelease =
            release ?? (version == nil ? cohorly.configuredRelease : nil) ?? defaultRelease(version: version)
        let context = CrashContext(release: launchRelease, dist: dist, distinctId: cohorly.currentDistinctId)
        // The options in force: the default report directory may have been replaced by its fallback.
        let recorderOptions = try CrashRecorder.installed(
            CrashRecorder.Options(
                reportDirectory: options.reportDirectory, chainToPreviousHandlers: options.chainToPreviousHandlers,
                context: context))
        // The launch hooks: the next launch learns how this one ended from its report or marker.
        cohorly.crashMonitorStarted(launchId: CrashRecorder.pendingInsertId, release: launchRelease)
        // Marked on the caller's thread: a launch killed right after install is still found by the next one.
        if options.abnormalExits.enabled {
            LaunchMarker.start(
                directory: recorderOptions.reportDirectory.path,
                sampleInterval: options.abnormalExits.memorySampleInterval)
        }
        HandledErrors.configure(cohorly, options: options.handledErrors, events: options.events)
        ThrowSites.setRecording(options.handledErrors.throwSites)
        // Breadcrumbs: the client's track calls and identity changes, plus the app's own (addBreadcrumb).
        BreadcrumbRecorder.configure(maxBreadcrumbs: options.maxBreadcrumbs)
        BreadcrumbRecorder.observe(cohorly)
        // The crash-time context follows identify() and reset(); opted-out users get no report at all.
        cohorly.observeIdentity { distinctId, optedOut in
            CrashRecorder.updateContext { $0.distinctId = distinctId }
            cly_set_enabled(!optedOut)
            LaunchMarker.optedOutChanged(optedOut)
        }
        // Crash events carry the super properties registered at the moment of the crash.
        cohorly.observeSuperProperties { superProperties in
            CrashRecorder.updateContext { $0.superProperties = superProperties }
        }
        // …and the feature flags served at that moment (an identity change clears them first).
        cohorly.onFeatureFlags { flags in
            CrashRecorder.updateContext { $0.featureFlags = flags.mapValues(\.propertyValue) }
        }
        startHangWatchdog(for: cohorly, options: options, reportDirectory: recorderOptions.reportDirectory)
        CrashEventSender.CrashTime.prepare(
            for: cohorly, reportDirectory: recorderOptions.reportDirectory, options: options)
        let delivery = Delivery()
        let store = CrashReportStore(directory: recorderOptions.reportDirectory)
        Thread.detachNewThread {
            ThreadName.setCurrent("cohorly-crashes")
            CrashRecorder.prepareCurrentThread()
            // Crashes whose report the handler could not write (a full disk), before the markers: their event
            // is that launch's end.
            let lostReports = LostCrashReports.report(directory: store.directory.path, to: cohorly)
            // Before the crash reports are delivered (and deleted): a marker whose launch left a report is no
            // abnormal exit.
            let abnormalExits =
                lostReports
                + (options.abnormalExits.enabled
                    ? AbnormalExits.report(directory: store.directory.path, to: cohorly) : 0)
            // Earlier launches' sessions, unless their crash (or hang) event is still to come, ended unseen.
            cohorly.previousLaunchesExamined(pending: AbnormalExits.pendingEnds(directory: store.directory.path))
            let files = Self.earlierLaunchesReports(
                store.pendingReports(), launchInsertId: CrashRecorder.pendingInsertId)
            let hangReports = HangReportFile.leftovers(in: store.directory)
            // The detached sender starts before the reports are turned into events (symbolication takes a
            // while): if this launch dies first, the sender takes over the reports it was handed and the hang
            // reports left, once the delivery lock held here is released by that death (see
            // CrashEventSender.Handover). Abnormal-exit events are queued already; the sender delivers them if
            // this launch is killed too (an OOM or kill loop at startup).
            let handover =
                (!files.isEmpty || !hangReports.isEmpty || abnormalExits > 0) && options.detachedSender
                ? CrashEventSender.Handover(for: cohorly) : nil
            let started = handover?.startSender(
                for: cohorly, reports: files, directory: store.directory, options: options)
            handover?.acquire()
            var summary = deliver(files, from: store, to: cohorly, options: options.events)
            summary.add(
                deliverHangReports(hangReports, from: store, crashReports: files, to: cohorly, options: options.events))
            summary.senderStarted = started ?? false
            summary.abnormalExits = abnormalExits
            handover?.release()
            delivery.finish(summary)
        }
        return delivery
    }

    /// Call right before this process `exec`s another program: the launch ends there, and its marker is removed
    /// so that the next launch does not report it as an abnormal exit. Without it, an exec is recognized only
    /// while the exec'd program still runs (docs/crash-reporting.md "Abnormal exits").
    public static func prepareForExec() { LaunchMarker.endForExec() }

    /// `<executable name>@<version>`, the version from `version` or `COHORLY_RELEASE`; a `COHORLY_RELEASE` that
    /// already holds an `@` is taken as the whole release.
    public static func defaultRelease(version: String?, environment: [String: String]? = nil) -> String {
        let name = CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "app") } ?? "app"
        let fromEnvironment = environment.map { $0["COHORLY_RELEASE"] } ?? SystemFiles.environment("COHORLY_RELEASE")
        if version == nil, let fromEnvironment, fromEnvironment.contains("@") { return fromEnvironment }
        guard let version = version ?? fromEnvironment, !version.isEmpty else { return name }
        return "\(name)@\(version)"
    }

    /// `files` without this launch's own crash report (named `…-<launchInsertId>.json`). A launch can only find
    /// its own report while it dies: the crash handler lets the other threads go before the process ends, and this
    /// launch's delivery thread may list the directory in that moment. Handing the report over from there races the
    /// death: a detached sender started then sends it at once, and a load or symbolication cut short by the death
    /// counts against the report (three cut-short loads quarantine it; a cut-short symbolication sends it raw). So
    /// the next launch sends it, as it sends every crash. (Seen as a flaky test: 1 run in 40 found no report after
    /// the crash, the dying launch's sender having sent and deleted it.)
    static func earlierLaunchesReports(
        _ files: [CrashReportStore.ReportFile], launchInsertId: String
    ) -> [CrashReportStore.ReportFile] {
        files.filter { !AbnormalExits.isReport($0.name, of: launchInsertId) }
    }

    /// Hands the reports `files` of `store` to the queue, symbolicated on the device unless `options` say not
    /// to (or the user opted out: the event is discarded anyway); deletes a report once its event is durably
    /// queued. A report already queued (by the app, or by the sender that took over) counts as queued.
    static func deliver(
        _ files: [CrashReportStore.ReportFile], from store: CrashReportStore, to cohorly: Cohorly,
        options: ExceptionEventOptions = .default
    ) -> DeliverySummary {
        var summary = DeliverySummary()
        for file in files where FileManager.default.fileExists(atPath: file.url.path) {
            defer { SymbolicationGuard.finished(file.url) }
            let report: CrashReport
            do {
                report = try store.load(file)
            } catch {
                summary.unreadable += 1
                try? store.delete(file)  // a corrupt report can never become an event
                continue
            }
            queue(report, of: file, from: store, to: cohorly, options: options, counting: &summary)
        }
        return summary
    }

    /// Queues the event of `report` (stored as `file`) and deletes the file once the event is durably queued (in
    /// the queue on disk), or once it never can be (too large); a queue that cannot be written, or lives in memory,
    /// keeps the file for the next launch. Counts
    /// the outcome in `summary`. One path for crash reports and died-while-hung reports.
    static func queue(
        _ report: CrashReport, of file: CrashReportStore.ReportFile, from store: CrashReportStore, to cohorly: Cohorly,
        options: ExceptionEventOptions, counting summary: inout DeliverySummary
    ) {
        do {
            var options = options
            if cohorly.isOptedOut { options.symbolicate = false }
            switch try cohorly.enqueuePrepared(event(for: report, file: file, options: options)) {
            case .queued, .alreadyQueued:
                // Durably queued only when the queue is on disk: a queue in memory (its directory could not be
                // written, a full disk) dies with the process, so the report stays for the next launch (whose
                // resend the server dedupes by `$insert_id`).
                guard cohorly.queueIsPersisted else {
                    summary.kept += 1
                    return
                }
                summary.queued += 1
            case .discardedOptedOut: summary.discarded += 1
            }
            try? store.delete(file)
        } catch CohorlyError.eventTooLarge {
            summary.unreadable += 1
            try? store.delete(file)
        } catch {
            summary.kept += 1  // the queue could not be written: try again next launch
        }
    }

    /// The event for a report, symbolicated on the device when `options` allow it and no earlier attempt at
    /// symbolicating this report ended the process (then it goes raw: a report is never held back).
    static func event(
        for report: CrashReport, file: CrashReportStore.ReportFile, options: ExceptionEventOptions
    ) -> QueuedException {
        guard options.symbolicate,
            let symbols = SymbolicationGuard.once(file.url, { ExceptionBuilder.symbolicate(report, options: options) })
        else { return ExceptionBuilder.record(from: report, options: options) }
        return ExceptionBuilder.record(from: report, symbols: symbols, options: options)
    }
}
