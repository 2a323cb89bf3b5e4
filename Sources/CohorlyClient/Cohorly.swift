import CohorlyLaunch
import CohorlyFiles
import Foundation

/// The Cohorly client for Linux: identity, super properties, a persisted queue and delivery to one destination —
/// the Cohorly HTTP API under the shared retry contract (the default), or another destination's wire
/// (`Cohorly.initialize(posthog:)`).
///
/// ```swift
/// let cohorly = Cohorly.initialize(apiHost: URL(string: "https://cohorly-service.velloalabs.com")!, token: "TOKEN")
/// cohorly.track("Screen Viewed", properties: ["screen": "Home"])
/// await cohorly.flush()
/// ```
///
/// Every method is safe to call from any thread. `track` only appends to memory; a background thread commits
/// records to SQLite (WAL) within milliseconds and another delivers them.
public final class Cohorly: Sendable {
    /// The server the client sends to (the Cohorly API host, or the destination's).
    public let apiHost: URL
    /// The options it was configured with.
    public let options: CohorlyOptions
    /// The project token or the destination's key (for the crash sender process; never logged).
    let token: String?
    let destination: any Destination

    let state: ClientStateBox
    let store: any QueueStore
    let delivery: Delivery
    let automatic: AutomaticProperties
    let flags: FeatureFlagStore
    let activity = ActivityObservers()
    let persisterFinished = DispatchSemaphore(value: 0)
    /// Whether the queue is the one on disk (false when it could not be opened and lives in memory: then an event
    /// `enqueuePrepared` queued is not durable, and CohorlyCrash keeps the report it came from).
    package let queueIsPersisted: Bool
    /// Events being made off the caller's thread (Cohorly+LiveEvents.swift): flush and shutdown wait for them.
    let liveEvents = LiveEventReservations()
    /// Per-client state of other modules (``ClientAttachments``).
    package let attachments = ClientAttachments()

    private static let sharedBox = ClientStateBox.SharedSlot()

    /// At a normal exit, commits what the shared client still holds in memory (waiting at most 5 s), so events
    /// tracked just before `exit()` are sent by the next launch; then lets the exchange in flight end (at most 2 s,
    /// `CohorlyOptions.exitExchangeWait`) and starts no other, so no record the server took stays queued to be sent
    /// again.
    private static let commitAtExit: Void = {
        atexit {
            _ = Cohorly.shared?.liveEvents.waitSettled(timeout: 2)
            _ = Cohorly.shared?.state.waitUntilPersisted(timeout: 5)
            if let shared = Cohorly.shared { shared.delivery.stop(waitingAtMost: shared.options.exitExchangeWait) }
        }
    }()

    /// The hosted Cohorly ingestion host, the default `apiHost`: `https://cohorly-service.velloalabs.com`.
    public static let defaultAPIHost: URL =
        URL(string: "https://cohorly-service.velloalabs.com") ?? URL(fileURLWithPath: "/")  // a valid literal

    /// The instance configured by the last `initialize` (nil before).
    public static var shared: Cohorly? { sharedBox.value }

    /// Configures the client, makes it `Cohorly.shared` and returns it. Each argument left nil keeps the value in
    /// `options`.
    /// - Parameters:
    ///   - apiHost: the Cohorly ingestion host (no path). Default `COHORLY_HOST` from the environment, else
    ///     `defaultAPIHost` (the hosted service). A URL that is not `http://` or `https://` with a host name is
    ///     reported on stderr now (``initialize(host:token:storageDirectory:flushInterval:flushAt:maxQueueSize:debug:loadFeatureFlags:options:)``
    ///     takes a string and throws instead).
    ///   - token: the project token, sent as the `X-Cohorly-Token` header. Default `COHORLY_TOKEN` from the
    ///     environment, else none (no header).
    ///   - storageDirectory: where the queue lives. Default: this app's directory in the state directory
    ///     (`$XDG_STATE_HOME/cohorly/queues/<app>`).
    ///   - flushInterval: seconds between automatic flushes. Default 5.
    ///   - flushAt: queued events that trigger a flush. Default 20.
    ///   - maxQueueSize: records kept on disk; the oldest beyond it are dropped. Default 10,000.
    ///   - debug: log what is sent (never the token). Default false.
    ///   - loadFeatureFlags: evaluate feature flags now (`identify` and `reset` always do). Default true.
    ///   - options: everything else (retry timings, transport, log handler). Default `.default`.
    @discardableResult
    public static func initialize(
        apiHost: URL = environmentHost, token: String? = nil, storageDirectory: URL? = nil,
        flushInterval: Double? = nil,
        flushAt: Int? = nil, maxQueueSize: Int? = nil, debug: Bool? = nil, loadFeatureFlags: Bool? = nil,
        options: CohorlyOptions = .default
    ) -> Cohorly {
        let options = merged(
            options, storageDirectory: storageDirectory, flushInterval: flushInterval, flushAt: flushAt,
            maxQueueSize: maxQueueSize, debug: debug, loadFeatureFlags: loadFeatureFlags)
        return makeShared(Cohorly(apiHost: apiHost, token: token ?? environmentToken, options: options))
    }

