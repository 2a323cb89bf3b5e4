import CohorlyClient
import Foundation

/// Where and how the client sends to Sentry (sentry.io or a self-hosted Sentry, or any server that speaks its
/// envelope protocol — the local collector among them): envelopes to
/// `{scheme}://{host}[:port][/path]/api/{project_id}/envelope/`.
///
/// ```swift
/// let sentry = try SentryConfiguration(dsn: "https://examplePublicKey@o0.ingest.sentry.io/0")
/// let cohorly = Cohorly.initialize(sentry: sentry)
/// ```
///
/// Its description never shows the DSN's key.
public struct SentryConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// `http` or `https`.
    public let scheme: String
    /// The host name.
    public let host: String
    /// The port, when the DSN names one.
    public let port: Int?
    /// The path prefix before `/api/…` (empty, or `/` followed by segments, no trailing slash).
    public let pathPrefix: String
    /// The project id.
    public let projectId: String
    /// The DSN's public key (sent as `sentry_key`; never logged).
    let publicKey: String
    /// The environment of every event and session. Default `production`.
    public var environment: String = "production"
    /// The distribution of the release (`dist`), when the app has one. Default nil.
    public var dist: String?
    /// The release sessions are counted for (`attrs.release`; crash events keep the release of the launch that
    /// crashed). Default nil: `<executable name>@$COHORLY_RELEASE`, as `CohorlyCrash.install` makes it.
    public var release: String?
    /// Send envelopes gzip-compressed (`Content-Encoding: gzip`). Default false.
    public var compression: Bool = false
    /// Send release-health sessions (one per launch). Default true.
    public var sessions: Bool = true

    /// A configuration for `dsn`: `{scheme}://{public_key}[:{secret}]@{host}[:port][/path]/{project_id}`.
    /// - Throws: `SentryConfigurationError` naming the malformed part (its message never holds the key).
    public init(dsn: String) throws(SentryConfigurationError) {
        let text = dsn.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw .empty }
        guard let schemeEnd = text.range(of: "://") else { throw .missingScheme }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { throw .unsupportedScheme(scheme) }
        let rest = text[schemeEnd.upperBound...]
        guard let at = rest.lastIndex(of: "@") else { throw .missingPublicKey }
        let credentials = rest[..<at]
        let key = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard !key.isEmpty else { throw .missingPublicKey }
        let location = rest[rest.index(after: at)...]
        let authority = location.prefix { $0 != "/" }
        var hostName = Substring(authority)
        var port: Int?
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            hostName = authority[..<colon]
            let portText = authority[authority.index(after: colon)...]
            guard let value = Int(portText), (1...65_535).contains(value) else { throw .invalidPort(String(portText)) }
            port = value
        }
        guard !hostName.isEmpty else { throw .missingHost }
        var segments = location.dropFirst(authority.count).split(separator: "/").map(String.init)
        guard let project = segments.popLast() else { throw .missingProjectId }
        guard project.allSatisfy(\.isNumber) else { throw .invalidProjectId(project) }
        self.scheme = scheme
        self.host = String(hostName)
        self.port = port
        self.pathPrefix = segments.isEmpty ? "" : "/" + segments.joined(separator: "/")
        self.projectId = project
        self.publicKey = String(key)
    }

    /// `{scheme}://{host}[:port]{pathPrefix}`: the client's `apiHost`.
    public var baseURL: URL {
        URL(string: "\(scheme)://\(host)\(port.map { ":\($0)" } ?? "")\(pathPrefix)") ?? URL(fileURLWithPath: "/")
    }

    /// `…/api/{project_id}/envelope/`.
    var envelopeURL: URL {
        URL(string: baseURL.absoluteString + "/api/\(projectId)/envelope/") ?? baseURL
    }

    /// The DSN (key included): the envelope header's `dsn`.
    var dsn: String { "\(scheme)://\(publicKey)@\(host)\(port.map { ":\($0)" } ?? "")\(pathPrefix)/\(projectId)" }

    /// The configuration without its key: `Sentry(https://o0.ingest.sentry.io/api/0, production)`.
    public var description: String {
        "Sentry(\(baseURL.absoluteString)/api/\(projectId), \(environment))"
    }

    /// The release sessions carry.
    var sessionRelease: String {
        if let release, !release.isEmpty { return release }
        let name = CommandLine.arguments.first.map { String($0.split(separator: "/").last ?? "app") } ?? "app"
        let version = ProcessInfo.processInfo.environment["COHORLY_RELEASE"]
        if let version, version.contains("@") { return version }
        guard let version, !version.isEmpty else { return name }
        return "\(name)@\(version)"
    }

    /// Everything but the host and the key, as the queue remembers it for the detached crash sender.
    var persisted: String {
        var object: Properties = [
            "kind": "sentry", "project_id": .string(projectId), "environment": .string(environment),
            "compression": .bool(compression), "sessions": .bool(sessions),
        ]
        if let dist { object["dist"] = .string(dist) }
        if let release { object["release"] = .string(release) }
        return CohorlyValue.object(object).jsonString
    }

    /// The configuration `persisted` describes, for `host` (``baseURL``) and the key; nil when it describes no
    /// Sentry destination (or the host or key is unusable).
    init?(persisted: String?, host: URL, publicKey: String?) {
        guard let persisted, let object = CohorlyValue(json: persisted)?.objectValue,
            object["kind"]?.stringValue == "sentry", let publicKey, !publicKey.isEmpty,
            let project = object["project_id"]?.stringValue, let scheme = host.scheme, let name = host.host
        else { return nil }
        let port = host.port.map { ":\($0)" } ?? ""
        let path = host.path.hasSuffix("/") ? String(host.path.dropLast()) : host.path
        guard
            let configuration = try? SentryConfiguration(
                dsn: "\(scheme)://\(publicKey)@\(name)\(port)\(path)/\(project)")
        else { return nil }
        self = configuration
        environment = object["environment"]?.stringValue ?? environment
        dist = object["dist"]?.stringValue
        release = object["release"]?.stringValue
        if case .bool(let flag)? = object["compression"] { compression = flag }
        if case .bool(let flag)? = object["sessions"] { sessions = flag }
    }
}

