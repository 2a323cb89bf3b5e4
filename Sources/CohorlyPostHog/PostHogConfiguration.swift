import CohorlyClient
import Foundation

/// Where and how the client sends to PostHog (capture V1, `POST {host}/i/v1/analytics/events`).
///
/// ```swift
/// let posthog = try PostHogConfiguration(host: "https://us.i.posthog.com", apiKey: "phc_…")
/// let cohorly = Cohorly.initialize(posthog: posthog)
/// ```
public struct PostHogConfiguration: Sendable, Equatable {
    /// The PostHog host (`https://us.i.posthog.com`, `https://eu.i.posthog.com` or a self-hosted URL, which may
    /// carry a path prefix).
    public var host: URL
    /// The project API key (`phc_…`), sent as `Authorization: Bearer …` (never in the body, never logged).
    public var apiKey: String
    /// Retries after the first attempt of a batch (408, 5xx, network errors and per-event `retry` results).
    /// Default 3 (4 attempts).
    public var maxRetries: Int = 3
    /// First retry delay in seconds; it doubles per retry up to `maxRetryDelay`. Default 1.
    public var retryBaseDelay: Double = 1
    /// Longest retry delay, also the cap on `Retry-After`. Default 30 s.
    public var maxRetryDelay: Double = 30
    /// Send request bodies gzip-compressed (`Content-Encoding: gzip`). Default false.
    public var compression: Bool = false
    /// Ask PostHog not to look up the sender's location (`$geoip_disable: true` on every event). Default false.
    public var disableGeoIP: Bool = false
    /// Mark batches as a historical import (`"historical_migration": true`). Default false.
    public var historicalMigration: Bool = false
    /// Which capture endpoint the client sends to. Default ``CaptureEndpoint/v1``, which falls back to the legacy
    /// `/batch` endpoint for the rest of the launch when the host answers 404 (a self-hosted PostHog without
    /// capture V1); ``CaptureEndpoint/legacyBatch`` sends there from the start (an instance known to be old).
    public var captureEndpoint: CaptureEndpoint = .v1

    /// A PostHog capture endpoint.
    public enum CaptureEndpoint: String, Sendable, Equatable {
        /// `POST {host}/i/v1/analytics/events` (capture V1), falling back to `/batch` on a 404.
        case v1
        /// `POST {host}/batch` (`{api_key, batch, sent_at}`): the legacy endpoint every self-hosted PostHog has.
        case legacyBatch = "batch"
    }

    /// A configuration for `host` (must start with `http://` or `https://`) and a non-empty project API key.
    /// - Throws: `PostHogConfigurationError` naming what is wrong.
    public init(host: String, apiKey: String) throws(PostHogConfigurationError) {
        let url: URL
        do {
            url = try Cohorly.validatedHost(host)  // the one host check, worded for PostHog below
        } catch {
            switch error {
            case .hostWithoutScheme: throw .hostWithoutScheme(host)
            case .unsupportedScheme: throw .unsupportedScheme(host)
            }
        }
        let key = apiKey.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !key.isEmpty else { throw .emptyAPIKey }
        self.host = url
        self.apiKey = key
    }

    /// A configuration for `host` and a project API key; the same checks as `init(host:apiKey:)` with a string.
    public init(host: URL, apiKey: String) throws(PostHogConfigurationError) {
        try self.init(host: host.absoluteString, apiKey: apiKey)
    }

    /// The wait after failed attempt `attempt` (1-based): `max(min(base·2^(attempt−1), cap), min(retryAfter, cap))`.
    func delay(afterAttempt attempt: Int, retryAfter: Double?) -> Double {
        let backoff = min(retryBaseDelay * pow(2, Double(max(0, min(attempt - 1, 60)))), maxRetryDelay)
        return max(0, backoff, min(retryAfter ?? 0, maxRetryDelay))
    }

    /// Everything but the host and the key, as the queue remembers it for the detached crash sender.
    var persisted: String {
        CohorlyValue.object([
            "kind": "posthog", "max_retries": .int(maxRetries), "retry_base_delay": .double(retryBaseDelay),
            "max_retry_delay": .double(maxRetryDelay), "compression": .bool(compression),
            "disable_geoip": .bool(disableGeoIP), "historical_migration": .bool(historicalMigration),
            "capture_endpoint": .string(captureEndpoint.rawValue),
        ]).jsonString
    }

    /// The configuration `persisted` describes, for `host` and `apiKey`; nil when it describes no PostHog
    /// destination (or the host or key is unusable).
    init?(persisted: String?, host: URL, apiKey: String?) {
        guard let persisted, let object = CohorlyValue(json: persisted)?.objectValue,
            object["kind"]?.stringValue == "posthog", let apiKey,
            let configuration = try? PostHogConfiguration(host: host, apiKey: apiKey)
        else { return nil }
        self = configuration
        maxRetries = object["max_retries"]?.intValue ?? maxRetries
        retryBaseDelay = object["retry_base_delay"]?.doubleValue ?? retryBaseDelay
        maxRetryDelay = object["max_retry_delay"]?.doubleValue ?? maxRetryDelay
        compression = flag(object["compression"]) ?? compression
        disableGeoIP = flag(object["disable_geoip"]) ?? disableGeoIP
        historicalMigration = flag(object["historical_migration"]) ?? historicalMigration
        captureEndpoint =
            object["capture_endpoint"]?.stringValue.flatMap(CaptureEndpoint.init(rawValue:)) ?? captureEndpoint
    }
}

private func flag(_ value: CohorlyValue?) -> Bool? {
    if case .bool(let flag) = value { return flag }
    return nil
}

/// Why a `PostHogConfiguration` was refused.
public enum PostHogConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The host has no `http://` or `https://` in front (or no host name at all).
    case hostWithoutScheme(String)
    /// The host's scheme is neither `http` nor `https`.
    case unsupportedScheme(String)
    /// The project API key is empty.
    case emptyAPIKey

    /// A readable reason.
    public var description: String {
        switch self {
        case .hostWithoutScheme(let host):
            return "PostHog host \"\(host)\" needs a scheme and a host name, e.g. https://us.i.posthog.com"
        case .unsupportedScheme(let host): return "PostHog host \"\(host)\" must use http:// or https://"
        case .emptyAPIKey: return "the PostHog project API key is empty"
        }
    }
}

extension PostHogConfiguration {
    /// The destination a queue's persisted description stands for, for `host` and `token` (the sender's host and
    /// key); nil when it describes no PostHog destination. The `Cohorly` module's registry asks it.
    package static func restoredDestination(_ persisted: String?, host: URL, token: String?) -> (any Destination)? {
        PostHogConfiguration(persisted: persisted, host: host, apiKey: token).map {
            PostHogDestination(configuration: $0)
        }
    }
}