    /// `options` with each non-nil argument of `initialize` applied.
    package static func merged(
        _ options: CohorlyOptions, storageDirectory: URL?, flushInterval: Double?, flushAt: Int?, maxQueueSize: Int?,
        debug: Bool?, loadFeatureFlags: Bool? = nil
    ) -> CohorlyOptions {
        var options = options
        if let loadFeatureFlags { options.loadFeatureFlags = loadFeatureFlags }
        if let storageDirectory { options.storageDirectory = storageDirectory }
        if let flushInterval { options.flushInterval = flushInterval }
        if let flushAt { options.flushAt = flushAt }
        if let maxQueueSize { options.maxQueueSize = maxQueueSize }
        if let debug { options.debug = debug }
        return options
    }

    /// Makes `client` the shared instance (committed at a normal exit) and returns it.
    package static func makeShared(_ client: Cohorly) -> Cohorly {
        sharedBox.value = client
        _ = commitAtExit
        return client
    }

    /// A client that is not registered as `shared` (for apps that talk to several projects, and tests).
    public convenience init(apiHost: URL, token: String? = nil, options: CohorlyOptions = .default) {
        if let problem = Self.hostProblem(apiHost) {
            ConfigurationWarnings.write(problem + "; nothing can be sent", options)
        }
        self.init(apiHost: apiHost, token: token, options: options) { _ in
            CohorlyDestination(apiHost: apiHost, token: token)
        }
    }

    /// The Cohorly API's destination at `apiHost` with `token` (the registry's fallback).
    package static func cohorlyAPIDestination(apiHost: URL, token: String?) -> any Destination {
        CohorlyDestination(apiHost: apiHost, token: token)
    }

    /// A client that sends to `destination` (a destination family's `init`).
    package convenience init(apiHost: URL, token: String?, options: CohorlyOptions, destination: any Destination) {
        self.init(apiHost: apiHost, token: token, options: options) { _ in destination }
    }

