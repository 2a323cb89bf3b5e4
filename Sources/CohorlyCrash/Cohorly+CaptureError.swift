import Cohorly
import Foundation
import Synchronization

extension Cohorly {
    /// Sends a handled error now: a `$exception` event with `$exception_level` `error`, mechanism
    /// `{type: "generic", handled: true}`, `type` = the error's type name (`MyApp.ParseError`), `value` = its
    /// description (`errorDescription` of a `LocalizedError`, else `String(describing:)`), and the calling
    /// thread's stack, symbolicated on the device like a crash's. Nothing is sent when the user opted out.
    ///
    /// The caller pays for the stack only (a few microseconds); the symbols and the event are made on a
    /// background queue and queued with the time, identity and super properties of this call. A `flush()` made
    /// after this call returns includes the event. Rate-limited per error type and call site
    /// (``HandledErrorOptions``: 10 per minute by default); the next event that gets through carries
    /// `$exception_suppressed_count`. Works without `CohorlyCrash.install` (the unwinder is loaded on first use).
    /// - Parameters:
    ///   - error: the error.
    ///   - properties: more event properties (default none); the `$exception…` keys are the event's own.
    ///
    /// When the throw was recorded (``HandledErrorOptions/throwSites``, on by default from `install`), the
    /// exception's stack is the throw site and the calling thread's stack follows as the catch site: in
    /// `$exception_threads` with `catch_site: true` (Cohorly, PostHog), as the current thread's stack (Sentry).
    @inline(never)
    public func captureError(_ error: any Error, properties: Properties = [:]) {
        guard !isOptedOut else { return }
        let stack = LiveStack.capture(skip: 1)
        HandledErrors.send(
            HandledErrors.describe(error), stack: stack, throwSite: ThrowSites.stack(of: error), synthetic: false,
            properties: properties, to: self)
    }

    /// Sends a message as a handled error (``captureError(_:properties:)`` without an error value): `type` is its
    /// first line (up to 255 characters), `value` the whole message, mechanism `{type: "generic", handled: true,
    /// synthetic: true}`, with the calling thread's stack. Same rate limit, per message and call site.
    /// - Parameters:
    ///   - message: what went wrong.
    ///   - properties: more event properties (default none).
    @inline(never)
    public func captureMessage(_ message: String, properties: Properties = [:]) {
        guard !isOptedOut else { return }
        let stack = LiveStack.capture(skip: 1)
        let firstLine = message.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let type = String(firstLine.prefix(255))
        HandledErrors.send(
            (type: type.isEmpty ? "Message" : type, value: message), stack: stack, synthetic: true,
            properties: properties, to: self)
    }
}

extension CohorlyCrash {
    /// Sets how `client`'s handled errors are rate-limited and made into events (``install(cohorly:release:dist:version:options:)``
    /// sets ``Options/handledErrors``; without install the defaults apply until this is called).
    public static func setHandledErrorOptions(_ options: HandledErrorOptions, for client: Cohorly) {
        HandledErrors.configure(client, options: options, events: nil)
        if ThrowSites.isInstalled { ThrowSites.setRecording(options.throwSites) }
    }

    /// Starts (or stops) keeping the throw site of every `throw` in this process, as
    /// ``install(cohorly:release:dist:version:options:)`` does by default (``HandledErrorOptions/throwSites``):
    /// for apps that capture errors without installing the crash handlers. Returns whether throw sites are kept
    /// now (false when the runtime has no throw hook or the unwinder cannot be loaded).
    @discardableResult
    public static func recordThrowSites(_ enabled: Bool) -> Bool {
        ThrowSites.setRecording(enabled)
    }
}

/// The handled-error path between the public calls and ``NonFatalExceptionReporter``: description, rate limit
/// and the settings of each client.
enum HandledErrors {
    /// One client's settings and rate limiter.
    private struct Entry {
        var options: HandledErrorOptions = .default
        /// ``CohorlyCrash/Options/events`` from install, used when ``HandledErrorOptions/events`` is nil.
        var installedEvents: ExceptionEventOptions?
        var limiter = HandledErrorRateLimiter(
            limit: HandledErrorOptions.default.maxPerFingerprint, window: HandledErrorOptions.default.window)
        var now: @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    }

    /// The entry lives in the client's attachments: it dies with the client, so a new client made at a released
    /// one's address starts from the defaults (a table keyed by address would hand it the old one's settings).
    private final class Settings: Sendable {
        let entry = Mutex(Entry())
    }

    private static func settings(of client: Cohorly) -> Settings {
        client.attachments.value(Settings.self, make: { Settings() }).value
    }

