import Cohorly
import CohorlyHTTPServer
import Foundation

/// The adapter's endpoints over one client instance at a time (`/init` makes it, `/reset` drops it).
final class Adapter: @unchecked Sendable {
    /// The capture wire the client is driven on (`--wire v1|batch`): with `batch` the client sends to the legacy
    /// `/batch` endpoint and the adapter declares `capture_v0`, so the harness runs its legacy `capture` suite.
    let wire: PostHogConfiguration.CaptureEndpoint
    private let lock = NSLock()
    private var client: Cohorly?
    private var directory: URL?
    private let stats = AdapterStats()
    private let flagAnswers = FlagAnswers()

    init(wire: PostHogConfiguration.CaptureEndpoint = .v1) { self.wire = wire }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        let body = request.body.isEmpty ? CohorlyValue.object([:]) : CohorlyValue(bytes: request.body)
        switch (request.method, request.path) {
        case ("GET", "/health"):
            return Self.json([
                "sdk_name": "cohorly-swift-linux", "sdk_version": "0.1.0", "adapter_version": "1.0.0",
                "capabilities": [wire == .legacyBatch ? "capture_v0" : "capture_v1", "encoding_gzip"],
                "supports_parallel": false,
            ])
        case ("GET", "/state"): return Self.json(stats.state(pending: lock.withLock { client?.queuedCount } ?? 0))
        case ("POST", "/reset"):
            reset()
            return Self.json(["success": true])
        case ("POST", "/flush"): return flush()
        case ("POST", "/init"):
            guard let body = body?.objectValue else { return Self.failure("the body must be a JSON object") }
            return initialize(body)
        case ("POST", "/capture"):
            guard let body = body?.objectValue else { return Self.failure("the body must be a JSON object") }
            return capture(body)
        case ("POST", "/get_feature_flag"):
            guard let body = body?.objectValue else { return Self.failure("the body must be a JSON object") }
            return featureFlag(body)
        default: return Self.failure("no such endpoint: \(request.method) \(request.path)", status: 404)
        }
    }

    /// Drops the instance: its in-flight retries stop at once, its queue directory is removed.
    func reset() {
        let (old, oldDirectory) = lock.withLock {
            defer { (client, directory) = (nil, nil) }
            return (client, directory)
        }
        old?.shutdown()
        if let oldDirectory { try? FileManager.default.removeItem(at: oldDirectory) }
        stats.reset()
        flagAnswers.clear()
    }

    private func initialize(_ body: [String: CohorlyValue]) -> HTTPResponse {
        reset()
        let posthog: PostHogConfiguration
        do {
            posthog = try Self.configuration(body, wire: wire)
        } catch {
            stats.fail(String(describing: error))
            return Self.failure(String(describing: error))
        }
        var options = CohorlyOptions()
        let flushAt = max(1, body["flush_at"]?.intValue ?? 100)
        options.flushAt = flushAt
        options.maxBatchSize = flushAt
        options.flushInterval = Double(max(1, body["flush_interval_ms"]?.intValue ?? 500)) / 1000
        options.transport = ObservingTransport(stats: stats)
        options.debug = true
        options.logHandler = { [stats] line in stats.log(line) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "posthog-compliance-adapter-\(getpid())-\(UUID().uuidString)")
        options.storageDirectory = directory
        // A server-side SDK evaluates flags only when asked: a capture alone never causes a flags request.
        options.loadFeatureFlags = false
        let instance = Cohorly(posthog: posthog, options: options)
        lock.withLock { (client, self.directory) = (instance, directory) }
        return Self.json(["success": true])
    }

    static func configuration(_ body: [String: CohorlyValue], wire: PostHogConfiguration.CaptureEndpoint = .v1) throws
        -> PostHogConfiguration
    {
        var posthog = try PostHogConfiguration(
            host: body["host"]?.stringValue ?? "", apiKey: body["api_key"]?.stringValue ?? "")
        posthog.captureEndpoint = wire
        if let retries = body["max_retries"]?.intValue { posthog.maxRetries = max(0, retries) }
        if case .bool(let on)? = body["enable_compression"] { posthog.compression = on }
        if case .bool(let on)? = body["disable_geoip"] { posthog.disableGeoIP = on }
        if case .bool(let on)? = body["historical_migration"] { posthog.historicalMigration = on }
        return posthog
    }

    private func capture(_ body: [String: CohorlyValue]) -> HTTPResponse {
        guard let client = lock.withLock({ client }) else { return Self.failure("call /init first") }
        guard let event = body["event"]?.stringValue else { return Self.failure("\"event\" must be a string") }
        guard let distinctId = body["distinct_id"]?.stringValue else {
            return Self.failure("event \"\(event)\": \"distinct_id\" must be a string")
        }
        var properties: Properties
        switch body["properties"] {
        case nil, .null?: properties = [:]
        case .object(let object)?: properties = object
        case let other?:
            return Self.failure("event \"\(event)\": properties must be an object, not \(other.jsonString)")
        }
        switch body["timestamp"] {
        case nil, .null?: break
        case .string(let text)?:
            // The client converts any RFC 3339 offset to UTC; one that does not parse is refused here, by name.
            guard RFC3339.milliseconds(text) != nil else {
                return Self.failure("event \"\(event)\": timestamp \"\(text)\" is not an RFC 3339 date-time")
            }
            properties["time"] = .string(text)
        case let other?: return Self.failure("event \"\(event)\": timestamp must be a string, not \(other.jsonString)")
        }
        let options = body["options"]?.objectValue ?? [:]
        for (option, property) in [
            ("cookieless_mode", "$cookieless_mode"), ("disable_skew_correction", "$ignore_sent_at"),
            ("process_person_profile", "$process_person_profile"), ("product_tour_id", "$product_tour_id"),
        ] {
            if let value = options[option] { properties[property] = value }
        }
        let uuid = (body["uuid"]?.stringValue ?? UUID().uuidString).lowercased()
        properties["$insert_id"] = .string(uuid)
        properties["distinct_id"] = .string(distinctId)
        client.track(event, properties: properties)
        stats.captured()
        return Self.json(["success": true, "uuid": .string(uuid)])
    }

    /// `/get_feature_flag` `{key, distinct_id, person_properties?, groups?, group_properties?, disable_geoip?,
    /// force_remote?}` → `{success, value}` (value: the variant, true/false, or null for an unknown flag).
    /// `force_remote` evaluates over the network every time; otherwise an answer already received for this
    /// (distinct id, key, properties) is reused.
    private func featureFlag(_ body: [String: CohorlyValue]) -> HTTPResponse {
        guard let client = lock.withLock({ client }) else { return Self.failure("call /init first") }
        guard let key = body["key"]?.stringValue, !key.isEmpty else { return Self.failure("\"key\" must be a string") }
        guard let distinctId = body["distinct_id"]?.stringValue, !distinctId.isEmpty else {
            return Self.failure("\"distinct_id\" must be a non-empty string")
        }
        var disableGeoIP: Bool?
        if case .bool(let on)? = body["disable_geoip"] { disableGeoIP = on }
        let person = body["person_properties"]?.objectValue ?? [:]
        let groups = body["groups"]?.objectValue ?? [:]
        let groupProperties = body["group_properties"]?.objectValue ?? [:]
        let cacheKey = CohorlyValue.array([
            .string(key), .string(distinctId), .object(person), .object(groups), .object(groupProperties),
        ]).jsonString
        if body["force_remote"] != .bool(true), let known = flagAnswers.value(cacheKey) {
            return Self.json(["success": true, "value": known])
        }
        let details = client.evaluateFeatureFlagRemotely(
            key, distinctId: distinctId, personProperties: person, groups: groups, groupProperties: groupProperties,
            disableGeoIP: disableGeoIP)
        let value = details?.value?.propertyValue ?? .null
        if details != nil { flagAnswers.set(cacheKey, value) }
        return Self.json(["success": true, "value": value])
    }

    /// Blocks until everything captured is delivered or terminally failed, retries included.
    private func flush() -> HTTPResponse {
        guard let client = lock.withLock({ client }) else { return Self.json(["success": true, "events_flushed": 0]) }
        let before = stats.sent
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox()
        Task.detached {
            result.value = await client.flush()
            done.signal()
        }
        done.wait()
        return Self.json([
            "success": true, "events_flushed": .int(stats.sent - before), "delivered": .bool(result.value),
        ])
    }

    static func json(_ value: CohorlyValue, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, body: Array(value.jsonString.utf8))
    }

    static func failure(_ message: String, status: Int = 400) -> HTTPResponse {
        json(["success": false, "error": .string(message)], status: status)
    }

    private final class ResultBox: @unchecked Sendable {
        var value = false
    }
}

/// Flag answers already received, by request (cleared with the instance).
final class FlagAnswers: @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [String: CohorlyValue] = [:]
    func value(_ key: String) -> CohorlyValue? { lock.withLock { answers[key] } }
    func set(_ key: String, _ value: CohorlyValue) { lock.withLock { answers[key] = value } }
    func clear() { lock.withLock { answers = [:] } }
}