    /// A client whose destination `makeDestination` chooses (it may read the opened queue's settings: the
    /// detached sender restores the destination the queue was written for).
    init(
        apiHost: URL, token: String?, options: CohorlyOptions,
        makeDestination: (any QueueStore) -> any Destination
    ) {
        // The default directory, when it cannot be made (a read-only home), falls back as the crash reports do
        // (StateDirectory.makeDefault); a directory the caller named is used or refused as it is.
        var options = options
        var unusable: PrivateFiles.Failure?
        if options.storageDirectory == nil && options.createsStorageDirectory {
            do {
                let made = try StateDirectory.makeDefault("queues/" + StateDirectory.appName())
                options.storageDirectory = URL(fileURLWithPath: made, isDirectory: true)
            } catch {
                unusable = error
            }
        }
        self.apiHost = apiHost
        self.options = options
        self.token = token
        let debug = options.debug
        let handler = options.logHandler
        let log: @Sendable (String) -> Void = { message in
            guard debug else { return }
            if let handler {
                handler(message)
            } else {
                FileHandle.standardError.write(Data("[Cohorly] \(message)\n".utf8))
            }
        }
        let directory = options.storageDirectory ?? Self.defaultStorageDirectory()
        let store: any QueueStore
        var queueDirectory: String?
        do {
            if let unusable { throw unusable }
            // Another user's directory, or one others may write to, is refused like an unwritable one.
            if options.createsStorageDirectory {
                try PrivateFiles.makeDirectory(directory.path, requireOwnerOnly: true)
                StartupHooks.beforeQueueOpens(in: directory)  // the crash report's disk reserve first
            }
            store = try SQLiteQueueStore(path: directory.appendingPathComponent("queue.sqlite").path)
            queueDirectory = directory.path
        } catch {
            FileHandle.standardError.write(
                Data("[Cohorly] queue not persisted (\(error)); using memory\n".utf8))
            // `:memory:` cannot fail to open short of running out of memory.
            store = (try? SQLiteQueueStore(path: ":memory:")) ?? MemoryQueueStore()
        }
        self.store = store
        self.queueIsPersisted = queueDirectory != nil
        let destination = makeDestination(store)
        self.destination = destination
        self.automatic = AutomaticProperties()
        self.state = ClientStateBox(ClientState.load(from: store), maxQueueSize: options.maxQueueSize, log: log)
        if store.meta(MetaKey.destination) != destination.persistedDescription {
            state.mutate { _ in [.store(.setMeta(MetaKey.destination, destination.persistedDescription))] }
        }
        let transport = options.transport ?? CurlTransport()
        self.delivery = Delivery(
            store: store, transport: transport, options: options, destination: destination,
            queueLock: queueDirectory.map { LockFile(.queue, in: $0) },
            log: log)
        let weakClient = WeakClient()
        self.flags = Self.makeFlags(
            store: store, destination: destination, transport: transport, options: options, state: state,
            client: weakClient)
        weakClient.value = self
        if options.loadFeatureFlags { flags.reload() }
        delivery.setPaused(state.withLock { $0.optedOut })
        delivery.start()
        let thread = Thread { [self] in
            ThreadName.setCurrent("cohorly-persist")
            runPersister()
        }
        thread.name = "cohorly-persist"
        thread.start()
    }

    /// `$XDG_STATE_HOME/cohorly/queues/<app>`, else `$HOME/.local/state/cohorly/queues/<app>` (``StateDirectory``),
    /// `<app>` being the executable's file name as the crash report directory has it: two apps of one user never
    /// share a queue (and never send each other's events under their own token). A queue an older version kept at
    /// `cohorly/queue.sqlite`, shared by every app, is left where it is, to the app that wrote it (not sent under
    /// another app's token).
    package static func defaultStorageDirectory() -> URL {
        URL(fileURLWithPath: StateDirectory.cohorly("queues/" + StateDirectory.appName()), isDirectory: true)
    }

    /// Queues an event. Never blocks on I/O; the event is stamped now (time, identity, super properties).
    /// - Parameters:
    ///   - event: the event name.
    ///   - properties: its properties; they win over super and automatic properties. Default none.
    public func track(_ event: String, properties: Properties = [:]) {
        let time = Int64(Date().timeIntervalSince1970 * 1000)
        state.enqueue { state in
            guard !state.optedOut else { return nil }
            return .event(
                PendingEvent(
                    name: event, properties: properties, superProperties: state.superProperties,
                    distinctId: state.distinctId, time: time))
        }
        activity.report(.track(event: event, properties: properties))
    }

    /// The id events are sent with: an anonymous UUID until `identify`.
    public var currentDistinctId: String { state.withLock { $0.distinctId } }

    /// Whether the user opted out (persisted).
    public var isOptedOut: Bool { state.withLock { $0.optedOut } }

    /// Records dropped because the queue was full, since launch.
    public var droppedCount: Int { state.withLock { $0.droppedCount } }

    /// Records currently in the persisted queue (not counting the few not yet committed).
    public var queuedCount: Int { store.count }

    /// Switches to `distinctId`. The first call after being anonymous also links the anonymous id (Cohorly: posts
    /// `/alias`, once, best effort; PostHog: an `$identify` event with `$anon_distinct_id`). No-op when the id is
    /// unchanged or empty.
    public func identify(_ distinctId: String) {
        identify(distinctId, set: [:], setOnce: [:])
    }

    /// `identify(_:)`, also setting profile properties: `set` (`$set`) and `setOnce` (`$set_once`, default none).
    /// PostHog receives them inside the `$identify` event; Cohorly as `/engage` operations.
    public func identify(_ distinctId: String, set: Properties, setOnce: Properties = [:]) {
        let time = Int64(Date().timeIntervalSince1970 * 1000)
        var changed = false
        state.mutate { state in
            guard !distinctId.isEmpty, distinctId != state.distinctId else { return [] }
            changed = true
            var operations: [PendingOperation] = []
            if !state.identified, !state.optedOut {
                operations.append(
                    .profile(
                        .identify(
                            anonymousId: state.anonymousId, distinctId: distinctId, set: set, setOnce: setOnce,
                            time: time)))
            }
            state.distinctId = distinctId
            state.identified = true
            operations.append(contentsOf: state.identityMeta())
            return operations
        }
        if changed { activity.report(.identify(distinctId: distinctId)) }
    }