/// Why a `SentryConfiguration` was refused. No message holds the DSN's key.
public enum SentryConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The DSN is empty.
    case empty
    /// No `scheme://` in front.
    case missingScheme
    /// The scheme is neither `http` nor `https`.
    case unsupportedScheme(String)
    /// No public key before the `@`.
    case missingPublicKey
    /// No host name after the `@`.
    case missingHost
    /// The port is not a number from 1 to 65535.
    case invalidPort(String)
    /// No project id at the end of the path.
    case missingProjectId
    /// The project id is not a number.
    case invalidProjectId(String)

    /// A readable reason.
    public var description: String {
        let shape = "expected {scheme}://{public_key}@{host}[:port][/path]/{project_id}"
        switch self {
        case .empty: return "the Sentry DSN is empty"
        case .missingScheme: return "the Sentry DSN has no scheme (https://…): \(shape)"
        case .unsupportedScheme(let scheme): return "the Sentry DSN's scheme \"\(scheme)\" is not http or https"
        case .missingPublicKey: return "the Sentry DSN has no public key before the @: \(shape)"
        case .missingHost: return "the Sentry DSN has no host after the @: \(shape)"
        case .invalidPort(let port): return "the Sentry DSN's port \"\(port)\" is not a number from 1 to 65535"
        case .missingProjectId: return "the Sentry DSN has no project id at the end of its path: \(shape)"
        case .invalidProjectId(let id): return "the Sentry DSN's project id \"\(id)\" is not a number"
        }
    }
}

extension SentryConfiguration {
    /// The destination a queue's persisted description stands for, for `host` and `token` (the sender's host and
    /// key); nil when it describes no Sentry destination. The `Cohorly` module's registry asks it.
    package static func restoredDestination(_ persisted: String?, host: URL, token: String?) -> (any Destination)? {
        SentryConfiguration(persisted: persisted, host: host, publicKey: token).map {
            SentryDestination(configuration: $0)
        }
    }
}
