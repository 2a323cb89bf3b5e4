import Foundation

/// Why a Cohorly host string was refused (``Cohorly/initialize(host:token:storageDirectory:flushInterval:flushAt:maxQueueSize:debug:loadFeatureFlags:options:)``).
public enum CohorlyHostError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The host has no `http://` or `https://` in front, or no host name (`127.0.0.1:4000`, `htp//x`).
    case hostWithoutScheme(String)
    /// The host's scheme is neither `http` nor `https` (`htp://x`, `ftp://x`).
    case unsupportedScheme(String)

    public var description: String {
        switch self {
        case .hostWithoutScheme(let host):
            "Cohorly host '\(host)' needs http:// or https:// and a host name, e.g. http://127.0.0.1:4000"
        case .unsupportedScheme(let host):
            "Cohorly host '\(host)' must start with http:// or https://"
        }
    }
}

extension Cohorly {
    /// Environment variables read as defaults: the host (`COHORLY_HOST`) and the project token (`COHORLY_TOKEN`).
    public static let hostVariable = "COHORLY_HOST"
    public static let tokenVariable = "COHORLY_TOKEN"

    /// The host `initialize` uses when none is given: `COHORLY_HOST` when it is set to a valid URL, else
    /// ``defaultAPIHost``.
    public static var environmentHost: URL {
        ProcessInfo.processInfo.environment[hostVariable].flatMap { try? validatedHost($0) } ?? defaultAPIHost
    }

    /// The token `initialize` uses when none is given: `COHORLY_TOKEN` (nil when unset or empty).
    public static var environmentToken: String? {
        ProcessInfo.processInfo.environment[tokenVariable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// `host` as the URL the client sends to: trimmed, `http://` or `https://`, a host name.
    public static func validatedHost(_ host: String) throws(CohorlyHostError) -> URL {
        let trimmed = host.trimmingCharacters(in: .whitespaces)
        guard let url = URL(string: trimmed), let scheme = url.scheme?.lowercased(),
            trimmed.lowercased().hasPrefix(scheme + "://")
        else { throw .hostWithoutScheme(host) }
        guard scheme == "http" || scheme == "https" else { throw .unsupportedScheme(host) }
        guard let name = url.host, !name.isEmpty else { throw .hostWithoutScheme(host) }
        return url
    }

    /// Why `url` cannot be sent to (nil: it can): the check `validatedHost` makes, for a client made with a `URL`.
    static func hostProblem(_ url: URL) -> String? {
        do {
            _ = try validatedHost(url.absoluteString)
            return nil
        } catch {
            return error.description
        }
    }

    /// Configures the client for the Cohorly host `host` (a string, checked now: a typo fails here, not on every
    /// request), makes it `Cohorly.shared` and returns it. The other parameters are those of
    /// ``initialize(apiHost:token:storageDirectory:flushInterval:flushAt:maxQueueSize:debug:loadFeatureFlags:options:)``.
    /// - Parameters:
    ///   - host: e.g. `http://127.0.0.1:4000` (no path: the endpoints are at the host's root).
    ///   - token: the project token. Default `COHORLY_TOKEN` from the environment, else none.
    /// - Throws: ``CohorlyHostError`` when `host` is not an `http://` or `https://` URL with a host name.
    @discardableResult
    public static func initialize(
        host: String, token: String? = nil, storageDirectory: URL? = nil, flushInterval: Double? = nil,
        flushAt: Int? = nil, maxQueueSize: Int? = nil, debug: Bool? = nil, loadFeatureFlags: Bool? = nil,
        options: CohorlyOptions = .default
    ) throws(CohorlyHostError) -> Cohorly {
        let url = try validatedHost(host)
        return initialize(
            apiHost: url, token: token ?? environmentToken, storageDirectory: storageDirectory,
            flushInterval: flushInterval, flushAt: flushAt, maxQueueSize: maxQueueSize, debug: debug,
            loadFeatureFlags: loadFeatureFlags, options: options)
    }
}