    /// Links `alias` to the current distinct id (Cohorly: `/alias`, best effort; PostHog: `$create_alias`).
    /// No-op when `alias` is empty or is the current id.
    public func alias(_ alias: String) {
        let time = Int64(Date().timeIntervalSince1970 * 1000)
        var linked: String?
        state.enqueue { state in
            guard !state.optedOut, !alias.isEmpty, alias != state.distinctId else { return nil }
            linked = state.distinctId
            return .profile(.alias(alias: alias, distinctId: state.distinctId, time: time))
        }
        if let linked { activity.report(.alias(alias: alias, distinctId: linked)) }
    }

    /// Starts over as a new anonymous user: new anonymous id, no super properties, un-sent events discarded
    /// (prepared events such as crash reports are kept).
    public func reset() {
        var anonymous: String?
        state.mutate { state in
            state.anonymousId = UUIDv4.make()
            anonymous = state.anonymousId
            state.distinctId = state.anonymousId
            state.identified = false
            state.superProperties = [:]
            return [.store(.clear(keepPrepared: true))] + state.identityMeta() + [
                state.superPropertiesMeta()
            ]
        }
        if let anonymous { activity.report(.reset(distinctId: anonymous)) }
    }

    /// Adds super properties, merged into every later event (persisted).
    public func register(_ properties: Properties) {
        state.mutate { state in
            state.superProperties.merge(properties) { _, new in new }
            return [state.superPropertiesMeta()]
        }
    }

    /// Removes one super property (persisted).
    public func unregister(_ name: String) {
        state.mutate { state in
            state.superProperties[name] = nil
            return [state.superPropertiesMeta()]
        }
    }

    /// Stops all tracking (persisted): un-sent records are discarded and nothing is queued or sent until `optIn`.
    public func optOut() {
        state.mutate { state in
            state.optedOut = true
            return [.store(.clear(keepPrepared: false)), .store(.setMeta(MetaKey.optedOut, "1"))]
        }
        delivery.setPaused(true)
    }

    /// Resumes tracking after `optOut` (persisted).
    public func optIn() {
        state.mutate { state in
            state.optedOut = false
            return [.store(.setMeta(MetaKey.optedOut, nil))]
        }
        delivery.setPaused(false)
    }

    /// Profile updates for the current user, sent to `/engage`.
    public var people: People { People(client: self) }

    /// Sends everything queued before the call (handled errors captured before it included). Returns true once
    /// all of it was delivered (or dropped as the contract says), false when an attempt failed (it stays queued
    /// and is retried after the backoff). Bypasses the backoff window: an explicit flush tries now.
    @discardableResult
    public func flush() async -> Bool {
        await liveEvents.settled()
        return await withCheckedContinuation { continuation in
            state.requestFlush { continuation.resume(returning: $0) }
        }
    }

    /// ``flush()`` without Swift concurrency, blocking the calling thread at most `seconds`: false also when the
    /// time ran out first. For the detached crash sender, which runs from a C constructor before `main`, where a
    /// task may never run (see CrashEventSender.swift).
    package func flush(waitingAtMost seconds: Double) -> Bool {
        let deadline = Monotonic.now() + max(0, seconds)
        guard liveEvents.waitSettled(timeout: max(0, seconds)) else { return false }
        let answer = FlushAnswer()
        state.requestFlush { delivered in answer.set(delivered) }
        return answer.wait(until: deadline) ?? false
    }

    /// Commits everything queued so far to disk (handled errors still being prepared included, waiting at most
    /// 5 s for them), then stops the background threads (after any exchange in flight). The client does nothing afterwards; queued records are sent by the next launch.
    public func shutdown() {
        liveEvents.waitSettled(timeout: 5)
        guard state.stop() else { return }
        persisterFinished.wait()
        delivery.stop()
        launchEnded()  // Cohorly+Launches.swift
    }
}