    /// Sets `client`'s options (the limiter starts over when its limit or window changed). `events` are the
    /// install's event options.
    static func configure(_ client: Cohorly, options: HandledErrorOptions, events: ExceptionEventOptions?) {
        settings(of: client).entry.withLock { entry in
            if entry.options.maxPerFingerprint != options.maxPerFingerprint || entry.options.window != options.window {
                entry.limiter = HandledErrorRateLimiter(limit: options.maxPerFingerprint, window: options.window)
            }
            entry.options = options
            if let events { entry.installedEvents = events }
        }
    }

    /// Replaces the clock of `client`'s rate limiter (tests move time by hand).
    package static func setClock(_ now: @escaping @Sendable () -> ContinuousClock.Instant, for client: Cohorly) {
        settings(of: client).entry.withLock { $0.now = now }
    }

    /// The rate limiter's answer for `fingerprint` and the event options, for `client`.
    private static func admit(_ fingerprint: String, client: Cohorly) -> (
        HandledErrorRateLimiter.Decision, ExceptionEventOptions
    ) {
        settings(of: client).entry.withLock { entry in
            let decision = entry.limiter.admit(fingerprint, now: entry.now())
            return (decision, entry.options.events ?? entry.installedEvents ?? .default)
        }
    }

    /// The event options of `client`'s live exceptions: ``HandledErrorOptions/events``, else install's
    /// ``CohorlyCrash/Options/events``, else the defaults.
    static func eventOptions(for client: Cohorly) -> ExceptionEventOptions {
        settings(of: client).entry.withLock { $0.options.events ?? $0.installedEvents ?? .default }
    }

    /// `type` and `value` of an error: its type's full name without the `(unknown context at $…)` part a
    /// private type's name holds (an address, different in every build, that would split its issue), and
    /// its description.
    static func describe(_ error: any Error) -> (type: String, value: String) {
        let type = type(of: error)
        // The name and the LocalizedError conformance per type, found once: both cost microseconds.
        let known = typeFacts.withLock { $0[ObjectIdentifier(type)] }
        let facts = known ?? (name: typeName(type), localized: error is any LocalizedError)
        if known == nil { typeFacts.withLock { $0[ObjectIdentifier(type)] = facts } }
        let localized = facts.localized ? (error as? any LocalizedError)?.errorDescription : nil
        return (facts.name, localized ?? String(describing: error))
    }

    /// Per error type: its name for `type`, and whether it is a `LocalizedError`.
    private static let typeFacts = Mutex<[ObjectIdentifier: (name: String, localized: Bool)]>([:])

    static func typeName(_ type: Any.Type) -> String {
        var name = String(reflecting: type)
        while let start = name.range(of: "(unknown context at $"), let end = name[start.upperBound...].range(of: ").") {
            name.removeSubrange(start.lowerBound..<end.upperBound)
        }
        return name
    }

    /// Rate-limits, reserves the event and hands it to the reporter (on the caller's thread: cheap).
    static func send(
        _ description: (type: String, value: String), stack: (frames: [Frame], truncated: Bool, async: AsyncChain?),
        throwSite: (frames: [Frame], truncated: Bool)? = nil, synthetic: Bool,
        properties: Properties, to client: Cohorly
    ) {
        // Fingerprint: what failed and where it was caught (the return address into the catching code).
        let site = stack.frames.first?.description ?? "-"
        let (decision, events) = admit(description.type + "\u{1}" + site, client: client)
        guard case .send(let suppressed) = decision, let ticket = client.reserveLiveEvent() else { return }
        // The task's id and context (`CohorlyCrash.withContext`) first: the app's own properties win.
        var properties = properties
        var task: Properties = [:]
        TaskContext.addCurrent(to: &task)
        properties.merge(task) { app, _ in app }
        if suppressed > 0 { properties["$exception_suppressed_count"] = .int(suppressed) }
        let thread = LiveStack.currentThread()
        let caught = CrashReport.Thread(
            tid: thread.tid, name: thread.name, crashed: true, frames: stack.frames, truncated: stack.truncated,
            async: stack.async)
        var threads = [caught]
        if let throwSite {
            // The throw site is the exception's stack; the catching thread's stack follows it as the catch site.
            var catchSite = caught
            catchSite.crashed = false
            threads = [
                CrashReport.Thread(
                    tid: thread.tid, name: thread.name, crashed: true, frames: throwSite.frames,
                    truncated: throwSite.truncated),
                catchSite,
            ]
        }
        var exception = NonFatalException(
            type: description.type, value: description.value,
            mechanism: .init(type: "generic", handled: true, synthetic: synthetic),
            threads: threads, properties: properties, timestampMs: ticket.time)
        if throwSite != nil { exception.catchSiteIndex = 1 }
        NonFatalExceptionReporter.shared.submit(exception, options: events, ticket: ticket)
    }
}
